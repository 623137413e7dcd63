"""The figures of the pages, for a notebook: any model's attention in one call each.

Attention comes as a NumPy array (L, H, T, T) (or one layer's (H, T, T)), or as what Hugging Face
``transformers`` returns with ``output_attentions=True``: a tuple of L tensors (batch, H, T, T).
Tensors are read by duck typing — ``detach()``, ``cpu()`` and ``numpy()`` when the object has them,
else ``__array__`` — so nothing here imports torch. See docs/notebook.md.

Layers and heads count from 0 in arguments and in titles alike, as Python indexes the array: "L3·H1"
is ``heads(attention, tokens, layer=3)``'s second cell and ``attentions(attention)[3, 1]``.

Axis letters: L layers, H heads, T tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .. import reading
from ..errors import InputError
from ..models.causal import AttentionMaps
from .lines import filtered_lines
from .matrices import head_grid

# What a notebook passes: an (L, H, T, T) or (H, T, T) array, or transformers' tuple of L (batch, H,
# T, T) tensors (anything with ``numpy()`` or ``__array__``; torch is never imported here).
Attention = ArrayLike | Sequence[Any]


def _to_numpy(x) -> np.ndarray:
    """One array or tensor as a NumPy array, without importing its library."""
    if hasattr(x, "detach"):
        x = x.detach()
    if "bfloat16" in str(getattr(x, "dtype", "")) and hasattr(x, "float"):
        x = x.float()  # NumPy has no bfloat16
    if hasattr(x, "cpu"):
        x = x.cpu()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    return np.asarray(x)


# transformers computes attention weights only in its eager implementation: under SDPA or
# FlashAttention ``outputs.attentions`` comes back None, empty, or a tuple of None
NO_WEIGHTS = (
    "no attention weights were given (None, or an empty tuple, or a tuple of None). transformers "
    "returns them only from its eager attention: load the model with "
    'attn_implementation="eager" and call it with output_attentions=True.'
)


def attentions(attention: Attention, batch: int = 0) -> np.ndarray:
    """(L, H, T, T) float32 from an (L, H, T, T) or (H, T, T) array, or from a tuple / list of L
    (batch, H, T, T) tensors (``batch`` picks the example)."""
    if attention is None:
        raise InputError("attn_layers", NO_WEIGHTS)
    if isinstance(attention, tuple | list):
        if not attention or any(a is None for a in attention):
            raise InputError("attn_layers", NO_WEIGHTS)
        layers = [_to_numpy(a) for a in attention]
        if any(a.ndim != 4 for a in layers):
            raise InputError(
                "attn_layers",
                "attention given as a sequence must hold one (batch, heads, T, T) tensor per "
                "layer, as transformers returns with output_attentions=True.",
            )
        if not 0 <= batch < layers[0].shape[0]:
            raise InputError(
                "too_large",
                f"batch={batch}; the tensors hold {layers[0].shape[0]} examples.",
                name="batch",
                value=batch,
                maximum=layers[0].shape[0] - 1,
            )
        w = np.stack([a[batch] for a in layers])  # L × (H, T, T) -> (L, H, T, T)
    else:
        w = _to_numpy(attention)
        if w.ndim == 3:
            w = w[None]  # (H, T, T) -> (1, H, T, T)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise InputError(
            "attn_shape",
            f"attention has shape {w.shape}; it must be (layers, heads, T, T).",
            shape=" × ".join(map(str, w.shape)),
            n=w.shape[-1] if w.ndim else 0,
        )
    return w.astype(np.float32, copy=False)


def _head_names(layer: int, n_heads: int) -> list[str]:
    """Titles numbered as the arguments: from 0."""
    return [f"L{layer}·H{h}" for h in range(n_heads)]


def _with_tokens(attention: Attention, tokens: Sequence[str]) -> np.ndarray:
    """(L, H, T, T) with one token per query row; else InputError saying both counts."""
    w = attentions(attention)
    if len(tokens) != w.shape[-1]:
        raise InputError(
            "attn_shape",
            f"attention has shape {w.shape} but there are {len(tokens)} tokens; pass the tokens "
            "of the same input (for transformers: tokenizer.convert_ids_to_tokens(input_ids[0])).",
            shape=" × ".join(map(str, w.shape)),
            n=len(tokens),
        )
    return w


def _layer_with_tokens(
    attention: Attention, tokens: Sequence[str], layer: int
) -> tuple[int, np.ndarray]:
    """(layer from 0, its (H, T, T) weights): a decoder's AttentionMaps computes that layer only,
    any other attention as :func:`_with_tokens`."""
    if not isinstance(attention, AttentionMaps):
        w = _with_tokens(attention, tokens)
        layer = range(len(w))[layer]
        return layer, w[layer]
    if len(tokens) != attention.shape[-1] or attention.shape[-1] != attention.shape[-2]:
        raise InputError(
            "attn_shape",
            f"attention has shape {attention.shape} but there are {len(tokens)} tokens; pass the "
            "tokens of the same run (result.tokens).",
            shape=" × ".join(map(str, attention.shape)),
            n=len(tokens),
        )
    layer = range(attention.shape[0])[layer]
    return layer, attention[layer]


def heads(
    attention: Attention, tokens: Sequence[str], layer: int | None = None, **kw: Any
) -> go.Figure:
    """Every head on one 0…1 scale: the layer × head grid, or one layer's heads (``layer``, from
    0) in a row. ``attention`` may be ``outputs.attentions`` of transformers as it is, as
    bertviz's ``head_view(attention, tokens)`` takes it."""
    if layer is not None:
        layer, one = _layer_with_tokens(attention, tokens, layer)  # -1 → L − 1, for the titles
        titles = _head_names(layer, one.shape[0])
        return head_grid(one[None], tokens, tokens, cell_titles=titles, **kw)
    w = _with_tokens(attention, tokens)
    L, H = w.shape[:2]
    titles = [name for l in range(L) for name in _head_names(l, H)]
    return head_grid(w, tokens, tokens, cell_titles=titles, **{"cell_px": 120, **kw})


def lines(
    attention: Attention,
    tokens: Sequence[str],
    layer: int,
    heads: Sequence[int] | None = None,
    threshold: float = 0.02,
    top_k: int | None = None,
) -> go.Figure:
    """One layer's heads (``heads``: some of them) as lines from query tokens (left) to key tokens
    (right), opacity = weight; edges under ``threshold`` dropped, ``top_k`` per query kept."""
    layer, w = _layer_with_tokens(attention, tokens, layer)  # (H, T, T)
    names = _head_names(layer, w.shape[0])
    return filtered_lines(
        w, list(tokens), threshold=threshold, top_k=top_k, head_names=names, visible=heads
    )


def rollout(attention: Attention, tokens: Sequence[str], residual: float = 0.5) -> go.Figure:
    """Attention rollout (Abnar & Zuidema 2020) after each layer: how much of each output token
    comes from each input token."""
    w = _with_tokens(attention, tokens)
    rolled = reading.attention_rollout(w, residual=residual)  # (L, T, T)
    titles = [f"≤ L{l}" for l in range(len(rolled))]
    return head_grid(rolled[None], tokens, tokens, cell_titles=titles, value_name="share")


def norm_weighted(
    attention: Attention, norms: ArrayLike, tokens: Sequence[str], layer: int
) -> go.Figure:
    """One layer's heads as α_ij·‖v_j W_O^h‖ (Kobayashi et al. 2020), each row rescaled to sum 1:
    what each key token actually adds to the query, not only how much it is looked at. ``norms``
    (L, H, T): :func:`visattn.models.value_norms`."""
    layer, w = _layer_with_tokens(attention, tokens, layer)  # (H, T, T)
    weighted = reading.norm_weighted(w, np.asarray(norms)[layer], normalise=True)
    titles = _head_names(layer, w.shape[0])
    return head_grid(weighted[None], tokens, tokens, cell_titles=titles, value_name="share")
