"""Matrices as heatmaps: one matrix (queries × keys), or a layer × head grid on one colour scale."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..display import MAX_TEXT_CELLS
from ..errors import InputError
from .core import (
    DIVERGING_SCALE,
    HOVER_NUMBER,
    MAX_TICKS,
    WEIGHT_SCALE,
    _bottom_margin,
    _figure,
    _left_margin,
    _scale,
    _ticks,
    _title,
    _top_margin,
    cell_text,
    cell_text_px,
    compact,
)


def heatmap(
    m: ArrayLike,
    x_labels: Sequence[object] | None = None,
    y_labels: Sequence[object] | None = None,
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    value_name: str = "weight",
    weights: bool = True,
    zmin: float | None = None,
    zmax: float | None = None,
    colorscale: str | None = None,
    digits: int = 2,
    show_text: bool | None = None,
    masked: ArrayLike | None = None,
    height: int | None = None,
    font_size: int = 14,
    max_ticks: int = MAX_TICKS,
    tick_angle: float | None = None,
    colour_bar: bool = True,
) -> go.Figure:
    """One matrix as a heatmap; rows are queries (top to bottom), columns keys.

    ``masked`` (same shape, bool) marks cells hidden by a mask: they are veiled grey (with a ✕ where
    numbers show). With ``weights=True`` the colour scale is the shared 0…1 of attention weights;
    otherwise it spans the data (diverging around 0 when there are negative entries). ``value_name``
    labels the hover and colour bar. Each axis names at most ``max_ticks`` categories;
    ``tick_angle`` sets the column labels' slant (default: −45° above 6 columns, else upright).
    ``colour_bar=False`` draws none: for a 0/1 matrix, whose two colours the caller names (a bar's
    axis of 0.2 steps would say nothing, and it costs each redraw in Chromium)."""
    m = np.asarray(m, dtype=np.float64)
    rows, cols = m.shape
    xt, xl = _ticks(x_labels, cols, max_ticks)
    yt, yl = _ticks(y_labels, rows, max_ticks)
    is_weight = weights and zmin is None and zmax is None
    if is_weight:
        zmin, zmax = 0.0, 1.0
    if colorscale is None:
        colorscale = WEIGHT_SCALE if is_weight or (np.nanmin(m) >= 0) else DIVERGING_SCALE
    if colorscale == DIVERGING_SCALE and zmin is None and zmax is None:
        bound = float(np.nanmax(np.abs(m))) or 1.0
        zmin, zmax = -bound, bound
    if show_text is None:
        show_text = rows <= MAX_TEXT_CELLS and cols <= MAX_TEXT_CELLS
    z = compact(m)
    text = cell_text(m, digits, fixed=is_weight) if show_text else None
    if masked is not None:
        masked = np.asarray(masked, dtype=bool)
        if show_text:
            text = [["✕" if masked[i, j] else text[i][j] for j in range(cols)] for i in range(rows)]
    data = [
        dict(
            type="heatmap",
            z=z,
            x=xl,
            y=yl,
            zmin=zmin,
            zmax=zmax,
            colorscale=_scale(colorscale),
            text=text,
            texttemplate="%{text}" if show_text else None,
            textfont=dict(size=cell_text_px(font_size, max(rows, cols))),
            hovertemplate=(
                f"{y_title or 'row'}: %{{y}}<br>{x_title or 'column'}: %{{x}}"
                f"<br>{value_name}: %{{z:{HOVER_NUMBER}}}<extra></extra>"
            ),
            colorbar=dict(title=_title(value_name), thickness=14),
            showscale=colour_bar,
        )
    ]
    if masked is not None and masked.any():
        veil = np.where(masked, 1.0, np.nan).astype(np.float32)
        data.append(
            dict(
                type="heatmap",
                z=veil,
                x=xl,
                y=yl,
                colorscale=[[0, "#9e9e9e"], [1, "#9e9e9e"]],
                opacity=0.55,
                showscale=False,
                hoverinfo="skip",
            )
        )
    angled = cols > 6 if tick_angle is None else tick_angle != 0
    side = max(rows, cols)
    layout = dict(
        xaxis=dict(
            title=_title(x_title),
            side="top",
            tickangle=(-45 if angled else 0) if tick_angle is None else tick_angle,
            **xt,
        ),
        yaxis=dict(title=_title(y_title), autorange="reversed", **yt),
        title=dict(text=title, y=0.98),
        font=dict(size=font_size),
        height=height or int(min(900, max(260, 120 + 34 * side))),
        margin=dict(
            l=_left_margin(yl, font_size, True),  # Plotly keeps room for a title, even empty
            r=10,
            t=_top_margin(xl, font_size, angled, bool(title)) + (20 if x_title else 0),
            b=10,
        ),
    )
    return _figure(data, layout)


def head_grid(
    w: ArrayLike,
    x_labels: Sequence[object] | None = None,
    y_labels: Sequence[object] | None = None,
    *,
    row_titles: Sequence[str] | None = None,
    col_titles: Sequence[str] | None = None,
    cell_titles: Sequence[str] | None = None,
    title: str = "",
    value_name: str = "weight",
    query_name: str = "query",
    key_name: str = "key",
    font_size: int = 12,
    cell_px: int = 230,
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str = WEIGHT_SCALE,
    title_xanchor: str = "center",
) -> go.Figure:
    """A grid of heatmaps from one (rows, cols, Tq, Tk) array on one shared colour scale (weights:
    0…1).

    As d2l's ``show_heatmaps``: one call draws a single matrix (1, 1, Tq, Tk) or a layer × head
    grid. Each cell is titled ``cell_titles[r·C + c]``, else "row title · column title". A cell that
    is all NaN (padding a last row) is left blank. Tick labels, when the tokens are few enough to
    read, are drawn on the left column and the bottom row only: every cell has the same tokens. Cell
    titles are centred on their cells (``title_xanchor="auto"``, Plotly's default, anchors paper
    text left in the left third, right in the right third). The layout is written directly rather
    than through ``make_subplots``, which is slow for 72 cells."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 4:
        raise InputError(
            "grid_shape", f"head_grid needs a (rows, cols, Tq, Tk) array, got shape {w.shape}."
        )
    R, C, Tq, Tk = w.shape
    xt, xl = _ticks(x_labels, Tk)
    yt, yl = _ticks(y_labels, Tq)
    if cell_titles is None:
        cell_titles = [
            " · ".join(
                p
                for p in (row_titles[r] if row_titles else "", col_titles[c] if col_titles else "")
                if p
            )
            for r in range(R)
            for c in range(C)
        ]
    show_ticks = max(Tq, Tk) <= 40 and C <= 4
    gap_x, gap_y = 0.02 + 0.1 / C, (min(0.3 / R, 0.12) if R > 1 else 0.0)
    cell_w, cell_h = (1 - gap_x * (C - 1)) / C, (1 - gap_y * (R - 1)) / R
    layout: dict = {"annotations": []}
    data = []
    for r in range(R):
        for c in range(C):
            k = r * C + c
            sfx = "" if k == 0 else str(k + 1)
            x0, y1 = c * (cell_w + gap_x), 1 - r * (cell_h + gap_y)
            blank = bool(np.isnan(w[r, c]).all())
            bottom = r == R - 1 or bool(np.isnan(w[r + 1, c]).all())
            layout[f"xaxis{sfx}"] = dict(
                domain=[max(x0, 0.0), min(x0 + cell_w, 1.0)],
                anchor=f"y{sfx}",
                tickangle=-60,
                showticklabels=show_ticks and bottom,
                visible=not blank,
                **xt,
            )
            layout[f"yaxis{sfx}"] = dict(
                domain=[max(y1 - cell_h, 0.0), min(y1, 1.0)],
                anchor=f"x{sfx}",
                autorange="reversed",
                showticklabels=show_ticks and c == 0,
                visible=not blank,
                **yt,
            )
            if blank:
                continue
            name = cell_titles[k]
            layout["annotations"].append(
                dict(
                    text=name,
                    x=x0 + cell_w / 2,
                    y=y1,
                    xref="paper",
                    yref="paper",
                    showarrow=False,
                    yanchor="bottom",
                    xanchor=title_xanchor,
                    font=dict(size=font_size),
                )
            )
            data.append(
                dict(
                    type="heatmap",
                    z=compact(w[r, c]),
                    x=xl,
                    y=yl,
                    coloraxis="coloraxis",
                    name=name,
                    xaxis=f"x{sfx}",
                    yaxis=f"y{sfx}",
                    hovertemplate=(
                        f"{name}<br>{query_name}: %{{y}}<br>{key_name}: %{{x}}"
                        f"<br>{value_name}: %{{z:.3f}}<extra></extra>"
                    ),
                )
            )
    layout.update(
        title=_title(title),
        coloraxis=dict(
            colorscale=_scale(colorscale),
            cmin=zmin,
            cmax=zmax,
            colorbar=dict(title=_title(value_name), thickness=14),
        ),
        font=dict(size=font_size),
        height=int(min(2400, 80 + cell_px * R)),
        margin=dict(
            l=_left_margin(yl, font_size, False) if show_ticks else 10,
            r=10,
            t=60 if not title else 90,
            b=_bottom_margin(xl, font_size, 60) if show_ticks else 10,
        ),
    )
    return _figure(data, layout)
