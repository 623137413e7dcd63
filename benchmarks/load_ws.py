"""Capacity: N sessions at once over Streamlit's websocket, no browser; p50/p90 of first run and
rerun; server RSS.

    .venv/bin/python benchmarks/load_ws.py --sessions 1,5,10   # one server, direct
    # 2 replicas behind nginx (make serve-room)
    .venv/bin/python benchmarks/load_ws.py --sessions 5,10 --replicas 2
    # a server already running
    .venv/bin/python benchmarks/load_ws.py --url http://127.0.0.1:8501 --sessions 5

Each session is what a browser tab does after loading the page's HTML: it opens /_stcore/stream,
asks for a script run of its page (cycling through the app's pages, as benchmarks/load.py does) and
waits for "script finished". First run: from opening the websocket to the end of that run. Rerun:
all sessions then ask for a second run of the same view at once (what moving a control costs when
its result is cached). A level's sessions all start together; levels run one after another against
the same warm server(s), after one unmeasured session per page on each replica (the MiniLM weights
load on first use).

Bounded and local: at most 200 sessions a level, every wait has a deadline (--timeout per run,
--deadline overall), and only loopback addresses are accepted as targets. The load.py browser test
shares PAGES, the /proc memory reading and the server start-up with this script."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import os
import socket
import statistics
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "deploy"))
from load import PAGES, rss_mb, server_pid, streamlit_server  # noqa: E402

MAX_SESSIONS = 200
LARGEST = {
    "bytes": 0,
    "page": "",
}  # the largest message a server sent (server.maxMessageSize is sized by it)


@dataclass
class Result:
    page: str
    first: float | None = None  # seconds, None when it failed
    rerun: float | None = None
    error: str = ""
    # server CPU seconds of the level's first runs and reruns (on [0])
    cpu: tuple[float, float] | None = None


def require_loopback(url: str) -> None:
    host = urllib.parse.urlparse(url).hostname or ""
    addrs = {info[4][0] for info in socket.getaddrinfo(host, None)}
    if not addrs or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs):
        raise SystemExit(
            f"{url}: load tests run against this machine only (loopback), got {sorted(addrs)}"
        )


async def _run_once(ws, page: str, query: str, timeout: float) -> str:
    """Ask for one script run and read until it finishes; '' or an error description."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = BackMsg()
    msg.rerun_script.page_name = page
    msg.rerun_script.query_string = query
    await ws.send(msg.SerializeToString())
    n_exc = 0
    async with asyncio.timeout(timeout):
        while True:
            data = await ws.recv()
            if len(data) > LARGEST["bytes"]:
                LARGEST.update(bytes=len(data), page=page or "home")
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if (
                kind == "delta"
                and fwd.delta.WhichOneof("type") == "new_element"
                and fwd.delta.new_element.WhichOneof("type") == "exception"
            ):
                n_exc += 1
            elif (
                kind == "script_finished"
                and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
            ):
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    return "compile error"
                return f"{n_exc} exception element(s)" if n_exc else ""


async def one_level(
    ws_url: str, n: int, query: str, timeout: float, pids: tuple[int, ...] = ()
) -> list[Result]:
    """n sessions open and run their page together, then all rerun together (CPU of `pids` per
    phase)."""
    import websockets

    results = [Result(PAGES[i % len(PAGES)] or "home") for i in range(n)]
    conns: list = [None] * n

    async def first(i: int) -> None:
        t0 = time.monotonic()
        try:
            conns[i] = await asyncio.wait_for(
                websockets.connect(
                    ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout
                ),
                timeout,
            )
            err = await _run_once(conns[i], PAGES[i % len(PAGES)], query, timeout)
            results[i].first, results[i].error = time.monotonic() - t0, err
        except Exception as exc:  # a refused, dropped or slow session is a result to report
            results[i].error = f"first run: {type(exc).__name__}"

    async def rerun(i: int) -> None:
        if conns[i] is None or results[i].first is None:
            return
        t0 = time.monotonic()
        try:
            err = await _run_once(conns[i], PAGES[i % len(PAGES)], query, timeout)
            results[i].rerun = time.monotonic() - t0
            results[i].error = results[i].error or err
        except Exception as exc:
            results[i].error = results[i].error or f"rerun: {type(exc).__name__}"

    try:
        c0 = cpu_s(pids)
        await asyncio.gather(*(first(i) for i in range(n)))
        c1 = cpu_s(pids)
        await asyncio.gather(*(rerun(i) for i in range(n)))
        c2 = cpu_s(pids)
    finally:
        await asyncio.gather(*(c.close() for c in conns if c is not None), return_exceptions=True)
    if results and pids:
        results[0].cpu = (c1 - c0, c2 - c1)
    return results


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1]


def cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system, all threads) used so far by these processes and their children
    (/proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        kids = []
        with contextlib.suppress(OSError):
            kids = [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        for p in (pid, *kids):
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


class RssWatch:
    """Peak resident memory of the server processes, sampled every 0.2 s in a thread."""

    def __init__(self, pids: list[int]):
        self.pids, self.peak, self._stop = pids, self.now(pids), threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def now(pids: list[int]) -> float:
        return sum(rss_mb(p) for p in pids)

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.now(self.pids))

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def report(n: int, results: list[Result], wall: float, rss: tuple[float, float]) -> dict:
    firsts = [r.first for r in results if r.first is not None]
    reruns = [r.rerun for r in results if r.rerun is not None]
    errors = [r for r in results if r.error]
    # first runs completed per second while all n were queued: the server's throughput at this level
    rate = len(firsts) / max(firsts) if firsts else float("nan")
    # server CPU per run: unlike wall times, hardly changed by other work on a shared machine
    cpu = results[0].cpu if results and results[0].cpu else (float("nan"), float("nan"))
    cpu_first, cpu_rerun = cpu[0] / max(1, len(firsts)), cpu[1] / max(1, len(reruns))
    row = {
        "sessions": n,
        "first_p50": pct(firsts, 50),
        "first_p90": pct(firsts, 90),
        "rerun_p50": pct(reruns, 50),
        "rerun_p90": pct(reruns, 90),
        "runs_per_s": rate,
        "errors": len(errors),
        "cpu_per_first": cpu_first,
        "cpu_per_rerun": cpu_rerun,
        "rss_peak": rss[0],
        "rss_after": rss[1],
        "wall": wall,
    }
    print(
        f"sessions {n:3d}  first run p50 {row['first_p50']:6.2f} s  p90 {row['first_p90']:6.2f} s  "
        f"({rate:4.1f} runs/s, CPU {1000 * cpu_first:4.0f} ms/run)   rerun p50 "
        f"{row['rerun_p50']:6.2f} s  "
        f"p90 {row['rerun_p90']:6.2f} s (CPU {1000 * cpu_rerun:4.0f} ms/run)   errors "
        f"{len(errors)}   "
        f"RSS peak {rss[0]:5.0f} MB, after {rss[1]:5.0f} MB   wall {wall:5.1f} s",
        flush=True,
    )
    for r in errors[:5]:
        print(f"    error {r.page}: {r.error}", flush=True)
    return row


async def drive(
    url: str,
    levels: list[int],
    pids: list[int],
    warm_urls: list[str],
    query: str,
    timeout: float,
    deadline: float,
) -> list[dict]:
    ws = url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
    for w in warm_urls:  # one unmeasured run of every page on every replica
        await one_level(
            w.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream",
            len(PAGES),
            query,
            timeout,
        )
    rows = []
    for n in levels:
        if time.monotonic() > deadline:
            print(f"deadline reached; {n} sessions and above not run", flush=True)
            break
        with RssWatch(pids) as watch:
            t0, p0 = time.monotonic(), time.process_time()
            results = await one_level(ws, n, query, timeout, tuple(pids))
            wall, client_cpu = time.monotonic() - t0, time.process_time() - p0
        await asyncio.sleep(0.5)
        rows.append(report(n, results, wall, (watch.peak, RssWatch.now(pids))))
        # this script is one process too: if its CPU nears the servers', it is the bottleneck, not
        # them
        print(
            f"    load generator CPU {client_cpu:.2f} s for the level (servers: "
            f"{sum(results[0].cpu) if results and results[0].cpu else float('nan'):.2f} s)",
            flush=True,
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sessions", default="1,5,10", help="comma-separated levels, each run at once (≤ 200)"
    )
    ap.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="0: one server, direct; N ≥ 1: N replicas behind nginx",
    )
    ap.add_argument(
        "--url", default="", help="drive a server already running on this machine instead"
    )
    ap.add_argument(
        "--pages", default="", help="comma-separated URL paths (home is 'home'); default every page"
    )
    ap.add_argument(
        "--query", default="", help="query string every session opens with, e.g. lang=zh"
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=120,
        help="seconds one run may take before it counts as failed",
    )
    ap.add_argument(
        "--deadline",
        type=float,
        default=600,
        help="seconds for the whole benchmark; later levels are skipped",
    )
    args = ap.parse_args()
    levels = [int(s) for s in args.sessions.split(",") if s.strip()]
    if args.pages:
        wanted = ["" if p.strip() == "home" else p.strip() for p in args.pages.split(",")]
        unknown = set(wanted) - set(PAGES)
        if unknown:
            raise SystemExit(
                f"--pages: unknown {sorted(unknown)}; the app has {[p or 'home' for p in PAGES]}"
            )
        PAGES[:] = wanted
    if not levels or min(levels) < 1 or max(levels) > MAX_SESSIONS:
        raise SystemExit(f"--sessions: levels between 1 and {MAX_SESSIONS}")
    deadline = time.monotonic() + args.deadline

    with contextlib.ExitStack() as stack:
        if args.url:
            require_loopback(args.url)
            url, pids, warm = args.url, [], [args.url]
            what = f"{args.url} (RSS not measured)"
        elif args.replicas:
            from serve_room import room

            r = stack.enter_context(room(args.replicas))
            url, pids = r.url, [p.pid for p in r.replicas]
            warm = [f"http://127.0.0.1:{p}" for p in r.replica_ports]
            what = f"{args.replicas} replica(s) behind nginx"
        else:
            url = stack.enter_context(streamlit_server())
            pid = server_pid(int(url.rsplit(":", 1)[1]))
            url, pids, warm = url.replace("localhost", "127.0.0.1"), [pid] if pid else [], [url]
            what = "one server, direct"
        print(f"load_ws: {what}; levels {levels}; pages {[p or 'home' for p in PAGES]}", flush=True)
        if pids:
            print(f"server RSS before: {RssWatch.now(pids):.0f} MB", flush=True)
        rows = asyncio.run(drive(url, levels, pids, warm, args.query, args.timeout, deadline))
    print(f"largest message: {LARGEST['bytes'] / 1e6:.2f} MB ({LARGEST['page']})", flush=True)
    ok = [r["sessions"] for r in rows if r["first_p50"] <= 2.0 and not r["errors"]]
    print(
        f"largest level with first-run p50 ≤ 2 s and no errors: {max(ok) if ok else 'none'}",
        flush=True,
    )
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
