"""A session whose replica dies moves to another one and keeps working,
its first control change after the move included (a section's control, then the language, after a
second move onto the restarted replica); replicas on two hosts (127.0.0.2, 127.0.0.3) behind one
nginx on 127.0.0.1. Loopback only."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest
from browser_util import CHROMIUM, CHROMIUM_ARGS, require_browser, wait_rendered
from test_replicas import get, ports_free, require_nginx, serve_room, short_run_dir, title_of
from test_room_security import live_session
from test_room_supervisor import healthy, wait_for

from ui.registry import BY_ID

PAGE = BY_ID[
    "positional_encoding"
]  # its first section draws a table whose size is a section control


def cookie(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == "visattn_replica")


def move(page, r, replica: str) -> tuple[float, float]:
    """kill -9 the browser's replica; wait until the page is connected again (to another replica,
    or to this one restarted by supervisord: whichever nginx reaches first) and rebuilt there, and
    check that the process serving it now is not the one killed. Returns the seconds from the kill
    until each."""
    killed = r.pid(f"replica-{replica}")
    os.kill(killed, signal.SIGKILL)
    since = time.monotonic()
    page.wait_for_selector('[data-testid="stConnectionStatus"]', timeout=20_000)
    # ui/room/connection.py: no input until the page has been rebuilt on the new replica
    notice = page.locator("#visattn-restoring")
    assert notice.inner_text() == "Restoring this view…"
    page.wait_for_selector('[data-testid="stConnectionStatus"]', state="detached", timeout=60_000)
    connected = time.monotonic() - since
    notice.wait_for(state="hidden", timeout=90_000)
    restored = time.monotonic() - since
    serving = cookie(page.context)  # nginx names the replica that answered in this cookie
    assert r.pid(f"replica-{serving}") != killed, f"still on the killed replica {serving}"
    return connected, restored


def positions_title(n: int) -> str:
    return f"{n} positions"


@pytest.mark.browser
def test_a_moved_session_keeps_working_and_its_first_change(tmp_path_factory):
    require_nginx()
    require_browser()
    from playwright.sync_api import sync_playwright

    with serve_room.room(replicas=2, run_dir=short_run_dir(tmp_path_factory)) as r:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                ctx = browser.new_context(viewport={"width": 1280, "height": 900})
                ctx.add_cookies([{"name": "visattn_replica", "value": "1", "url": r.url}])
                page = ctx.new_page()
                page.goto(f"{r.url}/{PAGE.url_path}?lang=en")
                wait_rendered(page, True)
                chart = page.locator(".js-plotly-plot .gtitle").first
                assert positions_title(64) in chart.text_content()

                # 1. replica 1 dies: the session moves to replica 2, a new session there
                connected, restored = move(page, r, "1")
                print(
                    f"\nkill -9 of replica 1: connected to replica {cookie(ctx)} after "
                    f"{connected:.1f} s, page rebuilt there after {restored:.1f} s"
                )
                assert cookie(ctx) == "2"  # nginx followed the browser to its new replica
                # its first change, at once: a control inside a section (a partial rerun)
                positions = page.locator('[data-testid="stNumberInput"]').filter(
                    has_text="Positions"
                )
                positions.locator('[data-testid="stNumberInputStepUp"]').click()
                page.wait_for_function("() => location.search.includes('pe_n=65')", timeout=60_000)
                wait_rendered(page, True)
                assert positions_title(65) in chart.text_content()

                # 2. back onto replica 1, restarted by supervisord meanwhile: again a new session
                wait_for(lambda: healthy(f"http://127.0.0.1:{r.replica_ports[0]}"), 60, "restart")
                connected, restored = move(page, r, "2")
                print(
                    f"kill -9 of replica 2: connected to replica {cookie(ctx)} after "
                    f"{connected:.1f} s, page rebuilt there after {restored:.1f} s"
                )
                # on replica 1, restarted since the first move, or on replica 2 restarted already
                # (under load supervisord can restart it before the browser reconnects): a new
                # session either way
                # its first change: the language (a full rerun); the section's change is kept
                page.locator('[data-testid="stSidebar"]').get_by_text("中文", exact=True).click()
                page.wait_for_function("() => location.search.includes('lang=zh')", timeout=60_000)
                wait_rendered(page, True)
                assert page.title() == title_of("zh")
                assert "pe_n=65" in page.url
                assert "65" in chart.text_content()
                assert page.locator('[data-testid="stException"]').count() == 0
            finally:
                browser.close()
    assert ports_free(r)


def test_replicas_on_two_hosts_behind_one_nginx(tmp_path_factory):
    """`make serve-replicas` on two app machines, `make serve-front` on a third: here three
    supervisors on 127.0.0.2, 127.0.0.3 and 127.0.0.1."""
    require_nginx()
    hosts = ("127.0.0.2", "127.0.0.3")
    ports = [serve_room.free_port(h) for h in hosts]
    upstreams = " ".join(f"{h}:{p}" for h, p in zip(hosts, ports, strict=True))
    with contextlib.ExitStack() as stack:
        machines = [
            stack.enter_context(
                serve_room.serve(
                    "replicas", 1, bind=h, replica_port=p, run_dir=short_run_dir(tmp_path_factory)
                )
            )
            for h, p in zip(hosts, ports, strict=True)
        ]
        front = stack.enter_context(
            serve_room.serve("front", upstreams=upstreams, run_dir=short_run_dir(tmp_path_factory))
        )
        # new visitors are spread over both machines; the app runs on each, through nginx
        assert {get(front.url).getheader("X-Visattn-Replica") for _ in range(16)} == {"1", "2"}
        for replica in ("1", "2"):
            with live_session(front.url, {"Cookie": f"visattn_replica={replica}"}) as sid:
                assert sid
        # machine 2 is lost (its supervisor killed: its replica dies with it)
        os.kill(machines[1].supervisor.pid, signal.SIGKILL)
        wait_for(lambda: not serve_room.port_holders(hosts[1], ports[1]), 30, "machine 2 down")
        moved = get(front.url, headers={"Cookie": "visattn_replica=2"})
        assert moved.status == 200 and moved.getheader("X-Visattn-Replica") == "1"
        assert "visattn_replica=1" in moved.getheader("Set-Cookie")
