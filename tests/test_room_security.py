"""A room takes no uploads, shows no metrics, names no nginx version, cannot be
framed, and every page of the app satisfies its Content-Security-Policy in Chromium (no violation,
the inline scripts run, Plotly's PNG export works). Loopback only."""

from __future__ import annotations

import contextlib
import http.client
import json
import urllib.parse
import uuid

import pytest
from browser_util import CHROMIUM, CHROMIUM_ARGS, require_browser, wait_rendered
from test_replicas import get, require_nginx, serve_room, short_run_dir

from ui.registry import PAGES

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}


@pytest.fixture(scope="module")
def one_replica(tmp_path_factory):
    require_nginx()
    with serve_room.room(replicas=1, run_dir=short_run_dir(tmp_path_factory)) as r:
        yield r


def request(url: str, method: str, path: str, body: bytes = b"", headers: dict | None = None):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp


def xsrf_cookie(url: str) -> str:
    """The XSRF cookie a visitor gets with /_stcore/health (the probe's way in)."""
    for header in get(url).headers.get_all("Set-Cookie") or []:
        name, _, rest = header.partition("=")
        if name == "_streamlit_xsrf":
            return rest.split(";")[0]
    raise AssertionError("no _streamlit_xsrf cookie")


@contextlib.contextmanager
def live_session(url: str, headers: dict | None = None):
    """The id of a live session (of a replica, or through nginx): connect, ask for a run, read the
    id from the run's first message; the session lives until the block ends."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    ws_url = url.replace("http", "ws") + "/_stcore/stream"
    with connect(
        ws_url, subprotocols=["streamlit"], additional_headers=headers, open_timeout=20
    ) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        ws.send(msg.SerializeToString())
        for _ in range(200):
            fwd = ForwardMsg()
            fwd.ParseFromString(ws.recv(timeout=60))
            if fwd.WhichOneof("type") == "new_session":
                yield fwd.new_session.initialize.session_id
                return
        raise AssertionError("no new_session message")


def upload(url: str, sid: str, cookie: str):
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n".encode()
        + b"\0" * 1000
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {
        "Cookie": f"_streamlit_xsrf={cookie}",
        "X-Xsrftoken": cookie,
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Host": "localhost",
    }
    return request(url, "PUT", f"/_stcore/upload_file/{sid}/{uuid.uuid4()}", body, headers)


def test_uploads_are_refused_by_nginx_and_by_the_replica(one_replica):
    r = one_replica
    replica = f"http://127.0.0.1:{r.replica_ports[0]}"
    with live_session(replica) as sid:
        cookie = xsrf_cookie(r.url)
        # the probe's request, with a live session and the XSRF cookie: nginx answers itself
        through_nginx = upload(r.url, sid, cookie)
        assert through_nginx.status == 403
        assert through_nginx.getheader("X-Visattn-Replica") is None  # never reached a replica
        for method in ("OPTIONS", "DELETE"):
            assert request(r.url, method, f"/_stcore/upload_file/{sid}/x").status == 403
        # and the replica itself (server.maxUploadSize = 0) refuses any body before reading it
        assert upload(replica, sid, xsrf_cookie(replica)).status == 413


def test_metrics_are_not_served_to_the_room(one_replica):
    r = one_replica
    # the endpoint exists on the replica (so the nginx rule is what keeps it from the room)
    assert get(f"http://127.0.0.1:{r.replica_ports[0]}", "/_stcore/metrics").status == 200
    for path in (
        "/_stcore/metrics",
        "//_stcore/metrics",
        "/_stcore/metrics/",
        "/_stcore/%6Detrics",
    ):
        assert get(r.url, path).status == 404, path


def test_headers_name_no_version_and_forbid_framing(one_replica):
    r = one_replica
    for path in ("/", "/_stcore/health", "/_stcore/upload_file/x/y", "/no-such-page"):
        resp = get(r.url, path)
        assert resp.getheader("Server") == "nginx", path  # server_tokens off: no version
        for name, value in PAGE_HEADERS.items():
            assert resp.getheader(name) == value, (path, name)
        csp = resp.getheader("Content-Security-Policy")
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, path
        assert "'unsafe-eval'" not in csp and "'unsafe-inline'" not in csp.split("style-src")[0]


# Collects every CSP violation of the page, from its first script on.
_LISTEN = """window.visattnViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.visattnViolations.push(
  [e.effectiveDirective, e.blockedURI, (e.sample || "").slice(0, 60), e.sourceFile]
    .join(" | ")));"""


# Every page in English; the link box's script differs by language (its hash too), so Chinese on
# two pages. Plotly's PNG export (data: and blob: images) once: it is the same on every chart.
CASES = [(p.id, "en") for p in PAGES] + [("home", "zh"), ("kernel_regression", "zh")]
EXPORT = ("kernel_regression", "en")


@pytest.mark.browser
@pytest.mark.parametrize(("page_id", "lang"), CASES)
def test_every_page_satisfies_the_csp_in_chromium(page_id, lang, one_replica):
    require_browser()
    from playwright.sync_api import sync_playwright

    page_info = next(p for p in PAGES if p.id == page_id)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(
                viewport={"width": 1280, "height": 900}, accept_downloads=True
            )
            ctx.add_init_script(_LISTEN)
            page = ctx.new_page()
            console = []

            def keep(message):
                console.append(message.text)

            page.on("console", keep)
            page.goto(f"{one_replica.url}/{page_info.url_path}?lang={lang}")
            wait_rendered(page, page_id != "home")
            if (page_id, lang) == EXPORT:
                page.locator(".js-plotly-plot").first.hover()
                with page.expect_download(timeout=60_000) as download:
                    page.locator('.modebar-btn[data-title*="PNG" i]').first.click()
                assert download.value.suggested_filename.endswith(".png")
            # the inline scripts ran (allowed by their hashes): the link box and the watcher
            assert page.locator("#visattn-link").inner_text().startswith(one_replica.url)
            assert page.evaluate("window.visattnWatching === true")
            violations = page.evaluate("window.visattnViolations")
            blocked = [m for m in console if "Content Security Policy" in m]
            assert violations == [] and blocked == [], json.dumps(
                [violations, blocked], ensure_ascii=False
            )
        finally:
            browser.close()


# The lecture's scripts (the tour bar with its keys and scrolling, the speaker view) are
# inline too, allowed by their hashes.
LECTURE = [
    ("kernel_regression?tour=intro&step=1&present=1", "window.visattnKeys === true"),
    ("?speaker=1&tour=intro&step=2&lang=zh", "window.visattnSpeaker instanceof BroadcastChannel"),
]


@pytest.mark.browser
@pytest.mark.parametrize(("path", "ran"), LECTURE, ids=["tour_bar", "speaker_view"])
def test_the_lecture_scripts_satisfy_the_csp(path, ran, one_replica):
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(viewport={"width": 1280, "height": 720})
            ctx.add_init_script(_LISTEN)
            page = ctx.new_page()
            console = []

            def keep(message):
                console.append(message.text)

            page.on("console", keep)
            page.goto(f"{one_replica.url}/{path}")
            wait_rendered(page, "speaker" not in path)
            page.wait_for_function(f"() => {ran}", timeout=30_000)
            violations = page.evaluate("window.visattnViolations")
            blocked = [m for m in console if "Content Security Policy" in m]
            assert violations == [] and blocked == [], json.dumps([violations, blocked])
        finally:
            browser.close()
