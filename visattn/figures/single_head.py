"""The single-head lesson's figures: the pipeline's compact matrices, the sentence heatmaps, the
√d_k curves.

Live: the temperature τ is the weights' own slider (the control ``sh_temp``) and Z follows it; d_k
is the q·k histogram's slider (``sh_vdk``) and the scaled histogram follows it
(:mod:`visattn.figures.live`).

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language).
Masked cells are veiled once, by :func:`~visattn.figures.matrices.heatmap`; here only the cell text
is written in the lesson's own fixed formats (0.05, never 5.0e-02; 0.0293 on the tiny worked
example)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..attention import SelfAttentionTrace
from ..display import MAX_TEXT_CELLS
from ..lessons.single_head import SQRT_DK, TEMPERATURE, root, short_number
from ..scaling import Peakedness
from . import live
from .core import DIVERGING_SCALE, HEAD_COLOURS, HOVER_NUMBER, WEIGHT_SCALE, _figure
from .lines import curves
from .matrices import heatmap

if TYPE_CHECKING:
    from ..lessons.single_head import ColourRange, Histogram, SqrtPosition, TemperatureGrid

ORANGE = HEAD_COLOURS[1]


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``fig_scaled`` with {r} (√d_k written
    out), ``fig_weights_tau`` with {tau}, ``fig_z`` with {T} and {dv}, ``peak_max`` and
    ``peak_entropy`` with {n} (keys a row)."""

    value: str = "value"
    score: str = "score"
    weight: str = "weight"
    dimension: str = "dimension"
    token: str = "token"
    key: str = "key"
    query: str = "query"
    sent_scores: str = "Scores (before softmax)"
    sent_weights: str = "Attention weights"
    fig_scaled: str = "QK<sup>T</sup> ÷ √d<sub>k</sub> (÷ {r})"
    fig_unscaled: str = "scores = QK<sup>T</sup><br>(scaling off)"
    fig_weights: str = "weights = softmax"
    fig_weights_tau: str = "softmax(scores / {tau})"
    fig_z: str = "Z = weights·V ({T}×{dv})"
    density: str = "density"
    measured: str = "sampled"
    peak_max: str = "Largest weight in a row (n = {n} keys)"
    peak_entropy: str = "Row entropy in nats (n = {n} keys)"
    max_weight: str = "mean max weight"
    entropy: str = "mean entropy"
    ref_uniform: str = "uniform"
    ref_onehot: str = "one-hot"


WORDS = Words()


def _fixed(v: float, decimals: int) -> str:
    s = f"{v:.{decimals}f}"
    return s.lstrip("-") if float(s) == 0 else s  # no "-0.00"


def cell_labels(
    m: ArrayLike, masked: np.ndarray | None = None, *, decimals: int = 2, short: bool = False
) -> list[list[str]]:
    """Each cell's text: fixed ``decimals`` (or, with ``short``, at most that many), ✕ where
    masked."""
    m = np.asarray(m, dtype=np.float64)
    fmt = short_number if short else _fixed
    return [
        [
            "✕" if masked is not None and masked[i, j] else fmt(float(v), decimals)
            for j, v in enumerate(row)
        ]
        for i, row in enumerate(m)
    ]


def _restyle(
    fig: go.Figure,
    m: np.ndarray,
    masked,
    *,
    decimals: int | None,
    short: bool = False,
    size: int = 13,
    **trace,
) -> go.Figure:
    """``fig`` (a heatmap of ``m``) rebuilt from its dicts with the lesson's cell text (none when
    ``decimals`` is None) and any further properties of its first trace."""
    spec = fig.to_dict()
    if decimals is not None:
        trace.update(
            text=cell_labels(m, masked, decimals=decimals, short=short),
            texttemplate="%{text}",
            textfont=dict(size=size),
        )
    spec["data"][0].update(trace)
    return _figure(spec["data"], spec["layout"])


def panel(
    m: ArrayLike,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str,
    value_name: str,
    weights: bool = False,
    masked: np.ndarray | None = None,
    height: int = 250,
    x_title: str = "",
    y_title: str = "",
    row_name: str = "row",
    col_name: str = "column",
    colour: ColourRange | None = None,
    font_size: int = 13,
) -> go.Figure:
    """One compact labelled matrix of the pipeline (several side by side), numbers in every cell, no
    colour bar. The hover names a cell by ``row_name`` and ``col_name`` (the axis titles, where
    there are any). ``colour``: the scale it shares with the other matrices of its step (zmin,
    zmax, zmid: diverging around zmid when it has one); without it the scale spans this matrix."""
    m = np.asarray(m, dtype=np.float64)
    side = max(m.shape)
    long_cols = m.shape[1] > 3 and max(len(str(c)) for c in cols) > 3  # tokens over narrow columns
    shared = {}
    if colour is not None and not weights:
        scale = DIVERGING_SCALE if colour.diverging else WEIGHT_SCALE
        shared = dict(zmin=colour.zmin, zmax=colour.zmax, colorscale=scale)
    fig = heatmap(
        m,
        cols,
        rows,
        title=title,
        weights=weights,
        masked=masked,
        **shared,
        height=height + (30 if x_title else 0),
        x_title=x_title,
        y_title=y_title,
        font_size=font_size,
        value_name=value_name,
        show_text=side <= MAX_TEXT_CELLS,
        tick_angle=-40 if long_cols else None,
    )
    if side <= 6:
        size = font_size + 1
    elif side <= 12:
        size = font_size - 1
    else:
        size = max(9, font_size - 3)
    hover = (
        f"{y_title or row_name}: %{{y}}<br>{x_title or col_name}: %{{x}}<br>"
        f"{value_name}: %{{z:{HOVER_NUMBER}}}<extra></extra>"
    )
    return _restyle(
        fig,
        m,
        masked,
        decimals=(4 if side <= 4 else 2) if side <= MAX_TEXT_CELLS else None,
        short=side <= 4,
        size=size,
        showscale=False,
        hovertemplate=hover,
        **({"zmid": colour.zmid} if shared and colour.diverging else {}),
    )


def sentence_map(
    m: ArrayLike,
    tokens: Sequence[str],
    *,
    title: str,
    value_name: str,
    weights: bool,
    decimals: int,
    masked: np.ndarray | None = None,
    show_text: bool = True,
    x_title: str = "",
    y_title: str = "",
    font_size: int = 13,
) -> go.Figure:
    """A sentence's scores or weights (T × T), numbers with fixed ``decimals`` while they fit in the
    cells."""
    m = np.asarray(m, dtype=np.float64)
    fig = heatmap(
        m,
        tokens,
        tokens,
        title=title,
        weights=weights,
        value_name=value_name,
        masked=masked,
        show_text=show_text,
        x_title=x_title,
        y_title=y_title,
        font_size=font_size,
    )
    if not show_text:
        return fig
    side = max(m.shape)
    if side <= 8:
        size = font_size
    elif side <= 16:
        size = font_size - 2
    else:
        size = max(9, font_size - 2 - side // 6)
    return _restyle(fig, m, masked, decimals=decimals, size=size)


def _legend_below(layout: dict, font_size: int, height: int) -> None:
    """The legend in a band of its own under the x-axis title (not drawn over it)."""
    layout.update(
        height=height,
        legend=dict(orientation="h", yref="container", y=0.0, yanchor="bottom", x=0.0),
        margin=dict(l=10, r=10, t=60, b=int(4.6 * font_size + 40)),
    )


def histogram(
    h: Histogram, *, title: str, x_title: str, y_title: str, measured_name: str, font_size: int = 13
) -> go.Figure:
    """A measured density (steps) over the normal density N(0, var) it approaches (dashed); ``h``
    has centres, density, normal, var (:class:`visattn.lessons.single_head.Histogram`)."""
    normal_name = f"N(0, {h.var:g})"
    spec = curves(
        h.centres,
        {measured_name: h.density, normal_name: h.normal},
        title=title,
        x_title=x_title,
        y_title=y_title,
        font_size=font_size,
    ).to_dict()
    spec["data"][0]["line"] = dict(shape="hvh")
    spec["data"][1]["line"] = dict(dash="dash", color=ORANGE)
    _legend_below(spec["layout"], font_size, 360 + 2 * font_size)
    return _figure(spec["data"], spec["layout"])


def peak_curves(
    d_k: ArrayLike,
    raw: ArrayLike,
    scaled: ArrayLike,
    *,
    raw_name: str,
    scaled_name: str,
    refs: dict,
    title: str,
    x_title: str,
    y_title: str,
    font_size: int = 13,
) -> go.Figure:
    """Two curves over d_k on a log axis (raw and scaled softmax), with dotted reference levels
    {label: y}."""
    grid = [int(g) for g in np.asarray(d_k)]
    spec = curves(
        grid,
        {raw_name: raw, scaled_name: scaled},
        title=title,
        x_title=x_title,
        y_title=y_title,
        mode="lines+markers",
        font_size=font_size,
    ).to_dict()
    spec["data"][1].update(line=dict(color=ORANGE), marker=dict(color=ORANGE))
    layout = spec["layout"]
    layout["xaxis"].update(type="log", tickvals=grid, ticktext=[str(g) for g in grid])
    layout["shapes"] = [
        dict(type="line", xref="paper", x0=0, x1=1, y0=y, y1=y, line=dict(dash="dot", color="grey"))
        for y in refs.values()
    ]
    layout["annotations"] = [
        dict(text=label, xref="paper", x=0, y=y, xanchor="left", yanchor="bottom", showarrow=False)
        for label, y in refs.items()
    ]
    _legend_below(layout, font_size, 400 + 2 * font_size)
    return _figure(spec["data"], spec["layout"])


def _height(n_rows: int) -> int:
    return int(max(220, 120 + 38 * n_rows))


def _panels(
    tr: SelfAttentionTrace, words: Words, titles: Mapping[str, str], font_size: int
) -> Callable:
    """A maker of the pipeline's panels: ``make(name, m, rows, height, **panel_options)`` gives
    ``(name, figure)``, titled ``titles[name]`` (or the formula with its shape: “Q = X·W<sup>Q</sup>
    (2×4)”), its columns numbered as the matrix's dimensions unless ``cols`` is given."""
    (T, D), dk, dv = tr.X.shape, tr.Q.shape[1], tr.V.shape[1]
    titles = {
        "x": f"X ({T}×{D})",
        "wq": f"W<sup>Q</sup> ({D}×{dk})",
        "wk": f"W<sup>K</sup> ({D}×{dk})",
        "wv": f"W<sup>V</sup> ({D}×{dv})",
        "q": f"Q = X·W<sup>Q</sup> ({T}×{dk})",
        "k": f"K = X·W<sup>K</sup> ({T}×{dk})",
        "v": f"V = X·W<sup>V</sup> ({T}×{dv})",
        "raw": "QK<sup>T</sup>",
    } | dict(titles)
    d_model = [str(j + 1) for j in range(D)]  # columns numbered from 1, as the page counts
    d_key = [str(j + 1) for j in range(dk)]
    d_value = [str(j + 1) for j in range(dv)]
    columns = {"x": d_model, "wq": d_key, "wk": d_key, "wv": d_value}
    columns |= {"q": d_key, "k": d_key, "v": d_value, "z": d_value}

    def make(name: str, m: ArrayLike, rows: Sequence[str], height: int, **options) -> tuple:
        value = words.weight if options.get("weights") else words.value
        cols = options.pop("cols", columns.get(name))
        figure = panel(
            m,
            rows,
            cols,
            title=titles[name],
            value_name=value,
            height=height,
            font_size=font_size,
            row_name=words.dimension if name.startswith("w") else words.token,
            col_name=words.dimension,
            **options,
        )
        return name, figure

    return make


def _against_keys(tr: SelfAttentionTrace, tokens: Sequence[str], words: Words) -> dict:
    """The options of a (queries × keys) panel: masked cells, axis titles, the keys as columns."""
    return dict(
        masked=None if tr.mask is None else ~tr.mask,
        x_title=words.key,
        y_title=words.query,
        cols=tokens,
    )


def scores_title(tr: SelfAttentionTrace, scale: bool, words: Words = WORDS) -> str:
    """The scaled scores' title: ÷ √d_k written out, or that scaling is off."""
    if not scale:
        return words.fig_unscaled
    return words.fig_scaled.format(r=root(tr.Q.shape[1]))


def before_softmax(
    tr: SelfAttentionTrace,
    tokens: Sequence[str],
    words: Words = WORDS,
    *,
    scale: bool = True,
    inputs: Sequence[ArrayLike] | None = None,
    ranges: Mapping[str, ColourRange] | None = None,
    font_size: int = 13,
) -> list[tuple[str, int, list]]:
    """The pipeline up to the scores, as rows of compact matrices: [(step, figures per row,
    [(name, figure)])] for the steps "inputs" (X, W^Q, W^K, W^V; only with ``inputs``), "qkv" and
    "scores" without its softmax (QKᵀ, ÷√d_k, or its title says that ``scale`` is off; the row
    leaves room for the weights). They read only
    :meth:`~visattn.attention.SelfAttentionTrace.before_softmax`: the temperature changes none of
    them. ``ranges``: each step's shared colour scale (by step: "inputs", "qkv", "scores"), else one
    per matrix."""
    (T, D), dk, dv = tr.X.shape, tr.Q.shape[1], tr.V.shape[1]
    make = _panels(tr, words, {"scores": scores_title(tr, scale, words)}, font_size)
    ranges = ranges or {}
    out = []
    if inputs is not None:
        h = _height(D)
        dims = [str(j + 1) for j in range(D)]  # a weight matrix's rows: the model's dimensions
        names = ("wq", "wk", "wv")
        shared = dict(colour=ranges.get("inputs"))
        weights = [make(n, W, dims, h, **shared) for n, W in zip(names, inputs, strict=True)]
        x = make("x", tr.X, tokens, h, **shared)
        out.append(("inputs", 4 if max(D, dk) <= 6 else 2, [x, *weights]))
    h = _height(T)
    dim = dict(x_title=words.dimension, colour=ranges.get("qkv"))
    qkv = [make(n, m, tokens, h, **dim) for n, m in (("q", tr.Q), ("k", tr.K), ("v", tr.V))]
    out.append(("qkv", 3 if max(dk, dv) <= 4 else 2 if max(dk, dv) <= 8 else 1, qkv))
    qk = _against_keys(tr, tokens, words)
    scored = dict(colour=ranges.get("scores"))
    scores = [
        make("raw", tr.raw_scores, tokens, h, **qk, **scored),
        make("scores", tr.scores, tokens, h, **qk, **scored),
    ]
    out.append(("scores", 3 if T <= 4 else 2 if T <= 8 else 1, scores))
    return out


def after_softmax(
    tr: SelfAttentionTrace,
    tokens: Sequence[str],
    words: Words = WORDS,
    *,
    temperature: TemperatureGrid | None = None,
    ranges: Mapping[str, ColourRange] | None = None,
    font_size: int = 13,
) -> dict[str, go.Figure]:
    """The pipeline from the softmax on: {"weights": figure, "z": figure}. With ``temperature`` the
    weights carry the slider of τ (:func:`live_weights`), titled ``fig_weights`` at τ = 1 and
    ``fig_weights_tau`` elsewhere, and Z follows it; without it they are drawn at the trace's τ,
    titled ``fig_weights``. Z takes ``ranges["out"]`` (the scale of Q, K, V), if given."""
    T, dv = tr.V.shape  # (T, Dv)

    def weights_title(tau: float) -> str:
        return (
            words.fig_weights
            if tau == 1
            else words.fig_weights_tau.format(tau=short_number(tau, 4))
        )

    qk = _against_keys(tr, tokens, words)
    tau = 1.0 if temperature is None else temperature.grid[temperature.active]
    titles = {"weights": weights_title(tau), "z": words.fig_z.format(T=T, dv=dv)}
    make = _panels(tr, words, titles, font_size)
    _, weights = make("weights", tr.weights, tokens, _height(T), weights=True, **qk)
    out_range = (ranges or {}).get("out")
    _, z = make("z", tr.output, tokens, _height(T), x_title=words.dimension, colour=out_range)
    if temperature is None:
        return {"weights": weights, "z": z}
    weights = live_weights(
        weights,
        temperature,
        qk["masked"],
        title=weights_title,
        short=T <= 4,
        decimals=(4 if T <= 4 else 2) if T <= MAX_TEXT_CELLS else None,
    )
    side = max(T, dv)
    z = _follow_temperature(
        z,
        temperature,
        decimals=(4 if side <= 4 else 2) if side <= MAX_TEXT_CELLS else None,
        short=side <= 4,
    )
    return {"weights": weights, "z": z}


def assemble(before: list, after: dict) -> list[tuple[str, int, list]]:
    """The whole pipeline's rows: ``before`` (:func:`before_softmax`) with the weights at the end of
    the scores row, then the step "out" (Z, half width)."""
    steps = []
    for step, per_row, figures in before:
        if step == "scores":
            figures = [*figures, ("weights", after["weights"])]
        steps.append((step, per_row, figures))
    steps.append(("out", 2, [("z", after["z"])]))
    return steps


def pipeline(
    tr: SelfAttentionTrace,
    tokens: Sequence[str],
    words: Words = WORDS,
    *,
    scale: bool = True,
    inputs: Sequence[ArrayLike] | None = None,
    temperature: TemperatureGrid | None = None,
    ranges: Mapping[str, ColourRange] | None = None,
    font_size: int = 13,
) -> list[tuple[str, int, list]]:
    """The pipeline of one head as rows of compact matrices: [(step, figures per row, [(name,
    figure)])] for the steps "inputs" (X, W^Q, W^K, W^V; only with ``inputs``), "qkv", "scores"
    (QKᵀ, ÷√d_k, softmax) and "out" (Z, half width): :func:`before_softmax` and
    :func:`after_softmax` put together. Titles without words are formulas with their shapes
    (“Q = X·W<sup>Q</sup> (2×4)”). ``ranges``: the colour scale each step's matrices share (by
    step; :func:`visattn.lessons.single_head.colour_ranges`)."""
    before = before_softmax(
        tr, tokens, words, scale=scale, inputs=inputs, ranges=ranges, font_size=font_size
    )
    after = after_softmax(
        tr, tokens, words, temperature=temperature, ranges=ranges, font_size=font_size
    )
    return assemble(before, after)


def sentence(
    tr: SelfAttentionTrace,
    tokens: Sequence[str],
    words: Words = WORDS,
    *,
    side: bool,
    show_text: bool,
    temperature: TemperatureGrid | None = None,
    font_size: int = 13,
) -> list[tuple[str, go.Figure]]:
    """A sentence's attention weights (and, with ``side``, its scores before them) as [(name,
    figure)], the weights carrying the slider of τ when ``temperature`` is given
    (:func:`live_weights`)."""
    kw = dict(
        x_title=words.key,
        y_title=words.query,
        font_size=font_size,
        show_text=show_text,
        masked=None if tr.mask is None else ~tr.mask,
    )
    out = []
    if side:
        scores = sentence_map(
            tr.scores,
            tokens,
            title=words.sent_scores,
            weights=False,
            value_name=words.score,
            decimals=1,
            **kw,
        )
        out.append(("sentence_scores", scores))
    weights = sentence_map(
        tr.weights,
        tokens,
        title=words.sent_weights,
        weights=True,
        value_name=words.weight,
        decimals=2,
        **kw,
    )
    if temperature is not None:
        weights = live_weights(
            weights, temperature, kw["masked"], decimals=2 if show_text else None
        )
    out.append(("sentence_weights", weights))
    return out


def _raw_title(d_k: int, var: float) -> str:
    return f"q·k, d<sub>k</sub> = {d_k}: σ̂² = {short_number(var, 3)}"


def _scaled_title(d_k: int, var: float) -> str:
    return f"q·k / √d<sub>k</sub>, d<sub>k</sub> = {d_k}: σ̂² = {short_number(var, 3)}"


def _plain(v: float) -> str:
    return f"{v:g}"


def why_sqrt(
    positions: Sequence[SqrtPosition], active: int, words: Words = WORDS, font_size: int = 13
) -> list[tuple[str, go.Figure]]:
    """The two histograms of the dot products (q·k, then ÷√d_k) as [(name, figure)], each titled
    with its measured variance σ̂², at ``positions[active]``: the first carries the slider of d_k
    (every position of :func:`visattn.lessons.single_head.sqrt_positions`: its histogram, normal
    curve and title), the second follows it."""
    kw = dict(y_title=words.density, measured_name=words.measured, font_size=font_size)
    p = positions[active]
    raw = histogram(p.raw, title=_raw_title(p.d_k, p.raw_var), x_title="q·k", **kw)
    scaled = histogram(p.scaled, title=_scaled_title(p.d_k, p.scaled_var), x_title="q·k/√d_k", **kw)

    def step(h: Histogram, title: str) -> live.SliderStep:
        normal = {
            "x": live.packed(h.centres),
            "y": live.packed(h.normal),
            "name": f"N(0, {h.var:g})",
        }
        measured = {"x": live.packed(h.centres), "y": live.packed(h.density)}
        return live.SliderStep(traces={0: measured, 1: normal}, layout={"title.text": title})

    values = [q.d_k for q in positions]
    raw = live.add_slider(
        raw,
        SQRT_DK,
        label="d_k = ",
        values=values,
        active=active,
        fmt=_plain,
        steps=[step(q.raw, _raw_title(q.d_k, q.raw_var)) for q in positions],
    )
    scaled = live.follow(
        scaled,
        SQRT_DK,
        values=values,
        active=active,
        steps=[step(q.scaled, _scaled_title(q.d_k, q.scaled_var)) for q in positions],
        margin=live.MARGIN,  # as low as the first, whose slider is under it: side by side
    )
    return [("sqrt_hist_raw", raw), ("sqrt_hist_scaled", scaled)]


def live_weights(
    fig: go.Figure,
    tg: TemperatureGrid,
    masked: np.ndarray | None,
    *,
    decimals: int | None,
    short: bool = False,
    title: Callable[[float], str] | None = None,
    label: str = "τ = ",
) -> go.Figure:
    """``fig``, a heatmap of ``tg.weights[tg.active]`` as :func:`panel` or :func:`sentence_map` drew
    it, with the slider of τ (``label`` before the value): each position's weights, their cell text
    (``decimals`` and ``short`` as the figure wrote it; None: no text) and, with ``title``, the
    title ``title(τ)`` (:class:`visattn.lessons.single_head.TemperatureGrid`). The slider starts at
    the control's τ."""

    def step(g: int) -> live.SliderStep:
        w = tg.weights[g]
        text = (
            {}
            if decimals is None
            else {"text": cell_labels(w, masked, decimals=decimals, short=short)}
        )
        return live.SliderStep(
            traces={0: {"z": live.packed(w)} | text},
            layout={} if title is None else {"title.text": title(tg.grid[g])},
        )

    return live.add_slider(
        fig,
        TEMPERATURE,
        label=label,
        values=tg.grid,
        steps=[step(g) for g in range(len(tg.grid))],
        active=tg.active,
        fmt=_plain,
    )


def _follow_temperature(
    fig: go.Figure, tg: TemperatureGrid, *, decimals: int | None, short: bool
) -> go.Figure:
    """``fig``, the panel of Z = weights·V at ``tg``'s active τ, following the slider of τ: each
    position's Z and its cell text (``decimals``, ``short``: as the panel wrote them)."""

    def step(g: int) -> live.SliderStep:
        z = tg.outputs[g]
        text = {} if decimals is None else {"text": cell_labels(z, decimals=decimals, short=short)}
        return live.SliderStep(traces={0: {"z": live.packed(z)} | text})

    steps = [step(g) for g in range(len(tg.grid))]
    return live.follow(fig, TEMPERATURE, values=tg.grid, steps=steps, active=tg.active)


def peaks(p: Peakedness, words: Words = WORDS, font_size: int = 13) -> list[tuple[str, go.Figure]]:
    """The largest weight and the entropy of softmax rows over d_k
    (:class:`visattn.scaling.Peakedness`), raw and scaled, with the uniform and one-hot levels."""
    kw = dict(
        raw_name="softmax(q·k)", scaled_name="softmax(q·k/√d_k)", x_title="d_k", font_size=font_size
    )
    uniform, onehot = words.ref_uniform, words.ref_onehot
    max_weight = peak_curves(
        p.d_k,
        p.max_weight_raw,
        p.max_weight_scaled,
        title=words.peak_max.format(n=p.n_keys),
        y_title=words.max_weight,
        refs={uniform: 1 / p.n_keys, onehot: 1.0},
        **kw,
    )
    entropy = peak_curves(
        p.d_k,
        p.entropy_raw,
        p.entropy_scaled,
        title=words.peak_entropy.format(n=p.n_keys),
        y_title=words.entropy,
        refs={uniform: float(np.log(p.n_keys)), onehot: 0.0},  # ln n nats: a uniform row
        **kw,
    )
    return [("sqrt_max_weight", max_weight), ("sqrt_entropy", entropy)]
