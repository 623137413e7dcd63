"""visattn: the attention mechanism, computed step by step in NumPy, for the visattn app.

Axis letters in shapes: T tokens, D model width (d_model), H heads, Dh head width (D / H).
This package never imports streamlit; it works the same in a notebook.

Modules: ``attention`` (the mechanism), ``activations`` (softmax, LayerNorm), ``kernel_regression`` and
``scoring`` (attention as Nadaraya–Watson; score functions), ``positional`` (sinusoids, RoPE, ALiBi),
``scaling`` (why √d_k), ``designed`` (a hand-built transformer with readable heads), ``shapes`` (matrix
shapes and parameter counts), ``pretrained`` and ``token_views`` (MiniLM in NumPy, loaded on demand),
``text`` (tokens and seeded embeddings), ``figures`` (Plotly builders).
"""

from . import positional, scaling, scoring, shapes
from .activations import layer_norm, softmax
from .attention import (
    AttentionResult,
    MultiHeadResult,
    SelfAttentionTrace,
    attention,
    causal_mask,
    check_heads,
    merge_heads,
    multi_head_attention,
    self_attention,
    split_heads,
)
from .kernel_regression import KERNELS, KernelRegressionResult, fit_bandwidth, loo_error, nadaraya_watson
from .models import designed
from .positional import alibi_bias, alibi_slopes, rotary, rotation_matrix, sinusoidal_encoding, wavelengths
from .text import seeded_embedding, tokenize

__all__ = [
    "AttentionResult", "KERNELS", "KernelRegressionResult", "MultiHeadResult", "SelfAttentionTrace",
    "alibi_bias", "alibi_slopes", "attention", "causal_mask", "check_heads", "designed", "fit_bandwidth",
    "layer_norm", "loo_error", "merge_heads", "multi_head_attention", "nadaraya_watson", "positional",
    "rotary", "rotation_matrix", "scaling", "scoring", "seeded_embedding", "self_attention", "shapes",
    "sinusoidal_encoding", "softmax", "split_heads", "tokenize", "wavelengths",
]
