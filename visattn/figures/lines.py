"""Tokens and numbers as lines and bars: the token lines (and their filtered form: an edge
threshold, top-k edges per query), bar charts, curves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..reading import filter_edges
from .core import HEAD_COLOURS, HOVER_NUMBER, _figure, _fmt, _ticks, _title, compact, plotly_text

LABEL_GAP = 0.04  # x distance (the lines run from 0 to 1) between a line's end and its token


def token_lines(
    w: ArrayLike,
    tokens: Sequence[str],
    *,
    head_names: Iterable[str] | None = None,
    visible: Iterable[int] | None = None,
    title: str = "",
    font_size: int = 14,
    min_weight: float = 0.02,
    value_name: str = "weight",
) -> go.Figure:
    """Tokens in two columns, one line per (query, key) pair per head, opacity = weight.

    The classic Tensor2Tensor picture. ``w`` is (H, T, T); ``visible`` is a list of head indices to
    draw (all by default); lines under ``min_weight`` are left out to keep the figure light.
    ``value_name`` labels the hover. Each head's legend swatch is a trace of its own at full colour
    (a line trace's swatch takes that trace's opacity), and the tokens stand ``LABEL_GAP`` clear of
    the lines' ends."""
    w = np.asarray(w, dtype=np.float64)
    H, T, _ = w.shape
    tokens = [plotly_text(str(tok)) for tok in tokens]  # "<s>" shown as itself, not as markup
    names = list(head_names) if head_names is not None else [str(h) for h in range(H)]
    visible = range(H) if visible is None else visible
    data = []
    for h in visible:
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        data.append(
            dict(
                type="scatter",
                x=[None],
                y=[None],
                mode="lines",
                line=dict(color=colour, width=4),
                name=names[h],
                legendgroup=names[h],
                showlegend=True,
                hoverinfo="skip",
            )
        )
        # One trace per tenth of weight (opacity is per trace in Plotly): at most 10 traces a head.
        level = np.ceil(w[h] * 10).astype(int)
        for b in range(1, 11):
            pairs = [
                (i, j)
                for i in range(T)
                for j in range(T)
                if level[i, j] == b and w[h, i, j] >= min_weight
            ]
            if not pairs:
                continue
            xs, ys, hover = [], [], []
            for i, j in pairs:
                label = f"{names[h]}<br>{tokens[i]} → {tokens[j]}<br>{value_name}: {w[h, i, j]:.3f}"
                xs += [0, 1, None]
                ys += [i, j, None]
                hover += [label, label, None]
            data.append(
                dict(
                    type="scatter",
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=dict(color=colour, width=1 + 5 * b / 10),
                    opacity=b / 10,
                    name=names[h],
                    legendgroup=names[h],
                    showlegend=False,
                    text=hover,
                    hovertemplate="%{text}<extra></extra>",
                )
            )
    y = list(range(T))
    data.append(
        dict(
            type="scatter",
            x=[-LABEL_GAP] * T,
            y=y,
            mode="text",
            text=list(tokens),
            textposition="middle left",
            showlegend=False,
            hoverinfo="skip",
            textfont=dict(size=font_size),
        )
    )
    data.append(
        dict(
            type="scatter",
            x=[1 + LABEL_GAP] * T,
            y=y,
            mode="text",
            text=list(tokens),
            textposition="middle right",
            showlegend=False,
            hoverinfo="skip",
            textfont=dict(size=font_size),
        )
    )
    layout = dict(
        xaxis=dict(visible=False, range=[-0.6, 1.6]),
        yaxis=dict(visible=False, autorange="reversed"),
        title=_title(title),
        height=int(min(1400, 120 + 28 * T)),
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h", y=-0.02),
    )
    return _figure(data, layout)


def bars(
    labels: Sequence[object],
    values: ArrayLike,
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "weight",
    highlight: int | None = None,
    ymax: float | None = None,
    font_size: int = 14,
    digits: int = 3,
    fixed: bool = False,
    label_min: float | None = None,
) -> go.Figure:
    """One bar per label (repeated labels stay apart); ``highlight`` indexes a bar.

    Bars are labelled with their values (up to 40 bars): ``fixed`` gives ``digits`` decimals
    (weights read against each other), ``label_min`` leaves bars below it unlabelled."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    colours = [
        "#ff7f0e" if highlight is not None and i == highlight else "#1f77b4" for i in range(n)
    ]
    xt, xl = _ticks(labels, n)
    data = [
        dict(
            type="bar",
            x=xl,
            y=compact(values),
            marker=dict(color=colours),
            text=[
                (
                    ""
                    if label_min is not None and v < label_min
                    else f"{v:.{digits}f}"
                    if fixed
                    else _fmt(float(v), digits)
                )
                for v in values
            ]
            if n <= 40
            else None,
            textposition="outside",
            hovertemplate=f"%{{x}}<br>{y_title}: %{{y:{HOVER_NUMBER}}}<extra></extra>",
        )
    ]
    yaxis = dict(title=_title(y_title)) | (dict(range=[0, ymax]) if ymax is not None else {})
    layout = dict(
        xaxis=dict(title=_title(x_title), **xt),
        yaxis=yaxis,
        title=_title(title),
        height=360,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return _figure(data, layout)


def curves(
    x: ArrayLike,
    ys: dict,
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    mode: str = "lines",
    font_size: int = 14,
    markers: dict | None = None,
) -> go.Figure:
    """Several named curves over one x; ``markers`` adds named point sets {name: (xs, ys)}."""
    x = compact(x)
    data = [
        dict(type="scatter", x=x, y=compact(y), mode=mode, name=str(name)) for name, y in ys.items()
    ]
    data += [
        dict(
            type="scatter",
            x=compact(mx),
            y=compact(my),
            mode="markers",
            name=str(name),
            marker=dict(size=10),
        )
        for name, (mx, my) in (markers or {}).items()
    ]
    layout = dict(
        xaxis=dict(title=_title(x_title)),
        yaxis=dict(title=_title(y_title)),
        title=_title(title),
        height=400,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return _figure(data, layout)


def filtered_lines(
    w: ArrayLike,
    tokens: Sequence[str],
    *,
    threshold: float = 0.02,
    top_k: int | None = None,
    **lines_kwargs: Any,
) -> go.Figure:
    """:func:`token_lines` of ``w`` (H, T, T) after :func:`visattn.reading.filter_edges` (edge
    threshold, top-k edges per query). Rows should sum to 1 (weights, aggregates, rollout,
    normalised norm-weighted maps): :func:`token_lines` draws weights in tenths up to 1."""
    kept = filter_edges(w, threshold=threshold, top_k=top_k)
    return token_lines(kept, tokens, min_weight=max(float(threshold), 1e-12), **lines_kwargs)
