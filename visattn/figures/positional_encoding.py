"""The positional-encoding lesson's figures: the table, its chosen columns and its wavelengths, the
dot-product matrix and its offset curve, one pair on the unit circle (a slider over the offset k,
the control ``pe_rk``), the order example's weights, scores against distance (a slider over the
query's position p, ``pe_bp``), and ALiBi's scores and bias per head.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language);
the builders take the lesson's results (:mod:`visattn.lessons.positional_encoding`), whose numbers
come formatted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..lessons.positional_encoding import CONTROLS
from . import live
from .core import _figure, _title, compact, unique_labels
from .lines import curves
from .matrices import head_grid, heatmap

if TYPE_CHECKING:
    from ..lessons.positional_encoding import (
        Alibi,
        Beyond,
        BeyondSteps,
        Curves,
        Order,
        Relative,
        Rotation,
        Table,
    )

OFFSET = CONTROLS["pe_rk"]  # the rotation circle's slider
QUERY_AT = CONTROLS["pe_bp"]  # the score figure's slider


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``table_title`` with {n} and {d};
    ``curve_name`` with {k} (a column), {fn} (sin or cos) and {i} (its pair); ``wave_title`` and
    ``dot_title`` with {d}; ``wave_n`` with {n}; ``row_p`` with {p}; ``circle_name`` with {i};
    ``circle_title`` with {i}, {k} and {theta}; ``circle_x`` with {a}, ``circle_y`` with {b} (the
    pair's columns); ``weights_title`` with {s} (A or B) and {text} (the sentence); ``s_sin`` and
    ``s_rope`` with {p}; ``score_gaps`` with {p}, {rope} and {sin}; ``s_alibi`` and ``head_slope``
    with {h} and {m} (its slope); ``alibi_title`` with {n}."""

    position: str = "position"
    dimension: str = "dimension"
    query: str = "query"
    key: str = "key"
    weight: str = "weight"
    table_title: str = "Sinusoidal position encoding: {n} positions × d_model = {d}"
    curve_name: str = "dimension {k} ({fn}, pair {i})"
    curves_title: str = "PE[position, dimension] as a function of the position"
    wave_name: str = "wavelength"
    wave_n: str = "n = {n} positions"
    wave_title: str = "Wavelength of each pair (d_model = {d})"
    pair_axis: str = "pair i (dimensions 2i and 2i+1)"
    wave_axis: str = "wavelength (positions, log scale)"
    dot_title: str = "PE(p)·PE(q) for every pair of positions (d_model = {d})"
    pos_p: str = "position p"
    pos_q: str = "position q"
    row_p: str = "row p = {p}"
    formula_curve: str = "Σᵢ cos((q − p)·ωᵢ)"
    offset_title: str = "PE(p)·PE(q) against the offset q − p: every row gives the same curve"
    offset_axis: str = "offset q − p"
    circle_name: str = "pair {i} at positions 0, 1, 2, …"
    circle_title: str = "Pair {i}: PE(p + k) is PE(p) turned by θ = k·ω = {theta} (k = {k})"
    circle_x: str = "PE[position, {a}] = sin"
    circle_y: str = "PE[position, {b}] = cos"
    k_prefix: str = "offset k = "
    weights_title: str = "Weights, sentence {s}: {text}"
    s_sin: str = "added sinusoids, query at {p}"
    s_rope: str = "RoPE, query at {p}"
    score_title: str = "Score of one fixed (q, k) pair as the key moves away from the query"
    score_gaps: str = (
        "query at {p}: the RoPE curve differs from the query at 0 by at most {rope}, the added"
        " sinusoids' by {sin}"
    )
    distance_axis: str = "distance Δ (key position − query position)"
    score_axis: str = "score / √d"
    p_prefix: str = "query position p = "
    s_alibi: str = "ALiBi head {h} (m = {m})"
    alibi_score_title: str = "ALiBi: the same (q, k) pair with each head's bias"
    head_slope: str = "head {h}: m = {m}"
    alibi_title: str = "ALiBi bias per head ({n} positions; one colour scale)"
    bias: str = "bias"


WORDS = Words()


def _line(x, y, name: str, mode: str = "lines", **style) -> dict:
    return dict(type="scatter", x=compact(x), y=compact(y), mode=mode, name=str(name), **style)


def _layout(
    title: str, x_title: str, y_title: str, font_size: int, height: int = 400, **axes
) -> dict:
    xaxis = dict(title=_title(x_title)) | axes.pop("xaxis", {})
    yaxis = dict(title=_title(y_title)) | axes.pop("yaxis", {})
    return dict(
        xaxis=xaxis,
        yaxis=yaxis,
        title=_title(title),
        height=height,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
        **axes,
    )


def _step_value(v: float) -> str:
    """An in-figure slider's value as its label shows it."""
    return f"{v:g}"


# ---------------------------------------------------------------- the sinusoidal table


def table_heatmap(table: Table, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """The (positions × columns) table as a heatmap without cell text, every few positions and
    columns named."""
    return heatmap(
        table.shown,
        [int(c) for c in table.cols],
        [int(r) for r in table.rows],
        title=words.table_title.format(n=table.n, d=table.d),
        x_title=words.dimension,
        y_title=words.position,
        value_name="PE",
        weights=False,
        show_text=False,
        height=640,
        font_size=font_size,
        max_ticks=24,
        tick_angle=0,
    )


def dimension_curves(chosen: Curves, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """The chosen columns of the table over every position, one named curve each."""
    named = {
        words.curve_name.format(k=k, fn=chosen.kind(j), i=k // 2): chosen.values[:, j]
        for j, k in enumerate(chosen.dims)
    }
    return curves(
        chosen.positions,
        named,
        title=words.curves_title,
        x_title=words.position,
        y_title="PE",
        font_size=font_size,
    )


def wavelength_plot(table: Table, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """Wavelength of each sin/cos pair on a log axis (a straight line), with the table's n positions
    dotted."""
    pairs = np.arange(len(table.wavelengths))
    # a trace, not a shape: shapes on a log axis take log10 coordinates but their annotations do not
    data = [
        _line(pairs, table.wavelengths, words.wave_name, "lines+markers"),
        _line(
            [0, len(pairs) - 1],
            [table.n, table.n],
            words.wave_n.format(n=table.n),
            line=dict(dash="dot", color="#555"),
        ),
    ]
    layout = _layout(
        words.wave_title.format(d=table.d),
        words.pair_axis,
        words.wave_axis,
        font_size,
        yaxis=dict(type="log"),
    )
    return _figure(data, layout)


# ---------------------------------------------------------------- relative position


def dot_matrix(relative: Relative, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """PE(p)·PE(q) for every pair of positions; fewer, larger tick labels on a projector."""
    n = len(relative.dots)
    return heatmap(
        relative.dots,
        list(range(n)),
        list(range(n)),
        title=words.dot_title.format(d=relative.d),
        x_title=words.pos_q,
        y_title=words.pos_p,
        value_name="PE·PE",
        weights=False,
        height=520,
        font_size=font_size,
        max_ticks=40 if font_size < 16 else 16,
        tick_angle=0,
    )


def offset_curve(relative: Relative, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """The formula over every offset, with a few rows of the matrix as points on it."""
    markers = relative.markers
    size = 6 if max((len(x) for x, _ in markers.values()), default=0) > 48 else 9
    data = [_line(relative.offsets, relative.formula, words.formula_curve)]
    data += [
        _line(x, y, words.row_p.format(p=p), "markers", marker=dict(size=size))
        for p, (x, y) in markers.items()
    ]
    layout = _layout(words.offset_title, words.offset_axis, "PE(p)·PE(q)", font_size)
    return _figure(data, layout)


def rotation_live(rotation: Rotation, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """Pair i at positions 0, 1, 2, … on the unit circle (equal axes), PE(p) and PE(p + k) on it,
    with the offset k as the figure's slider (the control ``pe_rk``): each position moves the point
    PE(p + k) and its name, and titles the figure with k and θ = k·ω."""
    i, p, g = rotation.i, rotation.p, rotation.active

    def title(j: int) -> str:
        return words.circle_title.format(i=i, k=rotation.ks[j], theta=rotation.angles[j])

    a, b = f"PE({p})", f"PE({p + rotation.k})"
    points = {a: rotation.start, b + ("\u200b" if a == b else ""): rotation.points[g]}
    circle = rotation.circle
    data = [_line(circle[:, 0], circle[:, 1], words.circle_name.format(i=i), "lines+markers")]
    data += [
        _line([x], [y], name, "markers", marker=dict(size=10)) for name, (x, y) in points.items()
    ]  # k = 0: both points drawn, apart in the legend
    square = dict(range=[-1.15, 1.15])
    layout = _layout(
        title(g),
        words.circle_x.format(a=2 * i),
        words.circle_y.format(b=2 * i + 1),
        font_size,
        height=460,
        xaxis=square,
        yaxis=square | dict(scaleanchor="x", scaleratio=1),
    )
    return live.add_slider(
        _figure(data, layout),
        OFFSET,
        label=words.k_prefix,
        values=rotation.ks,
        active=g,
        fmt=_step_value,
        steps=[
            live.SliderStep(
                traces={2: {"x": [x], "y": [y], "name": f"PE({p + k})"}},
                layout={"title.text": title(j)},
            )
            for j, (k, (x, y)) in enumerate(zip(rotation.ks, rotation.points, strict=True))
        ],
    )


# ---------------------------------------------------------------- why attention needs order


def order_weights(
    order: Order, variant: str, sentence: str, *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The attention weights of sentence A or B (``sentence``) in one run of the order example
    (``variant``: without or with positions), its tokens on both axes."""
    run = order.runs[variant]
    weights, tokens = {
        "A": (run.weights_a, order.plain.tokens_a),
        "B": (run.weights_b, order.plain.tokens_b),
    }[sentence]
    return heatmap(
        weights,
        tokens,
        tokens,
        title=words.weights_title.format(s=sentence, text=order.joined(tokens)),
        x_title=words.key,
        y_title=words.query,
        value_name=words.weight,
        font_size=font_size,
        tick_angle=0 if order.glued else None,
    )


# ---------------------------------------------------------------- RoPE and ALiBi


def _score_curves(
    distances: ArrayLike,
    ys: dict,
    dashes: Sequence[str],
    title: str,
    words: Words,
    font_size: int,
) -> go.Figure:
    """Scores against distance, one named curve per entry of ``ys``, styled by ``dashes`` in
    order."""
    data = [
        _line(distances, y, name, line=dict(dash=dash))
        for (name, y), dash in zip(ys.items(), dashes, strict=True)
    ]
    return _figure(data, _layout(title, words.distance_axis, words.score_axis, font_size))


def score_live(
    beyond: Beyond, steps: BeyondSteps, *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The scores of added sinusoids and of RoPE for a query at 0 and at p, with the query's
    position p as the figure's slider (the control ``pe_bp``): each position redraws the two
    query-at-p curves, their names and the second title line (how far each query-at-p curve is
    from its query-at-0 one)."""
    g = steps.active

    def names(p: int) -> tuple[str, str]:
        """The query-at-p curves' names: added sinusoids, RoPE."""
        return words.s_sin.format(p=p), words.s_rope.format(p=p)

    def heading(j: int) -> str:
        """The title and, below it, step j's gaps."""
        gaps = words.score_gaps.format(p=steps.ps[j], rope=steps.rope_gap[j], sin=steps.sin_gap[j])
        return f"{words.score_title}<br><sup>{gaps}</sup>"

    (sin0, rope0), (sin_p, rope_p) = names(0), names(beyond.p)
    names_shown = unique_labels([sin0, sin_p, rope0, rope_p], 4)
    lines = (beyond.at0.sinusoidal, beyond.atp.sinusoidal, beyond.at0.rope, beyond.atp.rope)
    dashes = ("solid", "dot", "solid", "dash")
    ys = dict(zip(names_shown, lines, strict=True))
    fig = _score_curves(beyond.distances, ys, dashes, heading(g), words, font_size)
    fig.update_layout(margin=dict(t=80))
    return live.add_slider(
        fig,
        QUERY_AT,
        label=words.p_prefix,
        values=steps.ps,
        active=g,
        fmt=_step_value,
        digits=4,
        steps=[
            live.SliderStep(
                traces={
                    1: {"y": live.packed(steps.sinusoidal[j]), "name": names(p)[0]},
                    3: {"y": live.packed(steps.rope[j]), "name": names(p)[1]},
                },
                layout={"title.text": heading(j)},
            )
            for j, p in enumerate(steps.ps)
        ],
    )


def alibi_lines(
    beyond: Beyond, alibi: Alibi, *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The score of the same (q, k) pair with each ALiBi head's bias, against distance."""
    ys = {words.s_alibi.format(h=h + 1, m=m): alibi.lines[h] for h, m in enumerate(alibi.slopes)}
    return curves(
        beyond.distances,
        ys,
        title=words.alibi_score_title,
        x_title=words.distance_axis,
        y_title=words.score_axis,
        font_size=font_size,
    )


def alibi_grid(
    alibi: Alibi,
    columns: int,
    *,
    words: Words = WORDS,
    font_size: int = 14,
    cell_px: int = 270,
) -> go.Figure:
    """ALiBi's bias per head, ``columns`` heads a row, on one scale from the steepest bias up to 0
    (blank cells pad the grid)."""
    grid = alibi.grid(columns)  # (R, C, n, n)
    n = grid.shape[-1]
    low = float(np.nanmin(grid)) or -1.0
    return head_grid(
        grid,
        list(range(n)),
        list(range(n)),
        cell_titles=[words.head_slope.format(h=h + 1, m=m) for h, m in enumerate(alibi.slopes)],
        title=words.alibi_title.format(n=n),
        value_name=words.bias,
        query_name=words.query,
        key_name=words.key,
        zmin=low,
        zmax=0.0,
        colorscale="Blues_r",
        font_size=font_size,
        cell_px=cell_px,
    )
