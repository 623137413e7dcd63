"""Cached wrappers for the single-head page: the √d_k sampling (bounded: a few million normal draws
a call; the in-figure slider's steps over every d_k are one such call a seed) and the pipeline's
figures."""

from __future__ import annotations

import streamlit as st

from visattn import scaling
from visattn.figures import single_head as figures
from visattn.lessons import single_head as lesson


@st.cache_data(max_entries=32, show_spinner=False)
def why_sqrt(d_k: int, seed: int) -> lesson.WhySqrt:
    return lesson.why_sqrt(d_k, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def peakedness(n_keys: int, seed: int) -> scaling.Peakedness:
    return lesson.peakedness(n_keys, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def sqrt_steps(seed: int) -> lesson.SqrtSteps:
    return lesson.sqrt_steps(seed)


@st.cache_resource(max_entries=32, show_spinner=False)
def pipeline(tr, tokens: tuple, words: dict, inputs, temperature: float, font_size: int) -> list:
    """The pipeline's compact matrices (~10 figures, ~85 ms of building; the weights live over τ),
    once per trace and words and shared between sessions: show them, never modify them."""
    return figures.pipeline(
        tr,
        list(tokens),
        words,
        inputs=inputs,
        temperature=lesson.temperature_grid(tr, temperature),
        font_size=font_size,
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def sentence(
    tr, tokens: tuple, words: dict, side: bool, show_text: bool, temperature: float, font_size: int
) -> list:
    """A sentence's weights (and scores), the weights live over τ (~40 ms of cell text for 12
    tokens), once per trace and words and shared between sessions: show them, never modify them."""
    return figures.sentence(
        tr,
        list(tokens),
        words,
        side=side,
        show_text=show_text,
        temperature=lesson.temperature_grid(tr, temperature),
        font_size=font_size,
    )
