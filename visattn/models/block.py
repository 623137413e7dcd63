"""The post-LN attention block both toy transformers run (the designed one and the random one): one
layer loop.

Each layer is the block of "Attention Is All You Need" without its feed-forward part::

    X_in ─► multi_head_attention(X_in, W_q, W_k, W_v, W_o, H) ─► residual = X_in + MHA
         ─► Z = LayerNorm(residual)

and Z is the next layer's X_in. LayerNorm here has γ = 1 and β = 0 (nothing is learned): each row of
Z has mean 0 and variance 1 (up to ε). A trained LayerNorm then multiplies each column by γ and adds
β.

Axis letters: T tokens, D model width (d_model), H heads, Dh head width (D / H), L layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..activations import layer_norm
from ..attention import MultiHeadResult, multi_head_attention


@dataclass(frozen=True)
class LayerParams:
    """One layer's matrices, each (D, D); head h owns columns h·Dh … (h+1)·Dh of W_q, W_k, W_v
    and rows h·Dh … (h+1)·Dh of W_o."""

    W_q: np.ndarray  # (D, D)
    W_k: np.ndarray  # (D, D)
    W_v: np.ndarray  # (D, D)
    W_o: np.ndarray  # (D, D)


@dataclass(frozen=True)
class LayerTrace:
    """One layer, step by step."""

    X_in: np.ndarray  # (T, D) the layer's input
    # .Q .K .V (H, T, Dh), .weights (H, T, T), .heads (H, T, Dh), .concat, .output (T, D)
    mha: MultiHeadResult
    residual: np.ndarray  # (T, D) X_in + mha.output
    Z: np.ndarray  # (T, D) layer_norm(residual): the next layer's input


def run_layers(
    X: np.ndarray, params: Sequence[LayerParams], n_heads: int
) -> tuple[LayerTrace, ...]:
    """Run the post-LN block once per entry of ``params``, each layer's Z feeding the next; one
    trace a layer."""
    traces, x = [], X
    for p in params:
        mha = multi_head_attention(x, p.W_q, p.W_k, p.W_v, p.W_o, n_heads)
        residual = x + mha.output  # (T, D)
        Z = layer_norm(residual)  # (T, D) each row: mean 0, variance 1 (γ = 1, β = 0)
        traces.append(LayerTrace(X_in=x, mha=mha, residual=residual, Z=Z))
        x = Z
    return tuple(traces)


def stack_weights(traces: Sequence[LayerTrace]) -> np.ndarray:
    """(L, H, T, T): every layer's attention weights."""
    return np.stack([tr.mha.weights for tr in traces])
