"""The multi-head lesson's figures: the layer grid, the focus bars, the pipeline's matrices.

Every word shown is a parameter (titles, axis titles, hover names, colour-bar titles), so the app
passes translated ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..display import MAX_TEXT_CELLS
from .core import cell_text_px
from .lines import bars
from .matrices import head_grid, heatmap

if TYPE_CHECKING:  # annotations only
    from ..lessons.multi_head import Panel


def layer_grid(
    w: ArrayLike,
    tokens: Sequence[str],
    titles: Sequence[str],
    cols: int,
    *,
    font_size: int = 13,
    value_name: str = "weight",
    query_name: str = "query",
    key_name: str = "key",
    colour: dict | None = None,
) -> go.Figure:
    """All heads of one layer, ``w`` (H, T, T), ``cols`` to a row on the shared 0…1 scale (or
    ``colour``: :func:`visattn.figures.colour.colour_scale`'s output); blanks pad the last row."""
    w = np.asarray(w, dtype=float)
    H, T, _ = w.shape
    rows = -(-H // cols)
    block = np.full((rows * cols, T, T), np.nan)
    block[:H] = w
    return head_grid(
        block.reshape(rows, cols, T, T),
        tokens,
        tokens,
        cell_titles=[titles[k] if k < H else "" for k in range(rows * cols)],
        font_size=font_size,
        value_name=value_name,
        query_name=query_name,
        key_name=key_name,
        cell_px=330 if cols <= 2 else 230,
        **(colour or {}),
    )


def focus_bars(
    tokens: Sequence[str],
    weights: ArrayLike,
    best: int | None,
    *,
    title: str,
    narrow: bool,
    font_size: int = 13,
    y_title: str = "weight",
) -> go.Figure:
    """One head's weights from the focus token, its top key ``best`` highlighted (None: a
    near-uniform row, no winner). ``narrow`` (4 to a row) leaves the bars unlabelled: the title
    carries the top weight."""
    fig = bars(
        tokens,
        weights,
        highlight=best,
        ymax=1.15,
        font_size=font_size,
        y_title=y_title,
        digits=2,
        fixed=True,
        label_min=0.03,
        title=title,
    )
    fig.layout.height = 320
    if narrow:
        fig.data[0].text = None
    return fig


def step_matrix(
    panel: Panel, *, title: str, axis_names: dict[str, str], value_name: str, font_size: int = 13
) -> go.Figure:
    """One matrix of the pipeline (a :class:`visattn.lessons.multi_head.Panel`): weights on the 0…1
    scale, anything else on its own. ``axis_names`` names the panel's row and column kinds ("token",
    "dimension", …).

    Cell numbers are drawn where they fit beside another panel (about 300 px of cells): at a
    projector's font a 12 × 12 weight matrix would run its numbers together, and the hover still has
    them."""
    m = panel.m
    text = panel.text
    if text is None:
        text_px = cell_text_px(font_size, max(m.shape))  # the size heatmap() writes them in
        text = max(m.shape) <= MAX_TEXT_CELLS and m.shape[1] * 2 * text_px <= 300
    return heatmap(
        m,
        panel.cols,
        panel.rows,
        title=title,
        weights=panel.weights,
        font_size=font_size,
        show_text=text,
        height=int(min(700, max(230, 130 + panel.row_px * m.shape[0]))),
        x_title=axis_names[panel.col_axis],
        y_title=axis_names[panel.row_axis],
        value_name=value_name,
    )
