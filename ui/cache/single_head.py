"""Cached wrappers for the single-head page: the √d_k sampling (bounded: a few million normal draws
a call; the in-figure slider's steps over every d_k are one such call a seed), and every figure the
page draws, built once per input and shared between sessions: show them, never modify them."""

from __future__ import annotations

import streamlit as st

from visattn.attention import SelfAttentionTrace
from visattn.figures import single_head as single_head_figures
from visattn.lessons import single_head as lesson

why_sqrt = st.cache_data(max_entries=32, show_spinner=False)(lesson.why_sqrt)
peakedness = st.cache_data(max_entries=16, show_spinner=False)(lesson.peakedness)
sqrt_steps = st.cache_data(max_entries=16, show_spinner=False)(lesson.sqrt_steps)
temperature_grid = st.cache_data(max_entries=32, show_spinner=False)(lesson.temperature_grid)


# A trace is known here by what it holds before the softmax: a new τ finds these figures built.
@st.cache_resource(
    max_entries=32,
    show_spinner=False,
    hash_funcs={SelfAttentionTrace: SelfAttentionTrace.before_softmax},
)
def before_softmax(
    tr, tokens: tuple, words: single_head_figures.Words, scale: bool, inputs, font_size: int
) -> list:
    """The pipeline up to the scaled scores (~9 figures, built once per input)."""
    return single_head_figures.before_softmax(
        tr,
        list(tokens),
        words,
        scale=scale,
        inputs=inputs,
        ranges=lesson.colour_ranges(tr, inputs),
        font_size=font_size,
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def after_softmax(
    tr, tokens: tuple, words: single_head_figures.Words, temperature: float, font_size: int
) -> dict:
    """The weights, with the slider of τ, and Z following it."""
    return single_head_figures.after_softmax(
        tr,
        list(tokens),
        words,
        temperature=temperature_grid(tr, temperature),
        ranges=lesson.colour_ranges(tr),  # Z's scale is Q, K and V's: no τ in it
        font_size=font_size,
    )


def pipeline(
    tr,
    tokens: tuple,
    words: single_head_figures.Words,
    scale: bool,
    inputs,
    temperature: float,
    font_size: int,
) -> list:
    """The whole pipeline's rows (:func:`visattn.figures.single_head.pipeline`) from the two caches
    above: a new trace at another τ (a link's) rebuilds only the weights and Z."""
    before = before_softmax(tr, tokens, words, scale, inputs, font_size)
    return single_head_figures.assemble(
        before, after_softmax(tr, tokens, words, temperature, font_size)
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def sentence(
    tr,
    tokens: tuple,
    words: single_head_figures.Words,
    side: bool,
    show_text: bool,
    temperature: float,
    font_size: int,
) -> list:
    """A sentence's weights (and scores), the weights with the slider of τ (its cell text
    at every position of τ is the cost)."""
    return single_head_figures.sentence(
        tr,
        list(tokens),
        words,
        side=side,
        show_text=show_text,
        temperature=temperature_grid(tr, temperature),
        font_size=font_size,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def sqrt_positions(d_k: int, seed: int) -> tuple[lesson.SqrtPosition, ...]:
    """Every position of the histograms' slider, the page's own sample at ``d_k``."""
    return lesson.sqrt_positions(why_sqrt(d_k, seed), sqrt_steps(seed))


@st.cache_resource(max_entries=32, show_spinner=False)
def sqrt_figures(d_k: int, seed: int, words: single_head_figures.Words, font_size: int) -> list:
    """The two √d_k histograms, the slider of d_k in the first, the second following it."""
    active = lesson.DK_CHOICES.index(d_k)
    return single_head_figures.why_sqrt(sqrt_positions(d_k, seed), active, words, font_size)


@st.cache_resource(max_entries=16, show_spinner=False)
def peak_figures(n_keys: int, seed: int, words: single_head_figures.Words, font_size: int) -> list:
    """How peaked softmax rows get over d_k: the largest weight and the entropy."""
    return single_head_figures.peaks(peakedness(n_keys, seed), words, font_size)
