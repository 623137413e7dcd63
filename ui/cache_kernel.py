"""Cached computations behind the kernel-regression page: one call gives every number a view needs.

Keeping them together means a bad input (σ = 0, a one-row table) fails as a whole, and the page shows the
last good lesson as a whole — never a table from one input beside a curve from another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from visattn.kernel_regression import (
    QueryBreakdown,
    check_bandwidth,
    duplicate_keys,
    explain_query,
    fit_bandwidth,
    key_value_table,
    loo_error,
    nadaraya_watson,
)
from visattn.scoring import ScoredAttention, score_attention

N_HEATMAP_QUERIES = 21   # rows of the query × key heatmap (few enough to print the numbers on 3 keys)
N_CURVE = 301            # points of the fitted curve
N_PLANE = 61             # grid side of the 2-D estimate surface


@dataclass(frozen=True)
class KernelLesson:
    kernel: str
    sigma: float
    breakdown: QueryBreakdown
    duplicates: list              # [(key tuple, [rows])]
    order: np.ndarray             # (Nk,) key indices sorted by key (1-D) — the heatmap's column order
    grid: np.ndarray              # (N_HEATMAP_QUERIES,) or (N_PLANE,) per axis: the queries of the heatmap / surface
    grid_weights: np.ndarray      # (N_HEATMAP_QUERIES, Nk) weights, columns in ``order`` (1-D only, else empty)
    curve_x: np.ndarray           # (N_CURVE,) 1-D; (N_PLANE,) first feature in 2-D
    curve_y: np.ndarray           # (N_CURVE,) estimates, NaN where no key is in reach; (N_PLANE, N_PLANE) in 2-D
    plane_y: np.ndarray           # (N_PLANE,) second feature in 2-D, else empty
    fit: tuple | None             # (σ, grid, errors) by leave-one-out, or None when no σ reaches every point
    loo_current: float            # leave-one-out error at the current σ


@st.cache_data(max_entries=64, show_spinner=False)
def fit_sigma(table, kernel: str) -> tuple | None:
    """(σ, grid, errors) minimising the leave-one-out error, or None when no σ reaches a neighbour for every pair.

    Independent of the current σ, so the page can offer it even while σ itself is invalid.
    """
    keys, values = key_value_table(table)
    try:
        return fit_bandwidth(keys, values, kernel)
    except ValueError:
        return None


@st.cache_data(max_entries=64, show_spinner=False)
def kernel_lesson(table, query: tuple, kernel: str, sigma: float, ranges: tuple) -> KernelLesson:
    """Everything the 1-D/2-D lesson shows. ``ranges`` ((lo, hi) per key feature) spans the curve and heatmap."""
    sigma = check_bandwidth(sigma)
    keys, values = key_value_table(table)
    b = explain_query(np.asarray(query[:keys.shape[1]], dtype=float), keys, values, kernel, sigma)
    fit = fit_sigma(table, kernel)
    loo_now = float(loo_error(keys, values, [sigma], kernel)[0])
    empty = np.empty(0)
    if keys.shape[1] == 1:
        (lo, hi), = ranges
        order = np.argsort(keys[:, 0], kind="stable")
        grid = np.linspace(lo, hi, N_HEATMAP_QUERIES)
        grid_w = nadaraya_watson(grid, keys[order], values[order], kernel, sigma).weights  # (Nq, Nk)
        xs = np.linspace(min(lo, b.query[0]), max(hi, b.query[0]), N_CURVE)   # reach a query typed outside the slider
        ys = nadaraya_watson(xs, keys, values, kernel, sigma).estimates
        return KernelLesson(kernel, sigma, b, duplicate_keys(keys), order, grid, grid_w, xs, ys, empty, fit, loo_now)
    (lo1, hi1), (lo2, hi2) = ranges
    xs, ys = np.linspace(lo1, hi1, N_PLANE), np.linspace(lo2, hi2, N_PLANE)
    gx, gy = np.meshgrid(xs, ys)                                   # (N_PLANE, N_PLANE) each; rows follow y
    est = nadaraya_watson(np.stack([gx.ravel(), gy.ravel()], 1), keys, values, kernel, sigma).estimates
    return KernelLesson(kernel, sigma, b, duplicate_keys(keys), np.arange(len(keys)), empty, empty, xs,
                        est.reshape(gx.shape), ys, fit, loo_now)


@st.cache_data(max_entries=64, show_spinner=False)
def scored(Q, K, V, method: str, W_q, W_k, w_v, standardized: bool) -> ScoredAttention:
    """score_attention, cached (the page also compares all six method × scaling variants)."""
    return score_attention(Q, K, V, method, W_q=W_q, W_k=W_k, w_v=w_v, standardized=standardized)
