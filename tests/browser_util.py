"""A fresh Streamlit server and Debian's Chromium, for the browser tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("VISATTN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_browser() -> None:
    """Skip when Chromium is absent on a developer's machine; in CI (VISATTN_REQUIRE_BROWSER=1) fail
    instead."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("VISATTN_REQUIRE_BROWSER") == "1":
            pytest.fail(
                f"Chromium not found at {CHROMIUM}; CI installs Debian's chromium in .ci/run"
            )
        pytest.skip("Chromium not installed (apt-get install chromium); CI requires it")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(timeout: float = 60, env: dict[str, str] | None = None):
    """A new server process on a free localhost port (``env``: variables added to this process's
    environment); yields its base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start on port {port}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def wait_rendered(page, want_chart: bool, timeout_ms: int = 90_000) -> None:
    """Until the script has finished running (and a Plotly chart has drawn, when one is
    expected)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    # the first run has drawn the page's title (before it starts there is no status widget either:
    # a page without a chart would otherwise count as rendered while still blank)
    page.wait_for_selector('[data-testid="stMain"] h1', state="attached", timeout=timeout_ms)
    if want_chart:  # a chart that shows (the first may be in a tab not open)
        page.locator(".js-plotly-plot .main-svg").locator("visible=true").first.wait_for(
            timeout=timeout_ms
        )
    # the running-man status widget disappears when the script run ends
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms
    )
    page.wait_for_timeout(500)


def settled_value(page, script: str, quiet_ms: int = 1_000, timeout_ms: int = 90_000):
    """``script``'s value once it has stopped changing for ``quiet_ms`` and nothing in the main
    area is stale: a section's partial rerun shows no status widget, so :func:`wait_rendered` alone
    can return while its charts are still being redrawn (seen on a loaded machine)."""
    deadline = time.monotonic() + timeout_ms / 1000
    value, since = page.evaluate(script), time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(200)
        now = page.evaluate(script)
        stale = page.locator('[data-testid="stMain"] [data-stale="true"]').count()
        if now != value or stale:
            value, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_ms / 1000:
            return value
    raise TimeoutError("the page kept changing")


def settled_url_value(page, key: str) -> str:
    """Control ``key``'s value in the address once a drag has written its last position (the
    browser writes the address at most every 400 ms: ui/live.js)."""
    value = settled_value(page, f"() => new URL(location.href).searchParams.get({json.dumps(key)})")
    assert value is not None, f"{key}: the address does not hold it"
    return value


def frames_sent(page) -> list[str]:
    """The first 80 characters of every websocket frame ``page`` sends from now on: a list that
    grows as the page sends (a drag in a figure must send none)."""
    sent: list[str] = []

    def record(payload) -> None:
        sent.append(str(payload)[:80])

    def on_websocket(ws) -> None:
        ws.on("framesent", record)

    page.on("websocket", on_websocket)
    return sent
