"""Cached wrappers over :mod:`visattn.lessons.kernel`: one line each, no compute here.

A whole lesson is one call, so a bad input (σ = 0, a one-row table) fails as a whole and the page
shows the last good lesson as a whole — never a table from one input beside a curve from another.
"""

from __future__ import annotations

import streamlit as st

from visattn.lessons import kernel as lesson


@st.cache_data(max_entries=64, show_spinner=False)
def fit_sigma(table, kernel: str) -> lesson.Fit | None:
    return lesson.fit_sigma(table, kernel)


@st.cache_data(max_entries=64, show_spinner=False)
def kernel_lesson(
    table,
    query: tuple,
    kernel: str,
    sigma: float,
    ranges: tuple,
    live: lesson.Controls | None = None,
) -> lesson.KernelLesson:
    return lesson.kernel_lesson(table, query, kernel, sigma, ranges, live)


@st.cache_data(max_entries=64, show_spinner=False)
def scored(Q, K, V, method: str, W_q, W_k, w_v, standardized: bool):
    return lesson.scored(Q, K, V, method, W_q, W_k, w_v, standardized)


@st.cache_data(max_entries=16, show_spinner=False)
def self_lesson(X, method: str, W, standardized: bool) -> lesson.SelfLesson:
    return lesson.self_lesson(X, method, W, standardized)
