"""Trainings for the decoder page's training section (issue 23): one shared job per config and seed,
run in a background thread through the room's budget, watched live by every session that asked.

- **Shared**: :func:`start` returns the job already running for the same (config, seed), or the
  kept result; a class pressing "Train" on the defaults costs one training.
- **Admitted**: the job's thread calls :func:`ui.room.budget.get` (``cost``: the working arrays and
  the checkpoints, :func:`cost_of`), so trainings queue behind the room's other heavy work; while it
  waits, its ``ahead`` is what the sessions watching it show as "waiting, n ahead of you". The
  finished section is kept by the budget, by bytes (:func:`result` peeks at it).
- **Stopped when nobody watches**: each session watching a job polls it (:func:`watch`, every
  POLL_SECONDS) and so renews its heartbeat; the training checks per step that some session was
  seen within HEARTBEAT_SECONDS, and stops otherwise — the sessions left, changed the config, or
  pressed Stop (:func:`leave`, which also stops it at once when nobody else watches). A stopped run
  is not kept by the budget (it is not the run its key names); its job keeps it, for the session
  that stopped it, among the last KEEP_JOBS jobs.
- **Bounded**: a run keeps at most ``visattn.training.MAX_CHECKPOINTS`` checkpoints
  (:func:`visattn.training.checkpoint_bytes`: 10.0 MB for the default model).

No widget here; the page draws what :class:`Job` reports."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from visattn import training
from visattn.figures import training as training_figures
from visattn.lessons import decoder as lesson

from ..room import budget

HEARTBEAT_SECONDS = 3.0  # a job nobody has polled for this long stops
POLL_SECONDS = 0.5  # how often a watching session redraws the live figures
KEEP_JOBS = 6  # finished, stopped or failed jobs remembered (running ones always are)
# (B, H, T, T) float32 arrays per layer a step holds at its peak: tracemalloc, 40 steps of the
# default model, peak 22.7 MB with 3 checkpoints, against 5 × 64 × 2 × 4 × 48² × 4 B = 23.6 MB
WORK_FACTOR = 5
MLP_ARRAYS = 3  # (B, T, 4D) arrays per layer an MLP block adds: pre, act (kept), dpre


def cost_of(config: training.DecoderConfig) -> int:
    """Bytes a training holds while it runs: its step's attention arrays (float32, the larger of the
    training and the probe batch), the checkpoints, and a floor for the rest."""
    batch = max(config.batch, config.probe_batch)
    work = WORK_FACTOR * batch * config.n_layers * config.n_heads * config.seq_len**2 * 4
    if config.mlp:  # its (B, T, 4D) float32 arrays: pre-activation, activation, their gradient
        work += MLP_ARRAYS * batch * config.n_layers * config.seq_len * 4 * config.d_model * 4
    return work + training.checkpoint_bytes(config) + 4_000_000


class Cancelled(Exception):
    """Nobody watches the job any more."""


class Stopped(Exception):
    """The run stopped early: carried out of the budget, which keeps only whole runs."""

    def __init__(self, section: lesson.TrainingSection) -> None:
        super().__init__("stopped")
        self.section = section


@dataclass
class Job:
    """One training, running or done, as the sessions watching it see it."""

    config: training.DecoderConfig
    seed: int
    history: pd.DataFrame | None = None  # measured so far
    ahead: int | None = 0  # waiting for admission: how many are ahead; None once running
    section: lesson.TrainingSection | None = None  # a stopped run (a whole one is in the budget)
    error: BaseException | None = None
    done: bool = False
    cancelled: bool = False
    watchers: dict[str, float] = field(default_factory=dict)  # session → last seen (monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def key(self) -> tuple:
        return key_of(self.config, self.seed)

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

    def progress(self, step: int, history: pd.DataFrame) -> None:
        self.history = history


def key_of(config: training.DecoderConfig, seed: int) -> tuple:
    return ("training", config, int(seed))


_JOBS: OrderedDict[tuple, Job] = OrderedDict()
_LOCK = threading.Lock()


def _train(job: Job) -> lesson.TrainingSection:
    job.ahead = None
    run = training.train(
        job.config, seed=job.seed, on_step=job.progress, should_stop=job.should_stop
    )
    section = lesson.training_section(run)
    for array in (section.maps, section.previous, section.prefix):
        array.flags.writeable = False  # shared by every session
    if run.stopped:
        raise Stopped(section)
    return section


def _work(job: Job) -> None:
    def on_wait(ahead: int) -> None:
        job.ahead = ahead
        if job.should_stop():
            raise Cancelled

    try:
        budget.get(job.key, cost_of(job.config), partial(_train, job), on_wait)
    except Stopped as stopped:
        job.section = stopped.section
    except Cancelled:
        pass
    except Exception as exc:  # shown by the page as a translated error
        job.error = exc
    finally:
        job.done = True


def result(config: training.DecoderConfig, seed: int) -> lesson.TrainingSection | None:
    """The whole run of (config, seed) if the room has trained it and the budget still keeps it."""
    return budget.peek(key_of(config, seed))


def find(config: training.DecoderConfig, seed: int) -> Job | None:
    """The job of (config, seed) if one runs or was remembered."""
    with _LOCK:
        return _JOBS.get(key_of(config, seed))


def start(config: training.DecoderConfig, seed: int, session: str) -> Job:
    """The running job of (config, seed), joined by ``session``, or a new one started for it."""
    key = key_of(config, seed)
    with _LOCK:
        job = _JOBS.get(key)
        if job is None or job.done:
            job = Job(config, int(seed))
            _JOBS[key] = job
            _JOBS.move_to_end(key)
            job.seen(session)
            threading.Thread(target=_work, args=(job,), daemon=True, name="training").start()
            finished = [k for k, j in _JOBS.items() if j.done]
            for old in finished[: max(len(finished) - KEEP_JOBS, 0)]:
                del _JOBS[old]
        else:
            job.seen(session)
    return job


def wait_for_stop(job: Job | None, most: float = 2.0) -> None:
    """Wait up to ``most`` seconds for a job just left to end its step and report, so that the
    session that pressed Stop sees where it stopped."""
    deadline = time.monotonic() + most
    while job is not None and not job.done and time.monotonic() < deadline:
        time.sleep(0.05)


def leave(config: training.DecoderConfig, seed: int, session: str) -> None:
    """``session`` stops watching (the Stop button, or it moved to another config); a job nobody
    else watches stops at its next step."""
    job = find(config, seed)
    if job is not None:
        job.forget(session)


# ── figures: built once per run and font size, shared, never modified ──────────────────────────
@st.cache_resource(max_entries=16, show_spinner=False)
def checkpoint_maps(
    _section: lesson.TrainingSection,
    key: tuple,
    checkpoint: int,
    cell_titles: tuple,
    words: training_figures.Words,
    font_size: int,
) -> go.Figure:
    """Every head's map at each checkpoint with its in-figure slider, opening at ``checkpoint``
    (``key`` names the run)."""
    return training_figures.checkpoint_maps(
        _section.maps,
        _section.checkpoint_steps,
        _section.probe_labels,
        cell_titles,
        checkpoint=checkpoint,
        words=words,
        font_size=font_size,
    )
