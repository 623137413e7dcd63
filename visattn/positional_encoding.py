"""Positional encodings: the sinusoidal table of "Attention Is All You Need", RoPE and ALiBi.

Axis letters in shapes: P positions, D model width (d_model, even), D/2 sin/cos pairs, T tokens, H
heads.

Pair i of the sinusoidal table is (sin, cos) of the angle pos·ω_i with ω_i = base^(−2i/D), so moving
k positions on rotates every pair by the angle k·ω_i: PE(p + k) = M_k · PE(p) with a 2×2 rotation
per pair, and PE(p)·PE(q) = Σ_i cos((q − p)·ω_i) depends on the offset only. RoPE applies that same
rotation to the queries and keys themselves; ALiBi drops position vectors and adds −slope·distance
to the scores."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .attention import self_attention
from .checks import as_array, positive_float, positive_int
from .errors import InputError
from .text import seeded_embedding, tokenize

MAX_POSITIONS = 4096
MAX_D_MODEL = 2048
MAX_ALIBI_HEADS = 256
MAX_CURVES = 8  # columns plotted at once by parse_dims' caller


def check_table(n_positions: object, d_model: object) -> tuple[int, int]:
    """(n_positions, d_model) as ints within the limits, or an InputError that says how to fix them.

    Runs before anything is allocated, so an out-of-range request fails at once instead of filling
    memory."""
    n = _whole(n_positions, "n_positions")
    if n < 1:
        raise InputError(
            "pe_positions_few",
            f"n_positions={n}: the table needs at least one position; choose 1 or more.",
            n=n,
        )
    if n > MAX_POSITIONS:
        raise InputError(
            "pe_positions_many",
            f"n_positions={n} is too large; the limit is {MAX_POSITIONS}.",
            n=n,
            max=MAX_POSITIONS,
        )
    return n, check_width(d_model)


def _whole(v, name: str) -> int:
    """``v`` as an int (any sign), or the shared not_whole InputError."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise InputError(
        "not_whole", f"{name} must be a whole number, got {v!r}.", name=name, value=str(v)[:20]
    )


def check_width(d_model: object) -> int:
    """``d_model`` as an even int in 2 … MAX_D_MODEL (sines and cosines come in pairs), or an
    InputError."""
    d = _whole(d_model, "d_model")
    if d < 2:
        raise InputError(
            "pe_width_small",
            f"d_model={d} is too small: one sine and one cosine need at least 2 dimensions; "
            "choose an even number of at least 2.",
            d=d,
        )
    if d > MAX_D_MODEL:
        raise InputError(
            "pe_width_big",
            f"d_model={d} is too large; the limit is {MAX_D_MODEL}.",
            d=d,
            max=MAX_D_MODEL,
        )
    return _even(d)


def _even(d: int) -> int:
    if d % 2:
        raise InputError(
            "pe_width_odd",
            f"d_model={d} is odd; the table pairs a sine with a cosine, so d_model must be "
            f"even (try {max(d - 1, 2)} or {d + 1}).",
            d=d,
            lower=max(d - 1, 2),
            upper=d + 1,
        )
    return d


def parse_dims(text: str, d_model: int, most: int = MAX_CURVES) -> tuple[list[int], list[int]]:
    """Column numbers typed as "0, 1, 20" (commas, full-width commas or spaces) → (columns to plot,
    left out).

    Columns outside 0 … d_model − 1 are left out (the table has no such column); when none is left,
    0 and 1. An InputError when the text is not a list of whole numbers, or names more than ``most``
    columns."""
    d_model = check_width(d_model)
    text = str(text)
    parts = text.replace("\uff0c", ",").replace(",", " ").split()
    try:
        dims = list(dict.fromkeys(int(p) for p in parts))
    except ValueError:
        dims = []
    if not dims:
        raise InputError(
            "pe_dims",
            f"{text[:40]!r} is not a list of dimensions; type column numbers between 0 and "
            f"{d_model - 1}, separated by commas.",
            text=text[:40],
            last=d_model - 1,
        )
    if len(dims) > most:
        raise InputError(
            "pe_dims_many",
            f"{len(dims)} dimensions were asked for; plot at most {most} at a time.",
            n=len(dims),
            max=most,
        )
    keep = [k for k in dims if 0 <= k < d_model]
    return keep or [0, 1], [k for k in dims if not 0 <= k < d_model]


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """(D/2,) angular frequencies ω_i = base^(−2i/D) of the sin/cos pairs, fastest first."""
    d_model = _even(positive_int(d_model, "d_model", maximum=MAX_D_MODEL))
    base = positive_float(base, "base")
    return base ** (-np.arange(0, d_model, 2) / d_model)


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """(D/2,) wavelength 2π / ω_i = 2π·base^(2i/D) of pair i, in positions: from 2π up to almost
    2π·base."""
    return 2 * np.pi / frequencies(d_model, base)


def sinusoidal_at(
    positions: ArrayLike, d_model: int, base: float = 10000.0, dims: ArrayLike | None = None
) -> np.ndarray:
    """(P, D) encoding rows for any (also fractional or large) positions; row p of the table for
    integer p.

    ``dims`` (a list of column indices) computes only those columns: (P, len(dims)), never the whole
    row."""
    positions = as_array(positions, "positions", 1)
    omega = frequencies(d_model, base)  # (D/2,)
    if dims is not None:
        dims = np.asarray(dims, dtype=int).reshape(-1)
        if dims.size and (dims.min() < 0 or dims.max() >= d_model):
            raise InputError(
                "pe_dims_range",
                f"dims must lie in 0…{d_model - 1} for d_model={d_model}, got {dims.tolist()}.",
                last=d_model - 1,
            )
        angle = (
            positions[:, None] * omega[dims // 2][None, :]
        )  # (P, 1) x (1, len(dims)) -> (P, len(dims))
        return np.where(dims % 2 == 0, np.sin(angle), np.cos(angle))
    angle = positions[:, None] * omega[None, :]  # (P, 1) x (1, D/2) -> (P, D/2)
    pe = np.empty((len(positions), 2 * len(omega)))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """(n_positions, d_model) table with PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] =
    cos(same)."""
    n_positions, d_model = check_table(n_positions, d_model)
    return sinusoidal_at(np.arange(n_positions), d_model, positive_float(base, "base"))


def pair_columns(d_model: int, max_columns: int) -> np.ndarray:
    """Column indices of every s-th sin/cos pair (both members kept) so that at most ``max_columns``
    remain.

    Striding single columns by an even step would keep only the sines; striding pairs keeps the
    picture honest."""
    n_pairs = d_model // 2
    step = max(1, math.ceil(n_pairs / max(1, max_columns // 2)))
    pairs = np.arange(0, n_pairs, step)
    return np.stack([2 * pairs, 2 * pairs + 1], axis=1).reshape(-1)


def offset_dot(offsets: ArrayLike, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE(p)·PE(p + k) = Σ_i cos(k·ω_i) for each offset k: the same for every p."""
    offsets = as_array(offsets, "offsets", 1)
    return np.cos(offsets[:, None] * frequencies(d_model, base)[None, :]).sum(axis=1)


def rotation_matrix(k: float, pair: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """(2, 2) M_k with (PE[p+k, 2i], PE[p+k, 2i+1]) = M_k · (PE[p, 2i], PE[p, 2i+1]) for pair i, any
    p.

    With θ = k·ω_i: sin(a + θ) = sin a cos θ + cos a sin θ and cos(a + θ) = cos a cos θ − sin a sin
    θ, so M_k = [[cos θ, sin θ], [−sin θ, cos θ]] — it depends on k and i, never on p."""
    omega = frequencies(d_model, base)
    pair = int(pair)
    if not 0 <= pair < len(omega):
        raise InputError(
            "pe_pair",
            f"pair={pair} does not exist; d_model={d_model} has pairs 0…{len(omega) - 1}.",
            pair=pair,
            d=d_model,
            last=len(omega) - 1,
        )
    theta = float(k) * omega[pair]
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, s], [-s, c]])


def rotary(x: ArrayLike, positions: ArrayLike, base: float = 10000.0) -> np.ndarray:
    """RoPE: rotate each consecutive pair (2i, 2i+1) of row t of ``x`` (T, D) by the angle
    positions[t]·base^(−2i/D).

    (x₀, x₁) → (x₀ cos θ − x₁ sin θ, x₀ sin θ + x₁ cos θ). Applied to queries and keys, the score
    R(m)q · R(n)k = q · R(n − m)k depends on the offset n − m only. A 1-D ``x`` is one row.
    """
    x = np.asarray(x, dtype=np.float64)
    one_row = x.ndim == 1
    x = as_array(x[None, :] if one_row else x, "x", 2)
    T, D = x.shape
    _even(D)  # RoPE rotates pairs of dimensions
    positions = as_array(np.atleast_1d(positions), "positions", 1)
    if len(positions) != T:
        raise InputError(
            "pe_positions_rows",
            f"positions has {len(positions)} entries but x has {T} rows; give one position "
            "per row.",
            n=len(positions),
            rows=T,
        )
    base = positive_float(base, "base")
    theta = (
        positions[:, None] * base ** (-np.arange(0, D, 2) / D)[None, :]
    )  # (T, 1) x (1, D/2) -> (T, D/2)
    c, s = np.cos(theta), np.sin(theta)
    x0, x1 = x[:, 0::2], x[:, 1::2]  # (T, D/2) each
    out = np.empty_like(x)
    out[:, 0::2] = x0 * c - x1 * s
    out[:, 1::2] = x0 * s + x1 * c
    return out[0] if one_row else out


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(n_heads: int) -> np.ndarray:
    """(H,) ALiBi slopes (Press et al. 2022): for H a power of two, 2^(−8/H), 2^(−16/H), …, 2^(−8).

    Otherwise the paper's rule: the slopes of the largest power of two below H, then every other
    slope of twice that power (the ones that fall between them) until there are H."""
    n_heads = positive_int(n_heads, "n_heads", maximum=MAX_ALIBI_HEADS)
    closest = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = _power_of_two_slopes(closest)
    if closest < n_heads:
        slopes += _power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]
    return np.array(slopes)


def alibi_bias(n_heads: int, n_positions: int) -> np.ndarray:
    """(H, T, T) bias −slope_h·|i − j| added to head h's scores for query i and key j.

    In a causal model only j ≤ i is used, where it is slope_h·(j − i), as in the paper.
    """
    n_positions = positive_int(n_positions, "n_positions", maximum=MAX_POSITIONS)
    slopes = alibi_slopes(n_heads)
    pos = np.arange(n_positions)
    distance = np.abs(pos[None, :] - pos[:, None])  # (T, T)
    return -slopes[:, None, None] * distance[None, :, :]  # (H, 1, 1) x (1, T, T) -> (H, T, T)


@dataclass(frozen=True)
class DistanceScores:
    distances: np.ndarray  # (K,) key position minus query position
    sinusoidal: np.ndarray  # (K,) (q + PE(p))·(k + PE(p + Δ)) / √D
    rope: np.ndarray  # (K,) R(p)q · R(p + Δ)k / √D
    alibi: np.ndarray  # (K,) q·k / √D − slope·Δ


def distance_scores(
    q: ArrayLike,
    k: ArrayLike,
    query_position: float,
    distances: ArrayLike,
    *,
    slope: float,
    base: float = 10000.0,
) -> DistanceScores:
    """The score of one fixed (q, k) pair as the key moves Δ positions away from a query at
    ``query_position``.

    Added sinusoids put position into the vectors, so the score also depends on where the query is;
    RoPE's depends on Δ only; ALiBi keeps q·k and subtracts slope·Δ.
    """
    q, k = as_array(q, "q", 1), as_array(k, "k", 1)
    if q.shape != k.shape:
        raise InputError(
            "qk_width",
            f"q has {q.size} entries and k has {k.size}; give them the same width.",
            q=q.size,
            k=k.size,
        )
    D = q.size
    distances = as_array(distances, "distances", 1)
    p = float(query_position)
    kpos = p + distances
    pe_q = sinusoidal_at([p], D, base)[0]  # (D,)
    pe_k = sinusoidal_at(kpos, D, base)  # (K, D)
    sinusoidal = (pe_k + k) @ (q + pe_q) / np.sqrt(D)
    rq = rotary(q, [p], base)  # (D,)
    rk = rotary(np.broadcast_to(k, (len(kpos), D)), kpos, base)  # (K, D)
    rope = rk @ rq / np.sqrt(D)
    alibi = q @ k / np.sqrt(D) - float(slope) * np.abs(distances)
    return DistanceScores(distances=distances, sinusoidal=sinusoidal, rope=rope, alibi=alibi)


def distance_scores_many(
    q: ArrayLike,
    k: ArrayLike,
    query_positions: ArrayLike,
    distances: ArrayLike,
    base: float = 10000.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(added sinusoids, RoPE), each (G, K): :func:`distance_scores` for every query position at
    once (one vectorised pass instead of a call per position)."""
    q, k = as_array(q, "q", 1), as_array(k, "k", 1)
    if q.shape != k.shape:
        raise InputError(
            "qk_width",
            f"q has {q.size} entries and k has {k.size}; give them the same width.",
            q=q.size,
            k=k.size,
        )
    D = q.size
    ps, distances = (
        as_array(query_positions, "query_positions", 1),
        as_array(distances, "distances", 1),
    )
    G, K = len(ps), len(distances)
    kpos = (ps[:, None] + distances[None, :]).ravel()  # (G·K,)
    pe_q = sinusoidal_at(ps, D, base)  # (G, D)
    pe_k = sinusoidal_at(kpos, D, base).reshape(G, K, D)  # (G, K, D)
    sinusoidal = np.einsum("gkd,gd->gk", pe_k + k, q + pe_q) / np.sqrt(
        D
    )  # (G, K, D) · (G, D) -> (G, K)
    rq = rotary(np.broadcast_to(q, (G, D)), ps, base)  # (G, D)
    rk = rotary(np.broadcast_to(k, (G * K, D)), kpos, base).reshape(G, K, D)  # (G, K, D)
    return sinusoidal, np.einsum("gkd,gd->gk", rk, rq) / np.sqrt(D)


def token_permutation(a: list[str], b: list[str]) -> np.ndarray:
    """perm with b[j] == a[perm[j]]: where each token of ``b`` sits in ``a``.

    Repeated tokens are matched in order of appearance (the first "the" of b to the first "the" of
    a), so the result is always a permutation. A ValueError when b is not a reordering of a."""
    if sorted(a) != sorted(b):
        only_a = sorted(set(a) - set(b)) or sorted({t for t in a if a.count(t) != b.count(t)})
        raise InputError(
            "pe_not_reordering",
            f"The two sentences are not reorderings of the same tokens (e.g. {only_a[:5]} "
            "differ); use the same words or characters, only in another order.",
        )
    where = defaultdict(list)
    for i, tok in enumerate(a):
        where[tok].append(i)
    seen = defaultdict(int)
    perm = []
    for tok in b:
        perm.append(where[tok][seen[tok]])
        seen[tok] += 1
    return np.array(perm, dtype=int)


@dataclass(frozen=True)
class OrderResult:
    tokens_a: list[str]
    tokens_b: list[str]
    perm: np.ndarray  # (T,) b[j] == a[perm[j]]
    weights_a: np.ndarray  # (T, T) self-attention weights of sentence a
    weights_b: np.ndarray  # (T, T)
    output_a: np.ndarray  # (T, D)
    output_b: np.ndarray  # (T, D)
    difference: np.ndarray  # (T, D) output_b − output_a[perm]: b's rows matched back to a's tokens
    weight_difference: np.ndarray  # (T, T) weights_b − weights_a[perm][:, perm]

    @property
    def max_difference(self) -> float:
        return float(np.abs(self.difference).max())


def word_order(
    text_a: str,
    text_b: str,
    d_model: int = 16,
    *,
    positions: bool,
    seed: int = 0,
    base: float = 10000.0,
) -> OrderResult:
    """Self-attention over two orderings of the same tokens, with or without sinusoids added to the
    embeddings.

    Embeddings are :func:`visattn.text.seeded_embedding` (a token has one vector wherever it stands)
    and W_q, W_k, W_v are seeded random (D, D) matrices. Without positions, b's outputs are a's rows
    permuted: ``difference`` is zero up to rounding. With positions it is not."""
    a, b = tokenize(text_a), tokenize(text_b)
    perm = token_permutation(a, b)
    d_model = positive_int(d_model, "d_model", maximum=MAX_D_MODEL)
    if positions:
        _even(d_model)
    rng = np.random.default_rng(seed)
    W_q, W_k, W_v = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    X_a, X_b = seeded_embedding(a, d_model, seed), seeded_embedding(b, d_model, seed)  # (T, D)
    if positions:
        pe = sinusoidal_encoding(len(a), d_model, base)
        X_a, X_b = X_a + pe, X_b + pe
    ra = self_attention(X_a, W_q, W_k, W_v)
    rb = self_attention(X_b, W_q, W_k, W_v)
    return OrderResult(
        tokens_a=a,
        tokens_b=b,
        perm=perm,
        weights_a=ra.weights,
        weights_b=rb.weights,
        output_a=ra.output,
        output_b=rb.output,
        difference=rb.output - ra.output[perm],
        weight_difference=rb.weights - ra.weights[np.ix_(perm, perm)],
    )
