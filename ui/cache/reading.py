"""Cached compute of the reading page: thin wrappers over :mod:`visattn.lessons.reading` (no
compute here), for any loaded model.

The runs and their readings hold (L, H, T, T) arrays shared read-only by every session; they go
through the replica's memory budget as the pretrained page's do
(:func:`ui.cache.pretrained.budgeted` and :func:`~ui.cache.pretrained.stored_readings`, which says
why they are not a Streamlit cache):
a checkpoint larger than MiniLM makes a run larger, and a Streamlit cache of 8 runs would hold
them outside the budget. Keyed by the model's folder (:func:`ui.cache.pretrained.model_key`),
text and reading only, so changing the layer or head never recomputes flow. The query/key plane of
one head is small (its own copy of the head's weights): a ``st.cache_resource``; ``_model`` is not
hashed, the folder tells the models apart."""

from __future__ import annotations

from functools import partial

import streamlit as st

from visattn.lessons import reading as lesson

from .pretrained import (
    RUN_FACTOR,
    RUN_FLOOR,
    attention_bytes,
    budgeted,
    model_key,
    read_only,
    stored_readings,
)


def _shared_run(model, text: str) -> lesson.Run:
    found = lesson.run(model, text)
    read_only(found.norms, *(getattr(found.result, name, None) for name in lesson.RUN_ARRAYS))
    return found


def run(model, text: str) -> lesson.Run:
    """The run of ``text`` (at most lesson.MAX_READ_TOKENS tokens) and its value norms, shared and
    kept by the budget (InputError for a text the model cannot read)."""
    n_tokens = len(model.tokenize(text, lesson.MAX_READ_TOKENS)[0])  # a cheap Rust pass
    cost = int(RUN_FACTOR * attention_bytes(n_tokens, model)) + RUN_FLOOR
    key = ("reading_run", model_key(model), text)
    return budgeted(key, cost, partial(_shared_run, model, text))


def readings(model, text_run: lesson.Run, name: str, progress=None) -> lesson.Readings:
    make = partial(lesson.readings, text_run, name, progress)
    key = ("reading", model_key(model), text_run.text, name)
    return stored_readings(key, make, len(text_run.tokens), model)


def pair(model, a: str, b: str, name: str, layer: int, head: int) -> lesson.Pair:
    run_a, run_b = run(model, a), run(model, b)
    return lesson.pair(
        run_a, run_b, readings(model, run_a, name), readings(model, run_b, name), layer, head
    )


@st.cache_resource(max_entries=8, show_spinner=False)
def _geometry(_model, key: str, text: str, layer: int, head: int) -> lesson.Geometry:
    return lesson.geometry(_model, run(_model, text), layer, head)


def geometry(model, text: str, layer: int, head: int) -> lesson.Geometry:
    return _geometry(model, model_key(model), text, layer, head)
