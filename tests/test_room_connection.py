"""Streamlit's own connection and error texts in the page's language
(ui/room/connection.py), seen in Chromium under ?lang=zh: the status while the server is gone, the
connection-error dialog, the "restoring" notice when it is back, the redacted-error box. Loopback
only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import streamlit
from apptest_util import ROOT
from browser_util import CHROMIUM, CHROMIUM_ARGS, require_browser, wait_rendered
from test_replicas import require_nginx, serve_room, short_run_dir, title_of

from ui.registry import BY_ID
from ui.room import connection

STATIC_JS = Path(streamlit.__file__).parent / "static" / "static" / "js"


def room_texts(lang: str) -> dict[str, str]:
    path = ROOT / "ui" / "locales" / lang / "room.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_english_replaced_is_still_streamlits():
    """Each text the watcher replaces is still in this Streamlit (an upgrade that rewords one
    fails here, instead of leaving it English)."""
    from streamlit.elements import exception

    bundle = "".join(p.read_text(encoding="utf-8") for p in STATIC_JS.glob("*.js"))
    for english in connection.streamlit_texts():
        if english.startswith("Press "):  # InputInstructions builds it: `Press ${key} to ${what}`
            assert "`Press Enter to ${e}`" in bundle and "+Enter to ${e}`" in bundle
        elif english != connection.GENERIC_ERROR:
            assert english in bundle, english
    assert exception._GENERIC_UNCAUGHT_EXCEPTION_TEXT == connection.GENERIC_ERROR
    # the frontend asks for a full rerun after a reconnect when a fragment reruns on a timer
    assert "this.autoRerunIntervals.size>0" in bundle
    # and marks its connection and run state on the app's root, which the watcher follows
    assert '"data-test-connection-state"' in bundle and '"data-test-script-state"' in bundle


@pytest.mark.browser
def test_the_connection_texts_are_chinese_under_lang_zh(tmp_path_factory):
    require_nginx()
    require_browser()
    from playwright.sync_api import sync_playwright

    zh = room_texts("zh")
    page_info = BY_ID["positional_encoding"]
    with serve_room.room(replicas=1, run_dir=short_run_dir(tmp_path_factory)) as r:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{r.url}/{page_info.url_path}?lang=zh")
                wait_rendered(page, True)
                # a text box being edited, and the ⋮ menu
                page.locator('[data-testid="stTextInput"] input').first.press("End")
                page.keyboard.type(",")
                hint = page.locator('[data-testid="InputInstructions"]').first
                page.wait_for_function(
                    "(want) => document.querySelector('[data-testid=InputInstructions]')"
                    ".innerText.includes(want)",
                    arg=zh["enter_to_apply"],
                    timeout=10_000,
                )
                assert "Press" not in hint.inner_text()
                page.keyboard.press("Escape")
                page.locator('[data-testid="stMainMenu"]').click()
                menu = page.locator('[data-testid="stMainMenuList"]')
                page.get_by_text(zh["menu_print"], exact=True).wait_for(timeout=10_000)
                assert zh["menu_record"] in menu.inner_text()
                page.keyboard.press("Escape")
                r.stop_program("replica-1")  # the only replica, stopped (not restarted)
                stopped = time.monotonic()
                status = page.locator('[data-testid="stConnectionStatus"]')
                status.wait_for(timeout=20_000)
                assert status.inner_text() == zh["connecting"]
                assert page.locator("#visattn-restoring").inner_text() == zh["restoring"]
                # after some failed attempts Streamlit opens its connection-error dialog
                dialog = page.locator('[role="dialog"]')
                dialog.wait_for(timeout=90_000)
                print(f"\nthe dialog opened {time.monotonic() - stopped:.1f} s after the stop")
                page.wait_for_function(
                    "(want) => document.querySelector('[role=dialog]').innerText.includes(want)",
                    arg=zh["error_title"],
                    timeout=10_000,
                )
                shown = dialog.inner_text()
                page.screenshot(path=str(r.run_dir / "dialog_zh.png"))
                assert zh["error_body"] in shown, shown
                assert "Streamlit" not in shown and "streamlit run" not in shown, shown
                dialog.get_by_role("button", name="Close").click()  # then the status's tooltip
                dialog.wait_for(state="detached", timeout=10_000)
                status.hover()
                page.get_by_text(zh["connecting_help"]).wait_for(timeout=10_000)
                # the server is back: the page is rebuilt, then takes input again
                r.start_program("replica-1")
                status.wait_for(state="detached", timeout=90_000)
                page.locator("#visattn-restoring").wait_for(state="hidden", timeout=90_000)
                page.locator('[data-testid="stSidebar"]').get_by_text("English", exact=True).click()
                page.wait_for_function("() => document.title.startsWith('Positional')")
                assert page.title() == title_of("en")
            finally:
                browser.close()


ERROR_APP = """import sys
sys.path.insert(0, {root!r})
import streamlit as st
from ui.room import connection
st.session_state["lang"] = "zh"
connection.install()
raise RuntimeError("a bug in a page")
"""


@pytest.mark.browser
def test_the_redacted_error_box_is_chinese(tmp_path):
    """With error details hidden (the room's setting) Streamlit's own English sentence replaces any
    uncaught exception; the watcher puts the app's text in its place."""
    require_browser()
    from playwright.sync_api import sync_playwright

    script = tmp_path / "error_app.py"
    script.write_text(ERROR_APP.format(root=str(ROOT)))
    port = serve_room.free_port()
    env = dict(os.environ, STREAMLIT_CLIENT_SHOW_ERROR_DETAILS="none")
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port)]
    server = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        serve_room.wait_healthy(f"http://localhost:{port}", [server], 60)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto(f"http://localhost:{port}/")
                box = page.locator('[data-testid="stException"]')
                box.wait_for(timeout=60_000)
                want = room_texts("zh")["app_error"]
                page.wait_for_function(
                    "(want) => document.querySelector('[data-testid=stException]')"
                    ".innerText.includes(want)",
                    arg=want,
                    timeout=10_000,
                )
                assert "redacted" not in box.inner_text()
            finally:
                browser.close()
    finally:
        serve_room.stop([server])
