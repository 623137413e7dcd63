"""Background jobs: work that outlives a script run (a training), run in a thread through the room's
budget, shared by every session that asks for it, and watched live. The one module of the app with
threads, polling and session ids; a page sees a job as a :class:`JobState`, an immutable snapshot.

- **Shared**: a job is named by its :class:`Spec`'s key. :func:`start` joins the job already running
  for that key; :func:`kept` is the whole result the room keeps for it (the budget keeps it, by
  bytes), so a class pressing "Train" on the defaults costs one training.
- **Admitted**: the job's thread calls :func:`ui.room.budget.get` with the spec's cost in the
  budget's long lane, so a job queues behind the room's other long work, never in front of a
  page's reading; while it waits, its state's ``ahead`` is what the sessions watching it show as
  "waiting, n ahead of you".
- **One a session**: a session that starts a job lets go of any other it watched, so each session
  holds at most one place in the long lane and the lane's arrival order is fair between sessions
  (a job another session still watches goes on for it).
- **Stopped when nobody watches**: each session watching a job renews its heartbeat as it follows
  it (:func:`follow`, every ``POLL_SECONDS``); the work asks ``should_stop`` at each of its steps,
  which is true once no session was seen within ``HEARTBEAT_SECONDS`` — the sessions left, moved
  to another job (:func:`watch_only`) or pressed Stop (:func:`stop`, which ends it at once when
  nobody else watches).
- **Stopped runs**: work that stops early raises :class:`Partial` with what it has; the budget does
  not keep it (it is not the result its key names), its job does, for the session that stopped it,
  among the last ``KEEP_JOBS`` jobs.

No widget here: the page draws what the states report."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from . import budget

HEARTBEAT_SECONDS = 3.0  # a job nobody has followed for this long stops
POLL_SECONDS = 0.5  # how often a following session gets a new state (and redraws)
KEEP_JOBS = 6  # finished, stopped or failed jobs remembered (running ones always are)
_WATCHING = "_jobs_watching"  # session state: {slot: the key the slot watches}

Report = Callable[[Any], None]  # the work's progress so far, whatever it measures
ShouldStop = Callable[[], bool]


class Partial(Exception):
    """Work that stopped early, carrying what it has (out of the budget, which keeps only whole
    results)."""

    def __init__(self, result: Any) -> None:
        super().__init__("stopped")
        self.result = result


class _Cancelled(Exception):
    """Nobody watches the job any more (raised while it waits for admission)."""


@dataclass(frozen=True)
class Spec:
    """What a job is: its key (shared by every session asking for the same work), the bytes it
    holds while it runs, and its work: ``work(report, should_stop)`` returns the result, reports
    its progress as it goes, and raises :class:`Partial` when ``should_stop()`` ends it early."""

    key: Hashable
    cost: int
    work: Callable[[Report, ShouldStop], Any] = field(compare=False)
    name: str = "job"  # its thread's name
    lane: str = budget.LONG  # the budget's lane it is admitted in


@dataclass(frozen=True)
class JobState:
    """A job as one session sees it at one moment."""

    key: Hashable
    progress: Any = None  # the latest the work reported (None before its first report)
    ahead: int | None = 0  # waiting for admission: how many are ahead; None once running
    partial: Any = None  # a stopped run's result (a whole one is kept by the budget)
    error: BaseException | None = None
    done: bool = False
    watched_here: bool = False  # this session is among its watchers

    @property
    def running(self) -> bool:
        return not self.done


class _Job:
    """One job's mutable record, shared by its thread and every session; read it through
    :meth:`state`."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.progress: Any = None
        self.ahead: int | None = 0
        self.partial: Any = None
        self.error: BaseException | None = None
        self.done = False
        self.cancelled = False
        self.watchers: dict[str, float] = {}  # session → last seen (monotonic)
        self.lock = threading.Lock()

    def state(self, session: str) -> JobState:
        with self.lock:
            return JobState(
                key=self.spec.key,
                progress=self.progress,
                ahead=self.ahead,
                partial=self.partial,
                error=self.error,
                done=self.done,
                watched_here=session in self.watchers,
            )

    def seen(self, session: str) -> None:
        with self.lock:
            self.watchers[session] = time.monotonic()

    def forget(self, session: str) -> None:
        with self.lock:
            self.watchers.pop(session, None)
            if not self._watched():
                self.cancelled = True

    def _watched(self) -> bool:
        now = time.monotonic()
        return any(now - seen < HEARTBEAT_SECONDS for seen in self.watchers.values())

    def should_stop(self) -> bool:
        with self.lock:
            if not self._watched():
                self.cancelled = True
            return self.cancelled

    def report(self, progress: Any) -> None:
        self.progress = progress

    def on_wait(self, ahead: int) -> None:
        self.ahead = ahead
        if self.should_stop():
            raise _Cancelled

    def compute(self) -> Any:
        self.ahead = None
        return self.spec.work(self.report, self.should_stop)

    def run(self) -> None:
        try:
            budget.get(self.spec.key, self.spec.cost, self.compute, self.on_wait, self.spec.lane)
        except Partial as stopped:
            self.partial = stopped.result
        except _Cancelled:
            pass
        except Exception as exc:  # shown by the page as a translated error
            self.error = exc
        finally:
            self.done = True


_JOBS: OrderedDict[Hashable, _Job] = OrderedDict()
_LOCK = threading.Lock()


def session_id() -> str:
    """This session's id ("local" outside a script run: a test's thread)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def _find(key: Hashable) -> _Job | None:
    with _LOCK:
        return _JOBS.get(key)


def kept(key: Hashable) -> Any:
    """The whole result of ``key`` if the room has computed it and the budget still keeps it."""
    return budget.peek(key)


def state(key: Hashable, session: str | None = None) -> JobState | None:
    """The job of ``key`` as ``session`` (this one by default) sees it, if one runs or was
    remembered."""
    job = _find(key)
    return None if job is None else job.state(session or session_id())


def start(spec: Spec, session: str | None = None) -> JobState:
    """The running job of ``spec``, joined by ``session`` (this one by default), or a new one
    started for it; any other job ``session`` watched is let go (one job a session)."""
    session = session or session_id()
    with _LOCK:
        for other in _JOBS.values():
            if other.spec.key != spec.key and not other.done:
                other.forget(session)
        job = _JOBS.get(spec.key)
        if job is None or job.done:
            job = _Job(spec)
            _JOBS[spec.key] = job
            _JOBS.move_to_end(spec.key)
            job.seen(session)
            threading.Thread(target=job.run, daemon=True, name=spec.name).start()
            finished = [key for key, j in _JOBS.items() if j.done]
            for old in finished[: max(len(finished) - KEEP_JOBS, 0)]:
                del _JOBS[old]
        else:
            job.seen(session)
    return job.state(session)


def leave(key: Hashable, session: str | None = None) -> None:
    """``session`` stops watching the job of ``key``; a job nobody else watches stops at its next
    step."""
    job = _find(key)
    if job is not None:
        job.forget(session or session_id())


def wait(key: Hashable, most: float, session: str | None = None) -> JobState | None:
    """The job of ``key`` once it has ended, or after ``most`` seconds."""
    job = _find(key)
    deadline = time.monotonic() + most
    while job is not None and not job.done and time.monotonic() < deadline:
        time.sleep(0.05)
    return None if job is None else job.state(session or session_id())


def stop(key: Hashable, most: float = 2.0, session: str | None = None) -> JobState | None:
    """The Stop button: ``session`` leaves the job, and waits up to ``most`` seconds for it to end
    its step and report, so that it sees where the job stopped."""
    leave(key, session)
    return wait(key, most, session)


def follow(key: Hashable, session: str | None = None) -> Iterator[JobState]:
    """The job's state every ``POLL_SECONDS`` while it runs, each one renewing ``session``'s
    heartbeat. A rerun (Stop, a changed control) or the session leaving ends the loop that draws
    them at its next element, and the job, followed by nobody, stops within
    ``HEARTBEAT_SECONDS``."""
    session = session or session_id()
    job = _find(key)
    while job is not None and not job.done:
        job.seen(session)
        yield job.state(session)
        time.sleep(POLL_SECONDS)


def watch_only(slot: str, key: Hashable) -> None:
    """This session's ``slot`` (a Train button) watches the job of ``key`` from now on; the job it
    watched before, for another input, is let go."""
    watching = st.session_state.setdefault(_WATCHING, {})
    previous = watching.get(slot)
    if previous is not None and previous != key:
        leave(previous)
    watching[slot] = key
