"""ui.room.jobs, the one module of background work, with small jobs of its own: a page sees
immutable states; one job per key for every session; a job that stops early keeps what it has for
its session, and its error reaches the page; a job nobody follows stops."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from ui.room import budget, jobs


def stepping(release: threading.Event, steps: int = 3):
    """Work that reports each step once ``release`` is set, and stops early when asked."""

    def work(report, should_stop):
        done = []
        for step in range(1, steps + 1):
            release.wait()
            if should_stop():
                raise jobs.Partial(tuple(done))
            done.append(step)
            report(tuple(done))
        return tuple(done)

    return work


def test_a_state_is_a_snapshot_and_the_result_is_kept_for_every_session():
    release = threading.Event()
    spec = jobs.Spec(("test_jobs", "snapshot"), 1_000, stepping(release), "test")
    first = jobs.start(spec, "session-1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.done = True  # a page cannot change a job through its state
    assert first.running and first.watched_here and first.progress is None
    joined = jobs.start(spec, "session-2")  # the same key: the same job, joined
    assert joined.watched_here and jobs.state(spec.key, "session-3").watched_here is False
    release.set()
    states = list(jobs.follow(spec.key, "session-1"))
    done = jobs.wait(spec.key, most=60, session="session-1")
    assert done.done and done.error is None and done.partial is None
    assert first.progress is None and first.running  # the first snapshot did not move
    assert all(s.progress in (None, (1,), (1, 2), (1, 2, 3)) for s in states)
    assert jobs.kept(spec.key) == (1, 2, 3)  # the whole result: the budget keeps it for everyone


def test_stopped_work_keeps_what_it_has_and_an_error_reaches_the_page():
    release = threading.Event()
    spec = jobs.Spec(("test_jobs", "stopped"), 1_000, stepping(release), "test")
    jobs.start(spec, "session-a")
    for state in jobs.follow(spec.key, "session-a"):
        if state.ahead is None:  # admitted: the work runs
            break
    jobs.leave(spec.key, "session-a")  # the only watcher leaves: the next step stops it
    release.set()
    stopped = jobs.wait(spec.key, most=60, session="session-a")
    assert stopped.done and stopped.partial == () and jobs.kept(spec.key) is None

    def failing(report, should_stop):
        raise ValueError("bad input")

    broken = jobs.Spec(("test_jobs", "error"), 1_000, failing, "test")
    jobs.start(broken, "session-b")
    failed = jobs.wait(broken.key, most=60, session="session-b")
    assert failed.done and isinstance(failed.error, ValueError)
    assert budget.shared().held()[1] == 0  # nothing reserved any more


def test_a_job_nobody_follows_stops(monkeypatch):
    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.2)
    release = threading.Event()
    spec = jobs.Spec(("test_jobs", "unfollowed"), 1_000, stepping(release, steps=1000), "test")
    jobs.start(spec, "session-c")  # started, then never followed
    threading.Timer(0.5, release.set).start()  # past the heartbeat
    stopped = jobs.wait(spec.key, most=60, session="session-c")
    assert stopped.done and stopped.partial is not None and len(stopped.partial) < 1000


def test_a_session_holds_one_job_and_lets_the_last_one_go():
    """Starting a second job lets the session's first go: nobody else watching, it stops; one
    another session watches goes on for it."""
    release = threading.Event()
    alone = jobs.Spec(("test_jobs", "alone"), 1_000, stepping(release, steps=1000), "test")
    shared = jobs.Spec(("test_jobs", "shared"), 1_000, stepping(release, steps=2), "test")
    jobs.start(alone, "student-1")
    jobs.start(shared, "student-2")
    jobs.start(shared, "student-1")  # student 1 moves on: "alone" is let go
    assert not jobs.state(alone.key, "student-1").watched_here
    release.set()
    stopped = jobs.wait(alone.key, most=60, session="student-1")
    assert stopped.done and stopped.partial is not None and len(stopped.partial) < 1000
    for _ in jobs.follow(shared.key, "student-2"):
        pass
    other = jobs.start(alone, "student-2")  # student 2 moves to another: "shared" is done
    assert other.watched_here
    assert jobs.kept(shared.key) == (1, 2)
    jobs.leave(alone.key, "student-2")
