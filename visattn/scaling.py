"""Why scaled dot-product attention divides by √d_k, measured by sampling.

For q, k with d_k independent entries of mean 0 and variance 1, each product q_i·k_i has mean 0 and
variance 1, and the d_k products are independent, so q·k has **mean 0 and variance d_k** (standard
deviation √d_k). Dividing by √d_k brings the variance back to 1 for every d_k. Without it, scores
spread wider as d_k grows and softmax rows saturate towards one-hot (max weight → 1, entropy → 0),
where its gradients vanish.

Axis letters: N samples, G grid of d_k values, R rows, n keys per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .activations import softmax
from .checks import positive_int
from .errors import InputError

MAX_DK = 1024
# pairs (q, k) per d_k at most: the sample variance is then within ~2 % (1 s.d.) of the truth
N_SAMPLES = 20_000
N_ROWS = 400  # softmax rows per d_k at most for the peakedness curves
# normal draws one call makes by default (~4 M: 32 MB at the most)
BUDGET = 2**22
_CHUNK = 2_000  # rows generated at once, so a large sample never sits in memory whole


def samples_for(d_k: int) -> int:
    """The default sample size at ``d_k``: N_SAMPLES pairs, fewer where 2·d_k draws a pair exceed
    the budget (4 096 at d_k = 512, 2 048 at 1024: the measured variance is then within ~3 % (1
    s.d.) of d_k)."""
    return int(min(N_SAMPLES, max(1000, BUDGET // (2 * d_k))))


def rows_for(n_keys: int, grid: ArrayLike) -> int:
    """The default number of softmax rows per d_k: N_ROWS, fewer where (n_keys + 1)·Σ d_k draws a
    row over the grid exceed the budget (120 rows for 16 keys over d_k = 1 … 1024, 31 for 64)."""
    per_row = (n_keys + 1) * int(np.sum(grid))
    return int(min(N_ROWS, max(20, BUDGET // per_row)))


@dataclass(frozen=True)
class DotProductSample:
    d_k: int
    seed: int
    raw: np.ndarray  # (N,) q·k
    scaled: np.ndarray  # (N,) q·k / √d_k
    raw_mean: float
    raw_var: float  # ≈ d_k
    scaled_mean: float
    scaled_var: float  # ≈ 1


@dataclass(frozen=True)
class Peakedness:
    d_k: np.ndarray  # (G,)
    n_keys: int
    max_weight_raw: np.ndarray  # (G,) mean over rows of the largest weight of softmax(q·k)
    max_weight_scaled: np.ndarray  # (G,) the same for softmax(q·k / √d_k)
    entropy_raw: np.ndarray  # (G,) mean row entropy in nats; ln(n_keys) is a uniform row, 0 one-hot
    entropy_scaled: np.ndarray  # (G,)
    n_rows: int  # softmax rows measured per d_k


def _check_dk(d_k) -> int:
    return positive_int(d_k, "d_k", maximum=MAX_DK)


def sample_dot_products(d_k: int, n_samples: int | None = None, seed: int = 0) -> DotProductSample:
    """Draw ``n_samples`` (default :func:`samples_for`) pairs q, k ∈ ℝ^{d_k} with N(0, 1) entries;
    their dot products, raw and ÷√d_k."""
    d_k = _check_dk(d_k)
    n_samples = positive_int(
        samples_for(d_k) if n_samples is None else n_samples, "n_samples", maximum=1_000_000
    )
    if n_samples < 100:
        raise InputError(
            "too_small",
            f"n_samples={n_samples} is too few to estimate a variance; use at least 100.",
            name="n_samples",
            value=n_samples,
            minimum=100,
        )
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, n_samples, _CHUNK):
        m = min(_CHUNK, n_samples - start)
        q = rng.standard_normal((m, d_k))  # (m, Dk)
        k = rng.standard_normal((m, d_k))  # (m, Dk)
        parts.append(np.einsum("nd,nd->n", q, k))  # (m, Dk) · (m, Dk) -> (m,)
    raw = np.concatenate(parts)  # (N,)
    scaled = raw / np.sqrt(d_k)  # (N,)
    return DotProductSample(
        d_k=d_k,
        seed=int(seed),
        raw=raw,
        scaled=scaled,
        raw_mean=float(raw.mean()),
        raw_var=float(raw.var(ddof=1)),
        scaled_mean=float(scaled.mean()),
        scaled_var=float(scaled.var(ddof=1)),
    )


def _entropy(w: np.ndarray) -> np.ndarray:
    """Row entropy −Σ w ln w in nats (0 · ln 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log(w), 0.0)
    return -terms.sum(axis=-1)


def softmax_peakedness(
    d_ks: ArrayLike, n_keys: int = 16, n_rows: int | None = None, seed: int = 0
) -> Peakedness:
    """For each d_k: ``n_rows`` (default :func:`rows_for`) rows of one query against ``n_keys`` keys
    (N(0, 1) entries); softmax of the raw and of the scaled scores; the mean largest weight and the
    mean entropy of a row."""
    grid = [_check_dk(d) for d in np.atleast_1d(d_ks).tolist()]
    if not grid:
        raise InputError("empty_array", "d_ks is empty; give at least one d_k.", name="d_ks")
    n_keys = positive_int(n_keys, "n_keys", maximum=1024)
    if n_keys < 2:
        raise InputError(
            "too_small",
            "n_keys must be at least 2: softmax over one key is always 1.",
            name="n_keys",
            value=n_keys,
            minimum=2,
        )
    n_rows = positive_int(
        rows_for(n_keys, grid) if n_rows is None else n_rows, "n_rows", maximum=100_000
    )
    rng = np.random.default_rng(seed)
    out = {k: [] for k in ("mr", "ms", "er", "es")}
    for d_k in grid:
        q = rng.standard_normal((n_rows, 1, d_k))  # (R, 1, Dk)
        k = rng.standard_normal((n_rows, n_keys, d_k))  # (R, n, Dk)
        raw = np.einsum("rqd,rnd->rn", q, k)  # (R, n)
        for tag, s in (("r", raw), ("s", raw / np.sqrt(d_k))):
            w = softmax(s, axis=-1)  # (R, n)
            out["m" + tag].append(float(w.max(axis=-1).mean()))
            out["e" + tag].append(float(_entropy(w).mean()))
    return Peakedness(
        d_k=np.array(grid),
        n_keys=n_keys,
        max_weight_raw=np.array(out["mr"]),
        max_weight_scaled=np.array(out["ms"]),
        entropy_raw=np.array(out["er"]),
        entropy_scaled=np.array(out["es"]),
        n_rows=n_rows,
    )


def density_histogram(
    x: ArrayLike, bins: int = 60, lo: float | None = None, hi: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(centres, density) of a histogram of ``x`` over [lo, hi]: density integrates to the share
    inside."""
    x = np.asarray(x, dtype=np.float64)
    bins = positive_int(bins, "bins", maximum=1000)
    lo = float(x.min()) if lo is None else float(lo)
    hi = float(x.max()) if hi is None else float(hi)
    if not hi > lo:
        raise InputError(
            "histogram_range",
            f"the histogram range [{lo}, {hi}] is empty; give hi > lo.",
            lo=f"{lo:g}",
            hi=f"{hi:g}",
        )
    counts, edges = np.histogram(x, bins=bins, range=(lo, hi))
    width = edges[1] - edges[0]
    return (edges[:-1] + edges[1:]) / 2, counts / (x.size * width)


def normal_pdf(x: ArrayLike, var: float) -> np.ndarray:
    """The N(0, var) density at ``x`` (the curve the histograms approach)."""
    x = np.asarray(x, dtype=np.float64)
    return np.exp(-x * x / (2 * var)) / np.sqrt(2 * np.pi * var)


def prefix_dot_products(d_ks: ArrayLike, n_samples: int, seed: int = 0) -> np.ndarray:
    """(N, G) q·k for every d_k of ``d_ks`` at once: N pairs q, k ∈ ℝ^{max d_k} with N(0, 1)
    entries, and for each d_k the dot product over their first d_k coordinates (a valid sample at
    each d_k; the columns share their pairs, so a figure stepping through d_k changes smoothly).
    Costs N·2·max(d_k) draws."""
    grid = np.array([_check_dk(d) for d in np.atleast_1d(d_ks).tolist()], dtype=int)
    n_samples = positive_int(n_samples, "n_samples", maximum=1_000_000)
    rng = np.random.default_rng(seed)
    top, parts = int(grid.max()), []
    for start in range(0, n_samples, _CHUNK // 4):
        m = min(_CHUNK // 4, n_samples - start)
        q = rng.standard_normal((m, top))  # (m, max Dk)
        k = rng.standard_normal((m, top))  # (m, max Dk)
        parts.append(np.cumsum(q * k, axis=1)[:, grid - 1])  # (m, max Dk) -> (m, G)
    return np.concatenate(parts)  # (N, G)
