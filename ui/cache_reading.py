"""Cached compute of the reading page: thin wrappers over :mod:`visattn.lessons.reading` (no
compute here).

``st.cache_resource`` (not ``cache_data``): the results hold (L, H, T, T) arrays shared read-only by
every session, as ui/cache_pretrained.py does. ``_model`` is not hashed (there is one). The
readings of a run go through the replica's memory budget as the pretrained page's do
(:func:`ui.cache_pretrained.stored_readings`, which says why it is not a Streamlit cache), keyed by
text and view only, so changing the layer or head never recomputes flow."""

from __future__ import annotations

from functools import partial

import streamlit as st

from visattn.lessons import reading as lesson
from visattn.models.minilm import MiniLM

from .cache_pretrained import stored_readings


@st.cache_resource(max_entries=8, show_spinner=False)
def run(_model: MiniLM, text: str) -> lesson.Run:
    return lesson.run(_model, text)


def readings(text_run: lesson.Run, name: str, progress=None) -> lesson.Readings:
    make = partial(lesson.readings, text_run, name, progress)
    return stored_readings(("reading", text_run.text, name), make, len(text_run.tokens))


def pair(model: MiniLM, a: str, b: str, name: str, layer: int, head: int) -> lesson.Pair:
    run_a, run_b = run(model, a), run(model, b)
    return lesson.pair(run_a, run_b, readings(run_a, name), readings(run_b, name), layer, head)


@st.cache_resource(max_entries=8, show_spinner=False)
def geometry(_model: MiniLM, text: str, layer: int, head: int) -> lesson.Geometry:
    return lesson.geometry(_model, run(_model, text), layer, head)
