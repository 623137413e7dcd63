"""The designed model's pipeline with untrained, seeded weights: what a head looks like before
training.

The input is a seeded embedding (the same word always gets the same vector) plus the sinusoidal
encoding of the same width; the layers are :func:`visattn.models.block.run_layers`, the same post-LN
block the designed transformer runs. The result has the designed result's face (``tokens``,
``head_names``, ``weights`` (L, H, T, T), ``layers``, ``X``, ``positions``) plus ``params``, so a
page draws either one.

Axis letters: T tokens, D model width (d_model), H heads, L layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..attention import check_heads
from ..positional_encoding import sinusoidal_encoding
from ..text import seeded_embedding
from .block import LayerParams, LayerTrace, run_layers, stack_weights
from .designed import N_LAYERS  # as many layers as the designed model


@dataclass(frozen=True)
class RandomResult:
    """A run of the seeded random transformer: X = seeded embedding + sinusoids, then L post-LN
    blocks."""

    tokens: list[str]
    head_names: tuple[str, ...]  # (H,) "1", "2", … (no head has a meaning)
    embedding: np.ndarray  # (T, D) seeded_embedding
    positions: np.ndarray  # (T, D) sinusoidal encoding, added to the embedding
    X: np.ndarray  # (T, D) embedding + positions
    params: tuple[LayerParams, ...]  # (L,) W_q, W_k, W_v, W_o, each (D, D)
    layers: tuple[LayerTrace, ...]  # (L,)
    weights: np.ndarray  # (L, H, T, T)


def random_params(d_model: int, seed: int, n_layers: int = N_LAYERS) -> tuple[LayerParams, ...]:
    """Seeded untrained weights, drawn as PyTorch's ``nn.MultiheadAttention`` initialises them.

    W_q, W_k, W_v: Xavier-uniform over the stacked (3D, D) in-projection, U(±√(6 / 4D)); W_o: the
    default of ``nn.Linear``, U(±1/√D). Scores then have a spread of about 1, so the heads come out
    diffuse."""
    rng = np.random.default_rng(seed)
    b_in, b_out = np.sqrt(6.0 / (4 * d_model)), 1.0 / np.sqrt(d_model)
    out = []
    for _ in range(n_layers):
        W_q, W_k, W_v = (rng.uniform(-b_in, b_in, (d_model, d_model)) for _ in range(3))
        out.append(
            LayerParams(
                W_q=W_q, W_k=W_k, W_v=W_v, W_o=rng.uniform(-b_out, b_out, (d_model, d_model))
            )
        )
    return tuple(out)


def run_random(tokens: list[str], d_model: int, n_heads: int, seed: int) -> RandomResult:
    """Run the post-LN block with random weights (an InputError "heads_divide" if H ∤ D)."""
    check_heads(d_model, n_heads)
    T = len(tokens)
    E = seeded_embedding(tokens, d_model, seed)  # (T, D)
    P = sinusoidal_encoding(T, d_model + d_model % 2)[
        :, :d_model
    ]  # (T, D); an odd D drops the last cos
    X = E + P
    params = random_params(d_model, seed)
    traces = run_layers(X, params, n_heads)
    return RandomResult(
        tokens=list(tokens),
        head_names=tuple(str(h + 1) for h in range(n_heads)),
        embedding=E,
        positions=P,
        X=X,
        params=params,
        layers=traces,
        weights=stack_weights(traces),
    )
