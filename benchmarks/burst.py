"""A burst of long texts on one replica: the room's memory budget and admission control, which
must keep a replica within its memory when many long texts arrive at once.

    .venv/bin/python benchmarks/burst.py [--sessions 10 20] [--rounds 8] [--budget-mb 600]

For each level N a fresh server starts (one replica, with the environment serve_room.py gives a
replica, ``REPLICA_ENV``; the budget from ``--budget-mb`` through ``VISATTN_BUDGET_MB``; without it
the app's default). A small session first reruns the kernel page
``--rounds`` times alone (its idle time). Then N sessions open the pretrained page at once, each
with its own 512-token text (distinct texts: nothing is shared) and one of four readings (weights,
weights × ‖value‖, mean, rollout), while the small session keeps rerunning. Reported: the server's
peak resident memory (sampled every 0.2 s), how long the burst's sessions took, and the small
rerun's median and worst during the burst as multiples of its idle median.

Loopback only, bounded: at most 40 sessions a level, every run has a deadline (``--timeout``), and
the whole script stops by ``--deadline``. It speaks Streamlit's websocket protocol as
``load_ws.py`` does (no browser)."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "deploy"))
from load import server_pid, streamlit_server  # noqa: E402
from load_ws import RssWatch, _run_once, require_loopback  # noqa: E402
from serve_room import REPLICA_ENV  # noqa: E402

MAX_SESSIONS = 40
READINGS = ("weights", "norm_weighted", "mean", "rollout")
VOCAB = (
    "the animal street cross because tired wide road car driver water tree rain child light day "
    "walk river bridge city night house garden window morning"
).split()
SMALL_PAGE = "kernel_regression"  # a small rerun: the kernel page's default view


def long_text(i: int) -> str:
    """A distinct text of about 600 words (cut to 512 word pieces by the model)."""
    words = [VOCAB[(i * 7 + k * k * 13 + k) % len(VOCAB)] for k in range(600)]
    return f"Text {i}. " + " ".join(words)


def query(i: int) -> str:
    params = {"pt_text": long_text(i), "pt_view": READINGS[i % len(READINGS)]}
    return urllib.parse.urlencode(params)


async def connect(ws_url: str, timeout: float):
    import websockets

    return await asyncio.wait_for(
        websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout),
        timeout,
    )


async def timed_run(ws, page: str, q: str, timeout: float) -> tuple[float, str]:
    start = time.monotonic()
    error = await _run_once(ws, page, q, timeout)
    return time.monotonic() - start, error


async def one_level(url: str, n: int, rounds: int, timeout: float) -> dict:
    ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"
    small = await connect(ws_url, timeout)
    await timed_run(small, SMALL_PAGE, "", timeout)  # its first run (imports, caches)
    idle = [(await timed_run(small, SMALL_PAGE, "", timeout))[0] for _ in range(rounds)]
    during: list[float] = []
    errors: list[str] = []
    done = asyncio.Event()

    async def heavy(i: int) -> float | None:
        try:
            ws = await connect(ws_url, timeout)
            try:
                seconds, error = await timed_run(ws, "pretrained", query(i), timeout)
            finally:
                await ws.close()
        except Exception as exc:  # a refused or timed-out session is a result to report
            errors.append(f"session {i}: {type(exc).__name__}")
            return None
        if error:
            errors.append(f"session {i}: {error}")
        return seconds

    async def keep_rerunning() -> None:
        while not done.is_set():
            seconds, error = await timed_run(small, SMALL_PAGE, "", timeout)
            during.append(seconds)
            if error:
                errors.append(f"small rerun: {error}")

    rerunning = asyncio.create_task(keep_rerunning())
    start = time.monotonic()
    heavy_times = await asyncio.gather(*(heavy(i) for i in range(n)))
    wall = time.monotonic() - start
    done.set()
    await rerunning
    await small.close()
    return {"idle": idle, "during": during, "heavy": heavy_times, "wall": wall, "errors": errors}


def row(n: int, result: dict, rss: tuple[float, float]) -> str:
    idle = statistics.median(result["idle"])
    during = result["during"] or [float("nan")]
    heavy = [t for t in result["heavy"] if t is not None]
    median, worst = statistics.median(during), max(during)
    return (
        f"| {n} | {rss[0]:.0f} | {rss[1]:.0f} | {result['wall']:.1f} | "
        f"{statistics.median(heavy) if heavy else float('nan'):.1f} ({len(heavy)}/{n}) | "
        f"{idle * 1e3:.0f} | {median * 1e3:.0f} = **{median / idle:.1f}×** | "
        f"{worst * 1e3:.0f} = {worst / idle:.1f}× | {len(during)} | {len(result['errors'])} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--budget-mb", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--deadline", type=float, default=1500)
    args = parser.parse_args()
    if any(not 1 <= n <= MAX_SESSIONS for n in args.sessions):
        sys.exit(f"--sessions: 1 … {MAX_SESSIONS}")
    if args.budget_mb is not None:
        os.environ["VISATTN_BUDGET_MB"] = str(args.budget_mb)
    print(
        f"budget {os.environ.get('VISATTN_BUDGET_MB', 'default')} MB, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| sessions | server RSS before MB | peak MB | burst wall s | a long text, median s "
        "(done) | small rerun idle ms | during, median | worst | reruns | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    stop_at = time.monotonic() + args.deadline
    for n in args.sessions:
        with streamlit_server(env=REPLICA_ENV) as url:  # as serve_room.py starts a replica
            require_loopback(url)
            pid = server_pid(int(url.rsplit(":", 1)[1]))
            before = RssWatch.now([pid])
            with RssWatch([pid]) as watch:
                remaining = max(1.0, stop_at - time.monotonic())
                result = asyncio.run(
                    asyncio.wait_for(one_level(url, n, args.rounds, args.timeout), remaining)
                )
            print(row(n, result, (before, watch.peak)), flush=True)
            for error in result["errors"][:5]:
                print(f"  {error}", file=sys.stderr)


if __name__ == "__main__":
    main()
