"""Cached runs for the reading page: one line each over :mod:`visattn.lessons.reading`.

``st.cache_resource`` (not ``cache_data``): the results hold (L, H, T, T) arrays shared read-only by every session,
as ui/cache_pretrained.py does. ``_model`` is not hashed (there is one). Readings are keyed by text and view
only, so changing the layer or head never recomputes flow.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st

from visattn.lessons import reading as lesson
from visattn.models.minilm import MiniLM

READINGS = 16   # readings kept (a flow of 24 tokens takes seconds)


@st.cache_resource(max_entries=8, show_spinner=False)
def run(_model: MiniLM, text: str) -> lesson.Run:
    return lesson.run(_model, text)


@st.cache_resource(show_spinner=False)
def _readings_store() -> tuple[OrderedDict, threading.Lock]:
    return OrderedDict(), threading.Lock()   # (text, view) -> Readings, the last READINGS of every session together


def readings(model: MiniLM, text: str, name: str, progress=None) -> lesson.Readings:
    """Not ``st.cache_*``: flow's progress bar is an element drawn while computing, which a Streamlit cache would
    record and fail to replay. So a shared, bounded store (the newest READINGS kept)."""
    store, lock = _readings_store()
    key = (text, name)
    with lock:
        found = store.get(key)
    if found is None:      # computed outside the lock (flow takes seconds); two sessions may both compute it once
        found = lesson.readings(run(model, text), name, progress)
    with lock:             # sessions run in threads: keep, mark newest and bound the store in one step
        store[key] = found
        store.move_to_end(key)
        while len(store) > READINGS:
            store.popitem(last=False)
    return found


def pair(model: MiniLM, a: str, b: str, name: str, layer: int, head: int) -> lesson.Pair:
    return lesson.pair(run(model, a), run(model, b), readings(model, a, name), readings(model, b, name), layer, head)


@st.cache_resource(max_entries=8, show_spinner=False)
def geometry(_model: MiniLM, text: str, layer: int, head: int) -> lesson.Geometry:
    return lesson.geometry(_model, run(_model, text), layer, head)
