"""Run a command that gets a signal (SIGTERM, or --signal KILL) when its parent process dies,
however the parent dies.

    python deploy/dies_with_parent.py --parent-pid 1234 -- nginx -p ...
    python deploy/dies_with_parent.py --parent-pidfile run/supervisord.pid --signal KILL -- \
        python room_server.py ...

serve_room.py starts supervisord through it, and supervisord starts every replica and nginx through
it, so a `kill -9` of serve_room.py or of supervisord (which can run no clean-up) still stops the
processes below it: the kernel sends the signal (Linux prctl PR_SET_PDEATHSIG, kept across exec).
A parent that died before the signal was armed is caught by comparing the parent's pid with the one
expected (the kernel re-parents an orphan to init or a subreaper): the command is then not started.

SIGTERM lets nginx and supervisord stop what is below them. A replica gets SIGKILL: its sessions die
with supervisord anyway, and Streamlit's SIGTERM handler first prints to its log, a pipe whose
reader (supervisord) is gone, so the print raises and the replica kept the port (measured).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def arm_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel for ``sig`` when the parent dies; False where there is no such thing (not
    Linux: then only an orderly stop, and the next start's clean-up, stop the children)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    return True


def expected_parent(pid: int | None, pidfile: str | None, wait: float = 5.0) -> int:
    """The parent's pid, from the argument or from the pid file the parent writes at start-up."""
    if pid:
        return pid
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(pidfile, encoding="ascii") as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parent-pid", type=int)
    ap.add_argument("--parent-pidfile")
    ap.add_argument("--signal", default="TERM", choices=("TERM", "KILL"))
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or not (args.parent_pid or args.parent_pidfile):
        ap.error("give --parent-pid or --parent-pidfile, then -- and the command")
    arm_parent_death_signal(signal.Signals[f"SIG{args.signal}"])
    want = expected_parent(args.parent_pid, args.parent_pidfile)
    if os.getppid() != want:
        print(
            f"dies_with_parent: the parent (pid {want}) is gone; not starting {command[0]}",
            file=sys.stderr,
        )
        return 1
    os.execvp(command[0], command)
    return 127  # not reached: execvp replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
