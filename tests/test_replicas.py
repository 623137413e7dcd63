"""Serving a room: two replicas behind nginx, driven in Chromium; the proxy's and
replicas' refusals; no outbound look-up from a room replica in a network namespace with no route.
The supervisor, a session's move, several machines and the security headers:
tests/test_room_*.py."""

from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pytest
from apptest_util import ROOT
from browser_util import CHROMIUM, CHROMIUM_ARGS, require_browser, wait_rendered

sys.path.insert(0, str(ROOT / "deploy"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import serve_room  # noqa: E402

PAGE = "positional_encoding"  # registry id of a page with a chart that renders in about a second


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


def cookie_for_replica(url: str, want: str) -> str:
    """The sticky-cookie value that nginx routes to replica `want` (its number), checked by
    asking."""
    answered = get(url, headers={"Cookie": f"visattn_replica={want}"})
    assert answered.getheader("X-Visattn-Replica") == want
    return want


def short_run_dir(tmp_path_factory) -> Path:
    """A run directory whose supervisor socket path stays short (pytest's tmp_path can be long)."""
    return Path(tempfile.mkdtemp(prefix="vr-", dir=tmp_path_factory.getbasetemp()))


def all_running(r) -> bool:
    return {info["statename"] for info in r.processes().values()} == {"RUNNING"}


def ports_free(r) -> bool:
    """No process listens on the room's ports any more."""
    addresses = [(r.bind, p) for p in r.replica_ports]
    if r.url:
        addresses.append(("127.0.0.1", int(r.url.rsplit(":", 1)[1])))
    return not any(serve_room.port_holders(h, p) for h, p in addresses)


# ---- the room rules that config cannot give (deploy/room_server.py) ----


def test_room_server_replaces_existing_streamlit_functions():
    from streamlit import net_util
    from streamlit.runtime import app_session

    # the names room_server.py replaces: a Streamlit upgrade that renames them must fail here
    assert callable(net_util.get_external_ip)
    assert callable(app_session.AppSession._handle_clear_cache_request)
    session = app_session.AppSession
    # rule 3 wraps these two and reads the session's current script runner
    assert list(inspect.signature(session._handle_rerun_script_request).parameters) == [
        "self",
        "client_state",
    ]
    assert list(inspect.signature(session._handle_scriptrunner_event_on_event_loop).parameters)[
        :3
    ] == ["self", "sender", "event"]
    assert "self._scriptrunner = None" in inspect.getsource(session)
    code = (
        "import sys; sys.path.insert(0, 'deploy'); import room_server; room_server.harden()\n"
        "from streamlit import net_util\nfrom streamlit.runtime.app_session import AppSession\n"
        "assert net_util.get_external_ip() is None\n"
        "assert AppSession._handle_clear_cache_request is room_server._ignore_clear_cache\n"
        "assert AppSession._handle_rerun_script_request is room_server._rerun_after_first_run\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


def test_nginx_config_is_valid(tmp_path):
    require_nginx()
    (tmp_path / "tmp").mkdir()
    # rehearsal (127.0.0.1 only), a room host (TEST-NET address, never contacted), several machines
    for host, upstreams in (
        ("", [18502, 18503]),
        ("192.0.2.10", [18502]),
        ("192.0.2.10", "192.0.2.11:8601 192.0.2.11:8602, 192.0.2.12:8601 [2001:db8::1]:8601"),
    ):
        (tmp_path / "nginx.conf").write_text(serve_room.render_config(18501, upstreams, host))
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


def test_held_rerun_requests_merge_into_one():
    sys.path.insert(0, str(ROOT / "deploy"))
    import room_server
    from streamlit.proto.ClientState_pb2 import ClientState

    section = ClientState(fragment_id="f1", query_string="a=1")
    full = ClientState(query_string="a=2")
    newest_section = ClientState(fragment_id="f2", query_string="a=3", is_auto_rerun=True)
    assert room_server._merged([section]).fragment_id == "f1"
    merged = room_server._merged([full, newest_section])
    assert merged.query_string == "a=3"  # the newest widget states and URL
    assert merged.fragment_id == "" and not merged.is_auto_rerun  # a full run: one asked for it
    assert room_server._merged([section, None]) is None  # "rerun with the previous state"


def test_parse_upstreams():
    assert serve_room.parse_upstreams("10.0.0.2:8601, 10.0.0.3:8601 [::1]:8602") == [
        "10.0.0.2:8601",
        "10.0.0.3:8601",
        "[::1]:8602",
    ]
    assert serve_room.parse_upstreams([8601]) == ["127.0.0.1:8601"]
    for bad in ("", "10.0.0.2", "10.0.0.2:http"):
        with pytest.raises(ValueError):
            serve_room.parse_upstreams(bad)


def test_supervisor_restarts_with_backoff_and_a_limit(tmp_path):
    conf = serve_room.supervisor_config(tmp_path, {"replica-1": ["python", "x.py"]}, "pw")
    section = conf.split("[program:replica-1]")[1]
    assert "autorestart=true" in section
    assert f"startsecs={serve_room.START_SECS}" in section
    assert f"startretries={serve_room.START_RETRIES}" in section
    assert f"stdout_logfile={tmp_path / 'replica-1.log'}" in section
    assert "dies_with_parent.py" in section and "--signal KILL" in section
    # the allocator settings that keep a replica's RSS near what it holds (burst.py measures it)
    assert 'environment=MALLOC_ARENA_MAX="2",MALLOC_MMAP_THRESHOLD_="1048576"' in section


def test_replica_command_binds_loopback_and_lists_hosts():
    cmd = serve_room.replica_command(8601, 8501, "192.0.2.10")
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    hosts = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--server.allowedHosts"]
    assert set(hosts) == {"localhost", "127.0.0.1", "::1", "192.0.2.10"}
    assert cmd[cmd.index("--browser.serverAddress") + 1] == "192.0.2.10"
    # on an app machine of a room of several: its own address
    cmd = serve_room.replica_command(8601, 8501, "192.0.2.10", bind="192.0.2.11")
    assert cmd[cmd.index("--server.address") + 1] == "192.0.2.11"


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
def test_two_replicas_behind_nginx_in_chromium(tmp_path, tmp_path_factory):
    require_nginx()
    require_browser()
    import websockets
    from playwright.sync_api import sync_playwright

    with serve_room.room(replicas=2, run_dir=short_run_dir(tmp_path_factory)) as r:
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
        assert all_running(r), f"a process died during the test: {r.processes()}"
    assert r.supervisor.poll() is not None and ports_free(r), "a process outlived the room"
