"""Figures of the pretrained-model lesson (:mod:`visattn.lessons.pretrained`): the head grid, the
head finder's bars, one head as a heatmap and as lines. Words shown are parameters (the app passes
translated ones)."""

from __future__ import annotations

import plotly.graph_objects as go

from ..lessons.pretrained import Finder, Grid, Lines, OneHead
from .core import smallest_text
from .lines import bars, filtered_line_view
from .matrices import head_grid, heatmap


def grid_figure(
    g: Grid,
    *,
    font_size: int = 13,
    presenter: bool = False,
    value_name: str = "weight",
    query_name: str = "query",
    key_name: str = "key",
    colour: dict | None = None,
) -> go.Figure:
    """All 72 heads (6 × 12 small squares), or one layer's 12 (3 × 4), a view's 6 layers (2 × 3) or
    flow's one map (larger ones), on the shared 0…1 scale or ``colour``
    (:func:`visattn.figures.colour.colour_scale`'s output).

    Cell titles are centred on their cells: Plotly's default anchor for paper-positioned text is
    "auto" (left in the figure's left third, right in its right third), which drew "L1·H4" into
    "L1·H5" on a 1024–1280 px projector."""
    words = dict(
        value_name=value_name,
        query_name=query_name,
        key_name=key_name,
        title_xanchor="center",
        **(colour or {}),
    )
    if g.w.shape[1] > 4:
        return head_grid(
            g.w,
            g.labels,
            g.labels,
            cell_titles=g.titles,
            font_size=max(smallest_text(font_size), font_size - 3),
            cell_px=110 if presenter else 85,
            **words,
        )
    return head_grid(
        g.w,
        g.labels,
        g.labels,
        cell_titles=g.titles,
        font_size=font_size,
        cell_px=260 if g.w.shape[1] > 1 else 520,
        **words,
    )


def finder_figure(
    f: Finder,
    *,
    title: str = "",
    x_title: str = "head",
    y_title: str = "weight",
    font_size: int = 14,
) -> go.Figure:
    """The strongest heads as bars (the open head orange); each bar carries [layer, head] (0-based)
    as customdata, which a click reports."""
    fig = bars(
        list(f.names),
        [hw.weight for hw in f.top],
        highlight=f.opened,
        ymax=1.1,
        y_title=y_title,
        x_title=x_title,
        digits=2,
        title=title,
        font_size=font_size,
    )
    fig.data[0].customdata = [[hw.layer, hw.head] for hw in f.top]
    return fig


def head_figure(
    h: OneHead,
    *,
    title: str = "",
    query_name: str = "query",
    key_name: str = "key",
    value_name: str = "weight",
    font_size: int = 14,
    colour: dict | None = None,
) -> go.Figure:
    """One head (or a view's map) large: queries down, keys across, numbers in the cells when they
    fit."""
    return heatmap(
        h.shown,
        h.labels,
        h.labels,
        title=title,
        x_title=key_name,
        y_title=query_name,
        value_name=value_name,
        font_size=font_size,
        **(colour or {}),
    )


def lines_figure(
    ln: Lines,
    name: str,
    *,
    title: str = "",
    value_name: str = "weight",
    font_size: int = 14,
    threshold: float = 0.02,
    top_k: int | None = None,
) -> go.Figure:
    """The window of one head as the Tensor2Tensor picture (``name`` is the head's legend entry),
    edges below ``threshold`` and outside each query's ``top_k`` left out."""
    return filtered_line_view(
        ln.w,
        ln.tokens,
        threshold=threshold,
        top_k=top_k,
        head_names=[name],
        title=title,
        value_name=value_name,
        font_size=font_size,
    )
