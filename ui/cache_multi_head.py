"""Cached runs for the multi-head page: one line each over :mod:`visattn.lessons.multi_head`."""

from __future__ import annotations

import streamlit as st

from visattn.lessons import multi_head as lesson


@st.cache_data(max_entries=32, show_spinner=False)
def run(text: str, source: str, d_model: int, n_heads: int, seed: int) -> lesson.Result:
    return lesson.run(text, source, d_model, n_heads, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def readings(
    text: str, source: str, d_model: int, n_heads: int, seed: int, name: str
) -> lesson.Readings:
    """The selector's view of the run (flow over two layers is quick: no progress bar, so it can be
    cached)."""
    return lesson.readings(
        run(text, source, d_model, n_heads, seed),
        name,
        repr((text, source, d_model, n_heads, seed)),
    )
