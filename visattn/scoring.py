"""Scoring functions for multi-dimensional queries and keys (article 002): additive, dot product,
scaled dot product.

A score says how well query i matches key j; softmax over the keys turns a row of scores into
weights, and the output is the weighted sum of the values. Only the scoring function differs:

- additive:    s_ij = w_vᵀ tanh(W_q q_i + W_k k_j)      (Bahdanau; W_q (A, Dq), W_k (A, Dk), w_v
  (A,))
- dot:         s_ij = q_i · k_j
- scaled_dot:  s_ij = q_i · k_j / √Dk

Shapes: Tq queries, Tk keys, Dq query width, Dk key width, Dv value width, A additive hidden width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .activations import softmax
from .checks import as_array
from .errors import InputError

SCORINGS = ("additive", "dot", "scaled_dot")


@dataclass(frozen=True)
class AdditiveScores:
    hidden: np.ndarray  # (Tq, Tk, A) tanh(W_q q_i + W_k k_j)
    scores: np.ndarray  # (Tq, Tk) hidden @ w_v


@dataclass(frozen=True)
class DotScores:
    raw: np.ndarray  # (Tq, Tk) Q Kᵀ
    scores: np.ndarray  # (Tq, Tk) raw / scale
    scale: float  # 1 for dot, √Dk for scaled_dot


@dataclass(frozen=True)
class ScoredAttention:
    method: str
    Q: np.ndarray  # (Tq, Dk) the queries scored (standardised when asked)
    K: np.ndarray  # (Tk, Dk) the keys scored
    scores: np.ndarray  # (Tq, Tk)
    weights: np.ndarray  # (Tq, Tk) softmax over keys; rows sum to 1
    output: np.ndarray  # (Tq, Dv) weights @ V


def _qk(Q: ArrayLike, K: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    Q, K = as_array(Q, "Q", 2), as_array(K, "K", 2)
    if Q.shape[1] != K.shape[1]:
        raise InputError(
            "qk_width",
            f"Q has {Q.shape[1]} columns and K has {K.shape[1]}; a query and a key are compared "
            f"feature by feature, so give both the same number of columns.",
            q=Q.shape[1],
            k=K.shape[1],
        )
    return Q, K


def dot_scores(Q: ArrayLike, K: ArrayLike) -> DotScores:
    """s = Q Kᵀ for Q (Tq, Dk), K (Tk, Dk)."""
    Q, K = _qk(Q, K)
    raw = Q @ K.T  # (Tq, Dk) x (Dk, Tk) -> (Tq, Tk)
    return DotScores(raw=raw, scores=raw, scale=1.0)


def scaled_dot_scores(Q: ArrayLike, K: ArrayLike) -> DotScores:
    """s = Q Kᵀ / √Dk for Q (Tq, Dk), K (Tk, Dk)."""
    Q, K = _qk(Q, K)
    raw = Q @ K.T  # (Tq, Tk)
    scale = float(np.sqrt(Q.shape[1]))
    return DotScores(raw=raw, scores=raw / scale, scale=scale)


def additive_scores(
    Q: ArrayLike, K: ArrayLike, W_q: ArrayLike, W_k: ArrayLike, w_v: ArrayLike
) -> AdditiveScores:
    """s_ij = w_vᵀ tanh(W_q q_i + W_k k_j). Q (Tq, Dq), K (Tk, Dk), W_q (A, Dq), W_k (A, Dk), w_v
    (A,) or (A, 1).

    Queries and keys may have different widths here: each is projected to the hidden width A first.
    """
    Q, K = as_array(Q, "Q", 2), as_array(K, "K", 2)
    W_q, W_k = as_array(W_q, "W_q", 2), as_array(W_k, "W_k", 2)
    w_v = as_array(w_v, "w_v").reshape(-1) if np.ndim(w_v) <= 2 else as_array(w_v, "w_v", 1)
    if W_q.shape[1] != Q.shape[1]:
        raise InputError(
            "wq_shape",
            f"W_q has {W_q.shape[1]} columns but queries have {Q.shape[1]} features; "
            f"W_q must be (A, {Q.shape[1]}).",
            cols=W_q.shape[1],
            d=Q.shape[1],
        )
    if W_k.shape[1] != K.shape[1]:
        raise InputError(
            "wk_shape",
            f"W_k has {W_k.shape[1]} columns but keys have {K.shape[1]} features; "
            f"W_k must be (A, {K.shape[1]}).",
            cols=W_k.shape[1],
            d=K.shape[1],
        )
    if not (W_q.shape[0] == W_k.shape[0] == w_v.shape[0]):
        raise InputError(
            "hidden",
            f"W_q has {W_q.shape[0]} rows, W_k {W_k.shape[0]} and w_v {w_v.shape[0]}; all three "
            f"must share the hidden width A.",
            hq=W_q.shape[0],
            hk=W_k.shape[0],
            hv=w_v.shape[0],
        )
    hq = Q @ W_q.T  # (Tq, Dq) x (Dq, A) -> (Tq, A)
    hk = K @ W_k.T  # (Tk, Dk) x (Dk, A) -> (Tk, A)
    hidden = np.tanh(hq[:, None, :] + hk[None, :, :])  # (Tq, 1, A) + (1, Tk, A) -> (Tq, Tk, A)
    return AdditiveScores(hidden=hidden, scores=hidden @ w_v)  # (Tq, Tk, A) x (A,) -> (Tq, Tk)


def seeded_additive_weights(
    d_q: int, d_k: int, hidden: int = 2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small random (W_q (A, Dq), W_k (A, Dk), w_v (A,)), rounded to 2 decimals so they read well
    and fit in a URL."""
    rng = np.random.default_rng(seed)
    W_q = rng.normal(0, 1 / np.sqrt(d_q), (hidden, d_q))
    W_k = rng.normal(0, 1 / np.sqrt(d_k), (hidden, d_k))
    w_v = rng.normal(0, 1, hidden)
    return np.round(W_q, 2), np.round(W_k, 2), np.round(w_v, 2)


def standardize(Q: ArrayLike, K: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Centre and scale every feature by the keys' mean and standard deviation (a constant feature
    is only centred).

    Raw features around 60–90 give dot products near 10⁴ whose differences are hundreds: softmax of
    that is one-hot. Standardised features give scores of order 1."""
    Q, K = _qk(Q, K)
    mean = K.mean(axis=0)  # (Dk,)
    std = K.std(axis=0)
    # a feature whose spread is rounding noise next to its size (or next to 1) counts as constant:
    # dividing by 1e-34 would blow a query's 1.0 up to 1e34
    tiny = 1e-9 * np.maximum(np.abs(K).max(axis=0), 1.0)
    std = np.where(std > tiny, std, 1.0)
    return (Q - mean) / std, (K - mean) / std


def score_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    method: str = "scaled_dot",
    *,
    W_q: ArrayLike | None = None,
    W_k: ArrayLike | None = None,
    w_v: ArrayLike | None = None,
    standardized: bool = False,
) -> ScoredAttention:
    """softmax(scores(Q, K)) V with the chosen scoring ``method`` (one of SCORINGS).

    Q (Tq, Dk), K (Tk, Dk), V (Tk, Dv). ``standardized`` scores standardised queries and keys (see
    :func:`standardize`); the values stay as given, so the output keeps their units.
    """
    if method not in SCORINGS:
        raise InputError(
            "method",
            f"method={method!r} is unknown; choose one of {', '.join(SCORINGS)}.",
            method=method,
        )
    Q, K = _qk(Q, K)
    V = as_array(V, "V", 2)
    if V.shape[0] != K.shape[0]:
        raise InputError(
            "kv_rows",
            f"K has {K.shape[0]} rows and V has {V.shape[0]}; every key needs exactly one value "
            "row.",
            k=K.shape[0],
            v=V.shape[0],
        )
    if standardized:
        Q, K = standardize(Q, K)
    if method == "additive":
        if W_q is None or W_k is None or w_v is None:
            raise InputError("additive_weights", "additive scoring needs W_q, W_k and w_v.")
        scores = additive_scores(Q, K, W_q, W_k, w_v).scores
    elif method == "dot":
        scores = dot_scores(Q, K).scores
    else:
        scores = scaled_dot_scores(Q, K).scores
    weights = softmax(scores, axis=-1)  # subtracts the row max: finite even for scores ~1e4
    return ScoredAttention(
        method=method, Q=Q, K=K, scores=scores, weights=weights, output=weights @ V
    )
