"""Plotly figures from arrays and labels. No Streamlit here: every builder returns a ``go.Figure``.

Every word a figure shows (titles, axis and colour-bar titles, hover names, legend entries) is a
parameter, so the app passes translated ones; the English defaults are for notebook users.

Modules: ``core`` (shared conventions: unique repeated labels, tick thinning, cell text, the weight
colour scale, figures built without Plotly's slow validation), ``matrices`` (heatmap, head grid),
``lines`` (token lines, bars, curves), ``live`` (a Plotly slider inside a figure, with precomputed
steps: the figure redraws in the browser while it is dragged). A lesson's own figures live beside
them, one module per lesson."""

from ..display import MAX_TEXT_CELLS
from .core import (
    DIVERGING_SCALE,
    HEAD_COLOURS,
    MAX_TICKS,
    WEIGHT_SCALE,
    cell_text,
    compact,
    unique_labels,
)
from .lines import bars, curves, token_lines
from .matrices import head_grid, heatmap

__all__ = [
    "DIVERGING_SCALE",
    "HEAD_COLOURS",
    "MAX_TEXT_CELLS",
    "MAX_TICKS",
    "WEIGHT_SCALE",
    "bars",
    "cell_text",
    "compact",
    "curves",
    "head_grid",
    "heatmap",
    "token_lines",
    "unique_labels",
]
