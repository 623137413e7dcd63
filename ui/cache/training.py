"""The training page's work and figures: each training a background job (:mod:`ui.room.jobs`: one
shared job per config and seed, run through the room's budget, watched live, stopped when nobody
watches), its cost declared to the budget, and the checkpoints' maps built once per run.

A run keeps at most ``visattn.training.MAX_CHECKPOINTS`` checkpoints
(:func:`visattn.training.checkpoint_bytes` bounds what they hold). No widget here."""

from __future__ import annotations

from functools import partial

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from visattn import training
from visattn.figures import training as training_figures
from visattn.lessons import training as lesson

from ..room import jobs

# (B, H, T, T) float32 arrays per layer a step holds at its peak: what tracemalloc measured of the
# default model's steps, checkpoints included, rounded up (benchmarks/README.md)
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


def key_of(config: training.DecoderConfig, seed: int) -> tuple:
    """The name of the run of (config, seed): its job's and its kept result's."""
    return ("training", config, int(seed))


def _train(
    config: training.DecoderConfig, seed: int, report: jobs.Report, should_stop: jobs.ShouldStop
) -> lesson.TrainingSection:
    """Train, reporting the history measured so far; a run stopped early is a :class:`jobs.Partial`
    (its section, for the session that stopped it)."""

    def on_step(step: int, history: pd.DataFrame) -> None:
        report(history)

    run = training.train(config, seed=seed, on_step=on_step, should_stop=should_stop)
    section = lesson.training_section(run)
    for array in (section.maps, section.previous, section.prefix):
        array.flags.writeable = False  # shared by every session
    if run.stopped:
        raise jobs.Partial(section)
    return section


def job(config: training.DecoderConfig, seed: int) -> jobs.Spec:
    """The training of (config, seed) as a background job (:mod:`ui.room.jobs`)."""
    return jobs.Spec(
        key_of(config, seed), cost_of(config), partial(_train, config, int(seed)), "training"
    )


@st.cache_data(max_entries=1, show_spinner=False)
def designed_scores() -> lesson.DesignedScores:
    """The designed circuit's heads measured with the trained heads' scores (8 runs, once)."""
    return lesson.designed_scores()


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
