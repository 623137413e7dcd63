"""Serve a room: Streamlit replicas behind nginx with sticky sessions, every process under
supervisord. `make serve-room`, `make serve-replicas` and `make serve-front` run it.

    python deploy/serve_room.py room [--replicas 2] [--port 8501] [--room-host 192.168.1.20]
    python deploy/serve_room.py replicas --bind 10.0.0.2 [--replicas 2] [--replica-port 8601]
                                         --room-host 10.0.0.1
    python deploy/serve_room.py front --upstreams "10.0.0.2:8601 10.0.0.3:8601" [--port 8501]
                                      --room-host 10.0.0.1

`room` is one machine: the replicas on 127.0.0.1 and nginx. Several machines: `replicas` on each
app machine (bound to its address on the room's network), `front` on the one people open, with
every replica's host:port. --room-host (or ROOM_HOST) is the address people type: the front
machine's IP on the room's network, or its name. Without it nginx listens on 127.0.0.1 only (a
rehearsal); with it on every interface, answering only requests whose Host is that address (or
localhost). Replicas accept websockets only for those hosts.

supervisord (PyPI `supervisor`, in requirements.txt) starts every process and restarts one that
exits, whatever the reason (a process must stay up `startsecs` to count as started; after
`startretries` failed starts in a row it gives up). Its log, each replica's and nginx's are files in
the run directory (printed at start; kept after a stop). nginx sends new requests past a dead
replica to the living ones meanwhile. supervisord and everything below it are started through
deploy/dies_with_parent.py, so a `kill -9` of this script or of supervisord still stops them; a
start also stops whatever an earlier run of the room left holding its ports, and says so. Ctrl-C,
SIGTERM or SIGHUP stops everything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import ipaddress
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xmlrpc.client
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from dies_with_parent import arm_parent_death_signal  # deploy/, beside this script

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
TEMPLATE = DEPLOY / "nginx.conf.template"
LAUNCHER = DEPLOY / "dies_with_parent.py"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
REPLICA_PORT_OFFSET = 100  # replicas listen from the room's port + 100 (8601, 8602, … for 8501)
# supervisord's restart rules: a replica must run this long to count as started (longer than
# Streamlit takes to start); this many failed starts in a row (1 s, 2 s, … apart) and it is given
# up as FATAL.
START_SECS = 5
START_RETRIES = 5
STOP_WAIT_SECS = 10
# nginx: one refused connection marks a replica down for this long (then it is tried again).
FAIL_TIMEOUT = "5s"
# A replica's allocator (glibc): every session runs in its own thread, and by default each thread
# may get a heap of its own (8 per core) that keeps what it freed, while arrays under a threshold
# that grows to 32 MB come from those heaps. Two heaps, and anything over 1 MB mapped and given
# back when freed, keep RSS near what is alive (benchmarks/burst.py, default budget).
REPLICA_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": str(1 << 20)}


def nginx_path() -> str | None:
    """Debian's nginx (in /usr/sbin, which a non-root PATH may lack)."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def split_address(address: str) -> tuple[str, int]:
    """'10.0.0.2:8601' → ('10.0.0.2', 8601); '[::1]:8601' → ('::1', 8601)."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]"), int(port)


def join_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_upstreams(upstreams) -> list[str]:
    """Replica addresses as host:port: from 'a:1 b:2' (spaces or commas), or a list of host:port
    strings, or of ports (on 127.0.0.1)."""
    items = upstreams.replace(",", " ").split() if isinstance(upstreams, str) else upstreams
    out = []
    for item in items:
        host, port = (
            ("127.0.0.1", item) if isinstance(item, int) else split_address(str(item).strip())
        )
        out.append(join_address(host, port))
    if not out:
        raise ValueError("no replica addresses (upstreams) given")
    return out


def _nginx_regex(text: str) -> str:
    """A literal inside an nginx (PCRE) regex."""
    return "".join("\\" + c if c in r"\.^$|?*+()[]{}" else c for c in text)


def render_config(port: int, upstreams, room_host: str = "", csp: str | None = None) -> str:
    """The nginx config: listen on 127.0.0.1:port (or every interface when there is a room host),
    in front of the replicas at ``upstreams`` (host:port strings, or ports on 127.0.0.1)."""
    if csp is None:
        import csp as csp_module

        csp = csp_module.policy()
    addresses = parse_upstreams(upstreams)
    names = " ".join(h for h in (*LOCAL_HOSTS, room_host) if h and ":" not in h)
    groups = []
    for i, primary in enumerate(addresses):
        servers = [f"        server {primary} max_fails=1 fail_timeout={FAIL_TIMEOUT};"]
        servers += [
            f"        server {a} max_fails=1 fail_timeout={FAIL_TIMEOUT} backup;"
            for a in addresses
            if a != primary
        ]
        groups.append(f"    upstream replica_{i + 1} {{\n" + "\n".join(servers) + "\n    }")
    share = f"{int(10000 / len(addresses)) / 100:.2f}%"
    new_visitors = [f"        {share} replica_{i + 1};" for i in range(len(addresses) - 1)]
    new_visitors.append(f"        * replica_{len(addresses)};")
    text = string.Template(TEMPLATE.read_text()).safe_substitute(
        listen=str(port) if room_host else f"127.0.0.1:{port}",
        server_names=names,
        upstreams="\n".join(groups),
        new_visitors="\n".join(new_visitors),
        cookie_groups="\n".join(f"        {i + 1} replica_{i + 1};" for i in range(len(addresses))),
        replica_numbers="\n".join(
            f'        "~(^|\\s){_nginx_regex(a)}$" {i + 1};' for i, a in enumerate(addresses)
        ),
        csp=csp.replace('"', "'"),
    )
    assert "${" not in text, "a field of nginx.conf.template was not filled"
    return text


def replica_command(
    port: int, public_port: int, room_host: str = "", bind: str = "127.0.0.1"
) -> list[str]:
    """One replica: room_server.py (streamlit run + the room rules) on ``bind``, the room's hosts
    allowed."""
    cmd = [
        sys.executable,
        str(DEPLOY / "room_server.py"),
        "run",
        "app.py",
        "--server.address",
        bind,
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


def _supervised(run_dir: Path, name: str, argv: list[str]) -> list[str]:
    """``argv`` as supervisord starts it: through the launcher that ties it to supervisord's life
    (nginx, one process, stops on SIGTERM; a replica gets SIGKILL, see dies_with_parent.py)."""
    pidfile = str(run_dir / "supervisord.pid")
    death = "TERM" if name == "nginx" else "KILL"
    return [
        sys.executable,
        str(LAUNCHER),
        "--parent-pidfile",
        pidfile,
        "--signal",
        death,
        "--",
        *argv,
    ]


def environment(variables: dict[str, str]) -> str:
    """supervisord's ``environment=`` value: KEY="value" pairs, comma-separated."""
    return ",".join(f'{key}="{text}"' for key, text in variables.items())


def supervisor_config(run_dir: Path, programs: dict[str, list[str]], password: str) -> str:
    """supervisord.conf: its socket (for supervisorctl, with ``password``), pid file and log in
    ``run_dir``, one program per entry."""

    def value(text: str) -> str:
        return text.replace("%", "%%")  # supervisord expands %(name)s in values

    lines = [
        "[supervisord]",
        "nodaemon=true",
        f"logfile={value(str(run_dir / 'supervisord.log'))}",
        "logfile_maxbytes=10MB",
        "logfile_backups=2",
        f"pidfile={value(str(run_dir / 'supervisord.pid'))}",
        f"childlogdir={value(str(run_dir))}",
        "",
        "[unix_http_server]",
        f"file={value(str(run_dir / 'supervisor.sock'))}",
        "chmod=0700",
        "username=visattn",
        f"password={value(password)}",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{value(str(run_dir / 'supervisor.sock'))}",
        "username=visattn",
        f"password={value(password)}",
    ]
    if os.geteuid() == 0:
        lines.insert(1, "user=root")  # said, so supervisord does not warn that it was not said
    # One group: supervisord stops a group's programs together (one by one, a stop took far longer).
    lines += ["", "[group:room]", f"programs={','.join(programs)}"]
    for name, argv in programs.items():
        command = " ".join(shlex.quote(a) for a in _supervised(run_dir, name, argv))
        lines += [
            "",
            f"[program:{name}]",
            f"command={value(command)}",
            f"directory={value(str(ROOT))}",
            *([] if name == "nginx" else [f"environment={value(environment(REPLICA_ENV))}"]),
            "autostart=true",
            "autorestart=true",  # whatever the exit code: a replica never exits on purpose
            f"startsecs={1 if name == 'nginx' else START_SECS}",
            f"startretries={START_RETRIES}",
            "stopsignal=TERM",  # nginx: fast shutdown (QUIT would wait for every websocket)
            f"stopwaitsecs={STOP_WAIT_SECS}",
            "redirect_stderr=true",
            f"stdout_logfile={value(str(run_dir / f'{name}.log'))}",
            "stdout_logfile_maxbytes=10MB",
            "stdout_logfile_backups=2",
        ]
    return "\n".join(lines) + "\n"


def wait_healthy(
    url: str,
    procs: list[subprocess.Popen],
    timeout: float,
    host: str | None = None,
    any_answer: bool = False,
    failed: Callable[[], str] | None = None,
) -> None:
    """Until ``url``/_stcore/health answers 200 (or anything at all, with ``any_answer``); raises
    when one of ``procs`` exits, when ``failed()`` says why, or after ``timeout`` seconds."""
    req = urllib.request.Request(url + "/_stcore/health", headers={"Host": host} if host else {})
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status == 200:
                    return
        except urllib.error.HTTPError:
            if any_answer:
                return
        except OSError:
            pass
        dead = [p for p in procs if p.poll() is not None]
        why = failed() if failed and not dead else ""
        if dead or why or time.monotonic() > deadline:
            reason = "a process exited" if dead else why or "timed out"
            raise RuntimeError(f"{url} did not become healthy ({reason})")
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


# ---- what an earlier run left behind ----


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def _address(hex_addr: str) -> str:
    """An address of /proc/net/tcp{,6} (32-bit words in host order, little-endian here)."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def _listening_sockets(port: int) -> dict[str, str]:
    """{socket inode: local address} of every TCP socket listening on ``port``."""
    out = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as f:
            for row in f.readlines()[1:]:
                fields = row.split()
                addr, _, hex_port = fields[1].partition(":")
                if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                    out[fields[9]] = _address(addr)
    return out


def port_holders(host: str, port: int) -> dict[int, str]:
    """{pid: command line} of the processes listening on host:port (or on every address)."""
    wildcard = {"0.0.0.0", "::"}
    inodes = {
        inode
        for inode, addr in _listening_sockets(port).items()
        if addr == host or addr in wildcard or host in wildcard
    }
    holders = {}
    if not inodes:
        return holders
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    link = os.readlink(fd)
                    if link.startswith("socket:[") and link[8:-1] in inodes:
                        holders[int(proc.name)] = _cmdline(int(proc.name))
                        break
    return holders


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rpartition(")")[2].split()[1])  # after "pid (comm)": state, ppid


def _is_ours(cmdline: str, run_dir: Path) -> bool:
    """A process a room starts: a replica, its supervisord, or nginx with a room's run directory."""
    return (
        "room_server.py" in cmdline
        or "dies_with_parent.py" in cmdline
        or ("supervisor" in cmdline and str(run_dir) in cmdline)
        or ("nginx" in cmdline and str(run_dir) in cmdline)
    )


def running(pid: int) -> bool:
    """Alive: a process that has exited but not been reaped by its parent (a zombie) is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _end(pid: int, grace: float = STOP_WAIT_SECS + 5) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds (a process that is not our child)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if running(pid):
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)


def clean_up_earlier(run_dir: Path, addresses: list[tuple[str, int]]) -> list[str]:
    """Stop what an earlier run of this room left: its supervisord (by its pid file) and any room
    process still listening on one of ``addresses``. Returns what was done, one line each; raises
    when a port is held by a process that is not the room's."""
    done = []
    pidfile = run_dir / "supervisord.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(pidfile.read_text().strip())
        cmd = _cmdline(pid)
        if "supervisor" in cmd and str(run_dir) in cmd:
            _end(pid)
            done.append(f"stopped the supervisord of an earlier run (pid {pid})")
    earlier = run_dir / "addresses.json"
    with contextlib.suppress(OSError, ValueError):
        addresses = [*addresses, *(tuple(a) for a in json.loads(earlier.read_text()))]
    for host, port in dict.fromkeys(addresses):
        for pid, cmd in port_holders(host, port).items():
            if not (_is_ours(cmd, run_dir) or _is_ours(_cmdline(_parent(pid)), run_dir)):
                raise RuntimeError(
                    f"{join_address(host, port)} is in use by pid {pid} ({cmd[:120]}), which no "
                    "room started; stop it or choose other ports"
                )
            _end(pid)
            done.append(
                f"stopped pid {pid} ({cmd[:80]}), left by an earlier run on "
                f"{join_address(host, port)}"
            )
    return done


# ---- running it ----


class Proc(NamedTuple):
    name: str
    pid: int


@dataclass
class Room:
    url: str  # what a browser opens (through nginx); "" on a machine with replicas only
    replica_ports: list[int]  # this machine's replicas
    bind: str  # the address they listen on
    upstreams: list[str]  # every replica nginx knows (host:port), on a front machine
    run_dir: Path
    supervisor: subprocess.Popen
    password: str  # of supervisord's socket (also in run_dir/supervisord.conf, for supervisorctl)

    def rpc(self):
        """supervisord's XML-RPC interface (``.getAllProcessInfo()``, ``.stopProcess(name)``…)."""
        from supervisor.xmlrpc import SupervisorTransport

        sock = f"unix://{self.run_dir / 'supervisor.sock'}"
        transport = SupervisorTransport("visattn", self.password, sock)
        return xmlrpc.client.ServerProxy("http://localhost", transport=transport).supervisor

    def processes(self) -> dict[str, dict]:
        """supervisord's view: {program name: {statename, pid, …}}."""
        return {p["name"]: p for p in self.rpc().getAllProcessInfo()}

    def pid(self, name: str) -> int:
        return self.processes()[name]["pid"]

    def state(self, name: str) -> str:
        return self.processes()[name]["statename"]

    def stop_program(self, name: str) -> None:
        self.rpc().stopProcess(f"room:{name}")

    def start_program(self, name: str) -> None:
        self.rpc().startProcess(f"room:{name}")

    def failed(self) -> str:
        """What supervisord gave up on (FATAL: too many failed starts), with its log's last line."""
        out = []
        try:
            processes = self.processes()
        except OSError:  # supervisord is still starting: no socket yet
            return ""
        for name, info in processes.items():
            if info["statename"] == "FATAL":
                log = (self.run_dir / f"{name}.log").read_text(errors="replace").strip()
                out.append(f"{name} would not start: {log.splitlines()[-1] if log else 'no log'}")
        return "; ".join(out)

    @property
    def replicas(self) -> list[Proc]:
        """This machine's replicas as they run now."""
        return [
            Proc(name, info["pid"])
            for name, info in sorted(self.processes().items())
            if name.startswith("replica-")
        ]


def _probe_host(bind: str) -> str:
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(bind, bind)


@contextlib.contextmanager
def supervised(
    run_dir: Path,
    programs: dict[str, list[str]],
    addresses: list[tuple[str, int]],
    echo: bool = False,
):
    """Start supervisord with ``programs`` in ``run_dir``, after cleaning up what an earlier run
    left on ``addresses``; yield supervisord's process. On exit (also on an exception) stop
    supervisord, which stops every program first."""
    if len(str(run_dir / "supervisor.sock")) > 100:
        raise ValueError(f"run directory {run_dir} is too long for a unix socket path")
    for line in clean_up_earlier(run_dir, addresses):
        print(f"visattn: {line}", flush=True)
    for stale in ("supervisord.pid", "supervisor.sock", "nginx.pid"):
        (run_dir / stale).unlink(missing_ok=True)
    (run_dir / "addresses.json").write_text(json.dumps(addresses))
    conf = run_dir / "supervisord.conf"
    password = secrets.token_urlsafe(18)
    conf.touch(mode=0o600)
    conf.chmod(0o600)
    conf.write_text(supervisor_config(run_dir, programs, password))
    env = dict(os.environ)
    # One cookie secret for every replica of the machine (Streamlit signs cookies with it), new each
    # start unless given, never on a command line or in a file.
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    cmd = [sys.executable, str(LAUNCHER), "--parent-pid", str(os.getpid()), "--"]
    cmd += [sys.executable, "-m", "supervisor.supervisord", "-c", str(conf)]
    # Its own session: Ctrl-C reaches this script only, which then stops supervisord in order.
    sup = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=None if echo else subprocess.DEVNULL,
        stderr=None if echo else subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield sup, password
    finally:
        stop([sup], grace=STOP_WAIT_SECS + 10)
        for stale in ("supervisor.sock", "supervisord.pid"):
            (run_dir / stale).unlink(missing_ok=True)


def _nginx_program(run_dir: Path, port: int, upstreams: list[str], room_host: str) -> list[str]:
    nginx = nginx_path()
    if not nginx:
        raise RuntimeError("nginx not found: apt-get install nginx")
    (run_dir / "tmp").mkdir(exist_ok=True)
    (run_dir / "nginx.conf").write_text(render_config(port, upstreams, room_host))
    return [nginx, "-p", str(run_dir), "-c", str(run_dir / "nginx.conf"), "-e", "stderr"]


def _replica_programs(
    ports: list[int], public_port: int, room_host: str, bind: str
) -> dict[str, list[str]]:
    return {
        f"replica-{i + 1}": replica_command(p, public_port, room_host, bind)
        for i, p in enumerate(ports)
    }


@contextlib.contextmanager
def serve(
    role: str = "room",
    replicas: int = 2,
    port: int | None = None,
    room_host: str = "",
    bind: str = "127.0.0.1",
    replica_port: int | None = None,
    upstreams=None,
    run_dir: Path | None = None,
    timeout: float = 90,
    echo: bool = False,
):
    """One role's processes under supervisord, healthy; yields a Room; stops them all on exit.

    room: ``replicas`` replicas on 127.0.0.1 and nginx at ``port``; replicas: ``replicas`` replicas
    on ``bind`` from ``replica_port``; front: nginx at ``port`` for ``upstreams``."""
    if role not in ("room", "replicas", "front"):
        raise ValueError(f"unknown role {role!r}")
    if importlib.util.find_spec("supervisor") is None:
        raise RuntimeError(
            "supervisor is not installed in this Python: make serve-room installs requirements.txt"
        )
    if role != "front" and replicas < 1:
        raise ValueError("replicas must be at least 1")
    port = port or free_port()
    bind = "127.0.0.1" if role == "room" else bind
    if role == "front":
        ports = []
    elif replica_port:
        ports = [replica_port + i for i in range(replicas)]
    else:
        ports = [free_port(_probe_host(bind)) for _ in range(replicas)]
    upstreams = parse_upstreams(
        upstreams if role == "front" else [join_address(bind, p) for p in ports]
    )
    addresses = [(bind, p) for p in ports]
    if role != "replicas":
        addresses.append(("0.0.0.0" if room_host else "127.0.0.1", port))
    programs = _replica_programs(ports, port, room_host, bind)
    with contextlib.ExitStack() as stack:
        work = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="visattn-room-"))
        work.mkdir(parents=True, exist_ok=True)
        if not run_dir:
            stack.callback(shutil.rmtree, work, True)  # a given run directory keeps its logs
        if role != "replicas":
            programs["nginx"] = _nginx_program(work, port, upstreams, room_host)
        sup, password = stack.enter_context(supervised(work, programs, addresses, echo))
        url = "" if role == "replicas" else f"http://127.0.0.1:{port}"
        r = Room(url, ports, bind, upstreams, work, sup, password)
        for p in ports:
            replica = f"http://{join_address(_probe_host(bind), p)}"
            wait_healthy(replica, [sup], timeout, "localhost", failed=r.failed)
        if url:
            # on a front machine the replicas may not be up yet: nginx answering at all will do
            wait_healthy(url, [sup], 20, host="localhost", any_answer=role == "front")
        yield r


def room(
    replicas: int = 2,
    port: int | None = None,
    room_host: str = "",
    run_dir: Path | None = None,
    timeout: float = 90,
):
    """One machine: ``replicas`` replicas on 127.0.0.1 behind nginx (a context manager)."""
    return serve("room", replicas, port, room_host, run_dir=run_dir, timeout=timeout)


def default_run_dir(role: str, port: int) -> Path:
    """Fixed per role and port, so a start finds what an earlier, killed run left."""
    return Path(tempfile.gettempdir()) / f"visattn-{role}-{os.getuid()}-{port}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("role", nargs="?", default="room", choices=("room", "replicas", "front"))
    ap.add_argument("--replicas", type=int, default=int(os.environ.get("REPLICAS") or 2))
    ap.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8501))
    ap.add_argument(
        "--room-host",
        default=os.environ.get("ROOM_HOST", ""),
        help="the address people type (the front machine's IP or name on the room's network)",
    )
    ap.add_argument("--bind", default="127.0.0.1", help="replicas: the address they listen on")
    ap.add_argument("--replica-port", type=int, help="replicas: the first port (default port+100)")
    ap.add_argument("--upstreams", default="", help="front: every replica as host:port")
    ap.add_argument("--run-dir", type=Path, help="configs, logs, pid files (default in /tmp)")
    args = ap.parse_args()
    room_host = args.room_host.strip()
    replica_port = args.replica_port or args.port + REPLICA_PORT_OFFSET
    key_port = replica_port if args.role == "replicas" else args.port
    run_dir = args.run_dir or default_run_dir(args.role, key_port)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # SIGINT too: a background job starts with it ignored
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    # `make serve-room` stopped by SIGTERM to make alone: make dies without a word to its child, so
    # the kernel tells this process (SIGTERM when its parent dies) and the room stops in order
    arm_parent_death_signal(signal.SIGTERM)
    try:
        with serve(
            args.role,
            args.replicas,
            args.port,
            room_host,
            bind=args.bind,
            replica_port=replica_port,
            upstreams=args.upstreams,
            run_dir=run_dir,
            echo=True,
        ) as r:
            print(_started(args.role, r, room_host, args.port), flush=True)
            print(f"  logs: {r.run_dir}  — Ctrl-C stops everything", flush=True)
            while r.supervisor.poll() is None:
                time.sleep(1)
            print(f"visattn: supervisord exited (code {r.supervisor.returncode})", flush=True)
            return 1
    except KeyboardInterrupt:
        print("visattn: stopped", flush=True)
        return 0
    except (RuntimeError, ValueError) as exc:
        print(f"visattn: {exc}", flush=True)
        return 1


def _started(role: str, r: Room, room_host: str, port: int) -> str:
    where = f"http://{room_host or 'localhost'}:{port}"
    mine = ", ".join(join_address(r.bind, p) for p in r.replica_ports)
    if role == "replicas":
        return f"visattn: replicas on {mine} under supervisord; the front machine lists them"
    if role == "front":
        return f"visattn: nginx for {' '.join(r.upstreams)}; open {where}"
    local = "" if room_host else " (localhost only; for a room: ROOM_HOST=<this machine's IP>)"
    return f"visattn: {len(r.replica_ports)} replica(s) on {mine} behind nginx; open {where}{local}"


if __name__ == "__main__":
    sys.exit(main())
