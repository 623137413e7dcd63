"""The MiniLM model for the pretrained page: loaded once per server, runs cached per text; the
finder's click.

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
that one load instead of starting another."""

from __future__ import annotations

import streamlit as st

from visattn.lessons import pretrained as lesson
from visattn.models.minilm import MAX_TOKENS, MiniLM, MiniLMResult, ModelNotInstalled

RUNS = 8  # results kept for every session together
BARS = "pt_bars"  # the head finder's chart: one stable key, its click read by open_clicked


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
