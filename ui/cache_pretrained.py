"""The MiniLM model for the pretrained and reading pages: loaded once per server, runs cached per
text, the readings of a run (the shared store below), the pretrained page's token view and head
grid; the finder's click.

``load_model`` is a ``st.cache_resource`` (one model for every session; a failure is not cached, so
installing the package and reloading the page is enough). ``run_text`` is a ``st.cache_resource``
too, not ``st.cache_data``: at 512 tokens the attention array is 6·12·512·512 float32 = 75 MB, and
``st.cache_data`` would unpickle a fresh copy on every rerun of every session. The shared result's
arrays are made read-only instead, so no session can change another's; few entries are kept because
long texts are large (RUNS × 80 MB bounds what the cache holds). None shows a spinner of its own: a
cache spinner is fixed at decoration time and cannot speak the session's language, so the page wraps
calls in ``st.spinner(t(...))``.

The callbacks here are module functions on purpose: a function defined in a page script keeps that
run's globals (the model's result, 75 MB) alive for as long as Streamlit keeps the widget's
callback.

:func:`warm_up` fills these caches ahead of the page's first visit (``ui.warm.in_background`` runs
it in a background thread once per server): a cached function called from a thread outside any
script run shares the same cache, and a page that asks while the thread is still loading waits for
that one load instead of starting another.

Readings (a view of a run: :func:`visattn.reading.view_weights`) are kept in one store shared by
the two pages, not in a Streamlit cache: flow's progress bar is an element drawn while computing,
which a Streamlit cache would record and then fail to replay. The store is bounded in entries and
in bytes, the newest kept, and keyed by page, text and view only, so changing the layer or head
never recomputes flow."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import partial

import streamlit as st

from visattn.figures import pretrained as figures
from visattn.lessons import pretrained as lesson
from visattn.models.minilm import MAX_TOKENS, MiniLM, MiniLMResult, ModelNotInstalled
from visattn.reading import Readings

RUNS = 8  # results kept for every session together
BARS = "pt_bars"  # the head finder's chart: one stable key, its click read by open_clicked
READINGS = 16  # readings kept (a flow of 40 tokens takes a moment) …
READINGS_BYTES = 2**28  # … and at most 256 MB of them (a per-head view of 512 tokens is 75 MB)


@st.cache_resource(show_spinner=False)
def load_model() -> MiniLM:
    return MiniLM.load()


def model_or_error() -> tuple[MiniLM | None, str | None]:
    """The shared model, or (None, the reason) when the weights package is missing or unreadable."""
    try:
        return load_model(), None
    except ModelNotInstalled as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:  # a broken installation: the message names the file
        return None, f"{type(exc).__name__}: {exc}"


def _read_only(r: MiniLMResult) -> MiniLMResult:
    for a in (r.attentions, r.hidden, r.token_ids, r.layer_inputs):
        if a is not None:
            a.flags.writeable = False  # shared by every session
    return r


@st.cache_resource(max_entries=RUNS, show_spinner=False)
def run_text(_model: MiniLM, text: str, max_tokens: int = MAX_TOKENS) -> MiniLMResult:
    """One forward pass (InputError for text the model cannot read). ``_model`` is not hashed: there
    is one."""
    return _read_only(_model.run(text, max_tokens=max_tokens))


@st.cache_resource(show_spinner=False)
def _readings_store() -> tuple[OrderedDict, threading.Lock]:
    return OrderedDict(), threading.Lock()  # key -> Readings, the newest of every session together


def stored_readings(key: tuple, make: Callable[[], Readings]) -> Readings:
    """The readings under ``key`` in the shared store, made by ``make()`` when missing (outside the
    lock: flow takes a moment, and two sessions may both compute it once)."""
    store, lock = _readings_store()
    with lock:
        found = store.get(key)
    if found is None:
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


def _pretrained_readings(model: MiniLM, text: str, name: str, progress=None) -> Readings:
    return lesson.readings(model, run_text(model, text), name, progress)


def readings(model: MiniLM, text: str, name: str, progress=None) -> Readings:
    """The pretrained page's view ``name`` of the run of ``text`` (up to 512 tokens; the weights
    view is the run's own array)."""
    make = partial(_pretrained_readings, model, text, name, progress)
    return stored_readings(("pretrained", text, name), make)


@st.cache_resource(max_entries=2, show_spinner=False)
def token_view(
    _model: MiniLM, text: str, hide: bool, merge: bool, name: str
) -> tuple[MiniLMResult, lesson.View]:
    """The run of ``text`` and its view ``name`` with the toggles applied
    (:func:`visattn.lessons.pretrained.token_view`), from the caches.

    The page's sections take these few keys instead of the arrays: ``st.fragment`` keeps a section's
    arguments until the session's next full run, and a 512-token run would stay alive (75 MB a
    session, whatever the run cache evicts). Two entries: the hidden or merged copies are as large
    as the run."""
    run = run_text(_model, text)
    view = lesson.token_view(run, hide, merge, readings(_model, text, name).w)
    view.attn.flags.writeable = False  # shared by every session
    return run, view


@st.cache_resource(max_entries=32, show_spinner=False)
def grid_figure(
    grid: lesson.Grid,
    font_size: int,
    presenter: bool,
    colour: dict,
    value_name: str,
    query_name: str,
    key_name: str,
):
    """The grid of a view on a colour scale (~0.3 s of Plotly for 72 cells), built once per input
    and shared: show it, never modify it."""
    return figures.grid_figure(
        grid,
        font_size=font_size,
        presenter=presenter,
        colour=colour,
        value_name=value_name,
        query_name=query_name,
        key_name=key_name,
    )


@st.cache_resource(show_spinner=False)
def winograd(_model: MiniLM) -> lesson.Winograd:
    return lesson.winograd(_model)


def warm_up() -> None:
    """What the pretrained page's first visit computes before its first chart: the model, the
    default sentence's run, the Winograd twins. Safe to call from any thread, any number of times
    (each is cached once)."""
    model, _ = model_or_error()
    if model is not None:
        run_text(model, lesson.SENTENCE)
        winograd(model)


def head_of_point(point: dict) -> tuple[int, int] | None:
    """(layer, head) of a clicked bar of the head finder, from the ``customdata`` the page puts on
    each bar."""
    data = point.get("customdata") if isinstance(point, dict) else None
    try:
        layer, head = (int(v) for v in data)
    except (TypeError, ValueError):
        return None
    return layer, head


def open_head(layer: int, head: int) -> None:
    """Open head (layer, head) (0-based) in the "one head" section."""
    st.session_state.update(pt_layer=int(layer), pt_head=int(head))


def open_clicked() -> None:
    """Bar-click callback (runs before the script): open the head of the bar clicked in chart
    BARS."""
    points = ((st.session_state.get(BARS) or {}).get("selection") or {}).get("points") or []
    picked = head_of_point(points[0]) if points else None
    if picked is not None and 0 <= picked[0] < lesson.N_LAYERS and 0 <= picked[1] < lesson.N_HEADS:
        open_head(*picked)
