"""ui.room.budget: admission control and the byte-bounded shared cache, driven by threads.

Every wait here is bounded (a test that would hang fails instead); nothing asserts a duration.
"""

import threading
from dataclasses import dataclass

import numpy as np
import pytest

from ui.room import budget
from ui.room.budget import Budget, nbytes

TIMEOUT = 20  # seconds any thread of a test may take at most


class Probe:
    """Computations that hold ``cost`` bytes while they run, recording what ran together."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.running = 0
        self.peak_running = 0
        self.started: list[str] = []
        self.calls = 0

    def job(self, name: str, cost: int, release: threading.Event | None = None, value=None):
        def compute():
            with self.lock:
                self.calls += 1
                self.started.append(name)
                self.now += cost
                self.running += 1
                self.peak = max(self.peak, self.now)
                self.peak_running = max(self.peak_running, self.running)
            if release is not None:
                assert release.wait(TIMEOUT)
            with self.lock:
                self.now -= cost
                self.running -= 1
            return name if value is None else value

        return compute


def run_threads(targets) -> list:
    out = [None] * len(targets)
    errors = []

    def runner(i, fn):
        try:
            out[i] = fn()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(i, fn)) for i, fn in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "a thread did not finish"
    if errors:
        raise errors[0]
    return out


def test_identical_requests_share_one_computation():
    b, probe, release = Budget(1000, slots=4), Probe(), threading.Event()
    compute = probe.job("a", 10, release)

    def ask():
        return b.get("key", 10, compute)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    threading.Timer(0.3, release.set).start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert probe.calls == 1
    assert b.get("key", 10, compute) == "a" and probe.calls == 1  # kept


def test_peek_returns_a_kept_result_and_never_computes():
    b = Budget(limit=10_000)
    assert b.peek("k") is None and b.held() == (0, 0)
    value = np.zeros(10)
    assert b.get("k", 100, lambda: value) is value
    assert b.peek("k") is value
    b.clear()
    assert b.peek("k") is None


def test_work_in_progress_never_passes_the_budget():
    b, probe = Budget(100, slots=8), Probe()
    jobs = [probe.job(f"j{i}", 60) for i in range(5)]
    run_threads([lambda i=i: b.get(f"j{i}", 60, jobs[i]) for i in range(5)])
    assert probe.peak <= 100 and probe.peak_running == 1  # 60 + 60 > 100: one at a time


def test_slots_bound_how_many_run_at_once():
    b, probe = Budget(10_000, slots=2), Probe()
    jobs = [probe.job(f"j{i}", 1) for i in range(6)]
    run_threads([lambda i=i: b.get(f"j{i}", 1, jobs[i]) for i in range(6)])
    assert probe.peak_running <= 2 and probe.calls == 6


def test_requests_start_in_arrival_order_and_hear_their_place():
    b, probe = Budget(100, slots=1), Probe()
    first = threading.Event()
    heard: dict[str, list[int]] = {"b": [], "c": []}
    threading.Thread(target=b.get, args=("a", 90, probe.job("a", 90, first))).start()
    while not probe.started:  # "a" runs
        threading.Event().wait(0.01)
    waiting = []
    for name in ("b", "c"):

        def ask(name=name):
            return b.get(name, 90, probe.job(name, 90), on_wait=heard[name].append)

        waiting.append(threading.Thread(target=ask))
        waiting[-1].start()
        while not any(job.key == name for job in b._queue):  # queued before the next one asks
            threading.Event().wait(0.01)
    threading.Timer(0.6, first.set).start()
    for thread in waiting:
        thread.join(TIMEOUT)
    assert probe.started == ["a", "b", "c"]
    assert heard["b"] and heard["b"][0] == 1  # "a" runs ahead of it
    assert heard["c"] and heard["c"][0] == 2  # "a" and "b"


def test_a_caller_that_leaves_is_withdrawn_and_the_queue_goes_on():
    b, probe, release = Budget(100, slots=1), Probe(), threading.Event()
    threading.Thread(target=b.get, args=("a", 90, probe.job("a", 90, release))).start()
    while not probe.started:
        threading.Event().wait(0.01)

    class Left(Exception):
        pass

    def leave(_ahead):
        raise Left

    with pytest.raises(Left):
        b.get("b", 90, probe.job("b", 90), on_wait=leave)
    release.set()
    assert b.get("c", 90, probe.job("c", 90)) == "c"
    assert probe.started == ["a", "c"]  # "b" never ran


def test_results_are_kept_by_bytes_least_recently_used_first():
    b = Budget(3 * 8000 + 2000, slots=1)
    arrays = {k: np.zeros(1000) for k in "abcd"}  # 8 000 bytes each
    for k in "abc":
        b.get(k, 1, lambda k=k: arrays[k])
    b.get("a", 1, lambda: None)  # "a" used again: "b" is now the oldest
    b.get("d", 8000, lambda: arrays["d"])
    kept, running = b.held()
    assert running == 0 and kept <= b.limit
    assert list(b._results) == ["c", "a", "d"]


def test_a_computation_larger_than_the_budget_runs_alone():
    b, probe = Budget(100, slots=4), Probe()
    b.get("small", 10, probe.job("small", 10))
    huge = np.zeros(100)  # 800 bytes: more than the whole budget
    assert b.get("huge", 500, probe.job("huge", 500, value=huge)) is huge
    assert probe.peak == 500
    # the small result was evicted to run it; the huge one is not kept
    assert b.held() == (0, 0) and not b._results


def test_an_error_reaches_every_caller_and_is_not_kept():
    b, release = Budget(1000, slots=2), threading.Event()
    calls = []

    def fail():
        calls.append(1)
        assert release.wait(TIMEOUT)
        raise ValueError("bad text")

    def ask():
        with pytest.raises(ValueError, match="bad text"):
            b.get("k", 1, fail)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    threading.Timer(0.3, release.set).start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert len(calls) == 1
    with pytest.raises(ValueError):
        b.get("k", 1, fail)  # asked again: computed again
    assert len(calls) == 2


@dataclass
class Result:
    weights: np.ndarray
    first: np.ndarray  # weights[0]: no buffer of its own
    tokens: list


def test_nbytes_counts_buffers_once():
    w = np.zeros((4, 10, 10), dtype=np.float32)  # 1 600 bytes
    r = Result(w, w[0], ["a", "b"])
    assert 1600 <= nbytes(r) < 1600 + 1000  # w[0] is the same buffer
    assert nbytes(np.ones(3)) == 24


def test_the_replica_budget_reads_its_size_from_the_environment(monkeypatch):
    monkeypatch.setattr(budget, "_SHARED", None)
    monkeypatch.setenv("VISATTN_BUDGET_MB", "250")
    monkeypatch.setenv("VISATTN_HEAVY_SLOTS", "3")
    monkeypatch.setenv("VISATTN_LONG_SLOTS", "2")
    shared = budget.shared()
    assert shared.limit == 250_000_000
    assert shared.slots == {budget.SHORT: 3, budget.LONG: 2}
    monkeypatch.setattr(budget, "_SHARED", None)
    monkeypatch.setenv("VISATTN_BUDGET_MB", "not a number")
    assert budget.shared().limit == budget.DEFAULT_BYTES
    monkeypatch.setattr(budget, "_SHARED", None)


def test_a_reservation_waits_its_turn_and_counts_while_held():
    b, probe, release = Budget(100, slots=2), Probe(), threading.Event()
    threading.Thread(target=b.get, args=("a", 70, probe.job("a", 70, release))).start()
    while not probe.started:
        threading.Event().wait(0.01)
    heard = []
    threading.Timer(0.6, release.set).start()
    with b.reserve(60, on_wait=heard.append):  # 70 + 60 > 100: waits for "a"
        assert probe.running == 0
        kept, running = b.held()
        assert running == 60 and kept + running <= 100
    assert heard and heard[0] == 1
    assert b.held()[1] == 0


def test_a_request_from_inside_a_computation_does_not_wait_for_itself():
    """One slot: shown tokens computed under the budget ask for their readings, also under the
    budget. Waiting for a second slot would wait for itself; it runs within the first."""
    b = Budget(1000, slots=1)

    def readings():
        return "readings"

    def shown_tokens():
        return ("shown", b.get("readings", 10, readings))

    done = []
    thread = threading.Thread(target=lambda: done.append(b.get("shown", 10, shown_tokens)))
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "the nested request waited for its own slot"
    assert done == [("shown", "readings")]
    assert b.get("readings", 10, readings) == "readings" and "readings" in b._results


def test_a_reservation_inside_another_or_a_small_one_runs_at_once():
    """One slot: a page's drawing holds a reservation and a section inside it asks again (nested:
    already covered); a short text's reservation (≤ 1 % of the budget) never queues, even while a
    long one holds the only slot."""
    b = Budget(1000, slots=1)
    with b.reserve(500):
        assert b.held()[1] == 500
        with b.reserve(400):  # would wait for its own slot if it were admitted again
            assert b.held()[1] == 500
        small_done = threading.Event()

        def small() -> None:
            with b.reserve(10):  # 1 % of 1 000
                small_done.set()

        thread = threading.Thread(target=small)
        thread.start()
        thread.join(TIMEOUT)
        assert small_done.is_set(), "a small reservation waited behind the long one"
    assert b.held()[1] == 0


def wait_for(condition) -> None:
    for _ in range(int(TIMEOUT / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("the condition never held")


def test_a_short_request_never_waits_behind_long_ones():
    """Three long jobs queued behind a running one (a training each): a page's reading is
    admitted in its own lane and done while they all still wait."""
    b, probe, release = Budget(1000, slots=1, long_slots=1), Probe(), threading.Event()
    longs = []
    for i in range(4):
        args = (f"long{i}", 100, probe.job(f"long{i}", 100, release))
        longs.append(threading.Thread(target=b.get, args=args, kwargs={"lane": budget.LONG}))
        longs[-1].start()
    try:
        wait_for(lambda: len(b._queue) == 3 and probe.running == 1)
        reading = run_threads([lambda: b.get("reading", 100, probe.job("reading", 100))])
        assert reading == ["reading"]  # done (a bounded wait) while every long job waits
        assert probe.started == ["long0", "reading"] and len(b._queue) == 3
    finally:
        release.set()
    for thread in longs:
        thread.join(TIMEOUT)
    assert probe.started[2:] == ["long1", "long2", "long3"]  # one at a time, in arrival order


def test_the_long_lane_leaves_the_short_lane_its_share_of_the_budget():
    """Long work in progress holds at most LONG_SHARE of the budget (one job larger than that
    runs alone in its lane), so a short request of the rest fits at once."""
    limit = 1000
    cost = int(budget.LONG_SHARE * limit * 0.6)  # two would pass the share
    b, probe, release = Budget(limit, slots=1, long_slots=4), Probe(), threading.Event()
    for name in ("long0", "long1"):
        args = (name, cost, probe.job(name, cost, release))
        threading.Thread(target=b.get, args=args, kwargs={"lane": budget.LONG}).start()
    rest = limit - cost
    try:
        wait_for(lambda: len(b._queue) == 1 and probe.running == 1)
        reading = run_threads([lambda: b.get("reading", rest, probe.job("reading", rest))])
        assert reading == ["reading"]
        assert probe.peak == limit and probe.started == ["long0", "reading"]
    finally:
        release.set()
    wait_for(lambda: probe.started[-1] == "long1" and probe.running == 0)


def test_a_request_waiting_for_the_other_lane_s_memory_hears_what_it_waits_for():
    """Nothing ahead in its own lane, but a long job holds the memory it needs: it hears 1."""
    b, probe, release = Budget(100, slots=1, long_slots=1), Probe(), threading.Event()
    args = ("long", 50, probe.job("long", 50, release))
    threading.Thread(target=b.get, args=args, kwargs={"lane": budget.LONG}).start()
    wait_for(lambda: probe.running == 1)
    heard = []
    threading.Timer(0.6, release.set).start()
    assert b.get("reading", 60, probe.job("reading", 60), on_wait=heard.append) == "reading"
    assert heard and set(heard) == {1}
