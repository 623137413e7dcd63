"""Cached sections of the decoder page: one-line wrappers over :mod:`visattn.lessons.decoder`."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from visattn.figures import decoder as figures
from visattn.lessons import decoder as lesson


@st.cache_data(max_entries=32, show_spinner=False)
def mask(tokens: tuple[str, ...]) -> lesson.MaskSection:
    return lesson.mask_section(list(tokens))


@st.cache_data(max_entries=32, show_spinner=False)
def cache(tokens: tuple[str, ...], step: int) -> lesson.CacheSection:
    return lesson.cache_section(list(tokens), step)


@st.cache_resource(max_entries=64, show_spinner=False)
def cache_figure(tokens: tuple[str, ...], step: int, font_size: int, **words: str) -> go.Figure:
    """The KV-cache animation (one frame per step), built once per input and shared: show it, never
    modify it."""
    c = lesson.cache_section(list(tokens), step)
    return figures.cache_animation(
        c.K, c.V, c.weights, list(tokens), c.step, font_size=font_size, **words
    )


@st.cache_data(max_entries=8, show_spinner=False)
def cost(shape: str) -> lesson.CostSection:
    return lesson.cost_section(shape)


@st.cache_data(max_entries=32, show_spinner=False)
def circuits(tokens: tuple[str, ...]) -> tuple[lesson.CircuitSection, lesson.CircuitSection]:
    """(intact, ablated) from one pair of runs, so the ablation switch never computes."""
    return lesson.circuit_pair(list(tokens))
