"""Serve a room: N Streamlit replicas on 127.0.0.1 behind nginx, with sticky sessions. `make
serve-room` runs it.

    .venv/bin/python deploy/serve_room.py [--replicas 2] [--port 8501] [--room-host 192.168.1.20]

--room-host (or the ROOM_HOST environment variable) is the address people type: the machine's IP on
the room's network, or its name. Without it everything listens on 127.0.0.1 only (a rehearsal). With
it nginx listens on every interface at --port and answers only requests whose Host is that address
(or localhost); each replica still listens on 127.0.0.1 only and accepts websockets only for those
hosts.

The nginx config is rendered from deploy/nginx.conf.template into a temporary directory and nginx
runs in the foreground with that directory as its prefix (no root paths, no system config). Ctrl-C,
SIGTERM or a replica/nginx exiting stops every process this started and removes the directory."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
TEMPLATE = DEPLOY / "nginx.conf.template"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def nginx_path() -> str | None:
    """Debian's nginx (in /usr/sbin, which a non-root PATH may lack)."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render_config(port: int, replica_ports: list[int], room_host: str = "") -> str:
    """The nginx config: listen on 127.0.0.1:port (or every interface when there is a room host)."""
    names = " ".join(h for h in (*LOCAL_HOSTS, room_host) if h and ":" not in h)
    text = string.Template(TEMPLATE.read_text()).safe_substitute(
        listen=str(port) if room_host else f"127.0.0.1:{port}",
        server_names=names,
        upstream_servers="\n".join(f"        server 127.0.0.1:{p};" for p in replica_ports),
        replica_numbers="\n".join(
            f"        127.0.0.1:{p} {i + 1};" for i, p in enumerate(replica_ports)
        ),
    )
    assert "${" not in text, "a field of nginx.conf.template was not filled"
    return text


def replica_command(port: int, public_port: int, room_host: str = "") -> list[str]:
    """One replica: room_server.py (streamlit run + the room rules) on 127.0.0.1, the room's hosts
    allowed."""
    cmd = [
        sys.executable,
        str(DEPLOY / "room_server.py"),
        "run",
        "app.py",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.serverAddress",
        room_host or "localhost",
        "--browser.serverPort",
        str(public_port),
    ]
    for host in (*LOCAL_HOSTS, room_host):
        if host:
            cmd += ["--server.allowedHosts", host]
    return cmd


def wait_healthy(
    url: str, procs: list[subprocess.Popen], timeout: float, host: str | None = None
) -> None:
    req = urllib.request.Request(url + "/_stcore/health", headers={"Host": host} if host else {})
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise RuntimeError(
                f"{url} did not become healthy ({'a process exited' if dead else 'timed out'})"
            )
        time.sleep(0.3)


def stop(procs: list[subprocess.Popen], grace: float = 10) -> None:
    """SIGTERM each process this started, then SIGKILL whatever is left after `grace` seconds."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@dataclass
class Room:
    url: str  # what a browser opens (through nginx)
    replica_ports: list[int]
    replicas: list[subprocess.Popen] = field(default_factory=list)
    proxy: subprocess.Popen | None = None
    workdir: Path | None = None


@contextlib.contextmanager
def room(
    replicas: int = 2,
    port: int | None = None,
    room_host: str = "",
    log_dir: Path | None = None,
    timeout: float = 90,
):
    """Start the replicas and nginx; yield a Room; stop them all on exit (also on an exception)."""
    nginx = nginx_path()
    if not nginx:
        raise RuntimeError("nginx not found: apt-get install nginx")
    if replicas < 1:
        raise ValueError("replicas must be at least 1")
    port = port or free_port()
    replica_ports = [free_port() for _ in range(replicas)]
    env = dict(os.environ)
    # One cookie secret for all replicas (Streamlit signs cookies with it), new each start, never on
    # a command line.
    env["STREAMLIT_SERVER_COOKIE_SECRET"] = secrets.token_hex(32)
    work = Path(tempfile.mkdtemp(prefix="visattn-room-"))
    logs = log_dir or work
    r = Room(url=f"http://127.0.0.1:{port}", replica_ports=replica_ports, workdir=work)
    files = []
    try:
        for i, p in enumerate(replica_ports):
            f = open(logs / f"replica-{i + 1}.log", "wb")  # noqa: SIM115 - closed in finally
            files.append(f)
            r.replicas.append(
                subprocess.Popen(
                    replica_command(p, port, room_host),
                    cwd=ROOT,
                    env=env,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )
        for p in replica_ports:
            wait_healthy(f"http://127.0.0.1:{p}", r.replicas, timeout)
        (work / "tmp").mkdir()
        (work / "nginx.conf").write_text(render_config(port, replica_ports, room_host))
        f = open(logs / "nginx.log", "wb")  # noqa: SIM115 - closed in finally
        files.append(f)
        r.proxy = subprocess.Popen(
            [nginx, "-p", str(work), "-c", str(work / "nginx.conf"), "-e", "stderr"],
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        wait_healthy(r.url, [r.proxy], 20, host="localhost")
        yield r
    finally:
        stop([p for p in (r.proxy, *r.replicas) if p is not None])
        for f in files:
            f.close()
        shutil.rmtree(work, ignore_errors=True)  # the logs too, unless they were written to log_dir


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=int(os.environ.get("REPLICAS") or 2))
    ap.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8501))
    ap.add_argument(
        "--room-host",
        default=os.environ.get("ROOM_HOST", ""),
        help="the address people type (this machine's IP or name on the room's network)",
    )
    args = ap.parse_args()

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
    ):  # SIGINT too: a background job starts with it ignored
        signal.signal(sig, on_signal)
    log_dir = Path(tempfile.mkdtemp(prefix="visattn-room-logs-"))
    try:
        with room(args.replicas, args.port, args.room_host.strip(), log_dir=log_dir) as r:
            where = (
                f"http://{args.room_host}:{args.port}"
                if args.room_host
                else f"http://localhost:{args.port}"
            )
            print(
                f"visattn: {args.replicas} replica(s) on 127.0.0.1:{', '.join(map(str, r.replica_ports))}"
                f" behind nginx; open {where}",
                flush=True,
            )
            if not args.room_host:
                print(
                    "  (localhost only; for a room: make serve-room ROOM_HOST=<this machine's IP>)",
                    flush=True,
                )
            print(f"  logs: {log_dir}  — Ctrl-C stops everything", flush=True)
            while True:
                for p in (r.proxy, *r.replicas):
                    if p.poll() is not None:
                        print(
                            f"visattn: a process exited ({p.args[0]}, code {p.returncode}); stopping",
                            flush=True,
                        )
                        return 1
                time.sleep(1)
    except KeyboardInterrupt:
        print("visattn: stopped", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
