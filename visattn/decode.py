"""A decoder generates one token at a time: causal attention step by step, with a cache of keys and
values.

Causal self-attention over T tokens (:func:`visattn.self_attention` with ``causal=True``) computes
all T rows at once, each row blind to the tokens after it. A decoder that *generates* cannot: token
t does not exist before step t. So at step t it projects only the new token x_t into q_t, k_t, v_t,
appends k_t and v_t to the cache of earlier keys and values, and attends from q_t over the t + 1
cached rows. Stacked, the T steps are the causal trace row for row (:func:`decode_steps`; equal up
to float rounding, since a row product and a matrix product may round differently).

The cache trades memory for work. Without it, each step runs the whole prefix again (what
``model(prefix)`` does): every earlier token's projections and every earlier row of attention are
recomputed. With it, a step projects one token and reads t + 1 cached keys. :func:`decode_cost`
counts both and the cache's bytes.

Axis letters: T tokens, D model width, Dk query/key width, Dv value width, L layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from .activations import softmax
from .attention import _projection
from .checks import as_array, positive_int
from .errors import InputError
from .shapes import GPT3, GPT3_LAYERS

# Published shapes (a decoder's width, depth and context). GPT-3's come from visattn.shapes (article
# 000).
# GPT-2 small: Radford et al. 2019
GPT2_SMALL = MappingProxyType({"d_model": 768, "n_heads": 12, "n_layers": 12, "context": 1024})
# GPT-3 175B: Brown et al. 2020
GPT3_175B = MappingProxyType(
    {
        "d_model": GPT3["d_model"],
        "n_heads": GPT3["n_heads"],
        "n_layers": GPT3_LAYERS,
        "context": 2048,
    }
)
BYTES_FP16 = 2
MODELS = MappingProxyType({"gpt2_small": GPT2_SMALL, "gpt3_175b": GPT3_175B})
# The shapes the page offers: (model, tokens). GPT-3 was trained with 2 048 tokens of context; 8 192
# is what a longer-context model of the same size would cache.
SHAPES = MappingProxyType(
    {
        "gpt2_small_1k": (GPT2_SMALL, 1024),
        "gpt3_2k": (GPT3_175B, 2048),
        "gpt3_8k": (GPT3_175B, 8192),
    }
)
MAX_COST_TOKENS = 10**6


@dataclass(frozen=True)
class DecodeStep:
    """Step t (0-based) of generation: the new token's query against the cache of keys and values so
    far."""

    t: int
    query: np.ndarray  # (Dk,)    q_t = x_t W_q
    K: np.ndarray  # (t+1, Dk) the key cache after appending k_t = x_t W_k
    V: np.ndarray  # (t+1, Dv) the value cache after appending v_t = x_t W_v
    scores: np.ndarray  # (t+1,)   q_t · k_j / √Dk (or without √Dk when scale=False)
    weights: np.ndarray  # (t+1,)   softmax(scores), sums to 1
    output: np.ndarray  # (Dv,)    weights @ V

    @property
    def keys_read(self) -> int:
        """How many cached keys this step's query reads: t + 1."""
        return self.t + 1


def decode_steps(
    X: ArrayLike, W_q: ArrayLike, W_k: ArrayLike, W_v: ArrayLike, *, scale: bool = True
) -> tuple[DecodeStep, ...]:
    """One :class:`DecodeStep` per row of X (T, D): generation with a KV cache, token by token.

    W_q and W_k are (D, Dk), W_v is (D, Dv). Stacking each step's ``weights`` (zero-padded to T) and
    ``output`` gives ``self_attention(X, W_q, W_k, W_v, causal=True)``'s ``weights`` and ``output``.
    """
    X = as_array(X, "X", 2)
    T, d = X.shape
    W_q, W_k, W_v = (_projection(W, n, d) for W, n in ((W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v")))
    if W_q.shape[1] != W_k.shape[1]:
        raise InputError(
            "wq_wk_width",
            f"W_q gives queries of width {W_q.shape[1]} and W_k keys of width {W_k.shape[1]}; "
            "give both the same number of columns (Dk).",
            q=W_q.shape[1],
            k=W_k.shape[1],
        )
    K = np.empty((T, W_k.shape[1]))  # the cache, filled row by row; step t sees rows 0 … t
    V = np.empty((T, W_v.shape[1]))
    root = np.sqrt(W_q.shape[1]) if scale else 1.0
    steps = []
    for t in range(T):
        x = X[t : t + 1]  # (1, D): only the new token is projected
        q = (x @ W_q)[0]
        K[t], V[t] = (x @ W_k)[0], (x @ W_v)[0]
        scores = K[: t + 1] @ q / root  # (t+1,)
        weights = softmax(scores)
        steps.append(
            DecodeStep(
                t=t,
                query=q,
                K=K[: t + 1].copy(),
                V=V[: t + 1].copy(),
                scores=scores,
                weights=weights,
                output=weights @ V[: t + 1],
            )
        )
    return tuple(steps)


def stack_weights(steps: tuple[DecodeStep, ...]) -> np.ndarray:
    """(T, T): step t's weights in row t, exact zeros on the keys that did not exist yet (j > t)."""
    T = len(steps)
    W = np.zeros((T, T))
    for s in steps:
        W[s.t, : s.t + 1] = s.weights
    return W


@dataclass(frozen=True)
class DecodeCost:
    """What generating T tokens costs in one model, with and without the KV cache (multiply-adds,
    bytes).

    Counted per layer and then times L: the projections of Q, K, V (3·D² a token) and attention
    itself (D a key for the scores, D a key for the weighted sum of values). W_o and the
    feed-forward part cost the same per new token either way with a cache, and are left out of both
    columns alike."""

    T: int
    d_model: int
    n_layers: int
    keys_read: np.ndarray  # (T,) t + 1 per layer and head: what step t's query reads
    work_cached: np.ndarray  # (T,) multiply-adds of step t, all layers: 3D² + 2D(t+1)
    work_uncached: np.ndarray  # (T,) the whole prefix again: 3D²(t+1) + 2D(t+1)²
    total_cached: int  # Σ over the T steps (exact Python int)
    total_uncached: int
    cache_bytes: int  # 2 (K and V) · L · T · D · 2 bytes (fp16)

    @property
    def saving(self) -> float:
        """How many times more work generation takes without the cache."""
        return self.total_uncached / self.total_cached


def decode_cost(
    T: int, d_model: int, n_layers: int, bytes_per_value: int = BYTES_FP16
) -> DecodeCost:
    """Cost of generating T tokens (see :class:`DecodeCost`); exact integers at any size."""
    T = positive_int(T, "T (tokens)", maximum=MAX_COST_TOKENS)
    D = positive_int(d_model, "d_model", maximum=10**7)
    L = positive_int(n_layers, "n_layers", maximum=10**4)
    B = positive_int(bytes_per_value, "bytes_per_value", maximum=16)
    n = np.arange(1, T + 1, dtype=np.float64)  # (T,) t + 1 keys at step t
    cached = L * (3 * D * D + 2 * D * n)  # (T,)
    uncached = L * (3 * D * D * n + 2 * D * n * n)  # (T,)
    total_cached = L * (3 * D * D * T + D * T * (T + 1))  # Σ (t+1) = T(T+1)/2
    # Σ (t+1)² = T(T+1)(2T+1)/6
    total_uncached = L * (3 * D * D * T * (T + 1) // 2 + D * T * (T + 1) * (2 * T + 1) // 3)
    return DecodeCost(
        T=T,
        d_model=D,
        n_layers=L,
        keys_read=n.astype(np.int64),
        work_cached=cached,
        work_uncached=uncached,
        total_cached=total_cached,
        total_uncached=total_uncached,
        cache_bytes=2 * L * T * D * B,
    )


def cache_bytes(T: int, d_model: int, n_layers: int, bytes_per_value: int = BYTES_FP16) -> int:
    """Bytes of one sequence's KV cache: a key and a value of width D per token and layer, 2 · L · T
    · D values."""
    T = positive_int(T, "T (tokens)", maximum=10**9)
    return (
        2
        * positive_int(n_layers, "n_layers", maximum=10**4)
        * T
        * positive_int(d_model, "d_model", maximum=10**7)
        * positive_int(bytes_per_value, "bytes_per_value", maximum=16)
    )


def shape_cost(name: str) -> DecodeCost:
    """:func:`decode_cost` for one of :data:`SHAPES` (``"gpt2_small_1k"``, ``"gpt3_2k"``,
    ``"gpt3_8k"``)."""
    if name not in SHAPES:
        raise InputError(
            "decoder_shape",
            f"No shape called {name!r}; the shapes are {', '.join(SHAPES)}.",
            shape=str(name)[:40],
            shapes=", ".join(SHAPES),
        )
    model, T = SHAPES[name]
    return decode_cost(T, model["d_model"], model["n_layers"])
