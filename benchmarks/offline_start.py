"""Offline start-up: does the server look anything up, and wait for it, when it serves on 0.0.0.0
with no network?

    sudo .venv/bin/python benchmarks/offline_start.py [--dns none|silent]    # root: it makes a
    network namespace

Re-runs itself in a new network (and mount) namespace made with `unshare -n -m`: only the loopback
interface, no route anywhere. --dns none keeps /etc/resolv.conf, whose server is then unreachable
(look-ups fail at once); --dns silent points the resolver at 127.0.0.53, where a socket of this
script reads queries and never answers (a network whose DNS does not answer: each look-up waits for
the resolver's timeout). Nothing leaves loopback.

For three servers it measures the time from start to /_stcore/health, one session's first run of the
home page, two websocket handshakes the room must refuse (Host evil.example; Origin
http://evil.example), another session's rerun while the foreign-Origin handshake is pending
(Streamlit's look-up blocks its event loop), and it lists every name look-up and TCP connection to a
non-loopback address the server process made (Python audit hooks):

- defaults: Streamlit's defaults (a scratch config with only headless/no usage stats) on 0.0.0.0
- config.toml: this repository's .streamlit/config.toml on 0.0.0.0 (`make run
  ARGS="--server.address 0.0.0.0"`)
- room: one replica as `make serve-room` starts it (deploy/room_server.py, 127.0.0.1)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "deploy"))
from load_ws import _run_once, one_level  # noqa: E402
from serve_room import free_port, replica_command, stop, wait_healthy  # noqa: E402

# Runs in the server process before Streamlit: logs look-ups of non-local names and TCP connects off
# loopback.
AUDIT = r"""
import ipaddress, os, runpy, socket, sys
_log = open(os.environ["VISATTN_AUDIT_LOG"], "a", buffering=1)
_LOCAL = {"", "localhost", "0.0.0.0", "::", "127.0.0.1", "::1"}
def _hook(event, args):
    if event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else (args[0] or "")
        if host not in _LOCAL:
            _log.write(f"look-up {host}\n")
    elif (
        event == "socket.connect"
        and isinstance(args[1], tuple)
        and args[0].type == socket.SOCK_STREAM
    ):
        try:
            if not ipaddress.ip_address(str(args[1][0]).split("%")[0]).is_loopback:
                _log.write(f"connect {args[1][0]}:{args[1][1]}\n")
        except ValueError:
            _log.write(f"connect {args[1]}\n")
sys.addaudithook(_hook)
sys.argv = sys.argv[1:]
if sys.argv[0] == "-m":
    sys.argv = sys.argv[1:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def silent_dns() -> None:
    """Resolver at 127.0.0.53 that reads every query and never answers (inside the namespace
    only)."""
    conf = Path(tempfile.mkdtemp()) / "resolv.conf"
    conf.write_text("nameserver 127.0.0.53\n")
    subprocess.run(["mount", "--bind", str(conf), "/etc/resolv.conf"], check=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.53", 53))
    threading.Thread(target=lambda: [sock.recv(4096) for _ in iter(int, 1)], daemon=True).start()


async def handshake(
    port: int, host: str = "127.0.0.1", origin: str | None = None
) -> tuple[str, float]:
    """A websocket handshake to 127.0.0.1:port that says Host: host (and Origin: origin); its
    outcome, its time."""
    import websockets

    t0 = time.monotonic()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        async with websockets.connect(
            f"ws://{host}:{port}/_stcore/stream",
            sock=sock,
            subprotocols=["streamlit"],
            origin=origin,
            open_timeout=30,
        ):
            outcome = "accepted"
    except websockets.InvalidStatus as exc:
        outcome = f"refused {exc.response.status_code}"
    except Exception as exc:
        outcome = type(exc).__name__
    return outcome, time.monotonic() - t0


async def rerun_during_foreign_handshake(port: int) -> tuple[float, float, tuple[str, float]]:
    """Another session's home-page rerun, alone and while a foreign-origin handshake is pending
    (does it block?)."""
    import websockets

    async with websockets.connect(
        f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"], max_size=None
    ) as ws:
        await _run_once(ws, "", "", 60)
        t0 = time.monotonic()
        await _run_once(ws, "", "", 60)
        alone = time.monotonic() - t0
        foreign = asyncio.create_task(handshake(port, origin="http://evil.example"))
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        await _run_once(ws, "", "", 60)
        during = time.monotonic() - t0
        return alone, during, await foreign


def measure(name: str, argv: list[str], cwd: Path, port: int) -> dict:
    log = Path(tempfile.mkstemp(suffix=".audit")[1])
    env = {**os.environ, "VISATTN_AUDIT_LOG": str(log)}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", AUDIT, *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", [proc], 120)
        t_health = time.monotonic() - t0
        t1 = time.monotonic()
        res = asyncio.run(one_level(f"ws://127.0.0.1:{port}/_stcore/stream", 1, "", 120))[0]
        t_first = time.monotonic() - t1
        host = asyncio.run(handshake(port, host="evil.example"))
        alone, during, origin = asyncio.run(rerun_during_foreign_handshake(port))
        time.sleep(0.5)
    finally:
        stop([proc])
    events = log.read_text().splitlines()
    log.unlink()
    return {
        "server": name,
        "health_s": round(t_health, 2),
        "first_run_s": round(t_first, 2),
        "first_run_error": res.error,
        "host_evil": f"{host[0]} in {host[1]:.2f} s",
        "origin_evil": f"{origin[0]} in {origin[1]:.2f} s",
        "rerun_alone_s": round(alone, 2),
        "rerun_during_origin_evil_s": round(during, 2),
        "outbound": sorted(set(events)),
        "outbound_count": len(events),
    }


SERVERS = ("defaults", "config.toml", "room")


def inside(dns: str, servers: list[str]) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    if dns == "silent":
        silent_dns()
    scratch = Path(tempfile.mkdtemp(prefix="visattn-defaults-"))
    for name in ("app.py", "pages", "ui", "visattn"):
        (scratch / name).symlink_to(ROOT / name)
    (scratch / ".streamlit").mkdir()
    (scratch / ".streamlit" / "config.toml").write_text(
        '[browser]\ngatherUsageStats = false\n[server]\nheadless = true\nfileWatcherType = "none"\n'
    )
    runs = []
    try:
        for name in servers:
            p = free_port()
            if name == "room":
                runs.append(measure(name, replica_command(p, p)[1:], ROOT, p))
            else:
                runs.append(
                    measure(
                        name,
                        [
                            "-m",
                            "streamlit",
                            "run",
                            "app.py",
                            "--server.address",
                            "0.0.0.0",
                            "--server.port",
                            str(p),
                        ],
                        scratch if name == "defaults" else ROOT,
                        p,
                    )
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(runs))


def run(dns: str = "none", servers: tuple[str, ...] = SERVERS) -> list[dict]:
    """Measure in a new namespace (needs root and unshare); one dict per server."""
    out = subprocess.run(
        [
            "unshare",
            "-n",
            "-m",
            "--propagation",
            "private",
            sys.executable,
            __file__,
            "--inside",
            "--dns",
            dns,
            "--servers",
            ",".join(servers),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dns", choices=["none", "silent"], default="none")
    ap.add_argument(
        "--servers", default=",".join(SERVERS), help=f"comma-separated, of {', '.join(SERVERS)}"
    )
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    servers = [s for s in args.servers.split(",") if s]
    if not set(servers) <= set(SERVERS):
        raise SystemExit(f"--servers: choose from {', '.join(SERVERS)}")
    if args.inside:
        inside(args.dns, servers)
        return 0
    print(f"network namespace: loopback only, no route; DNS: {args.dns}")
    for r in run(args.dns, tuple(servers)):
        print(
            f"  {r['server']:12s} health {r['health_s']:6.2f} s   first run "
            f"{r['first_run_s']:6.2f} s"
            f"{' (' + r['first_run_error'] + ')' if r['first_run_error'] else ''}"
        )
        print(
            f"  {'':12s} Host evil.example: {r['host_evil']};  Origin evil.example: "
            f"{r['origin_evil']}"
        )
        print(
            f"  {'':12s} another session's rerun: {r['rerun_alone_s']:.2f} s alone, "
            f"{r['rerun_during_origin_evil_s']:.2f} s while that Origin handshake is pending"
        )
        print(f"  {'':12s} outbound attempts: {r['outbound_count']} {r['outbound']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
