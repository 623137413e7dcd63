"""What a person waits for in a real browser: first chart of each page, and a control change until
the charts settle.

    .venv-bench/bin/python benchmarks/interact.py [--rounds 7] [--pages kernel single_head …]
        [--width 1280] [--section decoder=dec_shape …] [--query modern=mo_sec=window …]
        [--no-drag] [--visit-tabs] [--baseline /tmp/old]

Debian's Chromium (/usr/bin/chromium, `apt-get install chromium`) driven by Playwright; never
`playwright install`. Loopback only; every wait is bounded.

For each page:
- **first chart, fresh server**: a new Streamlit server is started for that page alone, then the
  page is opened; the time is from the navigation's start to the first Plotly chart drawn
  (``.js-plotly-plot .main-svg``), read from ``performance.now()`` in the page. "settled" is when
  the last chart stopped changing.
- **first chart, warm server**: the same page opened again in a new browser context (a new session)
  on the same server, whose caches are now warm.
- **first control → settled**: in that second session, the page's first control in the main area (a
  slider, else a number input, radio, segmented control, toggle, select box) is changed: a slider is
  focused and moved by one step with the keyboard (→, then ← next round, so the value alternates),
  which sends the value as a release does; a number input gets ↑/↓ then Enter; a select box is
  opened and its next option clicked; the others are clicked. This
  control usually feeds every section, so the whole page reruns. The time runs from the key press
  (or click) to the last change of any Plotly chart's DOM, once no element is stale (``data-stale``:
  Streamlit fades what a run has not redrawn yet), the status widget ("Running…") is gone and no
  chart has changed for ``QUIET_MS``.
- **section control → settled**: the same for one control inside a lesson section
  (``ui.frame.section``, an ``st.fragment``), found by its widget key (``SECTION_CONTROL``, or
  ``--section page=key``): only that section reruns, and a partial rerun shows no status widget, so
  "settled" is the stale elements gone and the Plotly DOM quiet for ``QUIET_MS``.
- **after a visit to every tab** (``--visit-tabs``): before its controls are changed, each tab of
  the warm session's page is opened once, then the one it opened on again: a page that kept every
  tab it had drawn would be at its heaviest then (``ui.frame.tabs`` draws every tab's panel; a
  chart in a hidden one is drawn when it first shows).
- **in-figure drag**: where a chart has a Plotly slider of its own (``layout.sliders``), its handle
  is dragged across the rail with the mouse in ``DRAG_MOVES`` moves; per move, the time from the
  pointer event to the chart's last DOM change, and the websocket frames the page sent during the
  whole drag (0 = no server round trip).
- **floor**: ``benchmarks/floor_app.py``, a Streamlit app with one slider and one three-bar chart
  (the slider once for a whole run, once inside a fragment), on its own server and in its own tab
  for the whole run. It is the least any Streamlit control costs in this browser on this machine.
  Its slider is changed right before each change of a page's control (the whole-run slider before
  the first control's, the fragment's before a section control's): the rounds alternate floor,
  page, floor, page …, so both see the same load, and each page's median is also given as a
  multiple of the floor's median over the same rounds, which is the figure to compare between
  runs and machines. The table gives the median and the spread (min … max) over rounds.
- **CPU per change**: the processor time (user + system) that this script's child processes —
  Chromium's and the Streamlit servers' — spent from the key press until the charts settled, read
  from ``/proc`` (clock ticks: 10 ms). On a shared machine a wall-clock time grows with everyone
  else's load, the CPU a change costs much less: the column to read when the load average is far
  above the 2 cores (Playwright's driver is left out; the browser's share of this script's
  polling, every ``POLL_S``, stays in, floor and page alike), as a median and as a multiple of the
  floor's median next to it.
- **before and after** (``--baseline CHECKOUT``): each page is measured in that checkout ("before")
  and in this one ("after"), one after the other, each against the floor in alternating rounds of
  its own, so both are measured in the same run under the same load."""

from __future__ import annotations

import argparse
import itertools
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
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUIET_MS = 600  # no chart change for this long (and nothing stale, no status widget) = settled
NO_EFFECT_S = 15  # a control change after which nothing changed for this long had no visible effect
LOAD_QUIET_MS = 1500  # a first visit: no change in the main area for this long = the page is drawn
PAGE_TIMEOUT_S = 120  # longest wait for a page or a rerun to settle
STATUS = '[data-testid="stStatusWidget"]'
STALE = '[data-testid="stMain"] [data-stale="true"]'
# How often the script asks the page for its state while it waits: the times themselves are the
# page's own timestamps, so this only delays noticing; each question costs the browser CPU.
POLL_S = 0.1
DRAG_MOVES = 8  # mouse moves of one in-figure slider drag
DRAG_WAIT_MS = 350  # after each move: the browser's redraw is over well before this
# One control inside a lesson section per page (its widget key): changing it reruns that section
# alone.
SECTION_CONTROL = {
    "kernel_regression": "kr_q_s",  # ① one query: the query (the slider of slider_and_number)
    "single_head": "sh_scale",  # the part's options: scaling by √d_k
    "multi_head": "mh_sH",  # the shape explorer: heads (no chart: its last change)
    "positional_encoding": "pe_d",  # the sinusoid table (the default section): d_model
    "pretrained": "pt_thr",  # one head: the lines' threshold
    "reading": "rd_thr",  # the line filters: threshold
    "decoder": "dec_shape",  # what the cache saves: the model
    # grouped-query attention (the default section): the causal mask
    "modern_attention": "mo_causal",
}

# Installed before any page script: records when the first chart appears and when any chart last
# changed.
OBSERVER = """
(() => {
  window.__firstChart = null;
  window.__lastPlot = 0;
  window.__keyAt = null;
  window.__plotChanges = 0;
  window.__lastMain = 0;
  const CHART = '.js-plotly-plot, [data-testid="stPlotlyChart"]';
  const element = (n) => (n.nodeType === 1 ? n : n.parentElement);
  const inPlot = (n) => n && element(n)?.closest?.(CHART);
  const addsChart = (n) => n.nodeType === 1 && (inPlot(n) || n.querySelector?.(CHART));
  const removesChart = (n) => n.nodeType === 1
    && (n.matches?.(CHART) || n.querySelector?.('.js-plotly-plot'));
  const obs = new MutationObserver((records) => {
    for (const r of records) {
      if (element(r.target)?.closest?.('[data-testid="stMain"]')) {
        window.__lastMain = performance.now();
      }
      const hit = inPlot(r.target) || Array.from(r.addedNodes).some(addsChart)
        || Array.from(r.removedNodes).some(removesChart);
      if (hit) {
        window.__lastPlot = performance.now();
        window.__plotChanges += 1;
        if (window.__firstChart === null && document.querySelector('.js-plotly-plot .main-svg')) {
          window.__firstChart = performance.now();
        }
      }
    }
  });
  const watched = {subtree: true, childList: true, attributes: true, characterData: true};
  const start = () => obs.observe(document.documentElement, watched);
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  window.addEventListener('keydown', () => { window.__keyAt = performance.now(); }, true);
  window.addEventListener('pointerdown', () => { window.__keyAt = performance.now(); }, true);
  // a drag's move: the first pointer event after arming
  window.__moveArm = false;
  window.__moveAt = 0;
  window.addEventListener('pointermove', () => {
    if (window.__moveArm) {
      window.__moveAt = performance.now();
      window.__moveArm = false;
    }
  }, true);
})();
"""
SKELETON = '[data-testid^="stSkeleton"], [data-testid="stAppSkeleton"]'
STATE = (
    """() => ({now: performance.now(), first: window.__firstChart, last: window.__lastPlot,
  key: window.__keyAt, changes: window.__plotChanges, main: window.__lastMain,
  move: window.__moveAt || 0, stale: document.querySelectorAll('"""
    + STALE
    + """').length,
  status: !!document.querySelector('"""
    + STATUS
    + """'),
  skeleton: !!document.querySelector('"""
    + SKELETON
    + """')})"""
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fresh Streamlit server of this repository's app on 127.0.0.1 (its own process, stopped on
    exit)."""

    def __init__(self, port: int | None = None, app: str = "app.py", root: Path = ROOT):
        self.port = port or free_port()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                app,
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
            ],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2
                ) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server on port {self.port} did not become healthy in 60 s")

    def url(self, page=None) -> str:
        return f"http://127.0.0.1:{self.port}/{page.url_path if page else ''}"

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


def children_cpu_ms() -> float:
    """User + system CPU of every process descended from this one but Playwright's Node.js driver
    (whose share is this script's polling): the browser's and the servers', in ms, from ``/proc``
    (a process that has ended no longer counts: read it around one change)."""
    parent, ticks = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # ended while we looked
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])  # field 4 of stat: the parent's pid
        driver = name.startswith("node")
        ticks[pid] = 0 if driver else int(fields[11]) + int(fields[12])  # fields 14, 15
    mine, total = {os.getpid()}, 0
    for pid in sorted(parent):  # children have larger pids, except after pid wrap-around
        if parent[pid] in mine:
            mine.add(pid)
    for pid in sorted(parent):  # a second pass catches the wrapped-around ones
        if parent[pid] in mine:
            mine.add(pid)
    for pid in mine - {os.getpid()}:
        total += ticks.get(pid, 0)
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def wait_settled(page, since: float) -> dict | None:
    """After a control change at ``since``: poll until the rerun has shown (a chart or the main area
    changed, an element went stale or the status widget appeared), nothing is stale, the status
    widget is gone, no skeleton is left and no chart has changed for QUIET_MS. A section's partial
    rerun shows no status widget: its stale elements and the Plotly DOM tell when it is over. None
    when nothing at all changed within NO_EFFECT_S (the control did not rerun anything visible)."""
    start = time.monotonic()
    seen = False
    while time.monotonic() - start < PAGE_TIMEOUT_S:
        s = page.evaluate(STATE)
        seen |= s["status"] or s["stale"] > 0
        changed = s["last"] > since or s["main"] > since or seen
        if not changed and time.monotonic() - start > NO_EFFECT_S:
            return None
        if (
            changed
            and not s["status"]
            and not s["stale"]
            and not s["skeleton"]
            and s["now"] - max(s["last"], since) >= QUIET_MS
        ):
            return s
        time.sleep(POLL_S)
    raise TimeoutError("the page did not settle")


def open_page(context, url: str, sent: list | None = None) -> tuple[object, dict]:
    """Open url; return when the script has run (no status widget), no element is a loading
    skeleton, the network is idle and the main area has not changed for LOAD_QUIET_MS. The state's
    "first" is the first chart drawn (None on a page without charts), "last" the last chart change,
    "main" the last change of the main area (all ms from the navigation's start). ``sent`` collects
    the times of the websocket frames the page sends."""
    page = context.new_page()
    page.add_init_script(OBSERVER)
    if sent is not None:
        page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(time.monotonic())))
    page.goto(url, wait_until="commit", timeout=PAGE_TIMEOUT_S * 1000)
    page.wait_for_selector(
        '[data-testid="stMain"] [data-testid="stElementContainer"]', timeout=PAGE_TIMEOUT_S * 1000
    )
    deadline = time.monotonic() + PAGE_TIMEOUT_S
    while time.monotonic() < deadline:
        s = page.evaluate(STATE)
        if (
            not s["status"]
            and not s["stale"]
            and not s["skeleton"]
            and s["now"] - max(s["main"], s["last"]) >= LOAD_QUIET_MS
        ):
            # lazy chunks fetched
            page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_S * 1000)
            s = page.evaluate(STATE)
            if (
                not s["status"]
                and not s["stale"]
                and not s["skeleton"]
                and s["now"] - max(s["main"], s["last"]) >= LOAD_QUIET_MS
            ):
                return page, s
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not settle in {PAGE_TIMEOUT_S} s")


def find_control(page, key: str | None = None):
    """(kind, change(round)) for the first control of the main area (or of the widget with this key)
    in the order slider, number input, radio, segmented control, toggle, select box (a key may name
    a tab container: its tabs); each change
    alternates between two values (a select box steps to its next option). (None, None) when there
    is none."""
    main = page.locator(
        f'[data-testid="stMain"] .st-key-{key}' if key else '[data-testid="stMain"]'
    )
    if key and not main.count():
        return None, None

    def keys(locator, forward, back):
        def change(i):
            locator.scroll_into_view_if_needed()
            locator.focus()
            page.wait_for_timeout(200)
            mark = page.evaluate(STATE)["now"]
            for k in forward if i % 2 == 0 else back:
                page.keyboard.press(k)
            return mark

        return change

    def clicks(pick):
        def change(i):
            target = pick(i)
            target.scroll_into_view_if_needed()
            target.hover()
            page.wait_for_timeout(200)
            mark = page.evaluate(STATE)["now"]
            target.click()
            return mark

        return change

    def next_option(box):
        """Open the select box; its next option (its first, after the last), for :func:`clicks`:
        the time runs from the click on it, as a person's choice does."""

        def pick(i):
            box.scroll_into_view_if_needed()
            box.click()
            options = page.locator('[role="listbox"] [role="option"]')
            options.first.wait_for(timeout=PAGE_TIMEOUT_S * 1000)
            chosen = options.evaluate_all(
                "(os) => os.findIndex((o) => o.getAttribute('aria-selected') === 'true')"
            )
            return options.nth((chosen + 1) % options.count())

        return pick

    # A key that names a tab container (st.tabs(key=…)): its tabs are the control, clicked in turn
    # (the second, then the first)
    tabs = main.locator(':scope[data-testid="stTabs"] > div > [role="tablist"] [role="tab"]')
    if key and tabs.count() >= 2:
        return "tabs", clicks(lambda i: tabs.nth(1 if i % 2 == 0 else 0))
    # Streamlit 1.67's slider is react-aria's: an <input type="range"> in each thumb (no
    # role="slider" element). Only a control that shows: not one in a tab that is not open
    slider = main.locator(
        '[data-testid="stSlider"]:visible input[type="range"],'
        ' [data-testid="stSlider"]:visible [role="slider"]'
    )
    if slider.count():
        return "slider", keys(slider.first, ["ArrowRight"], ["ArrowLeft"])
    number = main.locator('[data-testid="stNumberInput"]:visible input')
    if number.count():
        return "number input", keys(number.first, ["ArrowUp", "Enter"], ["ArrowDown", "Enter"])
    for kind, group, option in (
        ("radio", '[data-testid="stRadio"]:visible', 'label:has(input[type="radio"])'),
        ("segmented control", '[data-testid="stButtonGroup"]:visible', "button"),
    ):
        groups = main.locator(group)
        if groups.count() and groups.first.locator(option).count() >= 2:
            options = groups.first.locator(option)
            return kind, clicks(lambda i, options=options: options.nth(1 if i % 2 == 0 else 0))
    toggle = main.locator('[data-testid="stCheckbox"]:visible label')
    if toggle.count():
        return "toggle", clicks(lambda i: toggle.first)
    select = main.locator('[data-testid="stSelectbox"]:visible [role="combobox"]')
    if select.count():
        return "select box", clicks(next_option(select.first))
    return None, None


def visit_tabs(page) -> int:
    """Open every tab of the main area once, in order, each until settled, then the one open
    before; returns how many tabs there are."""
    tabs = page.locator('[data-testid="stMain"] [role="tab"]')
    n = tabs.count()
    selected = [tabs.nth(i).get_attribute("aria-selected") == "true" for i in range(n)]
    open_before = selected.index(True) if True in selected else 0
    others = [i for i in range(n) if i != open_before]
    for i in [*others, open_before] if others else []:
        since = page.evaluate("() => performance.now()")
        tabs.nth(i).click()
        wait_settled(page, since)
    return n


def interact(
    page, rounds: int, key: str | None = None, floor=None
) -> tuple[str | None, list[float], list[float], dict]:
    """``rounds`` changes of the control (``key``, or the page's first): its kind, each change's
    time until settled (ms), and each change's CPU (ms, :func:`children_cpu_ms`). With ``floor`` =
    (the floor app's page, its control's key), each change is preceded by one of the floor's, so
    the rounds alternate floor, page, floor, page …; the last item is then the floor's {"times",
    "cpu"} (else empty)."""
    kind, change = find_control(page, key)
    if change is None:
        return None, [], [], {}
    floor_change = find_control(*floor)[1] if floor else None
    times, cpu, floor_times, floor_cpu = [], [], [], []
    for i in range(rounds):
        if floor_change is not None:
            measured = settle(floor[0], floor_change, i)
            if measured is not None:
                floor_times.append(measured[0])
                floor_cpu.append(measured[1])
        measured = settle(page, change, i)
        if measured is not None:
            times.append(measured[0])
            cpu.append(measured[1])
    paired = {"times": floor_times, "cpu": floor_cpu} if floor else {}
    return kind, times, cpu, paired


def settle(page, change, i: int) -> tuple[float, float] | None:
    """Change number ``i`` of a control (``change``, from :func:`find_control`): the time from the
    key press or click until settled, and the CPU it cost (ms); None when nothing changed."""
    cpu_before = children_cpu_ms()
    mark = change(i)
    s = wait_settled(page, mark)
    if s is None:
        return None
    cpu = children_cpu_ms() - cpu_before
    start = s["key"] if s["key"] and s["key"] > mark else mark
    # no chart changed: the main area's last change
    end = s["last"] if s["last"] > start else s["main"]
    return max(end, start) - start, cpu


def drag(page, sent: list) -> tuple[list[float], int | None]:
    """Drag the first in-figure Plotly slider's handle across its rail: per move, pointer event →
    the chart's last DOM change (ms); and the websocket frames the page sent during the drag. ([],
    None) without such a slider."""
    grip = page.locator(
        '[data-testid="stMain"] .js-plotly-plot .slider-container .slider-grip-rect'
    )
    rail = page.locator(
        '[data-testid="stMain"] .js-plotly-plot .slider-container .slider-rail-rect'
    )
    if not grip.count() or not rail.count():
        return [], None
    grip.first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    g, r = grip.first.bounding_box(), rail.first.bounding_box()
    if not g or not r:
        return [], None
    y = g["y"] + g["height"] / 2
    x0 = g["x"] + g["width"] / 2
    right = r["x"] + r["width"] - 2
    # drag towards the far end
    span = (right - x0) if right - x0 > r["width"] / 3 else (r["x"] + 2 - x0)
    page.mouse.move(x0, y)
    page.mouse.down()
    before, times = len(sent), []
    for k in range(1, DRAG_MOVES + 1):
        page.evaluate("() => { window.__moveArm = true; }")
        page.mouse.move(x0 + span * k / DRAG_MOVES, y, steps=2)
        page.wait_for_timeout(DRAG_WAIT_MS)
        s = page.evaluate(STATE)
        # the chart changed after this move's first pointer event
        if s["move"] and s["last"] > s["move"]:
            times.append(s["last"] - s["move"])
    page.mouse.up()
    page.wait_for_timeout(DRAG_WAIT_MS)
    return times, len(sent) - before


def measure_page(browser, p, args, floor_page, root: Path = ROOT, version: str = "") -> dict:
    """One page of the checkout ``root`` on its own fresh server: first visit fresh and warm, then
    in the warm session the first control and a section's control, each change right after one of
    the floor app's (in ``floor_page``: its whole-run slider, then its section's), and an in-figure
    drag."""
    row = dict(id=f"{p.id} {version}".strip())
    query = args.query.get(p.id, "")
    with Server(root=root) as server:
        url = server.url(p) + (f"?{query}" if query else "")
        ctx = browser.new_context(viewport={"width": args.width, "height": 900})
        _, row["fresh"] = open_page(ctx, url)
        ctx.close()
        ctx = browser.new_context(viewport={"width": args.width, "height": 900})
        floor = {}
        try:
            sent: list = []
            page, row["warm"] = open_page(ctx, url, sent)
            if args.visit_tabs:
                visit_tabs(page)
            row["kind"], row["times"], row["cpu"], whole = interact(
                page, args.rounds, floor=(floor_page, None)
            )
            floor |= {"whole": whole.get("times", []), "whole_cpu": whole.get("cpu", [])}
            key = args.section.get(p.id)
            row["section_key"] = key
            # a control in a closed tab or expander cannot be reached: reported, the rest still
            # measured
            try:
                row["section_kind"], row["section_times"], row["section_cpu"], section = (
                    interact(page, args.rounds, key, floor=(floor_page, "floor_section"))
                    if key
                    else (None, [], [], {})
                )
            except Exception as exc:  # noqa: BLE001
                row["section_kind"] = f"failed: {type(exc).__name__}"
                row["section_times"], row["section_cpu"], section = [], [], {}
            floor |= {"section": section.get("times", []), "section_cpu": section.get("cpu", [])}
            try:
                row["drag"], row["drag_sent"] = drag(page, sent) if args.drag else ([], None)
            except Exception as exc:  # noqa: BLE001
                print(
                    f"  {p.id}: drag failed: {type(exc).__name__}: {str(exc)[:200]}",
                    file=sys.stderr,
                    flush=True,
                )
                row["drag"], row["drag_sent"] = [], None
        finally:
            ctx.close()
    return row | {"floor": floor}


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def fmt(values: list[float], floor: list[float] | None = None) -> str:
    """Median (min … max); with the floor measured next to it, also the median as a multiple of the
    floor's."""
    if not values:
        return "—"
    ratio = (
        f" = **{statistics.median(values) / statistics.median(floor):.1f}×** floor" if floor else ""
    )
    return f"{statistics.median(values):.0f} ({min(values):.0f} … {max(values):.0f}){ratio}"


def table_row(r: dict) -> str:
    """One page's row of the table (markdown)."""
    if "failed" in r:
        return f"| {r['id']} | — | — | — | — | {r['failed']} | — | — | — | — | — | — | — |"
    fresh, warm, floor = r["fresh"], r["warm"], r.get("floor", {})
    section = f"{r['section_kind']} (`{r['section_key']}`)" if r["section_kind"] else "—"
    return (
        f"| {r['id']} | {ms(fresh['first'])} | {ms(max(fresh['main'], fresh['last']))} | "
        f"{ms(warm['first'])} "
        f"| {ms(max(warm['main'], warm['last']))} | {r['kind'] or '—'} | "
        f"{fmt(r['times'], floor.get('whole'))} | {fmt(r['cpu'], floor.get('whole_cpu'))} "
        f"| {section} | {fmt(r['section_times'], floor.get('section'))} "
        f"| {fmt(r['section_cpu'], floor.get('section_cpu'))} | {fmt(r['drag'])} "
        f"| {'—' if r['drag_sent'] is None else r['drag_sent']} |"
    )


def per_page(items: list[str]) -> dict[str, str]:
    """``page=value`` items as {page: value}; the value may hold "=" itself (a query string)."""
    out = {}
    for item in items:
        page, _, value = item.partition("=")
        out[page] = value
    return out


def section_map(items: list[str]) -> dict[str, str]:
    """SECTION_CONTROL overridden by ``page=key`` items (``page=`` alone: no section control on that
    page)."""
    out = dict(SECTION_CONTROL)
    for page, key in per_page(items).items():
        out[page] = key or None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pages", nargs="+", default=[p.id for p in PAGES])
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument(
        "--section",
        nargs="*",
        default=[],
        metavar="PAGE=KEY",
        help="the widget key of a control inside a lesson section, per page "
        "(default: SECTION_CONTROL)",
    )
    parser.add_argument(
        "--query",
        nargs="*",
        default=[],
        metavar="PAGE=QUERY",
        help="a query string to open a page with, e.g. modern=mo_sec=window (a link to one of "
        "its sections)",
    )
    parser.add_argument(
        "--no-drag", dest="drag", action="store_false", help="skip the in-figure slider drag"
    )
    parser.add_argument(
        "--visit-tabs",
        action="store_true",
        help="open every tab of a page once before changing its controls (every section drawn)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="another checkout of the app (git worktree add /tmp/old COMMIT): each page is "
        "measured there and here in turn, each in rounds alternating with the floor",
    )
    args = parser.parse_args()
    args.section = section_map(args.section)
    args.query = per_page(args.query)
    # a kill still stops the server it started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not Path(CHROMIUM).exists():
        sys.exit(
            f"{CHROMIUM} is missing: apt-get install chromium (Debian's; never `playwright "
            "install`)"
        )
    from playwright.sync_api import sync_playwright

    pages = [p for p in PAGES if p.id in args.pages]
    rows, floors, floor_first = [], [], {"first": None}
    load_before = os.getloadavg()[0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            with Server(app="benchmarks/floor_app.py") as floor_server:
                floor_ctx = browser.new_context(viewport={"width": args.width, "height": 900})
                floor_page, floor_first = open_page(floor_ctx, floor_server.url())
                versions = (
                    [("before", args.baseline), ("after", ROOT)] if args.baseline else [("", ROOT)]
                )
                for p, (version, root) in itertools.product(pages, versions):
                    try:
                        row = measure_page(browser, p, args, floor_page, root, version)
                        rows.append(row)
                        floors.append(row["floor"])
                        # a cut-short run keeps its rows
                        print(
                            f"  {table_row(rows[-1])}  (load {os.getloadavg()[0]:.1f})",
                            file=sys.stderr,
                            flush=True,
                        )
                    except (
                        Exception
                    ) as exc:  # one page's failure is reported, the others are still measured
                        print(
                            f"  {p.id}: failed: {type(exc).__name__}: {str(exc)[:300]}",
                            file=sys.stderr,
                            flush=True,
                        )
                        failed = f"failed: {type(exc).__name__}"
                        rows.append(dict(id=f"{p.id} {version}".strip(), failed=failed))
                floor_ctx.close()
        finally:
            browser.close()

    print(
        f"rounds={args.rounds}  viewport={args.width} px  quiet={QUIET_MS} ms  "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} "
        "CPUs)"
    )
    print(
        "| page | first chart, fresh server ms | page drawn, fresh ms "
        "| first chart, warm server ms | page drawn, warm ms | first control "
        "| → charts settled ms, median (min … max) | CPU ms | section control (key) "
        "| → settled ms | CPU ms | in-figure drag: move → redraw ms | frames sent in the drag |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(table_row(r))
    every = {
        k: [x for f in floors for x in f[k]]
        for k in ("whole", "section", "whole_cpu", "section_cpu")
    }
    print(
        f"\nfloor (benchmarks/floor_app.py: one slider, one three-bar chart), all {len(floors)} "
        "measurements: "
        f"whole run {fmt(every['whole'])} ms (CPU {fmt(every['whole_cpu'])} ms), section "
        f"(st.fragment) {fmt(every['section'])} ms (CPU {fmt(every['section_cpu'])} ms); "
        "its first visit "
        f"on a fresh server: first chart {ms(floor_first['first'])} ms (Streamlit's and Plotly's "
        "JavaScript)"
    )
    if any("failed" in r for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
