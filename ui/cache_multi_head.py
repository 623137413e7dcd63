"""Cached runs for the multi-head page: the designed transformer, and the same block with random weights.

Both return the same face (``tokens``, ``head_names``, ``weights`` (L, H, T, T), ``layers`` of
:class:`visattn.designed.LayerTrace`, ``X``, ``positions``, ``params``), so the page draws either one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import visattn
from visattn.models import designed
from visattn.models.designed import LayerParams, LayerTrace

N_LAYERS = designed.N_LAYERS   # the random model has as many layers as the designed one


@dataclass(frozen=True)
class RandomResult:
    """The designed model's pipeline with untrained, seeded weights: X = seeded embedding + sinusoids."""
    tokens: list[str]
    head_names: tuple[str, ...]      # (H,) "1", "2", … (no head has a meaning)
    embedding: np.ndarray            # (T, D) seeded_embedding
    positions: np.ndarray            # (T, D) sinusoidal encoding, added to the embedding
    X: np.ndarray                    # (T, D) embedding + positions
    params: tuple[LayerParams, ...]  # (L,) W_q, W_k, W_v, W_o, each (D, D)
    layers: tuple[LayerTrace, ...]   # (L,)
    weights: np.ndarray              # (L, H, T, T)


def random_params(d_model: int, seed: int, n_layers: int = N_LAYERS) -> tuple[LayerParams, ...]:
    """Seeded untrained weights, drawn as PyTorch's ``nn.MultiheadAttention`` initialises them.

    W_q, W_k, W_v: Xavier-uniform over the stacked (3D, D) in-projection, U(±√(6 / 4D)); W_o: the default of
    ``nn.Linear``, U(±1/√D). Scores then have a spread of about 1, so the heads come out diffuse.
    """
    rng = np.random.default_rng(seed)
    b_in, b_out = np.sqrt(6.0 / (4 * d_model)), 1.0 / np.sqrt(d_model)
    out = []
    for _ in range(n_layers):
        W_q, W_k, W_v = (rng.uniform(-b_in, b_in, (d_model, d_model)) for _ in range(3))
        out.append(LayerParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=rng.uniform(-b_out, b_out, (d_model, d_model))))
    return tuple(out)


def run_random(tokens: list[str], d_model: int, n_heads: int, seed: int) -> RandomResult:
    """Run the post-LN block of :mod:`visattn.designed` with random weights (ValueError if H ∤ D)."""
    visattn.check_heads(d_model, n_heads)
    T = len(tokens)
    E = visattn.seeded_embedding(tokens, d_model, seed)                        # (T, D)
    P = visattn.sinusoidal_encoding(T, d_model + d_model % 2)[:, :d_model]    # (T, D); an odd D drops the last cos
    X = E + P
    params = random_params(d_model, seed)
    traces, x = [], X
    for p in params:
        mha = visattn.multi_head_attention(x, p.W_q, p.W_k, p.W_v, p.W_o, n_heads)
        residual = x + mha.output                                             # (T, D)
        Z = visattn.layer_norm(residual)                                      # (T, D)
        traces.append(LayerTrace(X_in=x, mha=mha, residual=residual, Z=Z))
        x = Z
    return RandomResult(tokens=list(tokens), head_names=tuple(str(h + 1) for h in range(n_heads)), embedding=E,
                        positions=P, X=X, params=params, layers=tuple(traces),
                        weights=np.stack([tr.mha.weights for tr in traces]))


@st.cache_data(max_entries=32, show_spinner=False)
def designed_run(tokens: tuple[str, ...]) -> designed.DesignedResult:
    return designed.run_tokens(list(tokens))


@st.cache_data(max_entries=32, show_spinner=False)
def random_run(tokens: tuple[str, ...], d_model: int, n_heads: int, seed: int) -> RandomResult:
    return run_random(list(tokens), d_model, n_heads, seed)
