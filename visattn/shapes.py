"""The shapes of multi-head attention, and its parameter count, for any size — without allocating a
matrix.

Article 000 counts GPT-3's attention: 50 tokens of d_model = 12288, 96 heads, so each head works in
12288 / 96 = 128 dimensions; W_q, W_k, W_v are 96 blocks of 12288×128 side by side (one 12288×12288
matrix each) and W_o is 12288×12288 again. This module does that arithmetic with Python ints, so the
numbers are exact at any size and nothing is allocated.

Axis letters: T tokens, D model width (d_model), H heads, Dh head width (D / H).

One post-LN attention block, as :mod:`visattn.models.block` runs it (no biases, LayerNorm with γ =
1, β = 0)::

    X (T, D) ─► Q, K, V = X W_q, X W_k, X W_v (T, D) ─► split: Q_h, K_h, V_h (T, Dh), h = 1 … H
      ─► A_h = softmax(Q_h K_hᵀ / √Dh) (T, T) ─► head_h = A_h V_h (T, Dh) ─► concat (T, D) ─► · W_o
      (T, D) ─► residual X + MHA(X) (T, D) ─► Z = LayerNorm(residual) (T, D)
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from .attention import check_heads
from .checks import positive_int
from .errors import InputError

GPT3 = {
    "T": 50,
    "d_model": 12288,
    "n_heads": 96,
}  # article 000: 50 operators, 12288 attributes, 96 versions
GPT3_LAYERS = 96  # GPT-3 175B stacks 96 such blocks (Brown et al. 2020, table 2.1)
MAX_SHAPE_TOKENS = 10**7  # limits only keep the inputs sane; nothing here grows with them
MAX_D_MODEL = 10**7


@dataclass(frozen=True)
class Matrix:
    """One array of the block: its name, its shape and whether it is a learned parameter."""

    name: str  # "W_q", "Q_h", …
    shape: tuple[int, ...]  # Python ints
    step: str  # which step of the pipeline it belongs to: input, project, split, attend, mix, norm
    learned: bool = False  # a parameter (counted in the parameter count) rather than an activation

    @property
    def size(self) -> int:
        """Number of entries (an exact Python int)."""
        return prod(self.shape)


@dataclass(frozen=True)
class MultiHeadShapes:
    T: int
    d_model: int
    n_heads: int
    d_head: int  # Dh = d_model / n_heads
    matrices: tuple[Matrix, ...]  # in pipeline order
    params: dict[str, int]  # {"W_q": D², "W_k": D², "W_v": D², "W_o": D²}
    params_per_layer: int  # 4·D² (no biases)
    params_per_head: int  # 4·D·Dh: columns of W_q, W_k, W_v and rows of W_o that one head owns
    bias_params: int  # 4·D, if the four projections had biases (they do not here)
    layer_norm_params: int  # 2·D, if LayerNorm had γ and β (it does not here)
    weight_entries: int  # H·T·T attention weights, the part that grows with T²

    def matrix(self, name: str) -> Matrix:
        for m in self.matrices:
            if m.name == name:
                return m
        names = [m.name for m in self.matrices]
        raise InputError(
            "shape_matrix",
            f"No matrix called {name!r}; the matrices are {names}.",
            matrix=str(name),
            matrices=", ".join(names),
        )


def multi_head_shapes(T: int, d_model: int, n_heads: int) -> MultiHeadShapes:
    """Every matrix's shape in one multi-head attention block, and the parameter counts.

    An InputError ("heads_divide" from :func:`visattn.check_heads`) when n_heads does not divide
    d_model, or from :func:`visattn.checks.positive_int` when a size is not a whole number ≥ 1."""
    T = positive_int(T, "T (tokens)", maximum=MAX_SHAPE_TOKENS)
    D = positive_int(d_model, "d_model", maximum=MAX_D_MODEL)
    H = positive_int(n_heads, "n_heads", maximum=D)
    Dh = check_heads(D, H)
    matrices = (
        Matrix("X", (T, D), "input"),
        Matrix("W_q", (D, D), "project", learned=True),
        Matrix("W_k", (D, D), "project", learned=True),
        Matrix("W_v", (D, D), "project", learned=True),
        Matrix("W_q_h", (D, Dh), "split"),  # one head's block of W_q's columns (a view, not extra)
        Matrix("Q", (T, D), "project"),
        Matrix("K", (T, D), "project"),
        Matrix("V", (T, D), "project"),
        Matrix("Q_h", (T, Dh), "split"),
        Matrix("K_h", (T, Dh), "split"),
        Matrix("V_h", (T, Dh), "split"),
        Matrix("A_h", (T, T), "attend"),  # softmax(Q_h K_hᵀ / √Dh)
        Matrix("A", (H, T, T), "attend"),  # all heads' weights
        Matrix("head_h", (T, Dh), "attend"),  # A_h V_h
        Matrix("concat", (T, D), "mix"),  # H blocks of (T, Dh) side by side
        Matrix("W_o", (D, D), "mix", learned=True),
        Matrix("MHA", (T, D), "mix"),  # concat W_o
        Matrix("residual", (T, D), "norm"),  # X + MHA(X)
        Matrix("Z", (T, D), "norm"),  # LayerNorm(residual)
    )
    params = {m.name: m.size for m in matrices if m.learned}
    return MultiHeadShapes(
        T=T,
        d_model=D,
        n_heads=H,
        d_head=Dh,
        matrices=matrices,
        params=params,
        params_per_layer=sum(params.values()),
        params_per_head=4 * D * Dh,
        bias_params=4 * D,
        layer_norm_params=2 * D,
        weight_entries=H * T * T,
    )


def gpt3_shapes() -> MultiHeadShapes:
    """Article 000's numbers: T = 50, d_model = 12288, 96 heads of 128."""
    return multi_head_shapes(**GPT3)
