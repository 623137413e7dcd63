"""The browser's main-thread time a control change costs, before and after a change of the app.

``interact.py`` times a change until the charts settle; on this machine the same measurement
repeated spreads by ±15 % (benchmarks/README), more than a change of a few elements moves it.
This measures what such a change does move: the time Chromium's main thread is busy per control
change (``Performance.getMetrics`` over the DevTools protocol: ``TaskDuration``, of which
``ScriptDuration``, ``LayoutDuration``, ``RecalcStyleDuration``), summed over ``--changes``
changes of one widget and divided by their number. Each checkout (this one and ``--baseline``)
runs its own fresh server; the two alternate for ``--rounds`` rounds, and each figure is the median
over rounds with the spread (min … max).

    .venv/bin/python benchmarks/main_thread.py --baseline /tmp/old --page modern_attention \
        --query mo_sec=window --key mo_wt

A slider is moved by one step with the keyboard (→, then ←), a number input by ↑/↓ and Enter; the
wait after each change (``--wait-ms``) is long enough for the change to settle, and what the
thread does while idle in it is in both checkouts' figures alike."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interact import ARGS, CHROMIUM, ROOT, Server  # noqa: E402

METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
SETTLE_MS = 4000  # after the page's first chart: its other charts and fonts drawn


def busy_per_change(browser, root: Path, args) -> dict[str, float]:
    """Main-thread ms per change of ``args.key`` on a fresh server of the checkout ``root``."""
    with Server(root=root) as server:
        context = browser.new_context(viewport={"width": args.width, "height": 900})
        page = context.new_page()
        page.goto(f"{server.url()}{args.page}?{args.query}")
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached", timeout=120_000)
        page.wait_for_timeout(SETTLE_MS)
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        widget = page.locator(f'[data-testid="stMain"] .st-key-{args.key}')
        slider = widget.locator('input[type="range"]')
        is_slider = slider.count() > 0
        field = slider.first if is_slider else widget.locator("input").first
        field.scroll_into_view_if_needed()

        def metrics() -> dict[str, float]:
            values = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            return {name: values[name] for name in METRICS}

        before = metrics()
        for i in range(args.changes):
            field.focus()
            if is_slider:
                page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            else:
                page.keyboard.press("ArrowUp" if i % 2 == 0 else "ArrowDown")
                page.keyboard.press("Enter")
            page.wait_for_timeout(args.wait_ms)
        after = metrics()
        context.close()
    return {name: (after[name] - before[name]) * 1000 / args.changes for name in METRICS}


def summary(rounds: list[dict[str, float]]) -> str:
    """Each metric's median (min … max) over rounds, ms."""
    parts = []
    for name in METRICS:
        values = [r[name] for r in rounds]
        low, mid, high = min(values), statistics.median(values), max(values)
        parts.append(f"{name.removesuffix('Duration')} {mid:.1f} ({low:.1f} … {high:.1f})")
    return " · ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("--page", default="modern_attention", help="the page's URL path")
    parser.add_argument("--query", default="", help="the page's query string")
    parser.add_argument("--key", required=True, help="the widget key of a slider or number input")
    parser.add_argument("--changes", type=int, default=12, help="changes per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--wait-ms", type=int, default=1500, help="wait after each change")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    checkouts = {"before": args.baseline.resolve(), "after": ROOT}
    measured: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(args.rounds):
            for name, root in checkouts.items():
                measured[name].append(busy_per_change(browser, root, args))
        browser.close()
    print(f"{args.page}?{args.query} `{args.key}`: main-thread ms per change, {args.rounds} rounds")
    for name, rounds in measured.items():
        print(f"  {name}: {summary(rounds)}")


if __name__ == "__main__":
    main()
