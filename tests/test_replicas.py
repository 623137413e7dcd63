"""Serving a room (issue 15): two replicas behind nginx, driven in Chromium; the proxy's and
replicas' refusals; no outbound look-up from a room replica in a network namespace with no route."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import subprocess
import sys
import urllib.parse

import pytest
from apptest_util import ROOT
from browser_util import CHROMIUM, CHROMIUM_ARGS, require_browser, wait_rendered

sys.path.insert(0, str(ROOT / "deploy"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import serve_room  # noqa: E402

PAGE = "positional"  # registry id of a page with a chart that renders in about a second


def require_nginx() -> None:
    if not serve_room.nginx_path():
        if os.environ.get("VISATTN_REQUIRE_BROWSER") == "1":
            pytest.fail("nginx not found; CI installs Debian's nginx in .ci/run")
        pytest.skip("nginx not installed (apt-get install nginx); CI requires it")


def url_path() -> str:
    from ui.registry import PAGES

    return next(p.url_path for p in PAGES if p.id == PAGE)


def title_of(lang: str) -> str:
    nav = json.loads((ROOT / "ui" / "locales" / lang / f"{PAGE}.json").read_text(encoding="utf-8"))[
        "nav"
    ]
    return f"{nav} · visattn"


def get(
    url: str, path: str = "/_stcore/health", headers: dict | None = None
) -> http.client.HTTPResponse:
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp


def cookie_for_replica(url: str, want: str, tries: int = 64) -> str:
    """A sticky-cookie value that nginx routes to replica `want` (found by asking, as a browser
    would be)."""
    for i in range(tries):
        value = f"test{i}"
        if (
            get(url, headers={"Cookie": f"visattn_replica={value}"}).getheader("X-Visattn-Replica")
            == want
        ):
            return value
    raise AssertionError(f"no cookie routed to replica {want} in {tries} tries")


# ---- the room rules that config cannot give (deploy/room_server.py) ----


def test_room_server_replaces_existing_streamlit_functions():
    from streamlit import net_util
    from streamlit.runtime import app_session

    # the names room_server.py replaces: a Streamlit upgrade that renames them must fail here
    assert callable(net_util.get_external_ip)
    assert callable(app_session.AppSession._handle_clear_cache_request)
    code = (
        "import sys; sys.path.insert(0, 'deploy'); import room_server; room_server.harden()\n"
        "from streamlit import net_util\nfrom streamlit.runtime.app_session import AppSession\n"
        "assert net_util.get_external_ip() is None\n"
        "assert AppSession._handle_clear_cache_request is room_server._ignore_clear_cache\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


def test_nginx_config_is_valid(tmp_path):
    require_nginx()
    (tmp_path / "tmp").mkdir()
    for host in (
        "",
        "192.0.2.10",
    ):  # rehearsal (127.0.0.1 only) and a room host (TEST-NET address, never contacted)
        (tmp_path / "nginx.conf").write_text(serve_room.render_config(18501, [18502, 18503], host))
        out = subprocess.run(
            [
                serve_room.nginx_path(),
                "-t",
                "-p",
                str(tmp_path),
                "-c",
                str(tmp_path / "nginx.conf"),
                "-e",
                "stderr",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert out.returncode == 0, out.stderr


def test_replica_command_binds_loopback_and_lists_hosts():
    cmd = serve_room.replica_command(8601, 8501, "192.0.2.10")
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    hosts = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--server.allowedHosts"]
    assert set(hosts) == {"localhost", "127.0.0.1", "::1", "192.0.2.10"}
    assert cmd[cmd.index("--browser.serverAddress") + 1] == "192.0.2.10"


def test_room_replica_offline_makes_no_lookup():
    """In a network namespace with no route: starts, serves, refuses a foreign Host and Origin,
    looks nothing up."""
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("ip")):
        pytest.skip("needs root, unshare and ip (iproute2) to make a network namespace")
    import offline_start

    try:
        [r] = offline_start.run("none", ("room",))
    except RuntimeError as exc:
        if "unshare" in str(exc) and "Operation not permitted" in str(exc):
            pytest.skip(f"network namespaces not permitted here: {exc}")
        raise
    assert r["first_run_error"] == ""
    assert r["host_evil"].startswith("refused"), r
    assert r["origin_evil"].startswith("refused"), r
    assert r["outbound"] == [], r


# ---- two replicas behind the proxy ----


@pytest.mark.browser
def test_two_replicas_behind_nginx_in_chromium(tmp_path):
    require_nginx()
    require_browser()
    import websockets
    from playwright.sync_api import sync_playwright

    with serve_room.room(replicas=2, log_dir=tmp_path) as r:
        # the proxy answers only its own host names; the replicas are not reachable by another name
        # either
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            get(r.url, headers={"Host": "evil.example"})

        async def handshake(origin):
            async with websockets.connect(
                r.url.replace("http", "ws") + "/_stcore/stream",
                subprotocols=["streamlit"],
                origin=origin,
                open_timeout=20,
            ):
                return "accepted"

        with pytest.raises(websockets.InvalidStatus) as refused:
            asyncio.run(handshake("http://evil.example"))
        assert refused.value.response.status_code == 403
        assert asyncio.run(handshake(r.url)) == "accepted"  # same origin, through nginx

        # new visitors are spread over both replicas; a visitor with the cookie stays on its replica
        first = [get(r.url) for _ in range(16)]
        assert {resp.getheader("X-Visattn-Replica") for resp in first} == {"1", "2"}
        [cookie] = [
            c.split(";")[0]
            for c in first[0].headers.get_all("Set-Cookie")
            if c.startswith("visattn_replica=")
        ]
        assert {
            get(r.url, headers={"Cookie": cookie}).getheader("X-Visattn-Replica") for _ in range(6)
        } == {first[0].getheader("X-Visattn-Replica")}

        # one browser session on each replica: the chart draws and a control change reruns over the
        # websocket
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                pages = []
                for replica in ("1", "2"):
                    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
                    ctx.add_cookies(
                        [
                            {
                                "name": "visattn_replica",
                                "value": cookie_for_replica(r.url, replica),
                                "url": r.url,
                            }
                        ]
                    )
                    page = ctx.new_page()
                    page.goto(f"{r.url}/{url_path()}?lang=en")
                    pages.append((replica, ctx, page))
                for replica, ctx, page in pages:
                    wait_rendered(page, True)
                    assert page.title() == title_of("en")
                    assert page.locator('[data-testid="stException"]').count() == 0
                    assert (
                        ctx.request.get(f"{r.url}/_stcore/health").headers["x-visattn-replica"]
                        == replica
                    )
                for _replica, _ctx, page in pages:
                    page.locator('[data-testid="stSidebar"]').get_by_text(
                        "中文", exact=True
                    ).click()
                for replica, _ctx, page in pages:
                    page.wait_for_function(
                        "() => location.search.includes('lang=zh')", timeout=60_000
                    )
                    wait_rendered(page, True)
                    page.screenshot(path=str(tmp_path / f"replica{replica}.png"), full_page=True)
                    assert page.title() == title_of("zh"), (
                        f"replica {replica}: the rerun did not reach the page"
                    )
                    assert page.locator(".js-plotly-plot .main-svg").count() >= 1
                    assert page.locator('[data-testid="stException"]').count() == 0
            finally:
                browser.close()
        assert all(p.poll() is None for p in (r.proxy, *r.replicas)), (
            "a process died during the test"
        )
    assert all(p.poll() is not None for p in (r.proxy, *r.replicas)), "a process outlived the room"
