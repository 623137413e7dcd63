"""The positional-encoding lesson's figures: the table, its wavelengths, the dot-product matrix and
its offset curve, one pair on the unit circle, scores against distance, and ALiBi's bias per head.

Every word shown is a parameter (the page passes translated ones); the English defaults are for
notebooks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from . import live
from .core import _figure, _title, compact, unique_labels
from .matrices import head_grid, heatmap

if TYPE_CHECKING:  # annotations only: a figure module imports no lesson at run time
    from ..lessons.positional import Beyond, BeyondSteps, Rotation, RotationSteps


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


def table_heatmap(
    shown: ArrayLike,
    rows: Iterable[int],
    cols: Iterable[int],
    *,
    title: str = "",
    x_title: str = "dimension",
    y_title: str = "position",
    font_size: int = 14,
) -> go.Figure:
    """The (positions × columns) table as a heatmap without cell text, every few positions and
    columns named."""
    return heatmap(
        shown,
        [int(c) for c in cols],
        [int(r) for r in rows],
        title=title,
        x_title=x_title,
        y_title=y_title,
        value_name="PE",
        weights=False,
        show_text=False,
        height=640,
        font_size=font_size,
        max_ticks=24,
        tick_angle=0,
    )


def dot_matrix(
    dots: ArrayLike,
    *,
    title: str = "",
    x_title: str = "position q",
    y_title: str = "position p",
    font_size: int = 14,
) -> go.Figure:
    """PE(p)·PE(q) for every pair of positions; fewer, larger tick labels on a projector."""
    n = len(dots)
    return heatmap(
        dots,
        list(range(n)),
        list(range(n)),
        title=title,
        x_title=x_title,
        y_title=y_title,
        value_name="PE·PE",
        weights=False,
        height=520,
        font_size=font_size,
        max_ticks=40 if font_size < 16 else 16,
        tick_angle=0,
    )


def wavelength_plot(
    wavelengths: ArrayLike,
    n: int,
    *,
    name: str = "wavelength",
    n_name: str = "n positions",
    title: str = "",
    x_title: str = "pair i",
    y_title: str = "wavelength (positions)",
    font_size: int = 14,
) -> go.Figure:
    """Wavelength of each sin/cos pair on a log axis (a straight line), with the table's n positions
    dotted."""
    pairs = np.arange(len(wavelengths))
    # a trace, not a shape: shapes on a log axis take log10 coordinates but their annotations do not
    data = [
        _line(pairs, wavelengths, name, "lines+markers"),
        _line([0, len(pairs) - 1], [n, n], n_name, line=dict(dash="dot", color="#555")),
    ]
    return _figure(data, _layout(title, x_title, y_title, font_size, yaxis=dict(type="log")))


def offset_curve(
    offsets: ArrayLike,
    formula: ArrayLike,
    markers: dict,
    *,
    formula_name: str = "Σ cos((q − p)ω)",
    title: str = "",
    x_title: str = "offset q − p",
    y_title: str = "PE(p)·PE(q)",
    font_size: int = 14,
) -> go.Figure:
    """The formula over every offset, with the rows of the matrix as point sets {name: (offsets,
    values)} on it."""
    size = 6 if max((len(x) for x, _ in markers.values()), default=0) > 48 else 9
    data = [_line(offsets, formula, formula_name)]
    data += [
        _line(x, y, name, "markers", marker=dict(size=size)) for name, (x, y) in markers.items()
    ]
    return _figure(data, _layout(title, x_title, y_title, font_size))


def rotation_circle(
    circle: ArrayLike,
    points: dict,
    *,
    name: str = "pair i",
    title: str = "",
    x_title: str = "sin",
    y_title: str = "cos",
    font_size: int = 14,
) -> go.Figure:
    """One sin/cos pair at positions 0, 1, 2, … on the unit circle (equal axes), with named points
    {name: (x, y)}."""
    circle = np.asarray(circle, dtype=np.float64)
    data = [_line(circle[:, 0], circle[:, 1], name, "lines+markers")]
    data += [
        _line([x], [y], label, "markers", marker=dict(size=10)) for label, (x, y) in points.items()
    ]
    square = dict(range=[-1.15, 1.15])
    return _figure(
        data,
        _layout(
            title,
            x_title,
            y_title,
            font_size,
            height=460,
            xaxis=square,
            yaxis=square | dict(scaleanchor="x", scaleratio=1),
        ),
    )


def score_curves(
    distances: ArrayLike,
    ys: dict,
    *,
    dashes: Sequence[str] = (),
    title: str = "",
    x_title: str = "distance",
    y_title: str = "score",
    font_size: int = 14,
) -> go.Figure:
    """Scores against distance, one named curve per entry of ``ys``; ``dashes`` styles them in
    order."""
    dashes = (list(dashes) + ["solid"] * len(ys))[: len(ys)]  # one a curve, solid where not given
    data = [
        _line(distances, y, name, line=dict(dash=dash))
        for (name, y), dash in zip(ys.items(), dashes, strict=True)
    ]
    return _figure(data, _layout(title, x_title, y_title, font_size))


def alibi_grid(
    grid: ArrayLike,
    cell_titles: Sequence[str],
    *,
    title: str = "",
    value_name: str = "bias",
    query_name: str = "query",
    key_name: str = "key",
    font_size: int = 14,
    cell_px: int = 270,
) -> go.Figure:
    """ALiBi's (R, C, n, n) bias per head on one scale from the steepest bias up to 0 (blank cells
    pad the grid)."""
    grid = np.asarray(grid, dtype=np.float64)
    n = grid.shape[-1]
    low = float(np.nanmin(grid)) or -1.0
    return head_grid(
        grid,
        list(range(n)),
        list(range(n)),
        cell_titles=cell_titles,
        title=title,
        value_name=value_name,
        query_name=query_name,
        key_name=key_name,
        zmin=low,
        zmax=0.0,
        colorscale="Blues_r",
        font_size=font_size,
        cell_px=cell_px,
    )


def _step_value(v: float) -> str:
    """An in-figure slider's value as its label shows it."""
    return f"{v:g}"


def rotation_live(
    rot: Rotation,
    steps: RotationSteps,
    *,
    name: str,
    title: Callable[[int, float], str],
    label: str = "k = ",
    x_title: str = "sin",
    y_title: str = "cos",
    font_size: int = 14,
) -> go.Figure:
    """:func:`rotation_circle` of ``rot`` with an in-figure slider over the offset k (``label``
    before it): each position moves the point PE(p + k) and its name, and titles the figure
    ``title(k, θ = k·ω)``."""
    a, b = f"PE({rot.p})", f"PE({rot.p + rot.k})"
    points = {
        a: rot.now[0],
        b + ("\u200b" if a == b else ""): rot.now[1],
    }  # k = 0: both points drawn, apart in the legend
    g = steps.active
    fig = rotation_circle(
        rot.circle,
        points,
        name=name,
        title=title(steps.ks[g], float(steps.theta[g])),
        x_title=x_title,
        y_title=y_title,
        font_size=font_size,
    )
    return live.add_slider(
        fig,
        label=label,
        values=steps.ks,
        active=g,
        fmt=_step_value,
        steps=[
            live.Step(
                traces={2: {"x": [x], "y": [y], "name": f"PE({rot.p + k})"}},
                layout={"title.text": title(k, float(th))},
            )
            for k, (x, y), th in zip(steps.ks, steps.points, steps.theta, strict=True)
        ],
    )


def score_live(
    b: Beyond,
    steps: BeyondSteps,
    *,
    names: Callable[[int], tuple[str, str]],
    title: str,
    subtitle: Callable[[int, str, str], str],
    label: str = "p = ",
    x_title: str = "distance",
    y_title: str = "score",
    font_size: int = 14,
) -> go.Figure:
    """:func:`score_curves` of the added sinusoids and RoPE for a query at 0 and at p, with an
    in-figure slider over p (``label`` before it): each position redraws the two query-at-p curves,
    their ``names(p)`` (added sinusoids, RoPE) and the second title line ``subtitle(p, RoPE gap,
    sinusoid gap)``."""
    g, (sin0, rope0) = steps.active, names(0)
    sin_p, rope_p = names(b.p)

    def heading(j: int) -> str:
        """The title and, below it, step j's gaps."""
        return f"{title}<br><sup>{subtitle(steps.ps[j], steps.rope_gap[j], steps.sin_gap[j])}</sup>"

    names_shown = unique_labels([sin0, sin_p, rope0, rope_p], 4)
    curves = (b.at0.sinusoidal, b.atp.sinusoidal, b.at0.rope, b.atp.rope)
    ys = dict(zip(names_shown, curves, strict=True))
    fig = score_curves(
        b.distances,
        ys,
        dashes=("solid", "dot", "solid", "dash"),
        title=heading(g),
        x_title=x_title,
        y_title=y_title,
        font_size=font_size,
    )
    fig.update_layout(margin=dict(t=80))
    return live.add_slider(
        fig,
        label=label,
        values=steps.ps,
        active=g,
        fmt=_step_value,
        digits=4,
        steps=[
            live.Step(
                traces={
                    1: {"y": live.packed(steps.sinusoidal[j]), "name": names(p)[0]},
                    3: {"y": live.packed(steps.rope[j]), "name": names(p)[1]},
                },
                layout={"title.text": heading(j)},
            )
            for j, p in enumerate(steps.ps)
        ],
    )
