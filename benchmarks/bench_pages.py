"""Each page's AppTest rerun time against an empty page's, the JSON size of the pretrained 12-head
grid, and the JSON sizes of the figures with an in-figure slider (every position
precomputed, sent once, so its JSON is what a slider costs the page).

    .venv/bin/python benchmarks/bench_pages.py

A rerun is what a user waits for after moving a slider: the script runs again with the caches warm.
Each page is run once to warm its caches, then rerun several times; the median is divided by the
median rerun of an empty Streamlit script measured in the same process (target ≤ 2×)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from apptest_util import PAGES, run_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402


def median_rerun(at: AppTest, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def grid_json_mb() -> float | None:
    """The 1×12 head grid of one MiniLM layer for a 128-token sentence, as the browser receives
    it."""
    try:
        from visattn import figures
        from visattn.models.encoder import BertEncoder
    except ImportError:
        return None
    model = BertEncoder.load()
    words = (
        "the quick brown fox jumps over the lazy dog while the animal did not cross the street "
        * 20
    ).split()
    for n in range(40, len(words)):
        r = model.run(" ".join(words[:n]))
        if len(r.tokens) >= 128:
            break
    att = r.attentions[:, :, :128, :128]
    fig = figures.head_grid(att[0][None], r.tokens[:128], r.tokens[:128])
    return len(fig.to_json()) / 1e6


# Views with in-figure sliders (page, URL parameters): what the browser receives for each such
# figure.
LIVE_VIEWS = [
    ("kernel_regression", {}),
    ("kernel_regression", {"kr_preset": "game_both"}),
    ("single_head", {}),
    ("single_head", {"sh_view": "sentence"}),
    ("single_head", {"sh_view": "sqrt"}),
    ("positional_encoding", {"pe_sec": "relative"}),
    ("positional_encoding", {"pe_sec": "beyond"}),
    ("decoder", {}),
]


def live_sizes() -> None:
    """Per view, each figure that carries a Plotly slider or frames: its title and its JSON size."""
    import json

    print("\n| view | figure with an in-figure slider | slider positions | JSON KB |")
    print("|---|---|---|---|")
    for name, params in LIVE_VIEWS:
        at = run_page(name, params, timeout=300)
        view = name + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
        for chart in at.get("plotly_chart"):
            spec = json.loads(chart.proto.spec)
            sliders = spec["layout"].get("sliders") or []
            if sliders or spec.get("frames"):
                title = (spec["layout"].get("title") or {}).get("text", "")
                positions = len(sliders[0]["steps"]) if sliders else len(spec["frames"])
                print(
                    f"| {view} | {title[:60]} | {positions} | {len(chart.proto.spec) / 1e3:.0f} |",
                    flush=True,
                )


def main() -> None:
    empty = AppTest.from_string("import streamlit as st\nst.write('empty')")
    empty.run()
    base = median_rerun(empty)
    print("| page | rerun ms | × an empty script |")
    print("|---|---|---|")
    print(f"| empty `st.write` script | {base * 1e3:.1f} | 1 |")
    for name in PAGES:
        at = run_page(name, timeout=300)
        t = median_rerun(at)
        print(f"| {name} | {t * 1e3:.1f} | {t / base:.1f} |", flush=True)
    mb = grid_json_mb()
    if mb is not None:
        print(f"pretrained 12-head grid, 128 tokens: {mb:.2f} MB of figure JSON (target ≤ 1.5)")
    live_sizes()


if __name__ == "__main__":
    main()
