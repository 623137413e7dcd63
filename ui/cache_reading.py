"""Cached readings (issue 12) for the reading and pretrained pages: one line each over the lessons.

``st.cache_resource`` (not ``cache_data``): the results hold (L, H, T, T) arrays shared read-only by
every session, as ui/cache_pretrained.py does. ``_model`` is not hashed (there is one). Readings are
keyed by text and view only, so changing the layer or head never recomputes flow."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import streamlit as st

from visattn.figures import pretrained as pt_figures
from visattn.lessons import pretrained as pt_lesson
from visattn.lessons import reading as lesson
from visattn.models.minilm import MiniLM, MiniLMResult

from .cache_pretrained import run_text

READINGS = 16  # readings kept (a flow of 40 tokens takes a moment) …
READINGS_BYTES = 2**28  # … and at most 256 MB of them (a per-head view of 512 tokens is 75 MB)


@st.cache_resource(max_entries=8, show_spinner=False)
def run(_model: MiniLM, text: str) -> lesson.Run:
    return lesson.run(_model, text)


@st.cache_resource(show_spinner=False)
def _readings_store() -> tuple[OrderedDict, threading.Lock]:
    return OrderedDict(), threading.Lock()  # key -> Readings, the newest of every session together


def _stored(key: tuple, make: Callable[[], lesson.Readings]) -> lesson.Readings:
    """Not ``st.cache_*``: flow's progress bar is an element drawn while computing, which a
    Streamlit cache would record and fail to replay. So a shared store bounded in entries and bytes
    (the newest kept)."""
    store, lock = _readings_store()
    with lock:
        found = store.get(key)
    if (
        found is None
    ):  # computed outside the lock (flow takes a moment); two sessions may both compute it once
        found = make()
        found.w.flags.writeable = False  # shared by every session
    with lock:  # sessions run in threads: keep, mark newest and bound the store in one step
        store[key] = found
        store.move_to_end(key)
        while len(store) > 1 and (
            len(store) > READINGS or sum(r.w.nbytes for r in store.values()) > READINGS_BYTES
        ):
            store.popitem(last=False)
    return found


def readings(model: MiniLM, text: str, name: str, progress=None) -> lesson.Readings:
    return _stored(
        ("reading", text, name), lambda: lesson.readings(run(model, text), name, progress)
    )


def pretrained_readings(model: MiniLM, text: str, name: str, progress=None) -> lesson.Readings:
    """The pretrained page's view of its run (up to 512 tokens; the weights view is the run's own
    array)."""
    return _stored(
        ("pretrained", text, name),
        lambda: pt_lesson.readings(model, run_text(model, text), name, progress),
    )


def pair(model: MiniLM, a: str, b: str, name: str, layer: int, head: int) -> lesson.Pair:
    return lesson.pair(
        run(model, a),
        run(model, b),
        readings(model, a, name),
        readings(model, b, name),
        layer,
        head,
    )


@st.cache_resource(max_entries=8, show_spinner=False)
def geometry(_model: MiniLM, text: str, layer: int, head: int) -> lesson.Geometry:
    return lesson.geometry(_model, run(_model, text), layer, head)


@st.cache_resource(max_entries=32, show_spinner=False)
def grid_figure(
    g: pt_lesson.Grid,
    font_size: int,
    presenter: bool,
    colour: dict,
    value_name: str,
    query_name: str,
    key_name: str,
):
    """The pretrained page's grid of a view on a colour scale (~0.3 s of Plotly for 72 cells), built
    once per input and shared: show it, never modify it."""
    return pt_figures.grid_figure(
        g,
        font_size=font_size,
        presenter=presenter,
        colour=colour,
        value_name=value_name,
        query_name=query_name,
        key_name=key_name,
    )


@st.cache_resource(max_entries=2, show_spinner=False)
def token_view(
    _model: MiniLM, text: str, hide: bool, merge: bool, name: str
) -> tuple[MiniLMResult, pt_lesson.View]:
    """The run of ``text`` and its view ``name`` with the toggles applied
    (:func:`visattn.lessons.pretrained.token_view`), from the caches.

    The page's sections take these few keys instead of the arrays: ``st.fragment`` keeps a section's
    arguments until the session's next full run, and a 512-token run would stay alive (75 MB a
    session, whatever the run cache evicts). Two entries: the hidden or merged copies are as large
    as the run."""
    run = run_text(_model, text)
    view = pt_lesson.token_view(run, hide, merge, pretrained_readings(_model, text, name).w)
    view.attn.flags.writeable = False  # shared by every session
    return run, view
