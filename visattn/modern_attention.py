"""Attention as today's large language models run it: grouped-query heads, sliding windows with
attention sinks, the size of the KV cache, and FlashAttention's online softmax.

- :func:`grouped_query_attention`: H query heads share G key/value heads (G = H: multi-head
  attention; 1 < G < H: grouped-query attention, Ainslie et al. 2023; G = 1: multi-query
  attention, Shazeer 2019). Query head h reads K/V head ``h // (H / G)``, as
  ``torch.nn.functional.scaled_dot_product_attention(…, enable_gqa=True)`` does.
- :func:`window_mask`: the banded causal mask of sliding-window attention (Mistral 7B, Jiang et al.
  2023), with the first tokens kept as attention sinks (StreamingLLM, Xiao et al. 2023);
  :func:`receptive_field`: how far back information reaches after L such layers.
- :func:`kv_cache_bytes`: the bytes one token adds to the cache of a model (keys and values of
  every K/V head of every layer; for multi-head latent attention, the latent and the RoPE key).
- :func:`flash_attention`: softmax(QKᵀ/√d)·V computed tile by tile, never holding the Tq × Tk
  matrix, with every intermediate (running maximum m, running sum ℓ, rescaled accumulator) kept
  (Dao et al. 2022; the loop order of FlashAttention-2, Dao 2023). The result is exact up to float
  rounding; this NumPy version is not fast: it is written to be read. :func:`hbm_traffic` counts
  the memory traffic of the paper's Algorithm 0 (standard) and Algorithm 1 (FlashAttention).

Axis letters: H query heads, G key/value heads, T (Tq) queries, Tk keys, Dh head width, d width,
L layers, Bq/Bk query/key block sizes.

Causal masks here align the queries with the *last* Tq keys (bottom-right, as a decoder with a KV
cache does): query i sits at position Tk − Tq + i. With Tq = Tk that is the usual lower triangle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .activations import softmax
from .checks import as_array, positive_int
from .errors import InputError

MAX_COMPUTED_TOKENS = 4096  # the NumPy demos hold (H, T, Tk) arrays: keep them small
MAX_HEADS = 256


@dataclass(frozen=True)
class GQAResult:
    scores: np.ndarray  # (H, T, Tk) Q Kᵀ / √Dh, each query head against its K/V head
    weights: np.ndarray  # (H, T, Tk) rows sum to 1; exactly 0 where the mask forbids
    output: np.ndarray  # (H, T, Dh)
    kv_head: np.ndarray  # (H,) the K/V head each query head reads
    mask: np.ndarray | None  # (T, Tk) True = may attend, or None (every key)


def kv_head_of(n_heads: int, n_kv_heads: int) -> np.ndarray:
    """(H,) the K/V head each of H query heads reads: h // (H / G); an InputError unless G divides
    H."""
    H = positive_int(n_heads, "n_heads", maximum=MAX_HEADS)
    G = positive_int(n_kv_heads, "n_kv_heads", maximum=MAX_HEADS)
    if H % G:
        raise InputError(
            "gqa_groups",
            f"{H} query heads cannot be shared evenly by {G} key/value heads: G must divide H "
            f"(H = {H} allows G in {divisors(H)}).",
            H=H,
            G=G,
            allowed=", ".join(str(g) for g in divisors(H)),
        )
    return np.arange(H) // (H // G)


def divisors(n: int) -> list[int]:
    """Every G that divides n (the K/V head counts n query heads allow), ascending."""
    return [g for g in range(1, n + 1) if n % g == 0]


def check_window(window: object) -> int:
    """``window`` as a whole number ≥ 1 (the keys a query sees, itself included)."""
    if isinstance(window, (int, np.integer)) and not isinstance(window, bool) and window < 1:
        raise InputError(
            "window_size",
            f"window={window}: a sliding window must hold at least 1 key (the token itself).",
            value=int(window),
        )
    return positive_int(window, "window", maximum=10**9)


def window_mask(
    T: int,
    window: int | None = None,
    *,
    Tk: int | None = None,
    sinks: int = 0,
    causal: bool = True,
) -> np.ndarray:
    """(T, Tk) boolean mask, True = query i may attend to key j.

    Query i sits at position p = Tk − T + i. ``causal``: keys j ≤ p only. ``window`` W: keys
    j > p − W only (W keys, the token itself included; None: no window). ``sinks`` s: the first s
    keys stay visible to every query whatever the window (still causally)."""
    T = positive_int(T, "T", maximum=MAX_COMPUTED_TOKENS)
    Tk = T if Tk is None else positive_int(Tk, "Tk", maximum=MAX_COMPUTED_TOKENS)
    if sinks < 0:
        raise InputError("sinks", f"sinks={sinks}: keep 0 or more first tokens.", value=sinks)
    p = np.arange(T)[:, None] + (Tk - T)  # (T, 1) each query's position
    j = np.arange(Tk)[None, :]  # (1, Tk)
    allowed = np.ones((T, Tk), dtype=bool)
    if causal:
        allowed &= j <= p
    if window is not None:
        W = check_window(window)
        near = j > p - W
        if not causal:
            near &= j < p + W  # a symmetric band without the causal mask
        allowed &= near | (j < sinks)
    return allowed


def grouped_query_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    causal: bool = False,
    window: int | None = None,
    sinks: int = 0,
) -> GQAResult:
    """Attention of H query heads Q (H, T, Dh) over G shared key/value heads K, V (G, Tk, Dh):
    query head h reads K/V head h // (H / G).

    ``causal``: query i (at position Tk − T + i) sees keys up to its own position (needs Tk ≥ T).
    ``window``: sliding-window attention, each query sees its last ``window`` keys (and the first
    ``sinks`` keys). Returns the scores, the weights (H, T, Tk) and the output (H, T, Dh)."""
    Q, K, V = as_array(Q, "Q", 3), as_array(K, "K", 3), as_array(V, "V", 3)
    H, T, Dh = Q.shape
    G, Tk, _ = K.shape
    if K.shape[2] != Dh or V.shape[:2] != (G, Tk):
        raise InputError(
            "gqa_shapes",
            f"Q {Q.shape}, K {K.shape}, V {V.shape}: K must be (G, Tk, Dh) with Q's Dh = {Dh}, "
            "and V must have K's G and Tk.",
            q=" × ".join(map(str, Q.shape)),
            k=" × ".join(map(str, K.shape)),
            v=" × ".join(map(str, V.shape)),
        )
    kv_head = kv_head_of(H, G)
    if causal and Tk < T:
        raise InputError(
            "causal_keys",
            f"causal attention aligns {T} queries with the last {T} keys, but there are only {Tk}.",
            T=T,
            Tk=Tk,
        )
    mask = None
    if causal or window is not None:
        mask = window_mask(T, window, Tk=Tk, sinks=sinks, causal=causal)
    K_h, V_h = K[kv_head], V[kv_head]  # (H, Tk, Dh) each: K/V head of every query head
    scores = Q @ np.swapaxes(K_h, -1, -2) / np.sqrt(Dh)  # (H, T, Dh) x (H, Dh, Tk) -> (H, T, Tk)
    weights = softmax(scores, axis=-1, mask=mask)
    output = weights @ V_h  # (H, T, Tk) x (H, Tk, Dh) -> (H, T, Dh)
    return GQAResult(scores=scores, weights=weights, output=output, kv_head=kv_head, mask=mask)


def receptive_field(mask: np.ndarray, layers: int) -> np.ndarray:
    """(L, T, T) bool: after layer l + 1, may position j's information reach query i? Each layer
    mixes what the previous one reached through ``mask`` (T, T): reach_l = reach_{l−1} · mask."""
    layers = positive_int(layers, "layers", maximum=256)
    step = np.asarray(mask, dtype=np.int64)  # (T, T)
    reach = [step > 0]
    for _ in range(layers - 1):
        reach.append((reach[-1].astype(np.int64) @ step) > 0)  # (T, T) x (T, T) -> (T, T)
    return np.stack(reach)  # (L, T, T)


def window_span(window: int, layers: int) -> int:
    """Positions one token's output can depend on after ``layers`` sliding-window layers of
    ``window`` keys, itself included: L·(W − 1) + 1 (the composition of L bands of width W)."""
    return layers * (check_window(window) - 1) + 1


# ---------------------------------------------------------------- the KV cache


@dataclass(frozen=True)
class CacheShape:
    """What one token leaves in the cache of one layer: K/V heads × head width for each of keys and
    values, or (multi-head latent attention) one latent and one shared RoPE key."""

    n_layers: int
    n_kv_heads: int = 0  # K/V heads (0 for latent attention)
    head_dim: int = 0
    latent: int = 0  # MLA: the compressed K/V latent c_KV (d_c) …
    rope_key: int = 0  # … and the decoupled RoPE key (d_h^R), shared by all heads

    @property
    def values_per_layer(self) -> int:
        """Numbers one token adds to one layer's cache."""
        if self.latent:
            return self.latent + self.rope_key
        return 2 * self.n_kv_heads * self.head_dim  # a key and a value per K/V head

    @property
    def values_per_token(self) -> int:
        return self.n_layers * self.values_per_layer


def kv_cache_bytes(shape: CacheShape, bytes_per_value: float, tokens: int = 1) -> int:
    """Bytes of the KV cache of ``tokens`` tokens of one sequence at ``bytes_per_value`` (2 for
    fp16/bf16, 1 for fp8)."""
    return int(round(shape.values_per_token * bytes_per_value * tokens))


# ---------------------------------------------------------------- FlashAttention


@dataclass(frozen=True)
class FlashStep:
    """Query block i after key/value block j (0-based) of the online softmax."""

    i: int
    j: int
    rows: tuple[int, int]  # queries [start, stop) of block i
    cols: tuple[int, int]  # keys [start, stop) of block j
    skipped: bool  # a causal tile entirely above the diagonal: nothing to do
    scores: np.ndarray  # (Bq, Bk) the tile S_ij = Q_i K_jᵀ / √d (−inf where masked)
    m: np.ndarray  # (Bq,) running maximum of each row's scores so far
    rescale: np.ndarray  # (Bq,) exp(m_old − m): how much the old sum and accumulator shrink
    ell: np.ndarray  # (Bq,) running sum ℓ = Σ exp(s − m) over the keys so far
    acc: np.ndarray  # (Bq, d) rescaled accumulator Õ = Σ exp(s − m) v over the keys so far

    @property
    def estimate(self) -> np.ndarray:
        """(Bq, d) Õ / ℓ: the output if these were all the keys."""
        return self.acc / self.ell[:, None]


@dataclass(frozen=True)
class FlashResult:
    output: np.ndarray  # (Tq, d)
    steps: tuple[FlashStep, ...]  # query block × key block, i outer, j inner
    block_q: int
    block_k: int
    n_q_blocks: int
    n_k_blocks: int
    logsumexp: np.ndarray  # (Tq,) m + log ℓ: what the backward pass keeps instead of the weights

    def block(self, i: int) -> tuple[FlashStep, ...]:
        """The steps of query block i (0-based), one per key block."""
        return self.steps[i * self.n_k_blocks : (i + 1) * self.n_k_blocks]


def _block_size(b: object, name: str, n: int) -> int:
    b = positive_int(b, name)
    if b > n:
        raise InputError(
            "block_size",
            f"{name}={b} is larger than the {n} rows it splits; choose a block size ≤ {n}.",
            name=name,
            value=b,
            n=n,
        )
    return b


def flash_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, *, block_q: int, block_k: int, causal: bool = False
) -> FlashResult:
    """softmax(QKᵀ/√d)·V for Q (Tq, d), K and V (Tk, d), one (block_q × block_k) tile at a time.

    For each query block the running maximum m, sum ℓ and accumulator Õ start at −inf, 0, 0; each
    key/value block j computes the tile S = Q_i K_jᵀ/√d, raises m to the tile's row maxima, rescales
    ℓ and Õ by exp(m_old − m), adds Σ exp(S − m) and exp(S − m)·V_j; at the end O_i = Õ/ℓ. Blocks
    need not divide Tq or Tk (the last one is shorter). ``causal``: query i sits at position
    Tk − Tq + i (needs Tk ≥ Tq); tiles entirely in its future are skipped."""
    Q, K, V = as_array(Q, "Q", 2), as_array(K, "K", 2), as_array(V, "V", 2)
    Tq, d = Q.shape
    Tk = K.shape[0]
    if K.shape[1] != d or V.shape[0] != Tk:
        raise InputError(
            "flash_shapes",
            f"Q {Q.shape}, K {K.shape}, V {V.shape}: K needs Q's width d = {d}, and V one row per "
            "key.",
            q=" × ".join(map(str, Q.shape)),
            k=" × ".join(map(str, K.shape)),
            v=" × ".join(map(str, V.shape)),
        )
    if causal and Tk < Tq:
        raise InputError(
            "causal_keys",
            f"causal attention aligns {Tq} queries with the last {Tq} keys, but there are only "
            f"{Tk}.",
            T=Tq,
            Tk=Tk,
        )
    Bq = _block_size(block_q, "block_q", Tq)
    Bk = _block_size(block_k, "block_k", Tk)
    n_q, n_k = math.ceil(Tq / Bq), math.ceil(Tk / Bk)
    scale = 1.0 / math.sqrt(d)
    output = np.empty((Tq, V.shape[1]))
    logsumexp = np.empty(Tq)
    steps = []
    for i in range(n_q):
        r0, r1 = i * Bq, min((i + 1) * Bq, Tq)
        Q_i = Q[r0:r1]  # (Bq, d)
        position = np.arange(r0, r1)[:, None] + (Tk - Tq)  # (Bq, 1)
        m = np.full(r1 - r0, -np.inf)
        ell = np.zeros(r1 - r0)
        acc = np.zeros((r1 - r0, V.shape[1]))
        for j in range(n_k):
            c0, c1 = j * Bk, min((j + 1) * Bk, Tk)
            S = Q_i @ K[c0:c1].T * scale  # (Bq, d) x (d, Bk) -> (Bq, Bk)
            if causal:
                S = np.where(np.arange(c0, c1)[None, :] <= position, S, -np.inf)
            skipped = causal and c0 > position[-1, 0]
            if skipped:
                rescale = np.ones(r1 - r0)
            else:
                m_new = np.maximum(m, S.max(axis=1))  # finite: block 0 holds key 0 for every row
                rescale = np.exp(m - m_new)  # exp(−inf) = 0 on the first block
                P = np.exp(S - m_new[:, None])  # (Bq, Bk), 0 where masked
                ell = rescale * ell + P.sum(axis=1)
                acc = rescale[:, None] * acc + P @ V[c0:c1]  # (Bq, Bk) x (Bk, d) -> (Bq, d)
                m = m_new
            steps.append(
                FlashStep(
                    i=i,
                    j=j,
                    rows=(r0, r1),
                    cols=(c0, c1),
                    skipped=bool(skipped),
                    scores=S,
                    m=m.copy(),
                    rescale=rescale,
                    ell=ell.copy(),
                    acc=acc.copy(),
                )
            )
        output[r0:r1] = acc / ell[:, None]
        logsumexp[r0:r1] = m + np.log(ell)
    return FlashResult(
        output=output,
        steps=tuple(steps),
        block_q=Bq,
        block_k=Bk,
        n_q_blocks=n_q,
        n_k_blocks=n_k,
        logsumexp=logsumexp,
    )


@dataclass(frozen=True)
class Traffic:
    """HBM reads and writes (in numbers, not bytes) of one head's attention forward pass."""

    N: int
    d: int
    M: int  # on-chip memory (SRAM), in numbers
    block_k: int  # B_c = ⌈M / 4d⌉
    block_q: int  # B_r = min(⌈M / 4d⌉, d)
    standard: int  # Algorithm 0: 4Nd + 4N²
    flash: int  # Algorithm 1: Nd + 2N (O, ℓ, m set) + 2Nd (K, V once) + T_c · (3Nd + 4N)
    n_k_blocks: int  # T_c = ⌈N / B_c⌉: how often Q and O pass through the chip


def hbm_traffic(N: int, d: int, M: int) -> Traffic:
    """Memory traffic of Dao et al. 2022 (FlashAttention), counted line by line: the standard
    Algorithm 0 reads Q, K (2Nd), writes and reads S (2N²), writes and reads P (2N²), reads V and
    writes O (2Nd): Θ(Nd + N²). Algorithm 1 sets O, ℓ, m in HBM (Nd + 2N), loads K_j, V_j once
    (2Nd) and, for each of the T_c key blocks, reads Q_i, O_i, ℓ_i, m_i and writes O_i, ℓ_i, m_i
    for every query block (3Nd + 4N): Θ(N²d²/M). M must hold at least 4d numbers (a row each of
    K, V, Q and O)."""
    N = positive_int(N, "N", maximum=10**9)
    d = positive_int(d, "d", maximum=10**5)
    M = positive_int(M, "M", maximum=10**9)
    if M < 4 * d:
        raise InputError(
            "sram_size",
            f"M = {M} numbers cannot hold one row each of Q, K, V and O of width d = {d} (4d = "
            f"{4 * d}).",
            M=M,
            need=4 * d,
        )
    Bc = math.ceil(M / (4 * d))
    Br = min(Bc, d)
    Tc = math.ceil(N / Bc)
    return Traffic(
        N=N,
        d=d,
        M=M,
        block_k=Bc,
        block_q=Br,
        standard=4 * N * d + 4 * N * N,
        flash=N * d + 2 * N + 2 * N * d + Tc * (3 * N * d + 4 * N),
        n_k_blocks=Tc,
    )
