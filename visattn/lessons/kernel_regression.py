"""The kernel-regression lesson as data (articles 002 and 000): what each tab of the page shows.

Data: :data:`PRESETS` (article 002's waists, article 000's game, a noisy curve), article 002's Q, K,
V, X and its printed numbers (:data:`PRINTED_002`, quotations). Controls: :data:`CONTROLS`, every
URL parameter of the page (:func:`controls_for` gives them with another data set's starting values).
Tab ① — one query over key→value pairs (1 or 2 key features): :func:`regression`, :func:`fit_sigma`,
:func:`sliders`, :func:`formula`, :func:`breakdown_table`. Tab ② — vectors and scoring functions:
:func:`scored`, :func:`q1_sum`, :func:`comparison`, :func:`float_facts`, :func:`article_002`. Tab
③ — self-attention: :func:`self_attention`. No Streamlit here; words shown in tables are parameters.

Shapes: Nk keys, Dk key features (1 or 2), Tq queries, Tk keys, Dv value width.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .. import controls as declared
from ..checks import MAX_MAGNITUDE
from ..controls import Control
from ..display import log_grid, with_value
from ..errors import InputError
from ..kernel_regression import (
    KERNELS,
    QueryBreakdown,
    check_bandwidth,
    duplicate_keys,
    explain_query,
    fit_bandwidth,
    key_value_table,
    loo_error,
    nadaraya_watson,
)
from ..scoring import SCORINGS, ScoredAttention, score_attention, seeded_additive_weights

# ---- tab ①'s data sets: article 002's waists, article 000's game, a noisy curve ------------------


@dataclass(frozen=True)
class Preset:
    table: tuple  # rows (key features…, value)
    columns: tuple[str, ...]  # the columns' names (key features…, value): labels kernel.columns
    query: tuple  # default query, one number per key feature
    sigma: float  # default bandwidth σ
    ranges: tuple  # ((lo, hi) per key feature): the query slider's range
    step: float  # query slider step


def noisy_samples(n: int = 50, seed: int = 0) -> np.ndarray:
    """(n, 2) pairs (x, y) with y = 2 sin x + x^0.8 + N(0, 0.5²), x uniform on [0, 10], rounded to
    0.01."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 10.0, n))
    y = 2 * np.sin(x) + x**0.8 + rng.normal(0.0, 0.5, n)
    return np.round(np.stack([x, y], axis=1), 2)


PRESETS = {
    # Article 002: waist → weight, in the article's order (68, 60, 64); σ = 1 is its score
    # −(q − k)²/2.
    "waist": Preset(
        ((68, 126), (60, 110), (64, 115)), ("waist", "weight"), (62.0,), 1.0, ((50.0, 80.0),), 0.5
    ),
    # Article 000's game, with invented operators (the article gives no table): strength → ability …
    "game_strength": Preset(
        ((150, 62), (180, 70), (200, 78), (215, 81), (240, 88), (270, 95)),
        ("strength", "ability"),
        (207.0,),
        10.0,
        ((100.0, 320.0),),
        1.0,
    ),
    # … then strength and intelligence → a re-rated ability; the newcomer 汤汤 has (207, 289).
    "game_both": Preset(
        (
            (150, 320, 85),
            (180, 260, 80),
            (200, 300, 90),
            (215, 240, 82),
            (240, 280, 93),
            (270, 200, 88),
        ),
        ("strength", "intelligence", "ability"),
        (207.0, 289.0),
        20.0,
        ((100.0, 320.0), (150.0, 370.0)),
        1.0,
    ),
    # A noisy 1-D function, for the fitted curve and for choosing σ by leave-one-out.
    "noisy": Preset(
        tuple(map(tuple, noisy_samples().tolist())), ("x", "y"), (5.0,), 0.5, ((0.0, 10.0),), 0.05
    ),
}
COLUMNS = tuple(dict.fromkeys(c for p in PRESETS.values() for c in p.columns))


# ---- article 002's data --------------------------------------------------------------------------

Q0 = ((64.0, 85.0), (61.0, 80.0))  # two queries × two features
K0 = ((68.0, 91.0), (60.0, 87.0), (64.0, 88.0))  # three keys
V0 = ((126.0, 180.0), (110.0, 172.0), (115.0, 170.0))  # three values
X0 = ((67.0, 91.0), (60.0, 87.0), (64.0, 84.0))  # self-attention: Q = K = V = X
HIDDEN = 2  # the additive score's hidden width A


def additive_weights(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_q (A, 2), W_k (A, 2), w_v (A, 1)) drawn with ``seed``, shaped as the page's editors show
    them."""
    W_q, W_k, w_v = seeded_additive_weights(2, 2, hidden=HIDDEN, seed=seed)
    return W_q, W_k, w_v.reshape(HIDDEN, 1)


def _rows(m: ArrayLike) -> tuple[tuple[float, ...], ...]:
    """A matrix as a control's default: rows of floats, immutable."""
    return tuple(tuple(row) for row in np.asarray(m, dtype=float).tolist())


WQ0, WK0, WV0 = (_rows(m) for m in additive_weights(0))


@dataclass(frozen=True)
class Matrix:
    """A matrix the page edits: its control (URL parameter and default), its name and its rows'."""

    control: Control
    name: str  # Q, K, V, W_q, W_k, w_v, X
    rows: tuple[str, ...]  # q1, q2 …; the additive weights' rows are hidden units h1, h2


VECTORS = (  # tab ②: article 002's queries, keys and values (roles: labels kernel.matrix_roles)
    Matrix(Control("kr_Q", Q0, matrix=True), "Q", ("q1", "q2")),
    Matrix(Control("kr_K", K0, matrix=True), "K", ("k1", "k2", "k3")),
    Matrix(Control("kr_V", V0, matrix=True), "V", ("v1", "v2", "v3")),
)
ADDITIVE = (  # the additive score's weights, used by tabs ② and ③
    Matrix(Control("kr_Wq", WQ0, matrix=True), "W_q", ("h1", "h2")),
    Matrix(Control("kr_Wk", WK0, matrix=True), "W_k", ("h1", "h2")),
    Matrix(Control("kr_wv", WV0, matrix=True), "w_v", ("h1", "h2")),
)
SELF = Matrix(Control("kr_X", X0, matrix=True), "X", ("x1", "x2", "x3"))  # tab ③: Q = K = V = X
MATRICES = (*VECTORS, *ADDITIVE, SELF)  # the fixed-shape matrices of tabs ② and ③

MAX_TABLE_ROWS = 64  # rows of the key→value table: a lecture example, and what a link can carry
# rows of the query × key heatmap (few enough to print the numbers on 3 keys)
N_HEATMAP_QUERIES = 21
N_CURVE = 301  # points of the fitted curve
N_PLANE = 61  # grid side of the 2-D estimate surface
N_LIVE_SIGMA = 25  # positions of the figure's σ slider over the fitted curve (at most)
N_LIVE_SIGMA_PLANE = 17  # … over the 2-D estimate surface (N_PLANE² numbers a position)
SIGMA_LEAST = sys.float_info.min  # σ > 0: the least a link may ask (tiny σ overflow, as taught)


def preset_start(name: str) -> tuple[float, float, float]:
    """(first query feature, second query feature or 0, σ) a preset starts from."""
    p = PRESETS[name]
    return p.query[0], (p.query[1] if len(p.query) > 1 else 0.0), p.sigma


# ---- the page's controls: every URL parameter, once ----------------------------------------------

# The page's three tabs: ① one query over key→value pairs, ② vectors and a scoring function, ③
# self-attention (the open one is in the link)
TABS = ("1d", "md", "self")
TAB = Control("kr_tab", "1d", options=TABS, labels="kernel_regression.tabs")
PRESET = Control("kr_preset", "waist", options=tuple(PRESETS), labels="kernel_regression.presets")
_FIRST = PRESETS[PRESET.default]
# The table, query and σ default to the first data set's; :func:`controls_for` gives another's. The
# query takes any finite number (the box beside its slider may leave the slider's range); σ, the
# fitted curve's own slider (the figures, the table and the formula follow it), any number > 0.
CONTROLS = declared.table(
    TAB,
    PRESET,
    Control("kr_data", _rows(_FIRST.table), matrix=True),
    Control("kr_q", _FIRST.query[0]),
    Control("kr_q2", 0.0),  # kept in the link while the table has one key feature
    Control("kr_kernel", "gaussian", options=KERNELS, labels="kernel_regression.kernels"),
    Control("kr_sigma", _FIRST.sigma, lo=SIGMA_LEAST, hi=MAX_MAGNITUDE, in_figure=True),
    [m.control for m in VECTORS],
    Control("kr_score", "scaled_dot", options=SCORINGS, labels="kernel_regression.scorings"),
    Control("kr_std", False),
    [m.control for m in ADDITIVE],
    SELF.control,
    Control("kr_sa_score", "scaled_dot", options=SCORINGS, labels="kernel_regression.scorings"),
    Control("kr_sa_std", False),
)


def controls_for(preset: str) -> Mapping[str, Control]:
    """``CONTROLS`` with the table, query and σ that ``preset`` starts from as their defaults: bound
    so, a link leaves out what its data set already gives."""
    q1, q2, sigma = preset_start(preset)
    starts = {"kr_data": _rows(PRESETS[preset].table), "kr_q": q1, "kr_q2": q2, "kr_sigma": sigma}
    return dict(CONTROLS) | {k: replace(CONTROLS[k], default=v) for k, v in starts.items()}


QUERY_KEYS = ("kr_q", "kr_q2")  # the query's controls, one per key feature
# What the page warns about in tab ① (:meth:`Regression.warnings`), and the roles of tab ②'s Q, K,
# V: one label table each.
WARNINGS = ("duplicates", "compact", "overflow")
ARTICLE_NOTES = ("score", "weight", "dot_model", "additive_model")  # see :class:`ArticleRow`
LABELS = {
    "kernel_regression.preset_notes": tuple(PRESETS),
    "kernel_regression.columns": COLUMNS,
    "kernel_regression.warnings": WARNINGS,
    "kernel_regression.matrix_roles": tuple(m.name for m in VECTORS),
    "kernel_regression.article_notes": ARTICLE_NOTES,
}


# ---- numbers as the page writes them -------------------------------------------------------------


def latex_number(v: float, digits: int = 4) -> str:
    """A number for LaTeX: ``digits`` significant digits, powers of ten written out, −∞ for -inf."""
    if np.isneginf(v):
        return r"-\infty"
    s = f"{v:.{digits}g}"
    if "e" in s:
        m, e = s.split("e")
        return rf"{m}\times 10^{{{int(e)}}}"
    return s


def key_text(row: Sequence[float] | np.ndarray) -> str:
    """A key as the page names it: ``62`` for one feature, ``(207, 289)`` for two."""
    return "(" + ", ".join(f"{x:g}" for x in row) + ")" if len(row) > 1 else f"{row[0]:g}"


def nice_step(span: float) -> float:
    """A power of ten giving about 100 slider steps over ``span``."""
    return float(10 ** np.floor(np.log10(max(span, 1e-9) / 100)))


# ---- tab ①: the table, the sliders, the regression -----------------------------------------------


def check_table(table: ArrayLike, rows: int = 0) -> np.ndarray:
    """The key→value table as floats, refused past :data:`MAX_TABLE_ROWS` rows (before any heavy
    work). ``rows``: the rows an edit asked for, when the app refused it before it reached
    ``table``."""
    a = np.asarray(table, dtype=float)
    if (n := max(rows, a.shape[0] if a.ndim == 2 else 0)) > MAX_TABLE_ROWS:
        raise InputError(
            "table_too_long",
            f"the table has {n} rows; this page takes at most {MAX_TABLE_ROWS}.",
            rows=n,
            limit=MAX_TABLE_ROWS,
        )
    key_value_table(a)
    return a


def query_ranges(preset: str, table: ArrayLike) -> tuple[tuple[float, float], ...]:
    """(lo, hi) per key feature: the preset's range, widened to take in every key of the table
    (within ±MAX_MAGNITUDE)."""
    keys = np.asarray(table, dtype=float)[:, :-1]
    p = PRESETS[preset]
    out = []
    for j in range(keys.shape[1]):
        kmin, kmax = float(keys[:, j].min()), float(keys[:, j].max())
        pad = 0.1 * (kmax - kmin) or 1.0
        lo, hi = p.ranges[j] if keys.shape[1] == len(p.ranges) else (kmin - pad, kmax + pad)
        lo, hi = float(np.floor(min(lo, kmin - pad))), float(np.ceil(max(hi, kmax + pad)))
        # the curve's queries stay within what a query may be
        out.append((max(lo, -MAX_MAGNITUDE), min(hi, MAX_MAGNITUDE)))
    return tuple(out)


@dataclass(frozen=True)
class Sliders:
    """Ranges and steps of tab ①'s sliders for a table (the query's and σ's URL controls take any
    number: these are what dragging covers)."""

    ranges: tuple  # ((lo, hi) per key feature)
    steps: tuple  # the query sliders' steps (one per key feature of the preset)
    sigma_range: tuple  # (lo, hi) of the figure's σ slider
    sigma_step: float


def sliders(preset: str, table: ArrayLike) -> Sliders:
    """Slider ranges that fit ``table`` (the preset's own when the table is the preset's shape and
    span)."""
    p = PRESETS[preset]
    ranges = query_ranges(preset, table)
    step = (
        p.step
        if ranges == query_ranges(preset, p.table)
        else nice_step(ranges[0][1] - ranges[0][0])
    )
    span = max(hi - lo for lo, hi in ranges)
    s_step = nice_step(span / 2)
    return Sliders(
        ranges, (step, p.step), (s_step, float(np.ceil(max(span / 2, 2 * p.sigma)))), s_step
    )


@dataclass(frozen=True)
class Fit:
    """σ by leave-one-out, the error curve it was chosen on, and where that curve is flat."""

    sigma: float
    grid: np.ndarray  # (G,) σ values tried
    errors: (
        np.ndarray
    )  # (G,) leave-one-out mean squared error; inf where some pair sees no other key
    # the error is (within 1e-6) lowest already at the smallest σ, and stays so up to here
    flat_upto: float | None


def fit_sigma(table: ArrayLike, kernel: str) -> Fit | None:
    """The leave-one-out σ for ``table``, or None when no σ reaches a neighbour for every pair
    (compact kernels).

    Independent of the current σ, so the page can offer it even while σ itself is invalid.
    """
    keys, values = key_value_table(check_table(table))
    try:
        sigma, grid, errors = fit_bandwidth(keys, values, kernel)
    except InputError as e:
        if e.code == "no_bandwidth":
            return None
        raise
    low = np.isclose(errors, np.nanmin(errors), rtol=1e-6)
    return Fit(sigma, grid, errors, float(grid[low].max()) if low[0] else None)


@dataclass(frozen=True)
class SigmaSweep:
    """Tab ① at every σ of the figure's slider, the query held: what the figures, the table and the
    formula show at each position (index ``k``: ``values[k]``)."""

    values: np.ndarray  # (G,) σ, the control's among them exactly
    active: int  # index of the control's σ
    breakdowns: tuple[QueryBreakdown, ...]  # (G,) the query key by key at each σ
    # (G, N_CURVE) the fitted curve, or (G, N_PLANE, N_PLANE) the surface, at each σ
    curves: np.ndarray
    grid_weights: np.ndarray  # (G, N_HEATMAP_QUERIES, Nk) the heatmap's weights (1-D; else empty)
    loo: np.ndarray  # (G,) leave-one-out error at each σ
    unreachable: tuple[str, ...]  # (G,) "", "compact" or "overflow": why there is no estimate

    @property
    def estimates(self) -> np.ndarray:
        """(G,) the estimate at the query, NaN where no key is in reach."""
        return np.array([b.estimate for b in self.breakdowns])

    @property
    def weights(self) -> np.ndarray:
        """(G, Nk) the query's weights over the keys, in the table's order."""
        return np.stack([b.weights for b in self.breakdowns])


@dataclass(frozen=True)
class Regression:
    """Kernel regression of a key→value table at one query, as tab ① shows it: the query key by
    key, the fitted curve (or surface) and the heatmap over the sliders' ranges, σ by
    leave-one-out, and (with the page's sliders) all of it at every σ of the figure's slider."""

    kernel: str
    sigma: float
    breakdown: QueryBreakdown
    duplicates: list  # [(key tuple, [0-based rows])]
    order: np.ndarray  # (Nk,) key indices sorted by key (1-D) — the heatmap's column order
    grid: np.ndarray  # (N_HEATMAP_QUERIES,) the heatmap's queries (1-D only, else empty)
    grid_weights: np.ndarray  # (N_HEATMAP_QUERIES, Nk) weights, columns in ``order`` (1-D only)
    curve_x: np.ndarray  # (N_CURVE,) 1-D; (N_PLANE,) first feature in 2-D
    # (N_CURVE,) estimates, NaN where no key is in reach; (N_PLANE, N_PLANE) in 2-D
    curve_y: np.ndarray
    plane_y: np.ndarray  # (N_PLANE,) second feature in 2-D, else empty
    fit: Fit | None  # σ by leave-one-out, or None when no σ reaches every point
    loo_current: float  # leave-one-out error at the current σ
    # "" (an estimate exists), "compact" (no key within σ) or "overflow" (u² overflows)
    unreachable: str
    by_sigma: SigmaSweep | None = None  # σ over its slider's range, log-spaced (with ``live``)

    def warnings(self, sep: str = ", ") -> tuple[tuple[str, dict], ...]:
        """(id, params) of what the page warns about whatever σ: "duplicates", per repeated key,
        rows counted from 1 and joined with ``sep`` (no estimate at a σ: :func:`no_estimate`)."""
        return tuple(
            ("duplicates", dict(k=key_text(key), rows=sep.join(str(r + 1) for r in rows)))
            for key, rows in self.duplicates
        )


def no_estimate(query: np.ndarray, sigma: float, unreachable: str) -> tuple[tuple[str, dict], ...]:
    """(id, params) of the warning of a σ that leaves no estimate at the query ("compact" or
    "overflow"; none when ``unreachable`` is "")."""
    return ((unreachable, dict(q=key_text(query), sigma=f"{sigma:g}")),) if unreachable else ()


def _unreachable(b: QueryBreakdown, kernel: str) -> str:
    if b.supported:
        return ""
    return "compact" if kernel in ("boxcar", "epanechnikov") else "overflow"


def sigma_sweep(
    keys: np.ndarray,
    values: np.ndarray,
    query: np.ndarray,
    kernel: str,
    sigma: float,
    grid: Sequence[float],
    points: np.ndarray,
    shape: tuple[int, ...],
    heatmap: tuple[np.ndarray, np.ndarray] | None = None,
) -> SigmaSweep:
    """σ over ``grid`` (``sigma`` put in exactly), the query held: at each σ the query key by key,
    the estimate at ``points`` (the curve's or the surface's queries) reshaped to ``shape``, the
    leave-one-out error, and with ``heatmap`` = (its queries, the keys' order) the heatmap's
    weights."""
    sigmas, active = with_value(grid, sigma)
    breakdowns = tuple(explain_query(query, keys, values, kernel, s) for s in sigmas)
    curves = np.stack(
        [nadaraya_watson(points, keys, values, kernel, s).estimates.reshape(shape) for s in sigmas]
    )
    if heatmap is None:
        grid_weights = np.empty(0)
    else:
        queries, order = heatmap
        grid_weights = np.stack(
            [
                nadaraya_watson(queries, keys[order], values[order], kernel, s).weights
                for s in sigmas
            ]
        )  # (G, N_HEATMAP_QUERIES, Nk)
    return SigmaSweep(
        values=np.asarray(sigmas),
        active=active,
        breakdowns=breakdowns,
        curves=curves,
        grid_weights=grid_weights,
        loo=np.asarray(loo_error(keys, values, sigmas, kernel), dtype=float),
        unreachable=tuple(_unreachable(b, kernel) for b in breakdowns),
    )


def regression(
    table: ArrayLike,
    query: tuple,
    kernel: str,
    sigma: float,
    ranges: tuple,
    live: Sliders | None = None,
) -> Regression:
    """Everything tab ① shows. ``ranges`` ((lo, hi) per key feature) spans the curve and the
    heatmap. With ``live`` (the page's :class:`Sliders`), also all of it at every σ of the fitted
    curve's slider (:class:`SigmaSweep`)."""
    sigma = check_bandwidth(sigma)
    keys, values = key_value_table(check_table(table))
    b = explain_query(np.asarray(query[: keys.shape[1]], dtype=float), keys, values, kernel, sigma)
    fit = fit_sigma(table, kernel)
    loo_now = float(loo_error(keys, values, [sigma], kernel)[0])
    unreachable = _unreachable(b, kernel)
    empty = np.empty(0)
    dups = duplicate_keys(keys)
    if keys.shape[1] == 1:
        ((lo, hi),) = ranges
        order = np.argsort(keys[:, 0], kind="stable")
        grid = np.linspace(lo, hi, N_HEATMAP_QUERIES)
        grid_w = nadaraya_watson(
            grid, keys[order], values[order], kernel, sigma
        ).weights  # (Nq, Nk)
        # reach a query typed outside the slider
        xs = np.linspace(min(lo, b.query[0]), max(hi, b.query[0]), N_CURVE)
        ys = nadaraya_watson(xs, keys, values, kernel, sigma).estimates
        at = (keys, values, b.query, kernel, sigma)
        sweep = _sweep(live, at, xs[:, None], (N_CURVE,), N_LIVE_SIGMA, (grid, order))
        return Regression(
            kernel,
            sigma,
            b,
            dups,
            order,
            grid,
            grid_w,
            xs,
            ys,
            empty,
            fit,
            loo_now,
            unreachable,
            sweep,
        )
    (lo1, hi1), (lo2, hi2) = ranges
    xs, ys = np.linspace(lo1, hi1, N_PLANE), np.linspace(lo2, hi2, N_PLANE)
    gx, gy = np.meshgrid(xs, ys)  # (N_PLANE, N_PLANE) each; rows follow y
    points = np.stack([gx.ravel(), gy.ravel()], 1)
    est = nadaraya_watson(points, keys, values, kernel, sigma).estimates
    at = (keys, values, b.query, kernel, sigma)
    sweep = _sweep(live, at, points, gx.shape, N_LIVE_SIGMA_PLANE)
    return Regression(
        kernel,
        sigma,
        b,
        dups,
        np.arange(len(keys)),
        empty,
        empty,
        xs,
        est.reshape(gx.shape),
        ys,
        fit,
        loo_now,
        unreachable,
        sweep,
    )


def _sweep(
    live: Sliders | None,
    at: tuple,
    points: np.ndarray,
    shape: tuple[int, ...],
    positions: int,
    heatmap: tuple[np.ndarray, np.ndarray] | None = None,
) -> SigmaSweep | None:
    """The σ sweep over the figure's slider, at most ``positions`` σ (None without ``live``);
    ``at`` = (keys, values, query, kernel, σ)."""
    if live is None:
        return None
    keys, values, query, kernel, sigma = at
    grid = log_grid(*live.sigma_range, live.sigma_step, positions)
    return sigma_sweep(keys, values, query, kernel, sigma, grid, points, shape, heatmap)


@dataclass(frozen=True)
class Formula:
    """The kernel, softmax and weighted sum in LaTeX: in symbols, then with this query's numbers."""

    symbolic: str
    # the heaviest key's distance and score, its weight, the weighted sum (empty: no estimate)
    lines: tuple[str, ...]
    more: int  # terms of the weighted sum left out
    more_weight: float  # their total weight
    underflow: bool  # every e^s is 0 in float64 (the weights come from e^(s − max s))

    @property
    def latex(self) -> str:
        """Every line in one display, one under the other."""
        return (
            r"\begin{gathered}" + r"\\[4pt]".join((self.symbolic, *self.lines)) + r"\end{gathered}"
        )


_SCORE = {
    "gaussian": r"s_i=-\frac{{{d}^2}}{{2\sigma^2}}",
    "laplace": r"s_i=-\frac{{{d}}}{{\sigma}}",
    "boxcar": r"s_i=\begin{{cases}}0 & {d}\le\sigma\\ -\infty & {d}>\sigma\end{{cases}}",
    "epanechnikov": (
        r"s_i=\begin{{cases}}\ln\!\left(1-\frac{{{d}^2}}{{\sigma^2}}\right) & {d}<\sigma"
        r"\\ -\infty & {d}\ge\sigma\end{{cases}}"
    ),
}
_SHOWN = {
    "gaussian": r"-\frac{{{d}^2}}{{2\cdot {s}^2}}",
    "laplace": r"-\frac{{{d}}}{{{s}}}",
    "boxcar": "0",
    "epanechnikov": r"\ln\!\left(1-\frac{{{d}^2}}{{{s}^2}}\right)",
}
N_TERMS = 4


def formula(b: QueryBreakdown, kernel: str, sigma: float) -> Formula:
    """The formula lines for one query's breakdown (``b`` from :func:`regression`)."""
    d = r"\lVert q-k_i\rVert" if len(b.query) > 1 else r"|q-k_i|"
    symbolic = (
        _SCORE[kernel].format(d=d)
        + r",\qquad \alpha_i=\frac{e^{s_i}}{\sum_j e^{s_j}},\qquad f(q)=\sum_i \alpha_i v_i"
    )
    total = float(b.exp_scores.sum())
    if not b.supported:
        return Formula(symbolic, (), 0, 0.0, total == 0)
    top = np.argsort(-b.weights, kind="stable")
    i = int(top[0])
    dist = (
        rf"\lVert{key_text(b.query)}-{key_text(b.keys[i])}\rVert"
        if len(b.query) > 1
        else rf"|{b.query[0]:g}-{b.keys[i, 0]:g}|"
    )
    shown = _SHOWN[kernel].format(d=latex_number(b.distances[i]), s=latex_number(sigma))
    if total > 0:
        ratio = rf"\frac{{{latex_number(b.exp_scores[i])}}}{{{latex_number(total)}}}"
    else:  # e^{s} underflows for every key: show what is computed, e^{s − max s}
        ratio = rf"\frac{{e^{{s_{{{i + 1}}}-\max_j s_j}}}}{{\sum_j e^{{s_j-\max_j s_j}}}}"
    alpha = rf"\alpha_{{{i + 1}}}={ratio}={latex_number(b.weights[i])}"
    terms = [
        rf"{latex_number(b.weights[j], 3)}\times {latex_number(b.values[j])}" for j in top[:N_TERMS]
    ]
    more = max(len(top) - N_TERMS, 0)
    rest = rf"+\underbrace{{\cdots}}_{{{more}}}" if more else ""
    fq = rf"f{key_text(b.query)}" if len(b.query) > 1 else rf"f({key_text(b.query)})"
    lines = (
        rf"d_{{{i + 1}}}={dist}={latex_number(b.distances[i])},"
        rf"\qquad s_{{{i + 1}}}={shown}={latex_number(b.scores[i])}",
        rf"e^{{s_{{{i + 1}}}}}={latex_number(b.exp_scores[i])},\qquad {alpha}",
        fq + "=" + "+".join(terms) + rest + rf"={latex_number(b.estimate, 6)}",
    )
    return Formula(symbolic, lines, more, float(b.weights[top[N_TERMS:]].sum()), total == 0)


def _score_text(v: float) -> str:
    return "−∞" if np.isneginf(v) else f"{v:.4g}"


def breakdown_table(b: QueryBreakdown, columns: list[str]) -> pd.DataFrame:
    """key, value, score, exp(score), weight, weight × value per key (rows 1…Nk) and the Σ row;
    ``columns`` names the six."""
    rows = [
        [key_text(k), f"{v:g}", _score_text(s), _score_text(e), f"{w:.4f}", f"{c:.4f}"]
        for k, v, s, e, w, c in zip(
            b.keys, b.values, b.scores, b.exp_scores, b.weights, b.contributions, strict=True
        )
    ]
    rows.append(
        [
            "",
            "",
            "",
            _score_text(b.exp_scores.sum()),
            f"{b.weights.sum():.4f}",
            f"{b.estimate:.4f}" if b.supported else "—",
        ]
    )
    return pd.DataFrame(
        rows, columns=columns, index=[str(i + 1) for i in range(len(b.keys))] + ["Σ"]
    )


def breakdown_matrix(b: QueryBreakdown) -> np.ndarray:
    """(Nk, Dk + 4): keys, value, score, weight, weight × value — the CSV of tab ①."""
    return np.column_stack([b.keys, b.values, b.scores, b.weights, b.contributions])


# ---- tab ②: vectors, scoring functions -----------------------------------------------------------


def scored(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    method: str,
    W_q: ArrayLike | None,
    W_k: ArrayLike | None,
    w_v: ArrayLike | None,
    standardized: bool,
) -> ScoredAttention:
    """softmax(scores(Q, K)) V with one scoring function (the additive weights are used only by
    ``additive``)."""
    return score_attention(Q, K, V, method, W_q=W_q, W_k=W_k, w_v=w_v, standardized=standardized)


def names(r: ScoredAttention) -> tuple[list[str], list[str]]:
    """(key names k1…, query names q1…) of a scored attention."""
    return [f"k{j + 1}" for j in range(r.scores.shape[1])], [
        f"q{i + 1}" for i in range(r.scores.shape[0])
    ]


def q1_sum(r: ScoredAttention) -> str:
    """f(q₁) = Σⱼ αⱼ vⱼ = (…) in LaTeX, with the weights as computed (a weight of 10⁻²⁶² is written
    as such)."""
    return (
        r"f(q_1)="
        + "+".join(rf"{latex_number(w, 3)}\,v_{{{j + 1}}}" for j, w in enumerate(r.weights[0]))
        + r"=("
        + ", ".join(latex_number(x, 5) for x in r.output[0])
        + ")"
    )


def comparison(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    W: Sequence[ArrayLike | None],
    row_name: Callable[[str, bool], str],
    col_name: Callable[[int], str],
    gap_name: str,
) -> tuple[pd.DataFrame, float]:
    """Largest weight of each query (and its key) for every scoring × (raw, standardised), the
    widest score spread, and the largest raw dot product: how one-hot softmax gets.
    ``row_name(method, standardised)``, ``col_name(i)`` (i counts queries from 1) and ``gap_name``
    are the table's words."""
    rows, index = [], []
    for method in SCORINGS:
        for std in (False, True):
            r = scored(Q, K, V, method, *W, std)
            rows.append(
                [f"{w.max():.3f} → k{int(w.argmax()) + 1}" for w in r.weights]
                + [f"{np.ptp(r.scores, axis=1).max():.3g}"]
            )
            index.append(row_name(method, std))
    cols = [col_name(i + 1) for i in range(len(rows[0]) - 1)] + [gap_name]
    biggest = float(np.abs(scored(Q, K, V, "dot", *W, False).scores).max())
    return pd.DataFrame(rows, index=index, columns=cols), biggest


@dataclass(frozen=True)
class FloatFacts:
    """What float64 does with e^x, measured with np.exp (the page quotes these numbers)."""

    exp_minus_300: float  # e^−300: tiny, not 0
    zero_below: float  # e^x is exactly 0 for x below this (≈ −745.13)
    smallest: float  # the smallest positive float64 (subnormal, ≈ 4.9e-324)
    eps: float  # 1 + eps is the next float64 after 1 (≈ 2.2e-16)
    lost_next_to_one: bool  # 1 + e^−300 == 1 in float64


def float_facts() -> FloatFacts:
    with np.errstate(under="ignore"):
        lo, hi = -800.0, -700.0  # np.exp(lo) == 0 < np.exp(hi): bisect to the edge
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.exp(mid) == 0 else (lo, mid)
        e300 = float(np.exp(-300.0))
    info = np.finfo(np.float64)
    return FloatFacts(
        e300,
        hi,
        float(info.smallest_subnormal),
        float(info.eps),
        bool(np.float64(1.0) + e300 == 1.0),
    )


def float_facts_text() -> dict[str, str]:
    """:func:`float_facts` as the page prints them: e300, edge, tiny, eps."""
    f = float_facts()
    return dict(
        e300=f"{f.exp_minus_300:.2g}",
        edge=f"{f.zero_below:.2f}",
        tiny=f"{f.smallest:.2g}",
        eps=f"{f.eps:.2g}",
    )


@dataclass(frozen=True)
class ArticleRow:
    what: str  # the quantity, in symbols
    note: str  # "" or an id the page words: "score", "weight", "dot_model", "additive_model"
    printed: str  # quoted from article 002
    computed: str  # computed here
    agrees: bool


# QUOTATIONS from article 002, not results: shown beside the computed values, several do not hold.
PRINTED_002 = {
    "gs_68": "1.52 × 10⁻⁸",
    "gs_60": "0.135",
    "gs_64": "0.135",
    "a_68": "0",
    "a_60": "0.5",
    "a_64": "0.5",
    "f_62": "112.5",
    "q1k1": "64 × 68 + 85 × 91 = 4352 + 7735 = 12087",
    "a_q1k1": "Softmax(q₁k₁ᵀ) = 12087",
    "dot_model": "α = q·k / √d",
    "additive_model": "α = softmax(W_q q + W_k k + b)",
}
PRINTED_002_VALUES = {
    "gs_68": 1.52e-8,
    "gs_60": 0.135,
    "gs_64": 0.135,
    "a_68": 0.0,
    "a_60": 0.5,
    "a_64": 0.5,
    "f_62": 112.5,
    "q1k1": 12087.0,
    "a_q1k1": 12087.0,
}


def article_002_table(columns: list[str], notes: dict[str, str]) -> pd.DataFrame:
    """:func:`article_002` as a table indexed by quantity: ``columns`` names (quantity, printed,
    computed, agrees), ``notes`` words each row's note id (appended to its quantity)."""
    rows = [
        (
            r.what + (f" — {notes[r.note]}" if r.note else ""),
            r.printed,
            r.computed,
            "✓" if r.agrees else "✗",
        )
        for r in article_002()
    ]
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])


def article_002() -> tuple[ArticleRow, ...]:
    """Article 002's printed numbers and formulas next to what its data give (σ = 1, Q, K, V as
    printed)."""
    keys, values = key_value_table(PRESETS["waist"].table)
    b = explain_query(62.0, keys, values, "gaussian", 1.0)
    dot = score_attention(Q0, K0, V0, "dot")
    s11, a11 = float(dot.scores[0, 0]), float(dot.weights[0, 0])
    computed = {
        "gs_68": b.exp_scores[0],
        "gs_60": b.exp_scores[1],
        "gs_64": b.exp_scores[2],
        "a_68": b.weights[0],
        "a_60": b.weights[1],
        "a_64": b.weights[2],
        "f_62": b.estimate,
        "q1k1": s11,
        "a_q1k1": a11,
    }
    what = {
        "gs_68": "GS(62, 68) = e^(−(62 − 68)²/2)",
        "gs_60": "GS(62, 60)",
        "gs_64": "GS(62, 64)",
        "a_68": "α(62, 68)",
        "a_60": "α(62, 60)",
        "a_64": "α(62, 64)",
        "f_62": "f(62)",
        "q1k1": "q₁ · k₁",
        "a_q1k1": "α(q₁, k₁)",
    }
    rows = []
    for k, v in computed.items():
        p = PRINTED_002_VALUES[k]
        # a printed number agrees when it is the computed one rounded as printed (3 significant
        # digits here)
        ok = abs(p - v) <= max(0.005 * abs(p), 0.005) if p else abs(v) < 0.005
        shown = f"{v:.6g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3e}"
        rows.append(
            ArticleRow(
                what[k], {"q1k1": "score", "a_q1k1": "weight"}.get(k, ""), PRINTED_002[k], shown, ok
            )
        )
    rows.append(ArticleRow("α(qᵢ, kᵢ)", "dot_model", PRINTED_002["dot_model"], "s = q·k", False))
    rows.append(
        ArticleRow(
            "α(qᵢ, kᵢ)",
            "additive_model",
            PRINTED_002["additive_model"],
            "s = w_vᵀ tanh(W_q q + W_k k),  α = softmax(s)",
            False,
        )
    )
    return tuple(rows)


# ---- tab ③: self-attention -----------------------------------------------------------------------

SELF_FORMULA = {  # f(X) for each scoring function
    "scaled_dot": r"f(X)=\mathrm{softmax}\!\left(\frac{XX^\top}{\sqrt{d_k}}\right)X",
    "dot": r"f(X)=\mathrm{softmax}\!\left(XX^\top\right)X",
    "additive": (
        r"f(X)_i=\sum_j \mathrm{softmax}_j\!\left(w_v^\top\tanh(W_q x_i+W_k x_j)\right)x_j"
    ),
}


def top_pairs(weights: ArrayLike, rows: Sequence[str], cols: Sequence[str]) -> tuple[str, ...]:
    """ "q1 → k2" per row of ``weights`` (Tq, Tk): the key each query weighs most."""
    top = np.asarray(weights).argmax(1)  # (Tq,)
    return tuple(f"{r} → {cols[int(j)]}" for r, j in zip(rows, top, strict=True))


@dataclass(frozen=True)
class SelfAttention:
    """Tab ③: the rows of X attending to each other with one scoring function."""

    result: ScoredAttention
    names: tuple[str, ...]  # x1, x2, …
    formula: str  # LaTeX of the chosen scoring


def self_attention(
    X: ArrayLike, method: str, W: Sequence[ArrayLike | None], standardized: bool
) -> SelfAttention:
    """Self-attention over the rows of X (Q = K = V = X) with one scoring function."""
    r = scored(X, X, X, method, *W, standardized)
    names = tuple(f"x{i + 1}" for i in range(len(r.weights)))
    return SelfAttention(r, names, SELF_FORMULA[method])
