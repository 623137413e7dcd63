"""Attention as Nadaraya–Watson kernel regression.

A query q looks at keys k_i, scores each by a kernel of the distance u = |q − k_i| / σ, turns the
scores into weights with softmax, and returns Σ weight_i · v_i. With the Gaussian kernel the score
is −u²/2 and softmax of it is exactly the normalised kernel (article 002).

Shapes: Nq queries, Nk keys, Dk key width, Dv value width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .checks import as_array, positive_float
from .errors import InputError

# log K(u) for each kernel, as a function of the scaled distance u ≥ 0; −inf outside the support.
# Constant factors of K cancel in the normalisation and are left out.
_LOG_KERNELS = {
    "gaussian": lambda u: -0.5 * u**2,
    "laplace": lambda u: -u,
    "boxcar": lambda u: np.where(u <= 1.0, 0.0, -np.inf),
    "epanechnikov": lambda u: np.where(u < 1.0, np.log(np.clip(1.0 - u**2, 1e-300, None)), -np.inf),
}
KERNELS = tuple(_LOG_KERNELS)


@dataclass(frozen=True)
class KernelRegressionResult:
    scores: np.ndarray  # (Nq, Nk) log-kernel scores; −inf where a compact kernel gives 0
    weights: np.ndarray  # (Nq, Nk) softmax of scores; a row of zeros where no key is in range
    estimates: np.ndarray  # (Nq,) or (Nq, Dv): Σ weight · value; NaN where no key is in range
    supported: np.ndarray  # (Nq,) bool: False where a compact kernel reaches no key


def _as_points(x: ArrayLike, name: str) -> np.ndarray:
    a = as_array(x, name)
    if a.ndim == 0:
        a = a.reshape(1, 1)
    elif a.ndim == 1:
        a = a[:, None]
    elif a.ndim != 2:
        raise InputError(
            "points_ndim",
            f"{name} must be a number, a vector or a matrix, got shape {a.shape}.",
            name=name,
            shape=" × ".join(map(str, a.shape)),
        )
    return a


def _check_kernel(kernel: str) -> None:
    if kernel not in _LOG_KERNELS:
        raise InputError(
            "kernel",
            f"kernel={kernel!r} is unknown; choose one of {', '.join(KERNELS)}.",
            kernel=str(kernel)[:40],
        )


def _weights(queries, keys, kernel, bandwidth):
    diff = queries[:, None, :] - keys[None, :, :]  # (Nq, 1, Dk) - (1, Nk, Dk) -> (Nq, Nk, Dk)
    with np.errstate(over="ignore"):  # a tiny σ: u overflows to inf, its score to −inf
        u = np.sqrt((diff**2).sum(-1)) / bandwidth  # (Nq, Nk)
        scores = _LOG_KERNELS[kernel](u)
    row_max = scores.max(axis=1, keepdims=True)
    supported = np.isfinite(row_max[:, 0])
    e = np.exp(
        scores - np.where(supported[:, None], row_max, 0.0)
    )  # stable: the best key gets exp(0)
    total = e.sum(axis=1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return scores, weights, supported


def nadaraya_watson(
    queries: ArrayLike,
    keys: ArrayLike,
    values: ArrayLike,
    kernel: str = "gaussian",
    bandwidth: float = 1.0,
) -> KernelRegressionResult:
    """Estimate the value at each query as the kernel-weighted average of ``values``.

    queries (Nq,) or (Nq, Dk); keys (Nk,) or (Nk, Dk); values (Nk,) or (Nk, Dv).
    ``kernel`` is one of gaussian, laplace, boxcar, epanechnikov; ``bandwidth`` σ > 0.
    A query that a compact kernel (boxcar, Epanechnikov) cannot reach from any key gets weights 0,
    estimate NaN and ``supported=False`` rather than a division by zero.
    """
    _check_kernel(kernel)
    bandwidth = positive_float(bandwidth, "bandwidth")
    q = _as_points(queries, "queries")
    k = _as_points(keys, "keys")
    v = as_array(values, "values")
    if q.shape[1] != k.shape[1]:
        raise InputError(
            "query_width",
            f"queries have {q.shape[1]} features and keys have {k.shape[1]}; they must match.",
            query=q.shape[1],
            keys=k.shape[1],
        )
    if v.ndim not in (1, 2) or v.shape[0] != k.shape[0]:
        raise InputError(
            "values_rows",
            f"values has shape {v.shape}; it needs one entry (or row) per key, "
            f"{k.shape[0]} in all.",
            values=v.shape[0],
            keys=k.shape[0],
        )
    scores, weights, supported = _weights(q, k, kernel, bandwidth)
    est = weights @ v  # (Nq, Nk) x (Nk[, Dv]) -> (Nq[, Dv])
    est = np.where(supported if v.ndim == 1 else supported[:, None], est, np.nan)
    return KernelRegressionResult(
        scores=scores, weights=weights, estimates=est, supported=supported
    )


def loo_error(
    keys: ArrayLike, values: ArrayLike, bandwidths: ArrayLike, kernel: str = "gaussian"
) -> np.ndarray:
    """Mean squared leave-one-out error for each bandwidth: predict v_i from all pairs but i.

    keys (Nk,) or (Nk, Dk), values (Nk,). Returns (len(bandwidths),); +inf where some point has no
    other key within reach (compact kernels, small σ).
    """
    k = _as_points(keys, "keys")
    v = as_array(values, "values", 1)
    if k.shape[0] != v.shape[0]:
        raise InputError(
            "values_rows",
            f"keys have {k.shape[0]} rows and values {v.shape[0]}; they must pair up.",
            values=v.shape[0],
            keys=k.shape[0],
        )
    if k.shape[0] < 2:
        raise InputError(
            "table_rows", "leave-one-out needs at least two key→value pairs.", rows=k.shape[0]
        )
    _check_kernel(kernel)
    out = []
    for s in np.atleast_1d(np.asarray(bandwidths, dtype=np.float64)):
        s = positive_float(s, "bandwidth")
        diff = k[:, None, :] - k[None, :, :]
        with np.errstate(over="ignore"):
            scores = _LOG_KERNELS[kernel](np.sqrt((diff**2).sum(-1)) / s)
        np.fill_diagonal(scores, -np.inf)  # leave point i out of its own estimate
        row_max = scores.max(axis=1, keepdims=True)
        if not np.isfinite(row_max).all():
            out.append(np.inf)
            continue
        w = np.exp(scores - row_max)
        pred = (w @ v) / w.sum(axis=1)
        out.append(float(np.mean((pred - v) ** 2)))
    return np.array(out)


def fit_bandwidth(
    keys: ArrayLike, values: ArrayLike, kernel: str = "gaussian", grid: ArrayLike | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    """σ that minimises the leave-one-out error: a log-spaced grid search, then golden-section
    refinement.

    Returns (sigma, grid, errors on the grid) so a page can plot the error curve.
    """
    k = _as_points(keys, "keys")
    if grid is None:
        span = float(np.ptp(k, axis=0).max()) or 1.0
        grid = np.geomspace(span / 1000, span * 2, 120)
    grid = np.asarray(grid, dtype=np.float64)
    errors = loo_error(keys, values, grid, kernel)
    if not np.isfinite(errors).any():
        raise InputError(
            "no_bandwidth",
            "no bandwidth in the search range reaches a neighbour for every point; use a smoother "
            "kernel or more data.",
        )
    i = int(np.nanargmin(errors))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]

    def f(s: float) -> float:  # the leave-one-out error at one σ
        return float(loo_error(keys, values, [s], kernel)[0])

    g = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    best = min([(errors[i], grid[i]), (fc, c), (fd, d)])
    return float(best[1]), grid, errors


# ---- one query, key by key (what the kernel page's table shows) ----------------------------------


def key_value_table(table: ArrayLike, max_key_features: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Split a (N, Dk + 1) table into keys (N, Dk) and values (N,): the last column holds the
    values.

    Needs at least two rows (with one key every query gets weight 1: nothing to compare) and
    1 … ``max_key_features`` key columns.
    """
    a = as_array(table, "table", 2)
    n, c = a.shape
    if c < 2 or c > max_key_features + 1:
        raise InputError(
            "table_columns",
            f"the table has {c} columns; it needs 1 to {max_key_features} key columns and "
            f"then one value column.",
            columns=c,
            most=max_key_features + 1,
        )
    if n < 2:
        raise InputError(
            "table_rows",
            f"the table has {n} row; kernel regression compares a query with at least two "
            f"keys, so add another key→value row.",
            rows=n,
        )
    return a[:, :-1], a[:, -1]


def duplicate_keys(keys: ArrayLike) -> list[tuple[tuple[float, ...], list[int]]]:
    """Keys that occur more than once, each with the (0-based) rows where it occurs, in order of
    first row."""
    k = _as_points(keys, "keys")
    rows: dict[tuple[float, ...], list[int]] = {}
    for i, row in enumerate(k):
        rows.setdefault(tuple(float(x) for x in row), []).append(i)
    return [(key, idx) for key, idx in rows.items() if len(idx) > 1]


def check_bandwidth(bandwidth: object) -> float:
    """σ as a float > 0, or an InputError that says why σ must be positive."""
    try:
        s = float(bandwidth)
    except (TypeError, ValueError):
        raise InputError(
            "sigma", f"σ must be a number greater than 0, got {bandwidth!r}.", sigma=bandwidth
        ) from None
    if not np.isfinite(s) or s <= 0:
        raise InputError(
            "sigma",
            f"σ = {s:g}: the bandwidth divides the distance, so it must be greater than 0.",
            sigma=f"{s:g}",
        )
    return s


@dataclass(frozen=True)
class QueryBreakdown:
    """One query against every key: the columns of the page's table. Σ contributions = estimate."""

    query: np.ndarray  # (Dk,)
    keys: np.ndarray  # (Nk, Dk)
    values: np.ndarray  # (Nk,)
    distances: np.ndarray  # (Nk,) ‖q − k_i‖
    scores: np.ndarray  # (Nk,) log-kernel score s_i; −inf outside a compact kernel's reach
    exp_scores: np.ndarray  # (Nk,) e^{s_i} (may underflow to 0 for far keys; the weights do not)
    weights: np.ndarray  # (Nk,) softmax(s); zeros when no key is in reach
    contributions: np.ndarray  # (Nk,) weight_i · v_i
    estimate: float  # Σ contributions, NaN when no key is in reach
    supported: bool  # False when a compact kernel reaches no key


def explain_query(
    query: ArrayLike,
    keys: ArrayLike,
    values: ArrayLike,
    kernel: str = "gaussian",
    bandwidth: float = 1.0,
) -> QueryBreakdown:
    """The per-key numbers behind ``nadaraya_watson`` for one query. query (Dk,) or a number; keys
    (Nk[, Dk]); values (Nk,)."""
    bandwidth = check_bandwidth(bandwidth)
    _check_kernel(kernel)
    k = _as_points(keys, "keys")
    q = np.atleast_1d(as_array(query, "query")).reshape(1, -1)  # (1, Dk)
    if q.shape[1] != k.shape[1]:
        raise InputError(
            "query_width",
            f"the query has {q.shape[1]} numbers and the keys {k.shape[1]}; they must match.",
            query=q.shape[1],
            keys=k.shape[1],
        )
    v = as_array(values, "values", 1)
    r = nadaraya_watson(q, k, v, kernel, bandwidth)
    with np.errstate(under="ignore"):
        exp_scores = np.exp(r.scores[0])
    return QueryBreakdown(
        query=q[0],
        keys=k,
        values=v,
        distances=np.sqrt(((q - k) ** 2).sum(-1)),
        scores=r.scores[0],
        exp_scores=exp_scores,
        weights=r.weights[0],
        contributions=r.weights[0] * v,
        estimate=float(r.estimates[0]),
        supported=bool(r.supported[0]),
    )
