"""The positional-encoding lesson (article 003) as data: one function per section, each returning a
frozen dataclass with everything the page shows — arrays for the figures, the numbers of its
measured sentences (already formatted), and its LaTeX.

Sections: the sinusoidal table (``table``, ``curves``), relative position (``relative``,
``rotation``, at every offset of the circle's slider), why attention needs order (``order``:
小明喜欢吃苹果 against 苹果喜欢吃小明), and RoPE and ALiBi (``beyond``, ``beyond_steps``: at every
query position of the score figure's slider; ``alibi``). Axis letters: P positions, D d_model, T
tokens, H heads, G slider positions, K distances."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import display, positional_encoding
from ..controls import Control
from ..controls import table as control_table

BASE = 10000.0
SECTIONS = ("table", "relative", "order", "beyond")
PAIRS = {
    "zh": ("小明喜欢吃苹果", "苹果喜欢吃小明"),
    "en": ("the dog bit the man", "the man bit the dog"),
}
PAIR_CHOICES = (*PAIRS, "custom")
QK = ("same", "random")
VARIANTS = ("without", "with")  # the order section's two runs: without and with positions
# what a browser draws quickly as a heatmap (float32, no cell text)
MAX_SHOWN_POSITIONS = 512
MAX_SHOWN_DIMS = 256
EVEN_SMALL = tuple(range(2, 65, 2))
EVEN_WIDE = tuple(range(2, 257, 2))
MAX_DIMS_CHARS = 80  # the "dimensions to plot" box
MAX_SENTENCE_CHARS = 200  # each custom sentence (64 tokens at most are used)
SAME = 1e-9  # a measured difference below this is zero up to rounding
LIVE_K = 64  # the rotation figure's in-figure slider: offsets k = 0 … LIVE_K (and the control's k)
# the score figure's in-figure slider: at most this many numbers a curve over all its steps
LIVE_NUMBERS = 12_000

# Every control of the page. The table's limits are generous, so a value typed too large is shown
# with a message that says why (visattn.positional_encoding checks it).
CONTROLS = control_table(
    Control("pe_sec", "table", options=SECTIONS, labels="positional_encoding.sections"),
    # the sinusoidal table
    Control("pe_n", 64, lo=0, hi=100_000, step=1),
    Control("pe_d", 128, lo=0, hi=10_000, step=2),
    Control("pe_dims", "0, 1, 20, 21, 60", max_chars=MAX_DIMS_CHARS),
    # relative position; the pair i exists up to d_model / 2 − 1 (narrowed by pe_rd)
    Control("pe_rd", 32, options=EVEN_WIDE),
    Control("pe_rn", 40, lo=2, hi=128),
    Control("pe_ri", 2, lo=0, hi=EVEN_WIDE[-1] // 2 - 1),
    # the offset k: the rotation circle's own slider (0 … LIVE_K; a link's k up to 1000 is put in)
    Control("pe_rk", 3, lo=0, hi=1000, in_figure=True),
    Control("pe_rp", 5, lo=0, hi=1000),
    # why attention needs it
    Control("pe_pair", "zh", options=PAIR_CHOICES, labels="positional_encoding.pairs"),
    Control("pe_a", PAIRS["zh"][0], max_chars=MAX_SENTENCE_CHARS),
    Control("pe_b", PAIRS["zh"][1], max_chars=MAX_SENTENCE_CHARS),
    Control("pe_od", 16, options=EVEN_SMALL),
    # RoPE and ALiBi
    Control("pe_bd", 64, options=EVEN_WIDE),
    Control("pe_bp", 200, lo=0, hi=1000, in_figure=True),  # the score figure's own slider
    Control("pe_bmax", 160, lo=8, hi=1000),
    Control("pe_bqk", "same", options=QK, labels="positional_encoding.qk_vectors"),
    Control("pe_bh", 8, lo=1, hi=16),
    Control("pe_bn", 10, lo=3, hi=24),
)
# Label tables over values that are not controls: the order section's heading, intro and measured
# difference of each run.
LABELS = {
    "positional_encoding.variants": VARIANTS,
    "positional_encoding.variant_intro": VARIANTS,
    "positional_encoding.variant_diff": VARIANTS,
}

TABLE_LATEX = (
    r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right),\qquad "
    r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)"
)
# the ALiBi paper's slope m is λ_h here: m is RoPE's position (R(m), mθ_i) on the same page
ALIBI_LATEX = r"\text{ALiBi:}\quad s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d}} - \lambda_h\,|i-j|"
_ROPE_ROTATION = (
    r"\begin{pmatrix} x_{2i}' \\ x_{2i+1}' \end{pmatrix} = "
    r"\begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ "
    r"\sin m\theta_i & \cos m\theta_i \end{pmatrix}"
    r"\begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}"
)
_ROPE_THETA = r"\theta_i = 10000^{-2i/d}"


def beyond_latex(narrow: bool = False) -> str:
    """RoPE's rotation and ALiBi's score as one LaTeX block; ``narrow`` (a projector) puts θᵢ on a
    line of its own."""
    rope = (
        r"\text{RoPE:}\quad " + _ROPE_ROTATION + (r" \\ " if narrow else r",\quad ") + _ROPE_THETA
    )
    return r"\begin{gathered} " + rope + r" \\ " + ALIBI_LATEX + r" \end{gathered}"


def fmt(v: float, digits: int = 4) -> str:
    """The one number format of the lesson's sentences and LaTeX: ``digits`` significant digits,
    scientific notation below 10⁻³ and from 10⁶ on (so 1.1e-16 reads as such, not as 0.000)."""
    v = float(v)
    if v == 0 or 1e-3 <= abs(v) < 1e6:
        return f"{v:.{digits}g}"
    return f"{v:.{max(digits - 2, 1)}e}"


def slope_text(m: float) -> str:
    """An ALiBi slope as the paper writes it: 1/4 for a power of two, else 2^(−e)."""
    e = -math.log2(m)
    return f"1/{2 ** round(e)}" if abs(e - round(e)) < 1e-9 else f"2^(−{e:.3g})"


# ---------------------------------------------------------------- the sinusoidal table


@dataclass(frozen=True)
class Table:
    n: int
    d: int
    rows: np.ndarray  # (≤512,) positions shown (every rstep-th)
    cols: np.ndarray  # (≤256,) columns shown (every cstep-th sin/cos pair, both members)
    # (rows, cols) the table at those positions and columns, never the whole table
    shown: np.ndarray
    wavelengths: np.ndarray  # (D/2,) 2π·10000^(2i/D) of pair i
    slow: int | None  # the first pair whose wavelength exceeds the n positions (None: none does)

    @property
    def downsampled(self) -> bool:
        return len(self.rows) < self.n or len(self.cols) < self.d

    @property
    def rstep(self) -> int:
        return int(self.rows[1] - self.rows[0]) if len(self.rows) > 1 else 1

    @property
    def cstep(self) -> int:
        return int(self.cols[2] - self.cols[0]) // 2 if len(self.cols) > 2 else 1

    @property
    def shortest(self) -> str:
        return fmt(self.wavelengths[0])

    @property
    def longest(self) -> str:
        return fmt(self.wavelengths[-1], 6)


def table(n: int, d: int) -> Table:
    """The table of n positions × d_model columns, as much of it as a browser draws quickly; an
    InputError (checked before anything is allocated) for sizes out of range or an odd d_model."""
    n, d = positional_encoding.check_table(n, d)
    rows = np.arange(0, n, math.ceil(n / MAX_SHOWN_POSITIONS))
    cols = positional_encoding.pair_columns(d, MAX_SHOWN_DIMS)
    wl = positional_encoding.wavelengths(d, BASE)
    slow = int(np.argmax(wl > n)) if (wl > n).any() else None
    return Table(
        n=n,
        d=d,
        rows=rows,
        cols=cols,
        shown=positional_encoding.sinusoidal_at(rows, d, BASE, dims=cols),
        wavelengths=wl,
        slow=slow,
    )


@dataclass(frozen=True)
class Curves:
    positions: np.ndarray  # (P,) every position 0 … n − 1
    dims: list[int]  # columns plotted
    dropped: list[int]  # columns asked for that d_model does not have
    values: np.ndarray  # (P, len(dims))

    def kind(self, j: int) -> str:
        return ("sin", "cos")[self.dims[j] % 2]


def curves(n: int, d: int, dims_text: str) -> Curves:
    """The chosen columns of the table over every position; an InputError when the list does not
    parse."""
    n, d = positional_encoding.check_table(n, d)
    dims, dropped = positional_encoding.parse_dims(dims_text, d)
    pos = np.arange(n)
    return Curves(
        positions=pos,
        dims=dims,
        dropped=dropped,
        values=positional_encoding.sinusoidal_at(pos, d, BASE, dims=dims),
    )


# ---------------------------------------------------------------- relative position


@dataclass(frozen=True)
class Relative:
    d: int
    n: int
    dots: np.ndarray  # (n, n) PE(p)·PE(q)
    offsets: np.ndarray  # (2n − 1,) q − p
    formula: np.ndarray  # (2n − 1,) Σᵢ cos((q − p)·ωᵢ)
    markers: dict[int, tuple]  # row p → (offsets q − p, that row of dots)
    spread: str  # largest spread of PE(p)·PE(q) over pairs of equal offset: zero up to rounding


def relative(d: int, n: int) -> Relative:
    pe = positional_encoding.sinusoidal_encoding(n, d, BASE)  # (n, d)
    dots = pe @ pe.T  # (n, d) x (d, n) -> (n, n)
    offsets = np.arange(-(n - 1), n)
    markers = {p: (np.arange(n) - p, dots[p]) for p in sorted({0, n // 3, (2 * n) // 3})}
    spread = max(float(np.ptp(np.diagonal(dots, k))) for k in range(-(n - 1), n))
    return Relative(
        d=d,
        n=n,
        dots=dots,
        offsets=offsets,
        formula=positional_encoding.offset_dot(offsets, d, BASE),
        markers=markers,
        spread=fmt(spread, 2),
    )


@dataclass(frozen=True)
class Rotation:
    """Pair i of PE(p) turned k positions on, at every offset k of the rotation circle's slider (the
    control ``pe_rk``): one entry of each tuple and row of ``points`` a step."""

    i: int
    p: int
    start: np.ndarray  # (2,) pair i of PE(p)
    circle: np.ndarray  # (S, 2) pair i at positions 0, 1, 2, … (every step's PE(p + k) on it)
    ks: tuple[int, ...]  # (G,) 0 … LIVE_K and the control's k
    active: int  # index of the control's k
    points: np.ndarray  # (G, 2) pair i of PE(p + k)
    angles: tuple[str, ...]  # (G,) θ = k·ω_i
    errs: tuple[str, ...]  # (G,) largest difference between M_k·PE(p) and PE(p + k)
    latex: tuple[str, ...]  # (G,) ω_i and θ, M_k, and M_k·PE(p) beside PE(p + k), one line each

    @property
    def k(self) -> int:
        """The control's offset."""
        return self.ks[self.active]


def _matrix_tex(a) -> str:
    return (
        r"\begin{pmatrix} "
        + r" \\ ".join(" & ".join(fmt(v) for v in row) for row in np.atleast_2d(a))
        + r" \end{pmatrix}"
    )


def _column_tex(v) -> str:
    return _matrix_tex(np.reshape(v, (2, 1)))


def rotation_latex(d: int, i: int, k: int, p: int, narrow: bool = False) -> tuple[str, float]:
    """(LaTeX, error) of pair i moved k positions on from p: ω_i and θ, the rotation M_k, its
    product with PE(p) and PE(p + k) beside it (``narrow``, for a projector: below it); the error is
    the largest difference between the two."""
    omega = positional_encoding.frequencies(d, BASE)[i]
    M = positional_encoding.rotation_matrix(k, i, d, BASE)
    now = positional_encoding.sinusoidal_at([p, p + k], d, BASE, dims=[2 * i, 2 * i + 1])  # (2, 2)
    moved = M @ now[0]
    lines = (
        rf"\omega_{{{i}}} = 10000^{{-{2 * i}/{d}}} = {fmt(omega)},\qquad "
        rf"\theta = k\,\omega_{{{i}}} = {k}\times{fmt(omega)} = {fmt(k * omega)}",
        rf"M_{{{k}}} = \begin{{pmatrix}} \cos\theta & \sin\theta \\ "
        rf"-\sin\theta & \cos\theta \end{{pmatrix}} = {_matrix_tex(M)}",
        rf"M_{{{k}}}\,PE({p}) = {_matrix_tex(M)}{_column_tex(now[0])} = {_column_tex(moved)}"
        + (r" \\ " if narrow else r",\qquad ")
        + rf"PE({p + k}) = {_column_tex(now[1])}",
    )
    latex = r"\begin{gathered} " + r" \\ ".join(lines) + r" \end{gathered}"
    return latex, float(np.abs(moved - now[1]).max())


def rotation(d: int, i: int, k: int, p: int, n: int, narrow: bool = False) -> Rotation:
    """Pair i moved k positions on from p, for every offset of the circle's slider: 0 … LIVE_K and
    the control's k (put in exactly). ``n``: the circle is drawn over at least n positions."""
    omega = positional_encoding.frequencies(d, BASE)[i]
    grid, active = display.with_value(range(LIVE_K + 1), k)
    ks = tuple(int(v) for v in grid)
    pair = [2 * i, 2 * i + 1]
    written = [rotation_latex(d, i, kk, p, narrow) for kk in ks]
    # (S, 2): positions 0, 1, 2, … far enough for every step's PE(p + k) to lie on it
    circle = positional_encoding.sinusoidal_at(
        np.arange(max(n, p + ks[-1] + 1)), d, BASE, dims=pair
    )
    return Rotation(
        i=i,
        p=p,
        start=positional_encoding.sinusoidal_at([p], d, BASE, dims=pair)[0],
        circle=circle,
        ks=ks,
        active=active,
        points=positional_encoding.sinusoidal_at(p + np.asarray(ks), d, BASE, dims=pair),  # (G, 2)
        angles=tuple(fmt(kk * omega) for kk in ks),
        errs=tuple(fmt(err, 2) for _, err in written),
        latex=tuple(latex for latex, _ in written),
    )


# ---------------------------------------------------------------- why attention needs order


class OrderRow(NamedTuple):
    token: str  # token j of B
    source: int  # where it stands in A
    target: int  # where it stands in B (j)
    without: float  # ‖output difference‖ without positions
    with_pe: float  # ‖output difference‖ with positions


@dataclass(frozen=True)
class Order:
    plain: positional_encoding.OrderResult  # without positions
    with_pe: positional_encoding.OrderResult  # with the sinusoids added
    rows: tuple[OrderRow, ...]

    @property
    def glued(self) -> bool:
        """One CJK character per token: titles join them without spaces and tick labels stay
        upright."""
        return all(len(x) == 1 and not x.isascii() for x in self.plain.tokens_a)

    def joined(self, tokens: list[str]) -> str:
        return ("" if self.glued else " ").join(tokens)

    @property
    def runs(self) -> dict[str, positional_encoding.OrderResult]:
        """The two runs by VARIANTS: without and with positions."""
        return {"without": self.plain, "with": self.with_pe}


def order(a: str, b: str, d: int) -> Order:
    """Self-attention over sentence a and its reordering b, without and with positions (InputError
    when b is not a reordering of a, or a sentence is empty or too long)."""
    plain = positional_encoding.word_order(a, b, d, positions=False)
    with_pe = positional_encoding.word_order(a, b, d, positions=True)
    rows = tuple(
        OrderRow(
            token=tok,
            source=int(plain.perm[j]),
            target=j,
            without=float(np.linalg.norm(plain.difference[j])),
            with_pe=float(np.linalg.norm(with_pe.difference[j])),
        )
        for j, tok in enumerate(plain.tokens_b)
    )
    return Order(plain=plain, with_pe=with_pe, rows=rows)


# ---------------------------------------------------------------- RoPE and ALiBi


@dataclass(frozen=True)
class Beyond:
    p: int
    q: np.ndarray  # (D,) seeded random query
    k: np.ndarray  # (D,) the key: q itself or another seeded random vector
    distances: np.ndarray  # (K,) 0 … far
    at0: positional_encoding.DistanceScores  # the query at position 0
    atp: positional_encoding.DistanceScores  # the query at position p
    rope_gap: str  # largest |RoPE score at p − at 0|: zero up to rounding
    sin_gap: str  # the same for added sinusoids: not zero


def beyond(d: int, p: int, far: int, qk: str) -> Beyond:
    rng = np.random.default_rng(0)
    q = rng.standard_normal(d)
    k = q.copy() if qk == "same" else rng.standard_normal(d)
    dist = np.arange(far + 1)
    at0 = positional_encoding.distance_scores(q, k, 0, dist, slope=0.0, base=BASE)
    atp = positional_encoding.distance_scores(q, k, p, dist, slope=0.0, base=BASE)
    return Beyond(
        p=p,
        q=q,
        k=k,
        distances=dist,
        at0=at0,
        atp=atp,
        rope_gap=fmt(float(np.abs(atp.rope - at0.rope).max()), 2),
        sin_gap=fmt(float(np.abs(atp.sinusoidal - at0.sinusoidal).max()), 3),
    )


@dataclass(frozen=True)
class Alibi:
    slopes: tuple[str, ...]  # (H,) as the paper writes them
    lines: np.ndarray  # (H, K) q·k/√d − λ_h·Δ over the distances of ``beyond``
    bias: np.ndarray  # (H, n, n) −λ_h·|i − j|

    def grid(self, columns: int) -> np.ndarray:
        """(R, C, n, n) the heads in rows of ``columns``, the last row padded with blank (NaN)
        cells."""
        H, n, _ = self.bias.shape
        C = min(columns, H)
        R = math.ceil(H / C)
        g = np.full((R * C, n, n), np.nan)
        g[:H] = self.bias
        return g.reshape(R, C, n, n)


def alibi(H: int, n: int, b: Beyond) -> Alibi:
    slopes = positional_encoding.alibi_slopes(H)
    lines = np.array(
        [
            positional_encoding.distance_scores(b.q, b.k, 0, b.distances, slope=float(m)).alibi
            for m in slopes
        ]
    )
    return Alibi(
        slopes=tuple(slope_text(float(m)) for m in slopes),
        lines=lines,
        bias=positional_encoding.alibi_bias(H, n),
    )


@dataclass(frozen=True)
class BeyondSteps:
    """The query-at-p curves at every query position of the in-figure slider (the score figure)."""

    ps: tuple[int, ...]  # (G,) positions over the control's range, the control's p among them
    active: int  # index of the control's p
    sinusoidal: np.ndarray  # (G, K) added sinusoids, query at ps[g]
    rope: np.ndarray  # (G, K) RoPE, query at ps[g]
    rope_gap: tuple[str, ...]  # (G,) largest |RoPE at ps[g] − at 0|, as Beyond.rope_gap
    sin_gap: tuple[str, ...]  # (G,) the same for added sinusoids


def beyond_steps(b: Beyond) -> BeyondSteps:
    """Every step's curves: as many query positions over 0 … the control's highest as keep a curve's
    steps within LIVE_NUMBERS numbers (74 at the default 161 distances, 11 at 1001), and the
    control's p."""
    hi = CONTROLS["pe_bp"].hi
    grid = display.even_grid(0, hi, 1, most=max(11, min(101, LIVE_NUMBERS // len(b.distances))))
    values, active = display.with_value(grid, b.p)
    ps = tuple(int(v) for v in values)
    # (G, K) each
    sinusoidal, rope = positional_encoding.distance_scores_many(
        b.q, b.k, ps, b.distances, base=BASE
    )
    # the control's p: the page's own curves
    sinusoidal[active] = b.atp.sinusoidal
    rope[active] = b.atp.rope
    return BeyondSteps(
        ps=ps,
        active=active,
        sinusoidal=sinusoidal,
        rope=rope,
        rope_gap=tuple(fmt(float(np.abs(r - b.at0.rope).max()), 2) for r in rope),
        sin_gap=tuple(fmt(float(np.abs(r - b.at0.sinusoidal).max()), 3) for r in sinusoidal),
    )
