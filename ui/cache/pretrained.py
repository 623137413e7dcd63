"""The MiniLM model for the pretrained and reading pages: loaded once per server, runs cached per
text, the readings of a run (the shared store below), the pretrained page's shown tokens and head
grid; the finder's click.

``load_model`` is a ``st.cache_resource`` (one model for every session; a failure is not cached, so
installing the package and reloading the page is enough). The runs, their readings and the shown
tokens are the heavy work of a room (at 512 tokens one attention array is 6·12·512·512 float32 =
75 MB, and a forward pass holds more while it runs): they go through the replica's memory budget
(:mod:`ui.room.budget`), which keeps results by bytes, admits a computation only when its working
memory fits beside the others, shares one computation between sessions asking for the same text, and
shows a waiting session a translated "n ahead of you" with a progress bar. The shared results'
arrays are read-only, so no session can change another's. None shows a spinner of its own: a cache
spinner is fixed at decoration time and cannot speak the session's language, so the page wraps calls
in ``st.spinner(t(...))``.

The callbacks here are module functions on purpose: a function defined in a page script keeps that
run's globals (the model's result, 75 MB) alive for as long as Streamlit keeps the widget's
callback.

:func:`warm_up` fills these caches ahead of the page's first visit (``ui.room.warm.in_background``
runs it in a background thread once per server): a cached function called from a thread outside any
script run shares the same cache, and a page that asks while the thread is still loading waits for
that one load instead of starting another.

Readings (a reading of a run: :func:`visattn.reading.reading_weights`) are kept in the budget too,
not in a Streamlit cache: flow's progress bar is an element drawn while computing, which a
Streamlit cache would record and then fail to replay. They are keyed by page, text and reading
only, so changing the layer or head never recomputes flow."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from visattn.errors import InputError
from visattn.figures import pretrained as pretrained_figures
from visattn.figures.reading import Reading
from visattn.lessons import pretrained as lesson
from visattn.models.causal import AttentionMaps, Decoder
from visattn.models.encoder import (
    MAX_MODEL_TOKENS,
    N_HEADS,
    N_LAYERS,
    BertEncoder,
    BertResult,
    ModelNotInstalled,
)
from visattn.reading import Readings

from ..i18n import t
from ..room import budget

BARS = "pt_bars"  # the head finder's chart: one stable key, its click read by open_clicked
SHAPE = "_pt_model_shape"  # (layers, heads) of the model shown, for open_clicked
# What a forward pass holds while it runs, as a multiple of its attention array, plus a floor
# (measured with tracemalloc over one pass: benchmarks/README.md).
RUN_FACTOR, RUN_FLOOR = 1.4, 8_000_000
MAKE_FACTOR = 2.0  # a reading or shown tokens: at most two arrays of that size while made
# What a session's drawing of a text's page holds until the page is drawn, as a multiple of the
# run's attention array: the run, its reading, the shown tokens, the figures and their JSON
# (the costliest reading's peak, measured with tracemalloc: benchmarks/README.md).
DRAW_FACTOR = 3.5
PROGRESS_FROM = 128  # a decoder's text of this many tokens shows its layers' progress while it runs


def attention_bytes(n_tokens: int, model=None) -> int:
    """Bytes of the (L, H, T, T) float32 attention of ``model`` (None: MiniLM's 6 × 12) for
    ``n_tokens`` tokens."""
    n_layers, n_heads = N_LAYERS, N_HEADS
    if model is not None:
        n_layers, n_heads = model.config.n_layers, model.config.n_heads
    return n_layers * n_heads * n_tokens * n_tokens * 4


def model_key(model) -> str:
    """What tells the loaded models apart in the shared caches: the folder it was read from."""
    return str(model.path)


@contextmanager
def waiting_notice() -> Iterator[Callable[[int], None]]:
    """A callback for :func:`ui.room.budget.get` that shows "waiting, n ahead of you" with a
    progress bar in this session while its request waits for the room's other heavy work; gone when
    done."""
    slot = st.empty()
    first: list[int] = []

    def show(ahead: int) -> None:
        first.append(ahead)
        done = (first[0] - ahead + 1) / (first[0] + 1)
        slot.progress(min(max(done, 0.0), 1.0), text=t("common.waiting", n=ahead))

    try:
        yield show
    finally:
        slot.empty()


def budgeted(key: tuple, cost: int, compute: Callable):
    """``compute()`` through the replica's budget, the waiting notice shown while it waits (the
    warm-up thread has no page to show it on)."""
    # suppress_warning: asked to know, not to use it (without it Streamlit logs "missing
    # ScriptRunContext" at every start, from the warm-up thread)
    if get_script_run_ctx(suppress_warning=True) is None:
        return budget.get(key, cost, compute)
    with waiting_notice() as on_wait:
        return budget.get(key, cost, compute, on_wait)


@contextmanager
def drawing(model, text: str, max_tokens: int = MAX_MODEL_TOKENS) -> Iterator[None]:
    """Hold the replica's budget while this session draws ``text``'s page (or a section of it).

    A drawing keeps its run, reading and figures alive until it ends, whatever the shared cache
    evicts meanwhile: ten sessions drawing ten 512-token texts at once held ten runs on top of
    the budget. Admitted in turn like a computation, with the waiting notice; what
    runs inside (the run, its readings) runs in this reservation's slot; a short text's drawing, or
    a section drawn inside the page's own drawing, starts at once
    (:meth:`ui.room.budget.Budget.reserve`). A text the model cannot read reserves nothing: the
    page's error path reports it. ``max_tokens``: where the page cuts the text (the reading page's
    64)."""
    try:
        n_tokens = len(model.tokenize(text, max_tokens)[0])
    except InputError:
        n_tokens = 0
    cost = int(DRAW_FACTOR * attention_bytes(n_tokens, model)) + RUN_FLOOR
    with waiting_notice() as on_wait, budget.reserve(cost, on_wait):
        yield


@st.cache_resource(show_spinner=False)
def load_model() -> BertEncoder:
    return BertEncoder.load()


def model_or_error() -> tuple[BertEncoder | None, str | None]:
    """The shared model, or (None, the reason) when the weights package is missing or unreadable."""
    try:
        return load_model(), None
    except ModelNotInstalled as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:  # a broken installation: the message names the file
        return None, f"{type(exc).__name__}: {exc}"


def read_only(*arrays) -> None:
    """Make ``arrays`` read-only, shared by every session (None skipped; a decoder's
    AttentionMaps: the queries and keys it keeps)."""
    for a in arrays:
        if isinstance(a, AttentionMaps):
            read_only(*a.queries, *a.keys)
        elif a is not None:
            a.flags.writeable = False


def _read_only(r: BertResult) -> BertResult:
    read_only(r.attentions, r.hidden, r.token_ids, r.layer_inputs, getattr(r, "next_logits", None))
    return r


def _run(model: BertEncoder, text: str, max_tokens: int, progress=None) -> BertResult:
    if progress is None:
        return _read_only(model.run(text, max_tokens=max_tokens))
    return _read_only(model.run(text, max_tokens=max_tokens, progress=progress))


def run_text(model: BertEncoder, text: str, max_tokens: int = MAX_MODEL_TOKENS) -> BertResult:
    """One forward pass (InputError for text the model cannot read), shared and kept by the
    budget. A decoder's text of PROGRESS_FROM tokens or more shows a progress bar, a step per
    layer, while it runs in this session."""
    n_tokens = len(model.tokenize(text, max_tokens)[0])  # word pieces read (a cheap Rust pass)
    cost = int(RUN_FACTOR * attention_bytes(n_tokens, model)) + RUN_FLOOR
    key = ("run", model_key(model), text, max_tokens)
    if (
        not isinstance(model, Decoder)
        or n_tokens < PROGRESS_FROM
        or get_script_run_ctx(suppress_warning=True) is None
        or budget.peek(key) is not None
    ):
        return budgeted(key, cost, partial(_run, model, text, max_tokens))
    bar = st.empty()

    def report(done: int, total: int) -> None:
        bar.progress(done / total, text=t("pretrained.layers_running", done=done, total=total))

    try:
        return budgeted(key, cost, partial(_run, model, text, max_tokens, report))
    finally:
        bar.empty()


def _stored(found: Readings) -> Readings:
    found.w.flags.writeable = False  # shared by every session
    return found


def stored_readings(
    key: tuple, make: Callable[[], Readings], n_tokens: int, model=None
) -> Readings:
    """The readings under ``key``, made by ``make()`` through the budget when missing."""
    cost = int(MAKE_FACTOR * attention_bytes(n_tokens, model)) + RUN_FLOOR

    def make_shared() -> Readings:
        return _stored(make())

    return budgeted(key, cost, make_shared)


def _pretrained_readings(model: BertEncoder, text: str, name: str, progress=None) -> Readings:
    return lesson.readings(model, run_text(model, text), name, progress)


def readings(model: BertEncoder, text: str, name: str, progress=None) -> Readings:
    """The pretrained page's reading ``name`` of the run of ``text`` (up to 512 tokens; an
    encoder's weights reading is the run's own array, a decoder's its maps computed whole)."""
    make = partial(_pretrained_readings, model, text, name, progress)
    n_tokens = len(run_text(model, text).tokens)
    return stored_readings(("pretrained", model_key(model), text, name), make, n_tokens, model)


class Made(NamedTuple):
    """A reading made and kept in the shared store, as a session remembers it: its text and name,
    not its arrays (a session's last good result lives as long as the session, and a 512-token
    reading is 75 MB: twenty sessions would hold 1.5 GB beside the budget)."""

    text: str
    reading: str


def made(model: BertEncoder, text: str, name: str, progress=None) -> Made:
    """:func:`readings`, remembered by name only; the sections look the arrays up again."""
    found = readings(model, text, name, progress)
    return Made(found.text, found.reading)


def _as_shown(model: BertEncoder, text: str, hide: bool, merge: bool, name: str) -> lesson.Shown:
    shown = lesson.as_shown(run_text(model, text), hide, merge, readings(model, text, name).w)
    shown.attn.flags.writeable = False  # shared by every session
    return shown


def as_shown(
    model: BertEncoder, text: str, hide: bool, merge: bool, name: str
) -> tuple[BertResult, lesson.Shown]:
    """The run of ``text`` and its reading ``name`` with the toggles applied
    (:func:`visattn.lessons.pretrained.as_shown`), from the caches.

    The page's sections take these few keys instead of the arrays: ``st.fragment`` keeps a section's
    arguments until the session's next full run, and a 512-token run would stay alive (75 MB a
    session, whatever the run cache evicts). Two entries: the hidden or merged copies are as large
    as the run; the budget keeps them by bytes."""
    run = run_text(model, text)
    cost = int(MAKE_FACTOR * attention_bytes(len(run.tokens), model)) + RUN_FLOOR
    key = ("as_shown", model_key(model), text, hide, merge, name)
    return run, budgeted(key, cost, partial(_as_shown, model, text, hide, merge, name))


@st.cache_resource(max_entries=32, show_spinner=False)
def grid_figure(
    grid: lesson.Grid,
    reading: Reading,
    colour: dict,
    words: pretrained_figures.Words,
    font_size: int,
    presenter: bool,
):
    """The grid of a reading on a colour scale (72 cells: the costliest figure to build), built once
    per input and shared: show it, never modify it."""
    return pretrained_figures.grid_figure(
        grid, reading, colour=colour, words=words, font_size=font_size, presenter=presenter
    )


@st.cache_resource(show_spinner=False)
def winograd(_model: BertEncoder, path: str = "") -> lesson.Winograd | None:
    """The Winograd twins measured on a model (``path``: :func:`model_key` of one other than the
    bundled MiniLM, so that each model has its own entry)."""
    return lesson.winograd(_model)


def twins(model) -> lesson.Winograd | None:
    """:func:`winograd` of any model: the bundled one under the entry the warm-up fills, any other
    under its folder."""
    bundled, _ = model_or_error()
    return winograd(model) if model is bundled else winograd(model, model_key(model))


def remember_shape(model) -> None:
    """The layers and heads of the model the page shows, for :func:`open_clicked` (a callback runs
    before the script and sees no model)."""
    st.session_state[SHAPE] = (model.config.n_layers, model.config.n_heads)


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
    n_layers, n_heads = st.session_state.get(SHAPE, (N_LAYERS, N_HEADS))
    if picked is not None and 0 <= picked[0] < n_layers and 0 <= picked[1] < n_heads:
        open_head(*picked)
