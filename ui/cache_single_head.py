"""Cached wrappers for the single-head page's sampling (the √d_k panel draws up to 40 M normals)."""

from __future__ import annotations

import streamlit as st

from visattn import scaling

PEAK_GRID = tuple(2 ** i for i in range(11))   # d_k = 1, 2, 4, …, 1024


@st.cache_data(max_entries=32, show_spinner=False)
def dot_products(d_k: int, seed: int) -> scaling.DotProductSample:
    return scaling.sample_dot_products(d_k, seed=seed)


@st.cache_data(max_entries=16, show_spinner=False)
def peakedness(n_keys: int, seed: int) -> scaling.Peakedness:
    return scaling.softmax_peakedness(PEAK_GRID, n_keys=n_keys, seed=seed)
