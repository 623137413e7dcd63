"""Heavy work under a memory budget: admission control and one shared, byte-bounded result cache.

A replica serves a whole room, so one process must survive twenty students pasting twenty long
texts at once. Every heavy computation (a long MiniLM text, attention flow, a training, a long
decoder sequence) goes through :meth:`Budget.get`:

- **identical requests share one computation**: a key already computed is returned from the cache;
  a key being computed is waited for, not started again;
- **admission**: a computation declares what it will hold while it runs (its working memory) and
  after (its result); it starts only when the results kept plus the work in progress plus its own
  cost fit in the budget, and when a *slot* of its lane is free. Older results are evicted first
  to make room. Requests are admitted in arrival order (FIFO) within their lane; a waiting caller
  is told how many are ahead of it (``on_wait``), which the page shows as a translated "waiting,
  n ahead of you" with a progress bar;
- **two lanes**: ``SHORT`` (a page's reading of a text, a figure: the default) and ``LONG`` (a
  training, work that runs for minutes). Each lane has its own slots (``slots``, ``long_slots``)
  and its own queue, and the long lane's work in progress holds at most ``LONG_SHARE`` of the
  budget, so a short request never waits behind a long one;
- **the cache is bounded in bytes**, not items: each result's size is measured (:func:`nbytes`)
  once it exists, and the least recently used results go first.

A computation larger than the whole budget still runs, alone (nothing else in progress, nothing
kept), so one legitimate long text is never refused. No Streamlit here: the page passes its own
``on_wait`` callback, and tests drive the budget with threads. Numbers are bytes throughout.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np

MB = 1_000_000
DEFAULT_BYTES = 600 * MB  # results + work in progress per replica (VISATTN_BUDGET_MB overrides)
DEFAULT_SLOTS = 1  # short heavy computations at once per replica (VISATTN_HEAVY_SLOTS overrides)
DEFAULT_LONG_SLOTS = 1  # long ones (trainings) at once per replica (VISATTN_LONG_SLOTS overrides)
SHORT, LONG = "short", "long"  # the lanes
LONG_SHARE = 0.5  # the long lane's work in progress holds at most this share of the budget
POLL_SECONDS = 0.25  # how often a waiting caller hears its place in the queue
SMALL_SHARE = (
    0.01  # a reservation of at most this share of the budget runs at once (6 MB by default)
)


def nbytes(value: Any, _seen: set[int] | None = None) -> int:
    """Bytes held by ``value``: NumPy arrays by their buffers (a view counts as its base once),
    containers and dataclasses by their members, anything else by ``sys.getsizeof``."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        base = value
        while isinstance(base.base, np.ndarray):
            base = base.base
        if base is not value:
            return nbytes(base, seen)
        return int(value.nbytes)
    if is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(
            nbytes(getattr(value, f.name), seen) for f in fields(value)
        )
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(
            nbytes(k, seen) + nbytes(v, seen) for k, v in value.items()
        )
    if isinstance(value, list | tuple | set | frozenset):
        return sys.getsizeof(value) + sum(nbytes(v, seen) for v in value)
    return sys.getsizeof(value)


@dataclass
class _Job:
    """A computation admitted or waiting: its key, what it reserves, and its outcome once done."""

    key: Hashable
    cost: int
    done: threading.Event
    lane: str = SHORT
    value: Any = None
    error: BaseException | None = None
    running: bool = False


class Budget:
    """Admission control over ``limit`` bytes, ``slots`` concurrent short heavy computations and
    ``long_slots`` long ones, with the results kept in a byte-bounded LRU cache (see the module's
    docstring)."""

    def __init__(
        self,
        limit: int = DEFAULT_BYTES,
        slots: int = DEFAULT_SLOTS,
        long_slots: int = DEFAULT_LONG_SLOTS,
    ) -> None:
        if limit <= 0 or slots < 1 or long_slots < 1:
            raise ValueError("a budget needs a positive size and at least one slot a lane")
        self.limit = int(limit)
        self.slots = {SHORT: int(slots), LONG: int(long_slots)}
        self._lock = threading.Condition()
        self._results: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._jobs: dict[Hashable, _Job] = {}  # running or waiting, by key
        self._queue: deque[_Job] = deque()  # waiting, in arrival order (both lanes)
        self._local = threading.local()  # .depth: how many admitted jobs this thread is inside

    # -- what is held ---------------------------------------------------------------------------
    def _kept(self) -> int:
        """Bytes of the results in the cache."""
        return sum(size for _, size in self._results.values())

    def _in_progress(self, lane: str | None = None) -> int:
        """Bytes reserved by the computations running now (in ``lane``, or in both)."""
        return sum(job.cost for job in self._running(lane))

    def _running(self, lane: str | None = None) -> list[_Job]:
        return [j for j in self._jobs.values() if j.running and lane in (None, j.lane)]

    def held(self) -> tuple[int, int]:
        """(bytes of the results kept, bytes reserved by the work in progress)."""
        with self._lock:
            return self._kept(), self._in_progress()

    def clear(self) -> None:
        """Forget the kept results (running work finishes as it was)."""
        with self._lock:
            self._results.clear()

    # -- the one entry point --------------------------------------------------------------------
    def get(
        self,
        key: Hashable,
        cost: int,
        compute: Callable[[], Any],
        on_wait: Callable[[int], None] | None = None,
        lane: str = SHORT,
    ) -> Any:
        """The result for ``key``: kept, shared with a computation already under way, or computed
        by ``compute()`` once admitted in ``lane``. ``cost``: bytes the computation holds while it
        runs (working memory and result). ``on_wait(n_ahead)`` is called while the caller waits,
        every ``POLL_SECONDS``; an exception it raises (the session left or changed its input)
        withdraws the request. ``compute``'s exception reaches every caller of this key and is
        not cached."""
        while True:
            with self._lock:
                if key in self._results:
                    self._results.move_to_end(key)
                    return self._results[key][0]
            if self._inside():
                return self._nested(key, compute)
            with self._lock:
                job = self._jobs.get(key)
                mine = job is None
                if mine:
                    job = _Job(key, int(cost), threading.Event(), lane)
                    self._jobs[key] = job
                    self._queue.append(job)
            if mine:
                self._wait_for_admission(job, on_wait)
                return self._run(job, compute)
            try:
                return self._wait_for_result(job, on_wait)
            except _Withdrawn:
                continue  # the session that asked first left: ask again

    def peek(self, key: Hashable) -> Any:
        """The result kept for ``key``, or None: nothing is computed or waited for (a page asking
        whether a training it may show has already been done)."""
        with self._lock:
            if key in self._results:
                self._results.move_to_end(key)
                return self._results[key][0]
        return None

    @contextmanager
    def reserve(self, cost: int, on_wait: Callable[[int], None] | None = None) -> Iterator[None]:
        """Hold ``cost`` bytes (and a slot) for the work done inside the ``with`` block — a page's
        drawing of a long text, whose copies and figures are not one cacheable result — admitted
        like :meth:`get` (in arrival order, when it fits) and released when the block ends.
        Requests made inside the block run in its slot (:meth:`_nested`), so ``cost`` covers them.
        A reservation inside an admitted computation or reservation is already covered, and one
        of at most :data:`SMALL_SHARE` of the budget runs at once (a short text's page never waits
        behind a long one)."""
        if self._inside() or cost <= SMALL_SHARE * self.limit:
            yield
            return
        job = _Job(object(), int(cost), threading.Event())  # a key no other request shares
        with self._lock:
            self._jobs[job.key] = job
            self._queue.append(job)
        self._wait_for_admission(job, on_wait)
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            yield
        finally:
            self._local.depth -= 1
            with self._lock:
                self._finish(job)

    def _inside(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def _nested(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """A request made from inside an admitted computation (shown tokens need their readings):
        computed at once within the caller's slot and reservation — waiting for another slot would
        wait for itself — and kept like any result."""
        value = compute()
        size = nbytes(value)
        with self._lock:
            if size <= self.limit:
                self._results[key] = (value, size)
                self._results.move_to_end(key)
        return value

    def _fits(self, job: _Job) -> bool:
        """Whether ``job`` (first of its lane in the queue) can start now, evicting old results if
        that makes room. A job larger than the whole budget starts when nothing else runs."""
        running = self._running()
        in_lane = self._running(job.lane)
        if len(in_lane) >= self.slots[job.lane]:
            return False
        if job.lane == LONG and in_lane:
            if self._in_progress(LONG) + job.cost > LONG_SHARE * self.limit:
                return False  # the short lane keeps the rest of the budget
        while self._results and self._kept() + self._in_progress() + job.cost > self.limit:
            self._results.popitem(last=False)  # the least recently used result goes first
        if self._kept() + self._in_progress() + job.cost <= self.limit:
            return True
        return not running  # too large for any budget: alone

    def _wait_for_admission(self, job: _Job, on_wait: Callable[[int], None] | None) -> None:
        with self._lock:
            while True:
                if self._first_of_lane(job) and self._fits(job):
                    self._queue.remove(job)
                    job.running = True
                    return
                ahead = self._ahead(job)
                self._lock.wait(POLL_SECONDS)
                if on_wait is not None:
                    self._lock.release()
                    try:
                        on_wait(ahead)
                    except BaseException:
                        self._lock.acquire()
                        self._withdraw(job)
                        raise
                    self._lock.acquire()

    def _first_of_lane(self, job: _Job) -> bool:
        return next(j for j in self._queue if j.lane == job.lane) is job

    def _ahead(self, job: _Job) -> int:
        """How many requests ``job`` waits for: those queued before it in its lane and those
        running in it; when none, those running in the other lane (whose memory it waits for)."""
        queued = [j for j in self._queue if j.lane == job.lane]
        ahead = queued.index(job) + len(self._running(job.lane))
        if ahead == 0:
            ahead = len(self._running())
        return ahead

    def _withdraw(self, job: _Job) -> None:
        """A waiting caller left: its job leaves the queue (others waiting on it ask again)."""
        if job in self._queue:
            self._queue.remove(job)
        self._jobs.pop(job.key, None)
        job.error = _Withdrawn()
        job.done.set()
        self._lock.notify_all()

    def _run(self, job: _Job, compute: Callable[[], Any]) -> Any:
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                job.error = exc
                self._finish(job)
            raise
        finally:
            self._local.depth -= 1
        size = nbytes(value)
        with self._lock:
            job.value = value
            if size <= self.limit:
                self._results[job.key] = (value, size)
            self._finish(job)
        return value

    def _finish(self, job: _Job) -> None:
        job.running = False
        self._jobs.pop(job.key, None)
        job.done.set()
        self._lock.notify_all()

    def _wait_for_result(self, job: _Job, on_wait: Callable[[int], None] | None) -> Any:
        while not job.done.wait(POLL_SECONDS):
            if on_wait is not None:
                with self._lock:
                    ahead = self._ahead(job) if job in self._queue else 1  # its sharer runs
                on_wait(ahead)
        if job.error is not None:
            raise job.error
        return job.value


class _Withdrawn(Exception):
    """The computation a caller shared was withdrawn by the session that asked first."""


def _from_env(name: str, default: int, unit: int = 1) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(float(raw) * unit)
    except ValueError:
        return default
    return value if value > 0 else default


_SHARED: Budget | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> Budget:
    """The replica's one budget: ``VISATTN_BUDGET_MB`` megabytes (10⁶ bytes; default 600),
    ``VISATTN_HEAVY_SLOTS`` short heavy computations at once (default 1) and
    ``VISATTN_LONG_SLOTS`` long ones (default 1)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Budget(
                _from_env("VISATTN_BUDGET_MB", DEFAULT_BYTES, MB),
                _from_env("VISATTN_HEAVY_SLOTS", DEFAULT_SLOTS),
                _from_env("VISATTN_LONG_SLOTS", DEFAULT_LONG_SLOTS),
            )
        return _SHARED


def get(
    key: Hashable,
    cost: int,
    compute: Callable[[], Any],
    on_wait: Callable[[int], None] | None = None,
    lane: str = SHORT,
) -> Any:
    """:meth:`Budget.get` on the replica's budget."""
    return shared().get(key, cost, compute, on_wait, lane)


def peek(key: Hashable) -> Any:
    """:meth:`Budget.peek` on the replica's budget."""
    return shared().peek(key)


def reserve(cost: int, on_wait: Callable[[int], None] | None = None):
    """:meth:`Budget.reserve` on the replica's budget."""
    return shared().reserve(cost, on_wait)
