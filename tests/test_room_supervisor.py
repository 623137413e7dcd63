"""A dead replica is replaced: supervisord restarts a killed replica while nginx serves
its visitors from the other; a killed nginx is replaced the same way (no worker left on the port);
killing serve_room.py or supervisord leaves nothing on the ports; a start stops what an earlier run
left there and says so; Ctrl-C, and SIGTERM to `make serve-room`, stop everything. Loopback
only."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from apptest_util import ROOT
from test_replicas import get, ports_free, require_nginx, serve_room, short_run_dir


def wait_for(predicate, timeout: float, what: str, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def healthy(url: str) -> bool:
    try:
        return get(url).status == 200
    except OSError:
        return False


def test_a_killed_replica_is_restarted_and_nginx_serves_the_other_meanwhile(tmp_path_factory):
    require_nginx()
    with serve_room.room(replicas=2, run_dir=short_run_dir(tmp_path_factory)) as r:
        first = r.pid("replica-1")
        replica_1 = f"http://127.0.0.1:{r.replica_ports[0]}"
        os.kill(first, signal.SIGKILL)
        killed = time.monotonic()
        # meanwhile a visitor of replica 1 is answered by replica 2, and keeps it (the cookie)
        during = get(r.url, headers={"Cookie": "visattn_replica=1"})
        assert during.status == 200 and during.getheader("X-Visattn-Replica") == "2"
        assert "visattn_replica=2" in during.getheader("Set-Cookie")
        wait_for(lambda: healthy(replica_1), 60, "replica 1 to be restarted")
        print(f"\nreplica 1 answered again {time.monotonic() - killed:.1f} s after kill -9")
        assert r.pid("replica-1") != first
        log = (r.run_dir / "supervisord.log").read_text()
        assert "exited: replica-1 (terminated by SIGKILL; not expected)" in log
        assert (r.run_dir / "replica-1.log").stat().st_size > 0
        wait_for(lambda: r.state("replica-1") == "RUNNING", 30, "replica 1 to count as started")
        # back in the rotation: its visitors are its own again
        back = get(r.url, headers={"Cookie": "visattn_replica=1"})
        assert back.getheader("X-Visattn-Replica") == "1"
    assert ports_free(r)


def test_kill_9_of_nginx_is_replaced_with_no_worker_left_on_the_port(tmp_path_factory):
    """nginx runs as one process (no master and worker: a worker outlived a killed master and
    held the port, so every restart failed); killed, it is restarted once and serves again."""
    require_nginx()
    with serve_room.room(replicas=1, run_dir=short_run_dir(tmp_path_factory)) as r:
        first = r.pid("nginx")
        port = int(r.url.rsplit(":", 1)[1])
        holders = serve_room.port_holders("127.0.0.1", port)
        assert set(holders) == {first}, holders  # the one process on the room's port
        os.kill(first, signal.SIGKILL)
        killed = time.monotonic()
        wait_for(lambda: healthy(r.url), 30, "the room to answer again")
        print(f"\nthe room answered again {time.monotonic() - killed:.1f} s after kill -9 of nginx")
        wait_for(lambda: r.state("nginx") == "RUNNING", 30, "nginx to count as started")
        again = r.pid("nginx")
        assert again != first and set(serve_room.port_holders("127.0.0.1", port)) == {again}
        time.sleep(3)  # no restart loop: the same nginx still serves
        assert r.pid("nginx") == again and healthy(r.url)
        log = (r.run_dir / "supervisord.log").read_text()
        assert log.count("spawned: 'nginx'") == 2, log
    assert ports_free(r)


def test_kill_9_of_supervisord_leaves_no_process_on_the_ports(tmp_path_factory):
    require_nginx()
    with serve_room.room(replicas=1, run_dir=short_run_dir(tmp_path_factory)) as r:
        below = [r.pid("nginx"), r.pid("replica-1")]
        os.kill(r.supervisor.pid, signal.SIGKILL)
        wait_for(lambda: ports_free(r), 30, "the replica and nginx to die with supervisord")
        assert not any(serve_room.running(pid) for pid in below)


def _watched(argv: list[str]) -> subprocess.Popen:
    """``argv`` started in the checkout, its output read through a pipe (see :class:`Output`)."""
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _nothing_listens(port: int, replica_port: int) -> None:
    """Until no process holds the room's port or its replica's."""
    holders = [("127.0.0.1", port), ("127.0.0.1", replica_port)]
    wait_for(
        lambda: not any(serve_room.port_holders(h, p) for h, p in holders),
        30,
        "every process of the room to stop",
    )


def _serve_room_cli(run_dir, port: int, replica_port: int) -> subprocess.Popen:
    return _watched(
        [
            sys.executable,
            str(ROOT / "deploy" / "serve_room.py"),
            "room",
            "--replicas",
            "1",
            "--port",
            str(port),
            "--replica-port",
            str(replica_port),
            "--run-dir",
            str(run_dir),
        ]
    )


class Output:
    """A process's output, read by a thread so that waiting for a line has a time limit."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self.lines.put(line)

    def until(self, marker: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            if marker in line:
                return "".join(self.seen)
        raise AssertionError(f"no {marker!r} in the output:\n{''.join(self.seen)}")


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_serve_room_stops_everything_on_ctrl_c_and_when_killed(how, tmp_path_factory):
    """Ctrl-C (SIGINT) stops supervisord in order; kill -9 of serve_room.py cannot run any clean-up,
    yet supervisord, nginx and the replica die with it (their parent-death signal)."""
    require_nginx()
    run_dir = short_run_dir(tmp_path_factory)
    port, replica_port = serve_room.free_port(), serve_room.free_port()
    proc = _serve_room_cli(run_dir, port, replica_port)
    out = Output(proc)
    try:
        out.until("open http://localhost:")
        assert healthy(f"http://127.0.0.1:{port}")
        proc.send_signal(getattr(signal, how))
        code = proc.wait(60)
        if how == "SIGINT":
            assert code == 0
            out.until("visattn: stopped", 10)
        _nothing_listens(port, replica_port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_to_make_serve_room_stops_everything():
    """`make serve-room` stopped by SIGTERM to make alone (a terminal closed, a process manager):
    serve_room.py hears its parent die and stops the room in order."""
    require_nginx()
    port, replica_port = serve_room.free_port(), serve_room.free_port()
    make = _watched(
        [
            "make",
            "--no-print-directory",
            "-o",
            ".venv/.stamp-run",  # this checkout's environment as it is: nothing to install
            "serve-room",
            f"PY={sys.executable}",
            "REPLICAS=1",
            f"ROOM_PORT={port}",
            f"REPLICA_PORT={replica_port}",
        ]
    )
    out = Output(make)
    try:
        out.until("open http://localhost:")
        assert healthy(f"http://127.0.0.1:{port}")
        make.send_signal(signal.SIGTERM)
        make.wait(30)
        out.until("visattn: stopped", 60)
        _nothing_listens(port, replica_port)
    finally:
        if make.poll() is None:
            make.kill()
            make.wait()


def test_a_start_stops_what_an_earlier_run_left_and_says_so(tmp_path, tmp_path_factory):
    """A replica left holding its port (as if its supervisord had been killed without the
    parent-death signal) is stopped, with a message; a port held by anything else is not touched."""
    require_nginx()
    run_dir = short_run_dir(tmp_path_factory)
    port, replica_port = serve_room.free_port(), serve_room.free_port()
    fake = tmp_path / "room_server.py"  # the command line of a replica, as the clean-up knows it
    fake.write_text(
        "import socket, sys, time\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('up', flush=True)\n"
        "time.sleep(120)\n"
    )
    left = subprocess.Popen(
        [sys.executable, str(fake), str(replica_port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert left.stdout.readline().strip() == "up"
        proc = _serve_room_cli(run_dir, port, replica_port)
        try:
            out = Output(proc).until("open http://localhost:")
            assert f"stopped pid {left.pid}" in out and f"127.0.0.1:{replica_port}" in out
            assert left.wait(10) is not None
            assert healthy(f"http://127.0.0.1:{replica_port}")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
    finally:
        if left.poll() is None:
            left.kill()
    with socket.socket() as foreign:  # not a room's process: refused, with the reason
        foreign.bind(("127.0.0.1", 0))
        foreign.listen()
        taken = foreign.getsockname()[1]
        with pytest.raises(RuntimeError, match="which no room started"):
            serve_room.clean_up_earlier(run_dir, [("127.0.0.1", taken)])
