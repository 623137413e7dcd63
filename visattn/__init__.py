"""visattn: the attention mechanism, computed step by step in NumPy, for the visattn app.

Axis letters in shapes: T tokens, D model width (d_model), H heads, Dh head width (D / H).
This package never imports streamlit; it works the same in a notebook.
"""

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
from .positional import sinusoidal_encoding
from .text import seeded_embedding, tokenize

__all__ = [
    "AttentionResult", "KERNELS", "KernelRegressionResult", "MultiHeadResult", "SelfAttentionTrace",
    "attention", "causal_mask", "check_heads", "fit_bandwidth", "layer_norm", "loo_error", "merge_heads",
    "multi_head_attention", "nadaraya_watson", "seeded_embedding", "self_attention", "sinusoidal_encoding",
    "softmax", "split_heads", "tokenize",
]
