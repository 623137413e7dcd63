"""Reading attention in a trained model: heads combined, rollout and flow, value-norm weighting, two
inputs.

Attention weights alone say where a query looks, not what it takes or how information travels
through the layers. This module holds the standard ways to read them (all NumPy, no streamlit):

* :func:`aggregate_heads` — one map for all heads of a layer: their mean, or their element-wise max
  with rows renormalised to sum 1 (Inseq's mean/max aggregators; exBERT averages selected heads).
* :func:`attention_rollout` and :func:`attention_flow` — Abnar & Zuidema (2020), "Quantifying
  Attention Flow in Transformers": the residual connection is modelled as identity attention, Ã_l =
  residual·I + (1 − residual)·fuse(A_l) with rows renormalised; rollout multiplies these matrices up
  the layers, flow takes the maximum flow through the layered graph they define (SciPy's csgraph).
* :func:`value_norms` and :func:`norm_weighted` — Kobayashi et al. (2020), "Attention is not only a
  weight": what token j adds to the output through head h is α_ij·f_h(x_j) with f_h(x) = (x W_V^h +
  b_V^h) W_O^h, so α_ij·‖f_h(x_j)‖ measures how much of token j arrives, not only how much is looked
  at. A head "parked" on [CLS] or [SEP] gives them large weights but (often) small vectors: it moves
  little information. :func:`encoder_value_norms` and :func:`designed_value_norms` compute them for
  the app's two models.
* :func:`qk_projection` — one head's queries and keys in one 2-D PCA plane (NumPy's SVD), as
  AttentionViz.
* :func:`reading_weights` — the pages' one selector (weights | weights × ‖value‖ | mean | max |
  rollout | flow) as a 4-D array for the same head grid, heatmap and lines.
* :func:`align_tokens` — do two sentences' tokens line up position by position (so that a difference
  of their attention maps means something)?
* :func:`filter_edges` — the lines' edge threshold and top-k edges per query.

Axis letters: L layers, H heads, T tokens (Tq queries, Tk keys), D model width, Dh head width.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .checks import as_array, positive_int
from .errors import InputError

if TYPE_CHECKING:  # annotations only: importing reading must not load the models
    from .models.designed import DesignedConfig, DesignedResult
    from .models.encoder import BertEncoder, BertResult
    from .models.random import RandomResult

HOWS = ("mean", "max")  # head aggregations (and rollout/flow head fusions)
# flow solves T² max-flow problems on L·T² edges: its time grows steeply with T, so it stops here
# (timings: benchmarks/README.md, bench_reading)
FLOW_MAX_TOKENS = 40
FLOW_SCALE = 2**30  # flow's capacities as integers: Ã·2³⁰ rounded (int32, rows of Ã sum to 1)
ROW_TOLERANCE = 1e-3  # rows of attention weights must sum to 1 within this


# ── checks ───────────────────────────────────────────────────────────────────────────────────────
def _choice(value, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InputError(
            "reading_choice",
            f"{name}={value!r} is not one of {', '.join(choices)}.",
            name=name,
            value=str(value)[:20],
            choices=", ".join(choices),
        )
    return value


def _share(value, name: str) -> float:
    """A number in [0, 1] (the residual share of rollout and flow)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(
            "not_number",
            f"{name} must be a number, got {value!r}.",
            name=name,
            value=str(value)[:20],
        ) from None
    if not 0.0 <= v <= 1.0:  # also refuses NaN
        raise InputError(
            "reading_share", f"{name}={v:g} must lie between 0 and 1.", name=name, value=f"{v:g}"
        )
    return v


def _weights(
    weights: ArrayLike,
    name: str = "weights",
    *,
    ndim: int | None = None,
    min_ndim: int = 2,
    square: bool = True,
    rows_sum_to_one: bool = False,
    sinks: bool = False,
) -> np.ndarray:
    """``weights`` as a float64 array of non-negative entries, (…, T, T) when ``square``: the
    caller's own array when it already is one (the functions here never write into it).
    ``rows_sum_to_one``: each row a softmax's, summing to 1 — at most 1 with ``sinks`` (a model
    with learned attention sinks, gpt-oss: the rest of a row's weight went to its sink)."""
    w = as_array(weights, name, ndim).astype(np.float64, copy=False)
    if w.ndim < min_ndim:
        raise InputError(
            "reading_shape",
            f"{name} has shape {w.shape}; it needs at least {min_ndim} axes (…, queries, keys).",
            name=name,
            shape=" × ".join(map(str, w.shape)),
            ndim=min_ndim,
        )
    if square and w.shape[-1] != w.shape[-2]:
        raise InputError(
            "reading_square",
            f"{name} has shape {w.shape}; self-attention over one text needs as many "
            "queries as keys (the last two axes equal).",
            name=name,
            shape=" × ".join(map(str, w.shape)),
        )
    if (w < 0).any():
        raise InputError(
            "reading_negative",
            f"{name} has a negative entry ({w.min():.3g}); attention weights are never negative.",
            name=name,
            value=f"{w.min():.3g}",
        )
    if rows_sum_to_one:
        sums = w.sum(axis=-1)
        off = sums - 1.0 if sinks else np.abs(sums - 1.0)  # with sinks: only above 1 is wrong
        if float(off.max()) > ROW_TOLERANCE:
            raise InputError(
                "reading_rows",
                f"a row of {name} sums to {sums.flat[off.argmax()]:.4g}, not 1; "
                "pass softmax attention weights.",
                name=name,
                value=f"{sums.flat[off.argmax()]:.4g}",
            )
    return w


def _normalise_rows(w: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row stays zero."""
    sums = w.sum(axis=-1, keepdims=True)
    return np.divide(w, sums, out=np.zeros_like(w), where=sums > 0)


# ── heads combined ───────────────────────────────────────────────────────────────────────────────
def aggregate_heads(weights: ArrayLike, how: str = "mean") -> np.ndarray:
    """All heads in one map: (…, H, Tq, Tk) → (…, Tq, Tk), float64.

    ``how="mean"``: the heads' average (rows of softmax weights keep summing to 1). ``how="max"``:
    each query–key pair takes its strongest head, then each row is **renormalised to sum 1** (a row
    of maxima sums to more than 1; renormalising keeps the result a distribution a heatmap reads
    like any head's). Works on raw (e.g. norm-weighted) maps too: they need only be non-negative;
    "max" then returns rows that sum to 1 and "mean" keeps their scale."""
    how = _choice(how, "how", HOWS)
    w = _weights(weights, min_ndim=3, square=False)
    if how == "mean":
        return w.mean(axis=-3)
    return _normalise_rows(w.max(axis=-3))


# ── rollout and flow ─────────────────────────────────────────────────────────────────────────────
def residual_attention(
    weights: ArrayLike, *, residual: float = 0.5, head_fusion: str = "mean", sinks: bool = False
) -> np.ndarray:
    """Ã_l = residual·I + (1 − residual)·fuse(A_l), rows renormalised: (L, H, T, T) → (L, T, T).

    The residual connection x + Attn(x) lets each token keep ``residual`` of itself; ``head_fusion``
    ("mean" or "max", as :func:`aggregate_heads`) merges the heads first. Rollout and flow both
    start here. ``sinks``: rows may sum to less than 1 (learned sinks); the renormalisation then
    leaves the sinks' share out, as if it had gone to the tokens in proportion."""
    r = _share(residual, "residual")
    head_fusion = _choice(head_fusion, "head_fusion", HOWS)
    w = _weights(weights, ndim=4, rows_sum_to_one=True, sinks=sinks)
    fused = aggregate_heads(w, head_fusion)  # (L, T, T)
    eye = np.eye(w.shape[-1])
    return _normalise_rows(r * eye + (1.0 - r) * fused)


def attention_rollout(
    weights: ArrayLike, *, residual: float = 0.5, head_fusion: str = "mean", sinks: bool = False
) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): (L, H, T, T) → (L, T, T), rows sum to 1.

    With Ã_l from :func:`residual_attention`: R_0 = Ã_0 and R_l = Ã_l · R_{l−1}. Entry l is the
    rollout up to and including layer l: row i says how much of output token i (after layer l) comes
    from each input token, if attention mixed tokens linearly and nothing else did."""
    a = residual_attention(weights, residual=residual, head_fusion=head_fusion, sinks=sinks)
    out = np.empty_like(a)  # (L, T, T)
    out[0] = a[0]
    for layer in range(1, len(a)):
        out[layer] = a[layer] @ out[layer - 1]  # (T, T) x (T, T) -> (T, T)
    return out


def attention_flow(
    weights: ArrayLike,
    *,
    residual: float = 0.5,
    head_fusion: str = "mean",
    max_tokens: int = FLOW_MAX_TOKENS,
    progress: Callable[[int, int], object] | None = None,
    sinks: bool = False,
) -> np.ndarray:
    """Attention flow (Abnar & Zuidema 2020): (L, H, T, T) → (T, T), each row normalised to sum 1.

    The layered graph has a node (l, i) for token i after layer l (l = 0: the inputs, l = L: the
    last layer's outputs) and an edge (l+1, i) → (l, j) of capacity Ã_l[i, j]
    (:func:`residual_attention`). Entry [i, j] is the maximum flow from (L, i) to (0, j); each row
    is then divided by its sum. Unlike rollout, flow lets a path carry only what its narrowest edge
    allows.

    Solved by SciPy's ``scipy.sparse.csgraph.maximum_flow`` (Dinic's algorithm, in C) on one graph
    built once: each (i, j) only names another source and sink. SciPy wants integer capacities
    (int32), so each Ã_l[i, j] is scaled by :data:`FLOW_SCALE` = 2³⁰ and rounded: a capacity moves
    by at most 2⁻³¹, a cut by at most (its edges)·2⁻³¹, so each entry before the row normalisation
    is within L·T²·2⁻³¹ of the exact maximum flow (≤ 1.6·10⁻⁶ at 24 tokens; ~10⁻¹⁰ on MiniLM's
    weights, where few edges are in a minimum cut). Rows of Ã sum to 1, so no flow exceeds 2³⁰ + T
    and int32 never overflows.

    It solves T² max-flow problems on graphs of L·T² edges, so texts longer than ``max_tokens``
    (default :data:`FLOW_MAX_TOKENS`) raise InputError("flow_tokens"). ``progress(done, total)``,
    when given, is called after each output token's row (done = 1 … T, total = T)."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    limit = positive_int(max_tokens, "max_tokens")
    w = as_array(weights, "weights", 4)
    T = w.shape[-1]
    if T > limit:
        raise InputError(
            "flow_tokens",
            f"attention flow of {T} tokens means {T * T} maximum-flow problems; it is "
            f"limited to {limit} tokens. Shorten the text, or use attention_rollout.",
            n=T,
            limit=limit,
        )
    a = residual_attention(w, residual=residual, head_fusion=head_fusion, sinks=sinks)
    L = len(a)  # a: (L, T, T)
    if L == 1:  # one layer: the only path from (1, i) to (0, j) is the edge itself
        if progress is not None:
            progress(T, T)
        return _normalise_rows(a[0])
    cap = np.rint(a * FLOW_SCALE).astype(np.int32)  # (L, T, T) integer capacities
    layer, i, j = np.nonzero(cap)
    n = (L + 1) * T  # node (l, k) is l·T + k
    graph = csr_array((cap[layer, i, j], ((layer + 1) * T + i, layer * T + j)), shape=(n, n))
    flow = np.zeros((T, T))
    for src in range(T):
        for dst in range(T):
            flow[src, dst] = maximum_flow(graph, L * T + src, dst, method="dinic").flow_value
        if progress is not None:
            progress(src + 1, T)
    return _normalise_rows(flow / FLOW_SCALE)


# ── one selector for every reading ─────────────────────────────────────────────────────────────
READINGS = ("weights", "norm_weighted", "mean", "max", "rollout", "flow")
PER_HEAD = (
    "weights",
    "norm_weighted",
)  # readings with one map per head (mean, max, rollout: one per layer; flow: one)
THROUGH_LAYERS = ("rollout", "flow")  # readings: rows are output tokens, columns input tokens


@dataclass(frozen=True)
class Readings:
    """One reading of one text's attention, as the pages keep it: ``text`` names the input it
    belongs to (a page checks it, and ``reading``, before drawing a result kept from an earlier
    run), ``w`` is :func:`reading_weights`'s 4-D array."""

    text: str
    reading: str
    w: np.ndarray  # (L, H, T, T) per head; (L, 1, T, T) mean, max, rollout; (1, 1, T, T) flow


def reading_weights(
    weights: ArrayLike,
    reading: str = "weights",
    *,
    norms: ArrayLike | None = None,
    residual: float = 0.5,
    head_fusion: str = "mean",
    max_tokens: int = FLOW_MAX_TOKENS,
    progress: Callable[[int, int], object] | None = None,
    dtype: type = np.float64,
    sinks: bool = False,
) -> np.ndarray:
    """The pages' one selector: (L, H, T, T) weights → a 4-D (rows, cols, T, T) array for the same
    head grid, heatmap and lines, every row summing to 1.

    ``"weights"`` (L, H, T, T) as given; ``"norm_weighted"`` (L, H, T, T) α_ij·‖f_h(x_j)‖
    row-normalised (needs ``norms`` (L, H, T)); ``"mean"`` / ``"max"`` (L, 1, T, T)
    :func:`aggregate_heads`; ``"rollout"`` (L, 1, T, T) :func:`attention_rollout` (entry l: up to
    layer l); ``"flow"`` (1, 1, T, T) :func:`attention_flow` (refused above ``max_tokens``;
    ``progress`` as there). ``sinks``: the model has learned attention sinks (gpt-oss), so a
    row of ``weights`` sums to at most 1 (the weights reading shows it so; the others renormalise).

    The readings other than flow are computed one layer at a time, in float64, and stored as
    ``dtype``: at 512 tokens a float64 copy of MiniLM's whole (6, 12, T, T) run is 151 MB, one
    layer's 25 MB, so a page's float32 reading costs its result and one layer (the same numbers as
    the whole-array functions: each layer's arithmetic is the same)."""
    reading = _choice(reading, "view", READINGS)  # "view": errors.name_view, the users' word
    w = as_array(weights, "weights", 4)
    if reading == "weights":
        return np.array(_weights(w, ndim=4, rows_sum_to_one=True, sinks=sinks), dtype=dtype)
    if reading == "flow":
        flow = attention_flow(
            w,
            residual=residual,
            head_fusion=head_fusion,
            max_tokens=max_tokens,
            progress=progress,
            sinks=sinks,
        )
        return flow[None, None].astype(dtype, copy=False)  # (1, 1, T, T)
    if reading == "norm_weighted":
        if norms is None:
            raise InputError(
                "reading_norms", "reading='norm_weighted' needs the value norms (L, H, T)."
            )
        norms = _norms(norms, w.shape)  # (L, H, T)
    L, H, T, _ = w.shape
    out = np.empty((L, H if reading == "norm_weighted" else 1, T, T), dtype=dtype)
    rolled = None  # rollout so far: (T, T), float64
    for layer in range(L):
        one = _weights(w[layer], ndim=3, rows_sum_to_one=True, sinks=sinks)  # (H, T, T)
        if reading == "norm_weighted":
            out[layer] = norm_weighted(one, norms[layer], normalise=True)
        elif reading in HOWS:
            out[layer, 0] = aggregate_heads(one, reading)
        else:  # rollout: R_0 = Ã_0, R_l = Ã_l · R_{l−1}
            step = residual_attention(
                one[None], residual=residual, head_fusion=head_fusion, sinks=sinks
            )[0]
            rolled = step if rolled is None else step @ rolled  # (T, T) x (T, T) -> (T, T)
            out[layer, 0] = rolled
    return out


# ── value norms (Kobayashi et al. 2020) ──────────────────────────────────────────────────────────
def value_norms(
    X: ArrayLike, W_V: ArrayLike, b_V: ArrayLike | None, W_O: ArrayLike, n_heads: int
) -> np.ndarray:
    """‖f_h(x_j)‖ = ‖(x_j W_V^h + b_V^h) W_O^h‖ for every head h and token j: (H, T), float64.

    X (T, D) is the layer's input; W_V (D, H·Dh) and b_V (H·Dh,) (None: no bias) give the values,
    head h owning columns h·Dh … (h+1)·Dh; W_O (H·Dh, D) maps them back, head h owning the same
    rows. b_O is left out (it is added once, not per token). α_ij·‖f_h(x_j)‖ is then the length of
    what token j adds to query i."""
    H = positive_int(n_heads, "n_heads")
    X = as_array(X, "X", 2).astype(np.float64)
    W_V = as_array(W_V, "W_V", 2).astype(np.float64)
    W_O = as_array(W_O, "W_O", 2).astype(np.float64)
    T, D = X.shape
    width = W_V.shape[1]
    if W_V.shape[0] != D or width % H or W_O.shape[0] != width:
        raise InputError(
            "value_shapes",
            f"W_V {W_V.shape} and W_O {W_O.shape} do not fit X {X.shape} and {H} heads: "
            f"W_V must be (D, H·Dh) with D = {D} and W_O (H·Dh, D_out).",
            x=" × ".join(map(str, X.shape)),
            w_v=" × ".join(map(str, W_V.shape)),
            w_o=" × ".join(map(str, W_O.shape)),
            heads=H,
        )
    V = X @ W_V  # (T, D) x (D, H·Dh) -> (T, H·Dh)
    if b_V is not None:
        b = as_array(b_V, "b_V", 1).astype(np.float64)
        if b.shape != (width,):
            raise InputError(
                "value_shapes",
                f"b_V has shape {b.shape}; it must be ({width},) like W_V's columns.",
                x=" × ".join(map(str, X.shape)),
                w_v=" × ".join(map(str, W_V.shape)),
                w_o=" × ".join(map(str, W_O.shape)),
                heads=H,
            )
        V = V + b
    Dh = width // H
    Vh = V.reshape(T, H, Dh).transpose(1, 0, 2)  # (H, T, Dh)
    Oh = W_O.reshape(H, Dh, W_O.shape[1])  # (H, Dh, D_out)
    return np.linalg.norm(Vh @ Oh, axis=-1)  # (H, T, Dh) x (H, Dh, D_out) -> (H, T)


def _norms(norms: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """``norms`` as float64, checked against weights of ``shape`` (…, H, T, T): (…, H, T), none
    negative."""
    n = as_array(norms, "norms").astype(np.float64)
    want = shape[:-2] + shape[-1:]
    if n.shape != want:
        raise InputError(
            "norms_shape",
            f"norms has shape {n.shape}; for weights of shape {shape} it must be {want} (one "
            "norm per head and key).",
            shape=" × ".join(map(str, n.shape)),
            want=" × ".join(map(str, want)),
        )
    if (n < 0).any():
        raise InputError(
            "reading_negative",
            "norms has a negative entry; a norm is never negative.",
            name="norms",
            value=f"{n.min():.3g}",
        )
    return n


def norm_weighted(weights: ArrayLike, norms: ArrayLike, normalise: bool = False) -> np.ndarray:
    """α_ij·‖f(x_j)‖: (…, H, T, T) weights times (…, H, T) value norms over the key axis, float64.

    ``normalise=True`` divides each row by its sum, so rows sum to 1 again and read as "share of
    what arrives" (a row of zeros stays zero)."""
    w = _weights(weights, min_ndim=2, square=False)
    n = _norms(norms, w.shape)
    out = w * n[..., None, :]
    return _normalise_rows(out) if normalise else out


def key_share(weights: ArrayLike, keys: Sequence[int]) -> np.ndarray:
    """The share of each row that goes to ``keys`` (e.g. [CLS] and [SEP]), averaged over the
    queries: (…,).

    ``weights`` (…, Tq, Tk) non-negative; rows are normalised first (so raw norm-weighted maps
    compare with weights); an all-zero row counts as 0. A decoder's
    :class:`~visattn.models.causal.AttentionMaps` is read a block of rows at a time."""
    from .models.causal import AttentionMaps  # here: visattn.models imports this module

    if isinstance(weights, AttentionMaps) and all(-weights.shape[-1] <= k for k in keys):
        return weights.key_share([int(k) % weights.shape[-1] for k in keys])
    w = _normalise_rows(_weights(weights, square=False))
    Tk = w.shape[-1]
    idx = sorted({int(k) for k in keys})
    if any(not -Tk <= k < Tk for k in idx):
        raise InputError(
            "reading_index",
            f"keys {idx} must lie in 0 … {Tk - 1}.",
            name="keys",
            value=str(idx)[:20],
            last=Tk - 1,
        )
    return w[..., idx].sum(axis=-1).mean(axis=-1)


def block_value_norms(layers: Sequence, params: Sequence, n_heads: int) -> np.ndarray:
    """(L, H, T) value norms of a post-LN block model (:mod:`visattn.models.block`): each trace's
    ``X_in`` with its layer's ``W_v`` and ``W_o`` (no biases). For the random model: ``(r.layers,
    r.params, H)``."""
    if len(layers) != len(params):
        raise InputError(
            "value_layers",
            f"{len(layers)} layer traces but {len(params)} layers of parameters.",
            traces=len(layers),
            params=len(params),
        )
    return np.stack(
        [
            value_norms(tr.X_in, p.W_v, None, p.W_o, n_heads)
            for tr, p in zip(layers, params, strict=True)
        ]
    )


def designed_value_norms(
    result: DesignedResult, config: DesignedConfig | None = None
) -> np.ndarray:
    """(L, H, T) value norms of a :func:`visattn.models.designed.run` result (its ``config``'s
    weights)."""
    from .models import designed

    config = designed.DESIGNED_CONFIG if config is None else config
    return block_value_norms(result.layers, config.layers, config.n_heads)


# ── MiniLM ───────────────────────────────────────────────────────────────────────────────────────
def encoder_layer_inputs(
    model: BertEncoder, text_or_result: str | BertResult
) -> tuple[np.ndarray, np.ndarray]:
    """(token_ids (T,), X (L, T, D) float32): each encoder layer's input for a text or a
    MiniLMResult.

    Uses ``result.layer_inputs`` when the result carries it. Otherwise it recomputes them with the
    model's own :meth:`BertEncoder.forward` on the first l layers (a shallow copy whose ``layers``
    is ``model.layers[:l]``), so every input is exactly what the full pass used (L(L − 1)/2 layer
    passes: ~3× one forward)."""
    if isinstance(text_or_result, str):
        ids = np.asarray(model.tokenize(text_or_result)[1], dtype=np.int64)
        given = None
    elif hasattr(text_or_result, "token_ids"):
        ids = np.asarray(text_or_result.token_ids, dtype=np.int64)
        given = getattr(text_or_result, "layer_inputs", None)
    else:
        raise InputError(
            "reading_source",
            f"text_or_result must be a string or a MiniLMResult, got "
            f"{type(text_or_result).__name__}.",
        )
    if given is not None:
        return ids, np.asarray(given, dtype=np.float32)
    stub = copy.copy(model)
    inputs = []
    for layer in range(len(model.layers)):
        stub.layers = model.layers[:layer]
        inputs.append(stub.forward(ids)[1])  # (T, D) output of the first `layer` layers
    return ids, np.stack(inputs)


def _encoder_qkv(model, layer: int) -> tuple[np.ndarray, ...]:
    D = model.config.d_model
    p = model.layers[layer]
    return (
        p.W_qkv[:, :D],
        p.b_qkv[:D],
        p.W_qkv[:, D : 2 * D],
        p.b_qkv[D : 2 * D],
        p.W_qkv[:, 2 * D :],
        p.b_qkv[2 * D :],
    )


def encoder_value_norms(model: BertEncoder, text_or_result: str | BertResult) -> np.ndarray:
    """(L, H, T) = ‖(x_j W_V^h + b_V^h) W_O^h‖ for every layer of all-MiniLM-L6-v2 (float64).

    ``model`` is a :class:`visattn.models.encoder.BertEncoder`; ``text_or_result`` a text or its
    ``run`` result."""
    _, X = encoder_layer_inputs(model, text_or_result)
    H = model.config.n_heads
    out = []
    for layer, x in enumerate(X):
        *_, W_v, b_v = _encoder_qkv(model, layer)
        out.append(value_norms(x, W_v, b_v, model.layers[layer].W_o, H))
    return np.stack(out)


def _head_index(value, name: str, count: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not 0 <= value < count
    ):
        raise InputError(
            "reading_index",
            f"{name}={value!r} does not exist; choose 0 … {count - 1}.",
            name=name,
            value=str(value)[:20],
            last=count - 1,
        )
    return int(value)


def encoder_queries_keys(
    model: BertEncoder, text_or_result: str | BertResult, layer: int, head: int
) -> tuple[np.ndarray, np.ndarray]:
    """One MiniLM head's queries and keys, each (T, Dh) float64, queries scaled by 1/√Dh (q·k = the
    score)."""
    layer = _head_index(layer, "layer", len(model.layers))
    head = _head_index(head, "head", model.config.n_heads)
    _, X = encoder_layer_inputs(model, text_or_result)
    W_q, b_q, W_k, b_k, *_ = _encoder_qkv(model, layer)  # W_q, b_q already carry 1/√Dh
    cols = slice(head * model.config.d_head, (head + 1) * model.config.d_head)
    x = X[layer].astype(np.float64)
    return x @ W_q[:, cols] + b_q[cols], x @ W_k[:, cols] + b_k[cols]


def block_queries_keys(
    result: DesignedResult | RandomResult, layer: int, head: int
) -> tuple[np.ndarray, np.ndarray]:
    """One head's queries and keys of a designed or random model run, (T, Dh) each, queries scaled
    by 1/√Dh."""
    layer = _head_index(layer, "layer", len(result.layers))
    mha = result.layers[layer].mha
    head = _head_index(head, "head", mha.Q.shape[0])
    return mha.Q[head] / np.sqrt(mha.Q.shape[-1]), np.array(mha.K[head], dtype=np.float64)


# ── query/key geometry ───────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class QKProjection:
    queries: np.ndarray  # (T, 2) each query's coordinates on the two principal axes
    keys: np.ndarray  # (T, 2) each key's
    explained: np.ndarray  # (2,) share of the variance of queries and keys together along each axis
    mean: np.ndarray  # (Dh,) the centre subtracted before projecting
    axes: np.ndarray  # (Dh, 2) the principal axes as columns


def qk_projection(queries: ArrayLike, keys: ArrayLike) -> QKProjection:
    """Queries (Tq, Dh) and keys (Tk, Dh) of one head on the first two principal axes of both
    together.

    PCA by NumPy's SVD of the stacked, centred rows; each axis's sign is fixed so that its largest
    loading is positive (the picture does not flip between reruns). With Dh = 1 the second axis is
    all zero."""
    Q = as_array(queries, "queries", 2).astype(np.float64)
    K = as_array(keys, "keys", 2).astype(np.float64)
    if Q.shape[1] != K.shape[1]:
        raise InputError(
            "qk_width",
            f"queries have {Q.shape[1]} columns and keys {K.shape[1]}.",
            q=Q.shape[1],
            k=K.shape[1],
        )
    both = np.vstack([Q, K])  # (Tq + Tk, Dh)
    mean = both.mean(axis=0)
    _, s, vt = np.linalg.svd(
        both - mean, full_matrices=False
    )  # vt (r, Dh), rows are principal axes
    axes = np.zeros((both.shape[1], 2))
    k = min(2, vt.shape[0])
    axes[:, :k] = vt[:k].T
    signs = np.sign(axes[np.abs(axes).argmax(axis=0), [0, 1]])
    axes *= np.where(signs == 0, 1.0, signs)
    total = float((s**2).sum())
    explained = np.zeros(2)
    explained[:k] = (s[:k] ** 2) / total if total > 0 else 0.0
    return QKProjection(
        queries=(Q - mean) @ axes, keys=(K - mean) @ axes, explained=explained, mean=mean, axes=axes
    )


# ── two sentences ────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class TokenAlignment:
    aligned: bool  # same number of tokens: position i of A faces position i of B
    n_a: int
    n_b: int
    differ: tuple[int, ...]  # positions whose tokens differ (empty when not aligned)
    prefix: int  # tokens equal at the start
    suffix: int  # tokens equal at the end (not overlapping the prefix)


def align_tokens(a: Sequence[str], b: Sequence[str]) -> TokenAlignment:
    """Whether two tokenisations line up position by position, and where they differ.

    They align when they have the same length: then the difference of two attention maps compares
    the same positions (the tired / wide pair differs in one token). Otherwise ``aligned`` is False
    and a difference map would compare unrelated positions; ``prefix`` / ``suffix`` still say how
    much of the two agrees."""
    for name, toks in (("tokens_a", a), ("tokens_b", b)):
        if isinstance(toks, str) or not isinstance(toks, Sequence) or not toks:
            raise InputError(
                "reading_tokens", f"{name} must be a non-empty list of strings, one per token."
            )
    a, b = [str(t) for t in a], [str(t) for t in b]
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    aligned = len(a) == len(b)
    differ = (
        tuple(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y) if aligned else ()
    )
    return TokenAlignment(
        aligned=aligned, n_a=len(a), n_b=len(b), differ=differ, prefix=prefix, suffix=suffix
    )


def weight_difference(weights_a: ArrayLike, weights_b: ArrayLike) -> np.ndarray:
    """B − A for two aligned maps of the same shape (…, T, T)."""
    wa = _weights(weights_a, "weights_a", square=False)
    wb = _weights(weights_b, "weights_b", square=False)
    if wa.shape != wb.shape:
        raise InputError(
            "reading_unaligned",
            f"weights_a {wa.shape} and weights_b {wb.shape} differ in shape: the "
            "two texts do not have the same number of tokens.",
            a=wa.shape[-1],
            b=wb.shape[-1],
        )
    return wb - wa


# ── lines ────────────────────────────────────────────────────────────────────────────────────────
def filter_edges(
    weights: ArrayLike, *, threshold: float = 0.02, top_k: int | None = None
) -> np.ndarray:
    """``weights`` (…, Tq, Tk) with every edge below ``threshold`` and, with ``top_k``, every edge
    outside its row's ``top_k`` strongest set to 0 (ties: the earlier key wins). Feeds
    :func:`visattn.figures.token_lines`."""
    w = _weights(weights, square=False)
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise InputError(
            "not_number",
            f"threshold must be a number, got {threshold!r}.",
            name="threshold",
            value=str(threshold)[:20],
        ) from None
    if not np.isfinite(t) or t < 0:
        raise InputError(
            "reading_threshold", f"threshold={t:g} must be a finite number ≥ 0.", value=f"{t:g}"
        )
    out = np.where(w >= t, w, 0.0)
    if top_k is not None:
        k = positive_int(top_k, "top_k")
        if k < w.shape[-1]:
            order = np.argsort(-w, axis=-1, kind="stable")  # strongest first, earlier key on ties
            keep = np.zeros(w.shape, dtype=bool)
            np.put_along_axis(keep, order[..., :k], True, axis=-1)
            out = np.where(keep, out, 0.0)
    return out
