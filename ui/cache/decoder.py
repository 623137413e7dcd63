"""The decoder page's Streamlit caches: each section of :mod:`visattn.lessons.decoder` computed once
per input (``st.cache_data``), and each slow figure built once per input and shared
(``st.cache_resource``: show it, never modify it).

A figure's wrapper takes what the figure draws (arrays, tokens, or the small section they come from,
computed once by its own wrapper), the figures' words (:class:`visattn.figures.decoder.Words`, one
object per language) and the font size; a sequence arrives as a tuple of tokens (hashable, and what
a link reproduces)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from visattn.decode import DecodeCost
from visattn.figures import decoder as decoder_figures
from visattn.lessons import decoder as lesson


@st.cache_data(max_entries=32, show_spinner=False)
def mask_section(tokens: tuple[str, ...]) -> lesson.MaskSection:
    return lesson.mask_section(list(tokens))


@st.cache_data(max_entries=32, show_spinner=False)
def kv_cache_section(tokens: tuple[str, ...]) -> lesson.KVCacheSection:
    return lesson.kv_cache_section(list(tokens))


@st.cache_data(max_entries=8, show_spinner=False)
def cost_section(shape: str) -> lesson.CostSection:
    return lesson.cost_section(shape)


@st.cache_data(max_entries=32, show_spinner=False)
def circuits(tokens: tuple[str, ...]) -> tuple[lesson.CircuitSection, lesson.CircuitSection]:
    """(intact, ablated) from one pair of runs, so the ablation switch never computes."""
    return lesson.circuit_pair(list(tokens))


@st.cache_resource(max_entries=64, show_spinner=False)
def kv_cache_animation(
    kv_cache: lesson.KVCacheSection, step: int, words: decoder_figures.Words, font_size: int
) -> go.Figure:
    """The KV cache filling step by step (one frame per step), starting at ``step`` (1 … T)."""
    return decoder_figures.cache_animation(
        kv_cache.K,
        kv_cache.V,
        kv_cache.weights,
        kv_cache.tokens,
        step,
        words=words,
        font_size=font_size,
    )


@st.cache_resource(max_entries=8, show_spinner=False)
def cost_curves(work: DecodeCost, words: decoder_figures.Words, font_size: int) -> go.Figure:
    """Work per step with and without the cache (up to 8 192 steps, validated by Plotly)."""
    return decoder_figures.cost_curves(
        work.work_cached, work.work_uncached, words=words, font_size=font_size
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def circuit_heads(
    heads: np.ndarray, tokens: tuple[str, ...], words: decoder_figures.Words, font_size: int
) -> go.Figure:
    """The circuit's two heads (1, 2, T, T) side by side, cells large enough to read."""
    return decoder_figures.circuit_heads(heads, tokens, words=words, font_size=font_size)


@st.cache_resource(max_entries=32, show_spinner=False)
def induction_lines(
    line_weights: np.ndarray, tokens: tuple[str, ...], words: decoder_figures.Words, font_size: int
) -> go.Figure:
    """The induction head's rows of repeated tokens (1, T, T) as lines from token to key."""
    return decoder_figures.induction_lines(line_weights, tokens, words=words, font_size=font_size)
