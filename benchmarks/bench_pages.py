"""Each page's AppTest rerun time against an empty page's, and the JSON size of the pretrained 12-head grid.

    .venv/bin/python benchmarks/bench_pages.py

A rerun is what a user waits for after moving a slider: the script runs again with the caches warm.
Each page is run once to warm its caches, then rerun several times; the median is divided by the median
rerun of an empty Streamlit script measured in the same process (target ≤ 2×).
"""

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
    """The 1×12 head grid of one MiniLM layer for a 128-token sentence, as the browser receives it."""
    try:
        from visattn import figures
        from visattn.models.minilm import MiniLM
    except ImportError:
        return None
    model = MiniLM.load()
    words = ("the quick brown fox jumps over the lazy dog while the animal did not cross the street " * 20).split()
    for n in range(40, len(words)):
        r = model.run(" ".join(words[:n]))
        if len(r.tokens) >= 128:
            break
    att = r.attentions[:, :, :128, :128]
    fig = figures.head_grid(att[0][None], r.tokens[:128], r.tokens[:128])
    return len(fig.to_json()) / 1e6


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


if __name__ == "__main__":
    main()
