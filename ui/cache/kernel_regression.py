"""Cached wrappers over :mod:`visattn.lessons.kernel_regression` and its figures: one line each, no
compute here.

A whole regression is one call, so a bad input (σ = 0, a one-row table) fails as a whole and the
page shows the last good regression as a whole — never a table from one input beside a curve from
another. The figures (Plotly's validation of ①'s, every position of σ's slider included, is
a rerun's main cost) are built once per result, words and font size and shared between sessions
(``st.cache_resource``): show them, never modify them.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from visattn.figures import kernel_regression as kernel_regression_figures
from visattn.lessons import kernel_regression as lesson

fit_sigma = st.cache_data(max_entries=64, show_spinner=False)(lesson.fit_sigma)
regression = st.cache_data(max_entries=64, show_spinner=False)(lesson.regression)
regression_figures = st.cache_resource(max_entries=64, show_spinner=False)(
    kernel_regression_figures.regression_figures
)
loo_figure = st.cache_resource(max_entries=64, show_spinner=False)(
    kernel_regression_figures.loo_figure
)
scored = st.cache_data(max_entries=64, show_spinner=False)(lesson.scored)
self_attention = st.cache_data(max_entries=16, show_spinner=False)(lesson.self_attention)


@st.cache_resource(max_entries=32, show_spinner=False)
def score_maps(
    attention, keys, queries, titles: tuple, words: kernel_regression_figures.Words, font_size: int
) -> list[tuple[go.Figure, str]]:
    return kernel_regression_figures.score_maps(
        attention, (keys, queries), titles, words, font_size
    )
