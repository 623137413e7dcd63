"""Positional encodings: the sinusoidal table of "Attention Is All You Need"."""

from __future__ import annotations

import numpy as np

from .checks import positive_float, positive_int

MAX_POSITIONS = 4096
MAX_D_MODEL = 2048


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """(n_positions, d_model) table with PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(same)."""
    n_positions = positive_int(n_positions, "n_positions", maximum=MAX_POSITIONS)
    d_model = positive_int(d_model, "d_model", maximum=MAX_D_MODEL)
    if d_model % 2:
        raise ValueError(f"d_model={d_model} is odd; the table pairs a sine with a cosine, so d_model must be even.")
    base = positive_float(base, "base")
    pos = np.arange(n_positions)[:, None]                     # (P, 1)
    two_i = np.arange(0, d_model, 2)[None, :]                 # (1, D/2)
    angle = pos / base ** (two_i / d_model)                   # (P, D/2)
    pe = np.empty((n_positions, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
