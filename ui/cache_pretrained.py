"""The MiniLM model for the pretrained page: loaded once per server, runs cached per text.

``load_model`` is a ``st.cache_resource`` (one model for every session; a failure is not cached, so installing
the package and reloading the page is enough). ``run_text`` is keyed by text and token limit. It is a
``st.cache_resource`` too, not ``st.cache_data``: at 512 tokens the attention array is 6·12·512·512 float32 = 75 MB,
and ``st.cache_data`` would unpickle a fresh copy on every rerun of every session. The shared result is made
read-only instead, so no session can change another's; few entries are kept because long texts are large.
Neither shows a spinner of its own: a cache spinner is fixed at decoration time and cannot speak the session's
language, so the page wraps calls in ``st.spinner(t(...))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from visattn.models.minilm import MAX_TOKENS, MiniLM, ModelNotInstalled


@dataclass(frozen=True)
class Run:
    text: str                         # the text as run (offsets index into it)
    tokens: list[str]                 # T word pieces, [CLS] first and [SEP] last
    offsets: list[tuple[int, int]]    # T character spans in the text
    attentions: np.ndarray            # (L, H, T, T) float32
    truncated: bool
    n_tokens_in: int                  # tokens before the cut


@st.cache_resource(show_spinner=False)
def load_model() -> MiniLM:
    return MiniLM.load()


def model_or_error() -> tuple[MiniLM | None, str | None]:
    """The shared model, or (None, the reason) when the weights package is missing or unreadable."""
    try:
        return load_model(), None
    except ModelNotInstalled as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:   # a broken installation: the message names the file
        return None, f"{type(exc).__name__}: {exc}"


@st.cache_resource(max_entries=8, show_spinner=False)
def run_text(_model: MiniLM, text: str, max_tokens: int = MAX_TOKENS) -> Run:
    """One forward pass (ValueError for text the model cannot read). ``_model`` is not hashed: there is one."""
    r = _model.run(text, max_tokens=max_tokens)
    r.attentions.flags.writeable = False          # shared by every session: read-only
    return Run(text=text, tokens=list(r.tokens), offsets=[tuple(o) for o in r.offsets], attentions=r.attentions,
               truncated=bool(r.truncated), n_tokens_in=int(r.n_tokens_in))


def head_of_point(point: dict) -> tuple[int, int] | None:
    """(layer, head) of a clicked bar of the head finder, from the ``customdata`` the page puts on each bar."""
    data = point.get("customdata") if isinstance(point, dict) else None
    try:
        layer, head = (int(v) for v in data)
    except (TypeError, ValueError):
        return None
    return layer, head
