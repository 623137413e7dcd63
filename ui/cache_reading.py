"""Cached compute of the reading page: thin wrappers over :mod:`visattn.lessons.reading` (no
compute here), for any loaded model.

``st.cache_resource`` (not ``cache_data``): the results hold (L, H, T, T) arrays shared read-only by
every session, as ui/cache_pretrained.py does. ``_model`` is not hashed: the model's folder
(:func:`ui.cache_pretrained.model_key`) tells the models apart. The readings of a run go through
the replica's memory budget as the pretrained page's do
(:func:`ui.cache_pretrained.stored_readings`, which says why it is not a Streamlit cache), keyed by
model, text and view only, so changing the layer or head never recomputes flow."""

from __future__ import annotations

from functools import partial

import streamlit as st

from visattn.lessons import reading as lesson

from .cache_pretrained import model_key, stored_readings


@st.cache_resource(max_entries=8, show_spinner=False)
def _run(_model, key: str, text: str) -> lesson.Run:
    return lesson.run(_model, text)


def run(model, text: str) -> lesson.Run:
    """The run of ``text`` (at most lesson.MAX_TOKENS tokens) and its value norms."""
    return _run(model, model_key(model), text)


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
