"""What a person waits for in a real browser: first chart of each page, and a control change until the charts settle.

    .venv-bench/bin/python benchmarks/interact.py [--rounds 7] [--pages kernel single_head …] [--port 8599]

Debian's Chromium (/usr/bin/chromium, `apt-get install chromium`) driven by Playwright; never
`playwright install`. Loopback only; every wait is bounded.

For each page:
- **first chart, fresh server**: a new Streamlit server is started for that page alone, then the page is opened;
  the time is from the navigation's start to the first Plotly chart drawn (``.js-plotly-plot .main-svg``),
  read from ``performance.now()`` in the page. "settled" is when the last chart stopped changing.
- **first chart, warm server**: the same page opened again in a new browser context (a new session) on the
  same server, whose caches are now warm.
- **control → settled**: in that second session, the page's first slider in the main area is focused and moved
  by one step with the keyboard (→, then ← next round, so the value alternates), which sends the value as a
  release does. The time runs from the key press to the last change of any Plotly chart's DOM, once the
  status widget ("Running…") is gone and no chart has changed for ``QUIET_MS``. Pages without a slider use
  their first number input (↑/↓ then Enter) or report "—".
Rounds of a page run back to back; the table gives the median and the spread (min … max) over rounds.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from ui.registry import PAGES  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
QUIET_MS = 600        # no chart change for this long (and no status widget) = settled
NO_EFFECT_S = 15      # a control change after which nothing changed for this long had no visible effect
LOAD_QUIET_MS = 1500  # a first visit: no change in the main area for this long = the page is drawn
PAGE_TIMEOUT_S = 120  # longest wait for a page or a rerun to settle
STATUS = '[data-testid="stStatusWidget"]'

# Installed before any page script: records when the first chart appears and when any chart last changed.
OBSERVER = """
(() => {
  window.__firstChart = null; window.__lastPlot = 0; window.__keyAt = null; window.__plotChanges = 0;
  window.__lastMain = 0;
  const inPlot = (n) => n && (n.nodeType === 1 ? n : n.parentElement)?.closest?.(
      '.js-plotly-plot, [data-testid="stPlotlyChart"]');
  const obs = new MutationObserver((records) => {
    for (const r of records) {
      if ((r.target.nodeType === 1 ? r.target : r.target.parentElement)?.closest?.('[data-testid="stMain"]'))
        window.__lastMain = performance.now();
      let hit = inPlot(r.target);
      if (!hit) for (const n of r.addedNodes) { if (n.nodeType === 1 && (inPlot(n) ||
          n.querySelector?.('.js-plotly-plot, [data-testid="stPlotlyChart"]'))) { hit = true; break; } }
      if (!hit) for (const n of r.removedNodes) { if (n.nodeType === 1 && (n.matches?.(
          '.js-plotly-plot, [data-testid="stPlotlyChart"]') || n.querySelector?.('.js-plotly-plot'))) {
          hit = true; break; } }
      if (hit) {
        window.__lastPlot = performance.now(); window.__plotChanges += 1;
        if (window.__firstChart === null && document.querySelector('.js-plotly-plot .main-svg'))
          window.__firstChart = performance.now();
      }
    }
  });
  const start = () => obs.observe(document.documentElement, {subtree: true, childList: true, attributes: true,
                                                             characterData: true});
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  window.addEventListener('keydown', () => { window.__keyAt = performance.now(); }, true);
  window.addEventListener('pointerdown', () => { window.__keyAt = performance.now(); }, true);
})();
"""
STATE = """() => ({now: performance.now(), first: window.__firstChart, last: window.__lastPlot,
  key: window.__keyAt, changes: window.__plotChanges, main: window.__lastMain,
  status: !!document.querySelector('""" + STATUS + """'),
  skeleton: !!document.querySelector('[data-testid^="stSkeleton"], [data-testid="stAppSkeleton"]')})"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fresh Streamlit server of this repository's app on 127.0.0.1 (its own process, stopped on exit)."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server on port {self.port} did not become healthy in 60 s")

    def url(self, page) -> str:
        return f"http://127.0.0.1:{self.port}/{page.url_path}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_settled(page, since: float) -> dict | None:
    """After a control change at ``since``: poll until the rerun has shown (a chart or the main area changed, or
    the status widget appeared), the status widget is gone, no skeleton is left and no chart has changed for
    QUIET_MS. None when nothing at all changed within NO_EFFECT_S (the control did not rerun anything visible)."""
    start = time.monotonic()
    seen_status = False
    while time.monotonic() - start < PAGE_TIMEOUT_S:
        s = page.evaluate(STATE)
        seen_status |= s["status"]
        changed = s["last"] > since or s["main"] > since or seen_status
        if not changed and time.monotonic() - start > NO_EFFECT_S:
            return None
        if changed and not s["status"] and not s["skeleton"] and s["now"] - max(s["last"], since) >= QUIET_MS:
            return s
        time.sleep(0.025)
    raise TimeoutError("the page did not settle")


def open_page(context, url: str) -> tuple[object, dict]:
    """Open url; return when the script has run (no status widget), no element is a loading skeleton, the
    network is idle and the main area has not changed for LOAD_QUIET_MS. The state's "first" is the first chart
    drawn (None on a page without charts), "last" the last chart change, "main" the last change of the main
    area (all ms from the navigation's start)."""
    page = context.new_page()
    page.add_init_script(OBSERVER)
    page.goto(url, wait_until="commit", timeout=PAGE_TIMEOUT_S * 1000)
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stElementContainer"]',
                           timeout=PAGE_TIMEOUT_S * 1000)
    deadline = time.monotonic() + PAGE_TIMEOUT_S
    while time.monotonic() < deadline:
        s = page.evaluate(STATE)
        if not s["status"] and not s["skeleton"] and s["now"] - max(s["main"], s["last"]) >= LOAD_QUIET_MS:
            page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_S * 1000)  # lazy chunks fetched
            s = page.evaluate(STATE)
            if not s["status"] and not s["skeleton"] and s["now"] - max(s["main"], s["last"]) >= LOAD_QUIET_MS:
                return page, s
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not settle in {PAGE_TIMEOUT_S} s")


def find_control(page):
    """(kind, change(round)) for the first control of the main area in the order slider, number input, radio,
    segmented control, toggle; each change alternates between two values. (None, None) when there is none."""
    main = page.locator('[data-testid="stMain"]')

    def keys(locator, forward, back):
        def change(i):
            locator.focus()
            page.wait_for_timeout(200)
            mark = page.evaluate(STATE)["now"]
            for key in (forward if i % 2 == 0 else back):
                page.keyboard.press(key)
            return mark
        return change

    def clicks(pick):
        def change(i):
            target = pick(i)
            target.hover()
            page.wait_for_timeout(200)
            mark = page.evaluate(STATE)["now"]
            target.click()
            return mark
        return change

    slider = main.locator('[data-testid="stSlider"] [role="slider"]')
    if slider.count():
        return "slider", keys(slider.first, ["ArrowRight"], ["ArrowLeft"])
    number = main.locator('[data-testid="stNumberInput"] input')
    if number.count():
        return "number input", keys(number.first, ["ArrowUp", "Enter"], ["ArrowDown", "Enter"])
    for kind, group, option in (("radio", '[data-testid="stRadio"]', "label"),
                                ("segmented control", '[data-testid="stButtonGroup"]', "button")):
        groups = main.locator(group)
        if groups.count() and groups.first.locator(option).count() >= 2:
            options = groups.first.locator(option)
            return kind, clicks(lambda i, options=options: options.nth(1 if i % 2 == 0 else 0))
    toggle = main.locator('[data-testid="stCheckbox"] label')
    if toggle.count():
        return "toggle", clicks(lambda i: toggle.first)
    return None, None


def interact(page, rounds: int) -> tuple[str | None, list[float]]:
    kind, change = find_control(page)
    if change is None:
        return None, []
    times = []
    for i in range(rounds):
        mark = change(i)
        s = wait_settled(page, mark)
        if s is None:
            continue
        key = s["key"] if s["key"] and s["key"] > mark else mark
        end = s["last"] if s["last"] > key else s["main"]  # no chart changed: the main area's last change
        times.append(max(end, key) - key)
    return kind, times


def measure_page(browser, p, args) -> tuple:
    """(id, fresh state, warm state, control kind, control times) of one page on its own fresh server."""
    with Server() as server:
        ctx = browser.new_context(viewport={"width": args.width, "height": 900})
        _, fresh = open_page(ctx, server.url(p))
        ctx.close()
        ctx = browser.new_context(viewport={"width": args.width, "height": 900})
        try:
            page, warm = open_page(ctx, server.url(p))
            kind, times = interact(page, args.rounds)
        finally:
            ctx.close()
    print(f"  {p.id}: fresh {ms(fresh['first'])} ms, warm {ms(warm['first'])} ms, {kind}: "
          f"control → settled {fmt(times)} ms", file=sys.stderr, flush=True)
    return p.id, fresh, warm, kind, times


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def fmt(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values):.0f} ({min(values):.0f} … {max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pages", nargs="+", default=[p.id for p in PAGES])
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still stops the server it started
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium (Debian's; never `playwright install`)")
    from playwright.sync_api import sync_playwright

    pages = [p for p in PAGES if p.id in args.pages]
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for p in pages:
                try:
                    rows.append(measure_page(browser, p, args))
                except Exception as exc:  # one page's failure is reported, the others are still measured
                    print(f"  {p.id}: failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
                    rows.append((p.id, None, None, f"failed: {type(exc).__name__}", []))

        finally:
            browser.close()

    print(f"rounds={args.rounds}  viewport={args.width} px  quiet={QUIET_MS} ms  load={os.getloadavg()[0]:.1f}")
    print("| page | first chart, fresh server ms | page drawn, fresh ms | first chart, warm server ms "
          "| page drawn, warm ms | control | control → charts settled ms, median (min … max) |")
    print("|---|---|---|---|---|---|---|")
    for name, fresh, warm, kind, times in rows:
        if fresh is None:
            print(f"| {name} | — | — | — | — | {kind} | — |")
            continue
        print(f"| {name} | {ms(fresh['first'])} | {ms(max(fresh['main'], fresh['last']))} | {ms(warm['first'])} "
              f"| {ms(max(warm['main'], warm['last']))} | {kind or '—'} "
              f"| {fmt(times)} |")
    if any(fresh is None for _, fresh, *_ in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
