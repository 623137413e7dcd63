"""Scaled dot-product attention, self-attention and multi-head attention.

Axis letters used in shapes throughout: T tokens (Tq queries, Tk keys), D model width,
Dk key/query width, Dv value width, H heads, Dh head width (D / H).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .activations import softmax
from .checks import as_array, positive_float, positive_int
from .errors import InputError


@dataclass(frozen=True)
class AttentionResult:
    scores: np.ndarray  # (Tq, Tk) before softmax; divided by √Dk when scale=True
    weights: np.ndarray  # (Tq, Tk) rows sum to 1
    output: np.ndarray  # (Tq, Dv)


@dataclass(frozen=True)
class SelfAttentionTrace:
    X: np.ndarray  # (T, D)
    Q: np.ndarray  # (T, Dk)
    K: np.ndarray  # (T, Dk)
    V: np.ndarray  # (T, Dv)
    raw_scores: np.ndarray  # (T, T) Q Kᵀ
    scores: np.ndarray  # (T, T) Q Kᵀ / √Dk when scale=True, else Q Kᵀ
    weights: np.ndarray  # (T, T)
    output: np.ndarray  # (T, Dv)
    mask: np.ndarray | None  # (T, T) True = may attend, or None

    def before_softmax(self) -> tuple:
        """X, Q, K, V, the raw and the scaled scores and the mask: the part of the trace that the
        softmax temperature does not change (what identifies a figure of those steps)."""
        return (self.X, self.Q, self.K, self.V, self.raw_scores, self.scores, self.mask)


@dataclass(frozen=True)
class MultiHeadResult:
    Q: np.ndarray  # (H, T, Dh)
    K: np.ndarray  # (H, T, Dh)
    V: np.ndarray  # (H, T, Dh)
    weights: np.ndarray  # (H, T, T)
    heads: np.ndarray  # (H, T, Dh) each head's weighted sum of its values
    concat: np.ndarray  # (T, D) heads side by side
    output: np.ndarray  # (T, D) concat @ W_o


def causal_mask(n: int) -> np.ndarray:
    """(n, n) boolean mask, True on and below the diagonal: token i may attend to tokens 0..i."""
    return np.tril(np.ones((n, n), dtype=bool))


def _attend(Q, K, V, scale, mask, temperature):
    """(raw scores or None, scores, weights, output); raw Q Kᵀ only when a trace needs it (scale or
    temperature)."""
    d_k = Q.shape[-1]
    # Shortcut only when nothing divides the scores: a scale and a temperature that cancel (τ = √Dk)
    # still leave the trace's scores = Q Kᵀ / √Dk.
    if temperature == 1.0 and (not scale or d_k == 1):
        raw = scores = Q @ np.swapaxes(K, -1, -2)  # (…, Tq, Dk) x (…, Dk, Tk) -> (…, Tq, Tk)
        logits = scores
    else:
        raw = Q @ np.swapaxes(K, -1, -2)  # (…, Tq, Tk)
        scores = raw / np.sqrt(d_k) if scale else raw
        logits = scores / temperature if temperature != 1.0 else scores
    weights = softmax(logits, axis=-1, mask=mask)
    return raw, scores, weights, weights @ V  # (…, Tq, Tk) x (…, Tk, Dv) -> (…, Tq, Dv)


def _fast_weights(Q, K, mask):
    """Softmax(Q Kᵀ / √Dh) with the scale folded into Q (a (T, Dh) product instead of a (T, T)
    one)."""
    scale = np.asarray(1.0 / np.sqrt(Q.shape[-1]), dtype=Q.dtype)
    s = (Q * scale) @ np.swapaxes(K, -1, -2)  # (H, T, Dh) x (H, Dh, T) -> (H, T, T)
    return softmax(s, axis=-1, mask=mask)


def attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    scale: bool = True,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
) -> AttentionResult:
    """softmax(Q Kᵀ / √Dk / temperature) V for Q (Tq, Dk), K (Tk, Dk), V (Tk, Dv).

    ``mask`` (Tq, Tk) is boolean with True = may attend.
    """
    Q, K, V = as_array(Q, "Q", 2), as_array(K, "K", 2), as_array(V, "V", 2)
    if Q.shape[1] != K.shape[1]:
        raise InputError(
            "qk_width",
            f"Q has {Q.shape[1]} columns and K has {K.shape[1]}; queries and keys must have the "
            "same width Dk to take dot products.",
            q=Q.shape[1],
            k=K.shape[1],
        )
    if K.shape[0] != V.shape[0]:
        raise InputError(
            "kv_rows",
            f"K has {K.shape[0]} rows and V has {V.shape[0]}; every key needs exactly one value "
            "row.",
            k=K.shape[0],
            v=V.shape[0],
        )
    temperature = positive_float(temperature, "temperature")
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (Q.shape[0], K.shape[0]):
            raise InputError(
                "mask_shape",
                f"mask has shape {mask.shape}; it must be (queries, keys) = "
                f"{(Q.shape[0], K.shape[0])}.",
                rows=Q.shape[0],
                cols=K.shape[0],
            )
    _, scores, weights, output = _attend(Q, K, V, scale, mask, temperature)
    return AttentionResult(scores=scores, weights=weights, output=output)


def _projection(W, name, d_model):
    W = as_array(W, name, 2)
    if W.shape[0] != d_model:
        raise InputError(
            "projection_rows",
            f"{name} has {W.shape[0]} rows but X has {d_model} columns; {name} must be "
            f"(d_model, …) = ({d_model}, …).",
            name=name,
            rows=W.shape[0],
            d_model=d_model,
        )
    return W


def self_attention(
    X: ArrayLike,
    W_q: ArrayLike,
    W_k: ArrayLike,
    W_v: ArrayLike,
    *,
    scale: bool = True,
    causal: bool = False,
    temperature: float = 1.0,
) -> SelfAttentionTrace:
    """The whole trace of one head: X (T, D) → Q, K, V → scores → weights → output.

    W_q and W_k are (D, Dk), W_v is (D, Dv). ``causal`` lets token i see tokens 0..i only.
    """
    X = as_array(X, "X", 2)
    d = X.shape[1]
    W_q, W_k, W_v = (_projection(W, n, d) for W, n in ((W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v")))
    if W_q.shape[1] != W_k.shape[1]:
        raise InputError(
            "wq_wk_width",
            f"W_q gives queries of width {W_q.shape[1]} and W_k keys of width {W_k.shape[1]}; "
            "give both the same number of columns (Dk).",
            q=W_q.shape[1],
            k=W_k.shape[1],
        )
    temperature = positive_float(temperature, "temperature")
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, D) x (D, Dk) -> (T, Dk)
    mask = causal_mask(X.shape[0]) if causal else None
    raw, scores, weights, output = _attend(Q, K, V, scale, mask, temperature)
    return SelfAttentionTrace(
        X=X, Q=Q, K=K, V=V, raw_scores=raw, scores=scores, weights=weights, output=output, mask=mask
    )


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(T, D) -> (H, T, Dh): head h gets columns h·Dh … (h+1)·Dh."""
    T, D = x.shape
    return x.reshape(T, n_heads, D // n_heads).transpose(1, 0, 2)  # (T, H, Dh) -> (H, T, Dh)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(H, T, Dh) -> (T, H·Dh): the inverse of :func:`split_heads` (concatenate heads side by
    side)."""
    H, T, Dh = x.shape
    return x.transpose(1, 0, 2).reshape(T, H * Dh)  # (T, H, Dh) -> (T, D)


def head_counts(d_model: int, near: int | None = None, most: int = 8) -> list[int]:
    """Head counts that divide ``d_model``: the ``most`` nearest to ``near`` (or the smallest), in
    increasing order."""
    divisors = [h for h in range(1, int(d_model**0.5) + 1) if d_model % h == 0]
    divisors = sorted(set(divisors + [d_model // h for h in divisors]))
    if near is not None:
        divisors = sorted(sorted(divisors, key=lambda h: (abs(h - near), h))[:most])
    return divisors[:most]


def check_heads(d_model: int, n_heads: int) -> int:
    """Dh = d_model / n_heads, or an InputError naming both numbers when it is not a whole
    number."""
    n_heads = positive_int(n_heads, "n_heads")
    d_model = positive_int(d_model, "d_model")
    if d_model % n_heads:
        divisors = ", ".join(str(h) for h in head_counts(d_model, near=n_heads))
        raise InputError(
            "heads_divide",
            f"d_model={d_model} is not divisible by n_heads={n_heads}; each head gets "
            f"d_model / n_heads columns, so choose n_heads from {divisors} or change d_model.",
            d_model=d_model,
            n_heads=n_heads,
            divisors=divisors,
        )
    return d_model // n_heads


def multi_head_attention(
    X: ArrayLike,
    W_q: ArrayLike,
    W_k: ArrayLike,
    W_v: ArrayLike,
    W_o: ArrayLike,
    n_heads: int,
    *,
    causal: bool = False,
) -> MultiHeadResult:
    """Multi-head self-attention. X (T, D); W_q, W_k, W_v, W_o (D, D).

    Head h uses columns h·Dh … (h+1)·Dh of W_q, W_k, W_v (96 matrices of 12288×128 are one
    12288×12288 matrix cut by columns), attends with scale √Dh, and the heads' outputs are
    concatenated and multiplied by W_o.
    """
    X = as_array(X, "X", 2)
    T, D = X.shape
    check_heads(D, n_heads)
    mats = []
    for W, name in ((W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v"), (W_o, "W_o")):
        W = as_array(W, name, 2)
        if W.shape != (D, D):
            raise InputError(
                "square_weights",
                f"{name} has shape {W.shape}; with d_model={D} it must be ({D}, {D}).",
                name=name,
                shape=" × ".join(map(str, W.shape)),
                d_model=D,
            )
        mats.append(W)
    W_q, W_k, W_v, W_o = mats
    qkv = X @ np.concatenate([W_q, W_k, W_v], axis=1)  # one product: (T, D) x (D, 3D) -> (T, 3D)
    Q = split_heads(qkv[:, :D], n_heads)  # (T, D) -> (H, T, Dh)
    K = split_heads(qkv[:, D : 2 * D], n_heads)
    V = split_heads(qkv[:, 2 * D :], n_heads)
    mask = causal_mask(T) if causal else None
    weights = _fast_weights(Q, K, mask)  # (H, T, T)
    heads = weights @ V  # (H, T, T) x (H, T, Dh) -> (H, T, Dh)
    concat = merge_heads(heads)  # (H, T, Dh) -> (T, D)
    return MultiHeadResult(
        Q=Q, K=K, V=V, weights=weights, heads=heads, concat=concat, output=concat @ W_o
    )
