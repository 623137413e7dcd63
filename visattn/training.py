"""Train a small decoder in NumPy and watch its induction heads form (the training page).

A decoder-only, attention-only transformer (Elhage et al. 2021's toy models): token embeddings plus
learned positions, ``n_layers`` causal attention layers with pre-LayerNorm and residual
connections (each optionally followed by an MLP block, ``DecoderConfig.mlp``), a final LayerNorm and
an unembedding, trained with Adam (a linear warm-up, then a constant rate) on the mean next-token
cross-entropy. The backward pass is written out layer by layer, each step under a comment that
names the forward step it undoes and the shapes; nothing here uses an autograd library (the tests
check every gradient against torch's autograd in float64).

The task (:func:`repeated_batch`): random tokens whose first k tokens are repeated right after them,
k random in ``min_repeat`` … ``max_repeat``. With a fixed k a one-layer model could reach every
repeated token with a positional head (look back k − 1); with k random only an induction head can —
"find the earlier copy of my token, read what came after it", which needs a previous-token head in
an earlier layer (K-composition). The evidence, measured on a fixed probe batch while training
(Olsson et al. 2022): the accuracy on repeated tokens against first-seen ones, and each head's

- **previous-token score**: its mean weight from position i on i − 1;
- **prefix-matching (induction) score**: on the second copy, its mean weight from position k + j on
  position j + 1 — the token after the earlier copy of the current token.

The phase change is the step where the best induction score first passes halfway from its start to
its highest value.

Dtypes: :func:`loss_and_grads` computes in the dtype of the parameters (float64 in, float64 out: the
gradient test); :func:`train` runs float32 (half the bytes through every step; the checkpoints
are float32 too). Same config and seed → bit-identical checkpoints: the batches come from seeded
generators and BLAS runs on one thread (:func:`one_blas_thread`), so no sum is reordered.

Axis letters: B batch, T tokens, D model width, H heads, Dh head width, V vocabulary, L layers."""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .errors import InputError

Params = dict[str, np.ndarray]
MAX_CHECKPOINTS = 41  # checkpoints kept by a run, the first and the last included


@dataclass(frozen=True)
class DecoderConfig:
    """The model and the task; the defaults are the training page's.

    Chosen by a seeded sweep (benchmarks/README.md, bench_training: the steps each setup took) for
    the fewest steps to 0.9 on repeated tokens while one layer stays below 0.35, so that a class
    sees the phase change within minutes and the one-layer model stays visibly worse: a longer
    repeated span (k in 16 … 24: more of each sequence is copyable), a warmed-up learning rate and
    a vocabulary of 48 (each token's embedding seen more often) train faster than the first setup;
    a smaller vocabulary is faster still, but lets one layer copy too well and the ablation of the
    previous-token heads matter less."""

    vocab: int = 48  # V
    seq_len: int = 48  # T
    d_model: int = 64  # D
    n_heads: int = 4  # H
    n_layers: int = 2  # L: 1 … 3
    min_repeat: int = 16  # k, the length of the repeated span: random in min_repeat … max_repeat
    max_repeat: int = 24
    steps: int = 800
    batch: int = 32
    lr: float = 1e-2
    warmup: int = 100  # steps over which the learning rate rises linearly from lr / warmup to lr
    beta1: float = 0.9
    beta2: float = 0.98
    eps: float = 1e-8
    eval_every: int = 20  # steps between measurements on the probe batch
    probe_batch: int = 64  # probe sequences the accuracies and scores are measured on
    mlp: bool = False  # an MLP block (D → 4D → D, ReLU, pre-LayerNorm) after each attention

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads:
            raise InputError(
                "training_heads",
                f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads}).",
                d=self.d_model,
                h=self.n_heads,
            )
        if not 1 <= self.n_layers <= 3:
            raise InputError(
                "training_layers",
                f"n_layers must be 1, 2 or 3, got {self.n_layers}.",
                n=self.n_layers,
            )
        if not 2 <= self.min_repeat <= self.max_repeat <= self.seq_len // 2:
            raise InputError(
                "training_repeat",
                f"the repeated span must satisfy 2 ≤ {self.min_repeat} ≤ {self.max_repeat} ≤ "
                f"seq_len / 2 = {self.seq_len // 2}.",
                lo=self.min_repeat,
                hi=self.max_repeat,
                half=self.seq_len // 2,
            )

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


def param_shapes(config: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in a fixed order (that of init, Adam and the tests)."""
    V, T, D = config.vocab, config.seq_len, config.d_model
    shapes: dict[str, tuple[int, ...]] = {"embed": (V, D), "pos": (T, D)}
    for layer in range(config.n_layers):
        shapes[f"l{layer}.ln_g"] = (D,)
        shapes[f"l{layer}.ln_b"] = (D,)
        shapes[f"l{layer}.W_qkv"] = (D, 3 * D)  # columns: queries, keys, values, head by head
        shapes[f"l{layer}.W_o"] = (D, D)
        if config.mlp:
            shapes[f"l{layer}.ln2_g"] = (D,)
            shapes[f"l{layer}.ln2_b"] = (D,)
            shapes[f"l{layer}.W_in"] = (D, 4 * D)
            shapes[f"l{layer}.mlp_in_b"] = (4 * D,)
            shapes[f"l{layer}.W_out"] = (4 * D, D)
            shapes[f"l{layer}.mlp_out_b"] = (D,)
    shapes["ln_f_g"] = (D,)
    shapes["ln_f_b"] = (D,)
    shapes["unembed"] = (D, V)
    return shapes


def init_params(config: DecoderConfig, seed: int = 0, dtype: type = np.float64) -> Params:
    """Seeded initial weights: matrices N(0, 1/D) (embeddings and positions N(0, 1)... scaled to
    unit-width rows), LayerNorm gains 1 and biases 0."""
    rng = np.random.default_rng(seed)
    params: Params = {}
    for name, shape in param_shapes(config).items():
        if name.endswith("_g"):
            params[name] = np.ones(shape)
        elif name.endswith("_b"):
            params[name] = np.zeros(shape)
        elif name in ("embed", "pos"):
            params[name] = rng.standard_normal(shape) * 0.5
        else:
            params[name] = rng.standard_normal(shape) / math.sqrt(shape[0])
    return {name: p.astype(dtype) for name, p in params.items()}


# ── the forward pass, keeping what the backward pass reads ───────────────────────────────────
def _mean_last(a: np.ndarray) -> np.ndarray:
    """The mean over the last axis as a matrix-vector product, (…, 1): one BLAS call, 5–6× faster
    than ``a.mean(-1)`` over a short last axis (64), which NumPy reduces row by row."""
    width = a.shape[-1]
    return (a.reshape(-1, width) @ np.full(width, 1 / width, dtype=a.dtype)).reshape(
        *a.shape[:-1], 1
    )  # (…, 1)


def _sum_rows(a: np.ndarray) -> np.ndarray:
    """The sum over every axis but the last, as a vector-matrix product: (width,)."""
    rows = a.reshape(-1, a.shape[-1])  # (B·T, width)
    return np.ones(len(rows), dtype=a.dtype) @ rows


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5):
    """LayerNorm over the last axis: (output, normalised x, 1 / σ)."""
    centred = x - _mean_last(x)  # (B, T, D)
    inv_sigma = 1.0 / np.sqrt(_mean_last(centred * centred) + eps)  # (B, T, 1)
    x_hat = centred
    x_hat *= inv_sigma  # (B, T, D), in place of the centred x
    out = x_hat * g
    out += b
    return out, x_hat, inv_sigma


def _layer_norm_backward(dy, x_hat, inv_sigma, g):
    """Gradients of y = x̂ g + b: (dx, dg, db)."""
    dg = _sum_rows(dy * x_hat)  # (D,)
    db = _sum_rows(dy)  # (D,)
    dx_hat = dy * g  # (B, T, D)
    # x̂ = (x − μ) / σ: dx = (dx̂ − mean(dx̂) − x̂ · mean(dx̂ x̂)) / σ
    dx = x_hat * _mean_last(dx_hat * x_hat)  # (B, T, D)
    np.subtract(dx_hat, dx, out=dx)
    dx -= _mean_last(dx_hat)
    dx *= inv_sigma  # (B, T, D)
    return dx, dg, db


def _sum_last(a: np.ndarray) -> np.ndarray:
    """The sum over the last axis as a matrix-vector product, (…, 1) (see :func:`_mean_last`)."""
    width = a.shape[-1]
    return (a.reshape(-1, width) @ np.ones(width, dtype=a.dtype)).reshape(*a.shape[:-1], 1)


def _times_transposed(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """a @ wᵀ for a (…, m) and w (n, m), as one 2-D product: NumPy multiplies a 3-D array by a
    transposed view batch row by batch row, which is slower (benchmarks/README.md)."""
    return (a.reshape(-1, a.shape[-1]) @ w.T).reshape(*a.shape[:-1], w.shape[0])


def _causal_bias(T: int, dtype) -> np.ndarray:
    """(T, T) 0 where key j may be read by query i (j ≤ i), −∞ above the diagonal: added to the
    scores, it makes a future key's weight exactly 0 (the diagonal is always allowed, so a row's
    maximum is finite)."""
    return np.triu(np.full((T, T), -np.inf, dtype=dtype), k=1)


class _LayerCache(NamedTuple):
    """What one layer's forward pass keeps for its backward pass."""

    h: np.ndarray  # (B, T, D) LayerNorm(x), the attention's input
    x_hat: np.ndarray  # (B, T, D) and inv_sigma (B, T, 1): that LayerNorm's
    inv_sigma: np.ndarray
    q: np.ndarray  # (B, H, T, Dh) q, k, v: views of one (B, T, 3D) array
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray  # (B, H, T, T)
    z: np.ndarray  # (B, H, T, Dh) weights @ v, before any head mask
    merged: np.ndarray  # (B, T, D) the heads' outputs side by side (masked)
    mlp: tuple[np.ndarray, ...] | None  # (h2, x_hat2, inv_sigma2, pre, act) with an MLP


def _forward(params: Params, config: DecoderConfig, tokens: np.ndarray, head_mask=None):
    """Logits (B, T, V) and the cache of every layer's intermediates. ``head_mask`` (L, H): each
    head's output multiplied by it (0 ablates the head)."""
    B, T = tokens.shape
    H, Dh, D = config.n_heads, config.d_head, config.d_model
    dtype = params["embed"].dtype
    bias = _causal_bias(T, dtype)  # (T, T)
    x = np.take(params["embed"], tokens, axis=0) + params["pos"][:T]  # (B, T, D)
    layers = []
    for layer in range(config.n_layers):
        h, x_hat, inv_sigma = _layer_norm(x, params[f"l{layer}.ln_g"], params[f"l{layer}.ln_b"])
        qkv = h @ params[f"l{layer}.W_qkv"]  # (B, T, 3D)
        qkv = qkv.reshape(B, T, 3, H, Dh).transpose(2, 0, 3, 1, 4)  # (3, B, H, T, Dh)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B, H, T, Dh) each
        # scores = q kᵀ / √Dh + the causal bias; the scale goes on q, the smaller array
        weights = (q * (1 / math.sqrt(Dh))) @ k.transpose(0, 1, 3, 2)  # (B, H, T, T)
        weights += bias
        # weights = softmax(scores) over the keys, in place
        weights -= weights.max(-1, keepdims=True)
        np.exp(weights, out=weights)
        weights /= _sum_last(weights)  # (B, H, T, T)
        z = weights @ v  # (B, H, T, Dh)
        shown = z
        if head_mask is not None:
            shown = z * np.asarray(head_mask, dtype=z.dtype)[layer][None, :, None, None]
        merged = shown.transpose(0, 2, 1, 3).reshape(B, T, D)  # (B, T, D) heads side by side
        x = x + merged @ params[f"l{layer}.W_o"]  # (B, T, D)
        mlp = None
        if config.mlp:
            # x ← x + relu(LayerNorm₂(x) @ W_in + b_in) @ W_out + b_out
            h2, x_hat2, inv_sigma2 = _layer_norm(
                x, params[f"l{layer}.ln2_g"], params[f"l{layer}.ln2_b"]
            )
            pre = h2 @ params[f"l{layer}.W_in"]  # (B, T, 4D)
            pre += params[f"l{layer}.mlp_in_b"]
            act = np.maximum(pre, 0)  # (B, T, 4D)
            x = x + act @ params[f"l{layer}.W_out"]  # (B, T, D)
            x += params[f"l{layer}.mlp_out_b"]
            mlp = (h2, x_hat2, inv_sigma2, pre, act)
        layers.append(_LayerCache(h, x_hat, inv_sigma, q, k, v, weights, z, merged, mlp))
    h_f, x_hat_f, inv_sigma_f = _layer_norm(x, params["ln_f_g"], params["ln_f_b"])
    logits = h_f @ params["unembed"]  # (B, T, V)
    return logits, (layers, h_f, x_hat_f, inv_sigma_f)


def loss_and_grads(
    params: Params, config: DecoderConfig, tokens: np.ndarray
) -> tuple[float, Params]:
    """The mean next-token cross-entropy over every position but the last, and its gradient with
    respect to every parameter (keyed like ``params``, in their dtype)."""
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    H, Dh, D, V = config.n_heads, config.d_head, config.d_model, config.vocab
    logits, (layers, h_f, x_hat_f, inv_sigma_f) = _forward(params, config, tokens)
    # position i predicts token i + 1; the last position predicts nothing
    targets = tokens[:, 1:, None]  # (B, T − 1, 1)
    n = B * (T - 1)
    shifted = logits[:, :-1] - logits[:, :-1].max(-1, keepdims=True)  # (B, T − 1, V)
    probs = np.exp(shifted)  # (B, T − 1, V) unnormalised
    total = _sum_last(probs)  # (B, T − 1, 1)
    picked = np.take_along_axis(shifted, targets, -1) - np.log(total)  # log p(target)
    loss = -float(picked.sum()) / n
    grads: Params = {}

    # loss = −mean log softmax(logits)[target]: dlogits = (softmax − one-hot) / n, 0 at the last
    dlogits = np.zeros_like(logits)  # (B, T, V)
    scored = dlogits[:, :-1]  # (B, T − 1, V) a view
    np.divide(probs, total * n, out=scored)
    np.put_along_axis(scored, targets, np.take_along_axis(scored, targets, -1) - 1 / n, -1)
    # logits = h_f @ unembed: (B, T, D) @ (D, V)
    grads["unembed"] = h_f.reshape(-1, D).T @ dlogits.reshape(-1, V)  # (D, V)
    dh_f = _times_transposed(dlogits, params["unembed"])  # (B, T, D)
    # h_f = LayerNorm_f(x): (B, T, D) → (B, T, D)
    dx, grads["ln_f_g"], grads["ln_f_b"] = _layer_norm_backward(
        dh_f, x_hat_f, inv_sigma_f, params["ln_f_g"]
    )
    for layer in reversed(range(config.n_layers)):
        cache = layers[layer]
        if cache.mlp is not None:
            h2, x_hat2, inv_sigma2, pre, act = cache.mlp
            # x ← x + act @ W_out + b_out: the residual passes dx through; (B, T, 4D) @ (4D, D)
            grads[f"l{layer}.mlp_out_b"] = _sum_rows(dx)  # (D,)
            grads[f"l{layer}.W_out"] = act.reshape(-1, 4 * D).T @ dx.reshape(-1, D)  # (4D, D)
            dact = _times_transposed(dx, params[f"l{layer}.W_out"])  # (B, T, 4D)
            # act = relu(pre): the gradient passes where pre > 0
            dpre = dact
            dpre *= pre > 0  # (B, T, 4D)
            # pre = h2 @ W_in + b_in: (B, T, D) @ (D, 4D)
            grads[f"l{layer}.mlp_in_b"] = _sum_rows(dpre)  # (4D,)
            grads[f"l{layer}.W_in"] = h2.reshape(-1, D).T @ dpre.reshape(-1, 4 * D)  # (D, 4D)
            dh2 = _times_transposed(dpre, params[f"l{layer}.W_in"])  # (B, T, D)
            # h2 = LayerNorm₂(x): its gradient adds to the residual's
            dx_ln2, grads[f"l{layer}.ln2_g"], grads[f"l{layer}.ln2_b"] = _layer_norm_backward(
                dh2, x_hat2, inv_sigma2, params[f"l{layer}.ln2_g"]
            )
            dx = dx + dx_ln2  # (B, T, D)
        # x ← x + merged @ W_o: the residual passes dx through; (B, T, D) @ (D, D)
        grads[f"l{layer}.W_o"] = cache.merged.reshape(-1, D).T @ dx.reshape(-1, D)  # (D, D)
        dmerged = _times_transposed(dx, params[f"l{layer}.W_o"])  # (B, T, D)
        # merged = z with heads side by side: (B, H, T, Dh) → (B, T, D)
        dz = dmerged.reshape(B, T, H, Dh).transpose(0, 2, 1, 3)  # (B, H, T, Dh)
        # q, k, v are views of one (B, T, 3D) array; their gradients fill one the same way
        dqkv = np.empty((B, T, 3 * D), dtype=dx.dtype)  # (B, T, 3D)
        dq, dk, dv = dqkv.reshape(B, T, 3, H, Dh).transpose(2, 0, 3, 1, 4)  # (B, H, T, Dh) each
        # z = weights @ v: (B, H, T, T) @ (B, H, T, Dh)
        dscores = dz @ cache.v.transpose(0, 1, 3, 2)  # (B, H, T, T): dweights, then dscores
        np.matmul(cache.weights.transpose(0, 1, 3, 2), dz, out=dv)  # (B, H, T, Dh)
        # weights = softmax(scores) over the keys: dscores = w ⊙ (dw − Σ_j w_j dw_j), and
        # Σ_j w_j dw_j = Σ_j w_j (dz · v_j) = dz · z, a dot over Dh instead of a sum over T;
        # a future key's w is 0, so its dscores is too (the causal bias is a constant)
        dscores -= _sum_last(dz * cache.z)  # (B, H, T, 1) broadcast
        dscores *= cache.weights  # (B, H, T, T)
        # scores = (q / √Dh) @ kᵀ: (B, H, T, Dh) @ (B, H, Dh, T)
        np.matmul(dscores, cache.k, out=dq)
        dq *= 1 / math.sqrt(Dh)  # (B, H, T, Dh)
        np.matmul(dscores.transpose(0, 1, 3, 2), cache.q, out=dk)
        dk *= 1 / math.sqrt(Dh)  # (B, H, T, Dh)
        # qkv = h @ W_qkv: (B, T, D) @ (D, 3D)
        grads[f"l{layer}.W_qkv"] = cache.h.reshape(-1, D).T @ dqkv.reshape(-1, 3 * D)  # (D, 3D)
        dh = _times_transposed(dqkv, params[f"l{layer}.W_qkv"])  # (B, T, D)
        # h = LayerNorm(x): the pre-LN branch adds its gradient to the residual's
        dx_ln, grads[f"l{layer}.ln_g"], grads[f"l{layer}.ln_b"] = _layer_norm_backward(
            dh, cache.x_hat, cache.inv_sigma, params[f"l{layer}.ln_g"]
        )
        dx = dx + dx_ln  # (B, T, D)
    # x = embed[tokens] + pos[:T]: each position's row, and each token's row summed over its uses
    grads["pos"] = np.zeros_like(params["pos"])
    grads["pos"][:T] = dx.sum(0)  # (T, D)
    one_hot = np.zeros((B * T, V), dtype=dx.dtype)  # (B·T, V)
    one_hot[np.arange(B * T), tokens.reshape(-1)] = 1
    grads["embed"] = one_hot.T @ dx.reshape(-1, D)  # (V, D)
    return loss, {name: grads[name] for name in params}


# ── Adam ─────────────────────────────────────────────────────────────────────────────────────
@dataclass
class Adam:
    """Adam (Kingma & Ba 2015) in torch.optim.Adam's arithmetic: m, v per parameter; step t."""

    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: Params = field(default_factory=dict)
    v: Params = field(default_factory=dict)

    def step(self, params: Params, grads: Params) -> None:
        """Update ``params`` in place."""
        self.t += 1
        correction1 = 1 - self.beta1**self.t
        correction2 = 1 - self.beta2**self.t
        step_size = self.lr / correction1
        root2 = math.sqrt(correction2)
        for name, g in grads.items():
            if name not in self.m:
                self.m[name] = np.zeros_like(g)
                self.v[name] = np.zeros_like(g)
            m, v = self.m[name], self.v[name]
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            denom = np.sqrt(v) / root2 + self.eps
            params[name] -= step_size * (m / denom)


# ── the task ─────────────────────────────────────────────────────────────────────────────────
def repeated_batch(
    config: DecoderConfig, rng: np.random.Generator, batch: int
) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` sequences of T random tokens whose first k tokens are repeated right after them, k
    random in min_repeat … max_repeat: (tokens (batch, T), k (batch,))."""
    T = config.seq_len
    tokens = rng.integers(0, config.vocab, size=(batch, T))
    spans = rng.integers(config.min_repeat, config.max_repeat + 1, size=batch)
    positions = np.arange(T)
    for row, k in enumerate(spans):
        tokens[row, k : 2 * k] = tokens[row, :k]
    del positions
    return tokens, spans


def repeat_mask(spans: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Which predictions (position i predicts token i + 1; (batch, T − 1)) are of repeated tokens
    an induction head can reach (targets k + 1 … 2k − 1), and which of first-seen ones (targets
    1 … k − 1)."""
    target = np.arange(1, T)[None, :]  # (1, T − 1)
    k = np.asarray(spans)[:, None]  # (batch, 1)
    repeated = (target >= k + 1) & (target <= 2 * k - 1)
    first = target <= k - 1
    return repeated, first


def attention_maps(params: Params, config: DecoderConfig, tokens: np.ndarray) -> np.ndarray:
    """Every head's weights on ``tokens`` (B, T): (B, L, H, T, T)."""
    _, (layers, *_) = _forward(params, config, np.asarray(tokens))
    return np.stack([cache.weights for cache in layers], axis=1)


def head_scores(weights: np.ndarray, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(previous-token score, prefix-matching score), each (L, H), from weights (B, L, H, T, T) of
    repeated sequences with spans k (B,)."""
    B, L, H, T, _ = weights.shape
    i = np.arange(1, T)
    previous = weights[:, :, :, i, i - 1].mean(-1).mean(0)  # (L, H)
    total = np.zeros((L, H))
    count = 0
    for row, k in enumerate(spans):
        queries = np.arange(k + 1, 2 * k)  # second copy, from its second token … (the query at k
        keys = queries - k + 1  # … would look at 1, ambiguous with "previous token + 1")
        total += weights[row][:, :, queries, keys].sum(-1)
        count += len(queries)
    return previous, total / count


def predictions(
    params: Params, config: DecoderConfig, tokens: np.ndarray, head_mask: np.ndarray | None = None
) -> np.ndarray:
    """The argmax next token at every position (B, T)."""
    logits, _ = _forward(params, config, np.asarray(tokens), head_mask)
    return logits.argmax(-1)


def accuracies(
    params: Params,
    config: DecoderConfig,
    tokens: np.ndarray,
    spans: np.ndarray,
    head_mask: np.ndarray | None = None,
) -> tuple[float, float]:
    """(accuracy on repeated tokens, on first-seen tokens) of the argmax guess."""
    guess = predictions(params, config, tokens, head_mask)[:, :-1]  # (B, T − 1)
    right = guess == tokens[:, 1:]
    repeated, first = repeat_mask(spans, tokens.shape[1])
    return float(right[repeated].mean()), float(right[first].mean())


def head_names(config: DecoderConfig) -> list[str]:
    """Position names of the heads, L1H1 … (1-based), the history's column suffixes."""
    return [
        f"L{layer + 1}H{head + 1}"
        for layer in range(config.n_layers)
        for head in range(config.n_heads)
    ]


# ── one BLAS thread ──────────────────────────────────────────────────────────────────────────
@cache
def _openblas() -> ctypes.CDLL | None:
    """NumPy's own OpenBLAS (the wheel's ``numpy.libs``), or None where there is none."""
    libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for path in sorted(libs.glob("libscipy_openblas*.so*")):
        try:
            lib = ctypes.CDLL(str(path))
            lib.openblas_set_num_threads_local.restype = ctypes.c_int
            lib.openblas_set_num_threads_local.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread for the calling thread only (OpenBLAS's thread-local setting), restored
    after. A training's matrices are small (48 × 64): a second BLAS thread only waits, and on a
    loaded machine its spinning costs several times the wall time (benchmarks/README.md)."""
    lib = _openblas()
    previous = lib.openblas_set_num_threads_local(1) if lib is not None else None
    try:
        yield
    finally:
        if previous is not None:
            lib.openblas_set_num_threads_local(previous)


# ── training ─────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Checkpoint:
    step: int
    params: Params  # float32 copies
    maps: np.ndarray  # (L, H, T, T) every head's weights on the probe sequence


@dataclass(frozen=True)
class TrainingRun:
    config: DecoderConfig
    seed: int
    params: Params  # final
    checkpoints: tuple[Checkpoint, ...]
    history: (
        pd.DataFrame
    )  # step, loss, repeat_accuracy, first_accuracy, prev_L1H1 …, induction_L1H1 …
    probe: np.ndarray  # (T,) the probe sequence the checkpoints' maps are drawn on
    probe_span: int  # its k
    stopped: bool  # stopped before ``config.steps``

    @property
    def steps_done(self) -> int:
        return int(self.history["step"].iloc[-1]) if len(self.history) else 0


def probe_sequence(config: DecoderConfig, seed: int = 12345) -> tuple[np.ndarray, int]:
    """The fixed probe: a repeated sequence with k = (min_repeat + max_repeat) // 2 (not random:
    every checkpoint and every run shows the same one)."""
    rng = np.random.default_rng(seed)
    k = (config.min_repeat + config.max_repeat) // 2
    tokens = rng.integers(0, config.vocab, size=config.seq_len)
    tokens[k : 2 * k] = tokens[:k]
    return tokens, k


def checkpoint_steps(config: DecoderConfig, steps: int) -> list[int]:
    """The steps a run keeps checkpoints at: evenly spaced evaluation steps, at most
    MAX_CHECKPOINTS, 0 and ``steps`` included."""
    evals = list(range(0, steps + 1, config.eval_every))
    if evals[-1] != steps:
        evals.append(steps)
    if len(evals) <= MAX_CHECKPOINTS:
        return evals
    pick = np.unique(np.linspace(0, len(evals) - 1, MAX_CHECKPOINTS).round().astype(int))
    return [evals[i] for i in pick]


def checkpoint_bytes(config: DecoderConfig) -> int:
    """The most a run's checkpoints hold: MAX_CHECKPOINTS × (float32 params + (L, H, T, T) float32
    maps)."""
    n_params = sum(math.prod(s) for s in param_shapes(config).values())
    maps = config.n_layers * config.n_heads * config.seq_len**2
    return MAX_CHECKPOINTS * 4 * (n_params + maps)


def _measure(params, config, probe_tokens, probe_spans) -> dict[str, float]:
    logits, (layers, *_) = _forward(params, config, probe_tokens)
    right = logits[:, :-1].argmax(-1) == probe_tokens[:, 1:]
    repeated, first = repeat_mask(probe_spans, config.seq_len)
    weights = np.stack([cache.weights for cache in layers], axis=1)  # (B, L, H, T, T)
    previous, induction = head_scores(weights, probe_spans)
    row = {
        "repeat_accuracy": float(right[repeated].mean()),
        "first_accuracy": float(right[first].mean()),
    }
    for name, p, s in zip(head_names(config), previous.ravel(), induction.ravel(), strict=True):
        row[f"prev_{name}"] = float(p)
        row[f"induction_{name}"] = float(s)
    return row


def train(
    config: DecoderConfig | None = None,
    *,
    seed: int = 0,
    steps: int | None = None,
    on_step: Callable[[int, pd.DataFrame], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainingRun:
    """Train from :func:`init_params` (seed) for ``steps`` (default ``config.steps``) Adam steps on
    fresh batches of :func:`repeated_batch` (seeded), in float32.

    Every ``eval_every`` steps the probe batch is measured (accuracies, head scores) and
    ``on_step(step, history so far)`` is called; ``should_stop()`` is checked every step, and a
    True ends the run there (``stopped``). Checkpoints at :func:`checkpoint_steps`."""
    config = config or DecoderConfig()
    with one_blas_thread():
        return _train(
            config, seed, config.steps if steps is None else int(steps), on_step, should_stop
        )


def learning_rate(config: DecoderConfig, step: int) -> float:
    """The learning rate of step 1, 2, …: rising linearly over the first ``warmup`` steps."""
    return config.lr * min(1.0, step / config.warmup) if config.warmup else config.lr


def _train(config, seed, steps, on_step, should_stop) -> TrainingRun:
    params = init_params(config, seed, dtype=np.float32)
    adam = Adam(config.lr, config.beta1, config.beta2, config.eps)
    data_rng = np.random.default_rng([seed, 1])
    probe_tokens, probe_spans = repeated_batch(
        config, np.random.default_rng([seed, 2]), config.probe_batch
    )
    probe, probe_span = probe_sequence(config)
    keep = set(checkpoint_steps(config, steps))
    rows: list[dict] = []
    checkpoints: list[Checkpoint] = []
    loss = float("nan")
    stopped = False
    step = 0

    def record(step: int, loss: float) -> None:
        rows.append(
            {"step": step, "loss": loss} | _measure(params, config, probe_tokens, probe_spans)
        )
        if step in keep or stopped:
            maps = attention_maps(params, config, probe[None])[0]  # (L, H, T, T)
            frozen = {name: p.copy() for name, p in params.items()}
            for a in (*frozen.values(), maps):
                a.flags.writeable = False
            checkpoints.append(Checkpoint(step, frozen, maps))
        if on_step is not None:
            on_step(step, pd.DataFrame(rows))

    record(0, float("nan"))
    for step in range(1, steps + 1):
        tokens, _ = repeated_batch(config, data_rng, config.batch)
        adam.lr = learning_rate(config, step)
        loss, grads = loss_and_grads(params, config, tokens)
        adam.step(params, grads)
        if should_stop is not None and should_stop():
            stopped = True
            record(step, loss)
            break
        if step % config.eval_every == 0 or step == steps:
            record(step, loss)
    history = pd.DataFrame(rows)
    return TrainingRun(
        config, seed, params, tuple(checkpoints), history, probe, probe_span, stopped
    )


PHASE_RISE = 0.2  # the least rise of the best induction score that counts as a phase change


def phase_change_step(history: pd.DataFrame) -> int | None:
    """The step where the best head's induction score first passes halfway from its start to its
    highest value; None when it never rises by PHASE_RISE."""
    columns = [c for c in history.columns if c.startswith("induction_")]
    if not columns or len(history) < 2:
        return None
    best = history[columns].max(axis=1).to_numpy()
    start, top = best[0], best.max()
    if top - start < PHASE_RISE:
        return None
    first = int(np.argmax(best >= start + (top - start) / 2))
    return int(history["step"].iloc[first])


# ── what the heads learned ───────────────────────────────────────────────────────────────────
# A head is named for a role when its score passes these. Even attention scores 0.07 (previous)
# and 0.03 (prefix matching) on the default task (uniform_scores); a trained model spreads each
# role over several heads of a layer (seed 0, 800 steps: two induction heads of 0.55 and 0.61,
# three previous-token heads of 0.11–0.31; the other heads stay below 0.13 on both scores).
INDUCTION_THRESHOLD = 0.2
PREVIOUS_THRESHOLD = 0.1


def uniform_scores(config: DecoderConfig, seed: int = 0, batch: int = 64) -> tuple[float, float]:
    """(previous-token score, prefix-matching score) of a head that spreads its weight evenly over
    the keys it may read: the level a score must clearly pass to mean anything."""
    _, spans = repeated_batch(config, np.random.default_rng([seed, 4]), batch)
    T = config.seq_len
    even = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # (T, T) rows sum to 1
    weights = np.broadcast_to(even, (batch, 1, 1, T, T))  # (B, L, H, T, T)
    previous, prefix = head_scores(weights, spans)
    return float(previous[0, 0]), float(prefix[0, 0])


def final_scores(run: TrainingRun) -> tuple[np.ndarray, np.ndarray]:
    """(previous-token scores, induction scores), each (L, H), at the run's last measurement."""
    last = run.history.iloc[-1]
    names = head_names(run.config)
    shape = (run.config.n_layers, run.config.n_heads)
    previous = np.array([last[f"prev_{n}"] for n in names]).reshape(shape)
    induction = np.array([last[f"induction_{n}"] for n in names]).reshape(shape)
    return previous, induction


def head_roles(previous: np.ndarray, induction: np.ndarray) -> np.ndarray:
    """Each head's role from its scores (L, H): "induction" where the prefix-matching score passes
    INDUCTION_THRESHOLD in a layer after the first (a first-layer head reads only tokens and
    positions: it cannot match a prefix), "previous" where the previous-token score passes
    PREVIOUS_THRESHOLD in a layer before the first induction head's (or anywhere when there is
    none), else "other"."""
    roles = np.full(previous.shape, "other", dtype=object)
    inducing = induction >= INDUCTION_THRESHOLD
    inducing[0] = False
    roles[inducing] = "induction"
    layers = np.nonzero(inducing.any(axis=1))[0]
    before = layers[0] if len(layers) else previous.shape[0]
    copying = previous >= PREVIOUS_THRESHOLD
    copying[before:] = False
    roles[copying] = "previous"
    return roles


# ── composition across layers (Elhage et al. 2021) ──────────────────────────────────────────
def head_matrices(
    params: Params, config: DecoderConfig, layer: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One layer's per-head weights cut out of W_qkv and W_o: (W_Q, W_K, W_V) each (H, D, Dh),
    W_O (H, Dh, D). Row vectors: head h's query is x @ W_Q[h], its output z_h @ W_O[h]."""
    D, H, Dh = config.d_model, config.n_heads, config.d_head
    columns = params[f"l{layer}.W_qkv"].reshape(D, 3, H, Dh)  # (D, 3, H, Dh) as in _forward
    W_Q, W_K, W_V = columns.transpose(1, 2, 0, 3)  # (H, D, Dh) each
    W_O = params[f"l{layer}.W_o"].reshape(H, Dh, D)  # (H, Dh, D): merged's rows, head by head
    return W_Q, W_K, W_V, W_O


def k_composition(
    params: Params, config: DecoderConfig, source: int = 0, target: int = 1
) -> np.ndarray:
    """K-composition scores (Elhage et al. 2021) of every head of layer ``source`` (rows) with every
    head of the later layer ``target`` (columns), (H, H), each in 0 … 1.

    Head h₁ writes x W_OV (W_OV = W_V W_O, (D, D)); head h₂ scores a query row x_q against a key
    row x_k as x_q W_QK x_kᵀ (W_QK = W_Q W_Kᵀ). With h₁'s output in the key, the score reads
    x_q W_QK W_OVᵀ x_srcᵀ, and the score is ‖W_OV W_QKᵀ‖_F / (‖W_OV‖_F ‖W_QKᵀ‖_F): how much of
    what h₁ writes h₂'s keys read (the paper's ‖W_QK W_OV‖ in its column-vector convention;
    TransformerLens's ``all_composition_scores("K")``). The LayerNorm before the target layer is
    ignored, as in the paper: its centring, each row's scale and its gains are left out, so the
    score compares the raw weight matrices."""
    if not 0 <= source < target < config.n_layers:
        raise ValueError(f"layers {source} → {target} of {config.n_layers}")
    _, _, W_V, W_O = head_matrices(params, config, source)
    W_OV = W_V @ W_O  # (H, D, D) what each head of the source layer writes
    W_Q, W_K, _, _ = head_matrices(params, config, target)
    W_QK = W_Q @ W_K.transpose(0, 2, 1)  # (H, D, D) each target head's bilinear score
    composed = W_OV[:, None] @ W_QK.transpose(0, 2, 1)[None]  # (H₁, H₂, D, D)
    frobenius = np.sqrt((composed**2).sum(axis=(-2, -1)))  # (H₁, H₂)
    ov_norm = np.sqrt((W_OV**2).sum(axis=(-2, -1)))  # (H₁,)
    qk_norm = np.sqrt((W_QK**2).sum(axis=(-2, -1)))  # (H₂,)
    return frobenius / (ov_norm[:, None] * qk_norm[None, :])


@dataclass(frozen=True)
class Ablation:
    """Repeated-token accuracy on a fresh seeded batch, intact and with learned heads zeroed."""

    intact: float
    without_induction: float  # every head named "induction" zeroed (NaN when none is)
    without_previous: float  # every head named "previous" zeroed (NaN when none is)
    induction_heads: tuple[tuple[int, int], ...]  # (layer, head), 0-based
    previous_heads: tuple[tuple[int, int], ...]
    chance: float  # 1 / V
    first_intact: float  # accuracy on first-seen tokens: what no head can learn (≈ chance)


ABLATION_BATCH = 128  # fresh sequences the ablations are measured on


def ablations(run: TrainingRun, seed: int = 99, batch: int = ABLATION_BATCH) -> Ablation:
    """Zero the learned induction heads, then the previous-token heads feeding them, and measure
    on ``batch`` fresh sequences."""
    config, params = run.config, run.params
    tokens, spans = repeated_batch(config, np.random.default_rng([seed, 3]), batch)
    roles = head_roles(*final_scores(run))
    induction_heads = tuple((int(a), int(b)) for a, b in np.argwhere(roles == "induction"))
    previous_heads = tuple((int(a), int(b)) for a, b in np.argwhere(roles == "previous"))
    with one_blas_thread():
        intact, first = accuracies(params, config, tokens, spans)

        def without(heads: tuple[tuple[int, int], ...]) -> float:
            if not heads:
                return float("nan")
            mask = np.ones((config.n_layers, config.n_heads))
            for head in heads:
                mask[head] = 0
            return accuracies(params, config, tokens, spans, mask)[0]

        return Ablation(
            intact=intact,
            without_induction=without(induction_heads),
            without_previous=without(previous_heads),
            induction_heads=induction_heads,
            previous_heads=previous_heads,
            chance=1 / config.vocab,
            first_intact=first,
        )
