"""The one timing loop of the benchmarks: warm up, then the median of repeated calls (seconds)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeats: int = 15, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def engine_args(parser, workers: list[str], rounds: int = 5) -> None:
    """The options every engine comparison takes: threads, alternating rounds, and the hidden
    --worker that a round's subprocess runs as (each engine times itself in a process of its
    own)."""
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--rounds", type=int, default=rounds, help="subprocesses per engine, alternating"
    )
    parser.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)


def importable(*modules: str) -> bool:
    """Whether the reference engine's packages import here (torch is only in the benchmark venv)."""
    try:
        for m in modules:
            __import__(m)
    except ImportError:
        return False
    return True
