"""The multi-head lesson's figures: the layer grid, the focus token in every head (bars or one
heatmap), the lines, one head large, the pipeline's matrices.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language).
The heads' names (``titles``: "Coreference", "Head 2", or the reading's one merged map) and what
a cell holds (``value_name``: the reading's) are data, passed as arguments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..display import MAX_TEXT_CELLS
from .core import cell_text_px
from .lines import bars, filtered_lines
from .matrices import head_grid, heatmap

if TYPE_CHECKING:  # annotations only
    from ..lessons.multi_head import Focus, Panel


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``focus_title`` with {head}, {token},
    {target} and {w}; ``focus_uniform_title`` with {head}, {token}, {lo} and {hi};
    ``focus_heat_title`` with {token}; ``lines_title`` with {layer}; ``one_title`` with {head} and
    {layer} (layers counted from 1); the pipeline's ``panel_shape`` with {name}, ``panel_head`` with
    {n}, and all four with {T} and {c} (rows, columns). ``token`` … ``position`` name what a
    pipeline matrix's rows and columns are."""

    query: str = "query"
    key: str = "key"
    head: str = "head"
    weight: str = "weight"
    value: str = "value"
    token: str = "token"
    dimension: str = "dimension"
    position: str = "position"
    focus_title: str = "{head}: {token} → {target} ({w})"
    focus_uniform_title: str = "{head}: {token} → near uniform ({lo}–{hi})"
    focus_heat_title: str = "Weights of “{token}” in every head"
    lines_title: str = "Layer {layer}: query → key"
    one_title: str = "{head} · layer {layer}"
    panel_shape: str = "{name}: ({T}, {c})"
    panel_head: str = "head{n} = A{n}V{n}: ({T}, {c})"
    panel_concat: str = "concat: ({T}, {c})"
    panel_mha: str = "MHA(X) = concat · W_O: ({T}, {c})"

    def axis(self, name: str) -> str:
        """What a matrix's rows or columns are (:data:`visattn.lessons.multi_head.AXES`)."""
        return getattr(self, name)

    def panel_title(self, panel: Panel) -> str:
        """A pipeline matrix's title (its kind: :data:`visattn.lessons.multi_head.PANEL_TITLES`)."""
        template = {
            "shape": self.panel_shape,
            "head": self.panel_head,
            "concat": self.panel_concat,
            "mha": self.panel_mha,
        }[panel.title]
        T, c = panel.m.shape
        return template.format(name=panel.name, n=panel.sub, T=T, c=c)


WORDS = Words()


def layer_grid(
    w: ArrayLike,
    tokens: Sequence[str],
    titles: Sequence[str],
    cols: int,
    *,
    value_name: str = "weight",
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 13,
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
        query_name=words.query,
        key_name=words.key,
        cell_px=330 if cols <= 2 else 230,
        **(colour or {}),
    )


def focus_bars(
    tokens: Sequence[str],
    weights: ArrayLike,
    focus: Focus,
    h: int,
    head: str,
    *,
    value_name: str = "weight",
    words: Words = WORDS,
    font_size: int = 13,
) -> go.Figure:
    """Head ``h``'s weights from the focus token (``weights``: its row, (T,)), titled by the head's
    name ``head`` and its top key, which is highlighted (a near-uniform row: no winner, the title
    gives the row's range). Four to a row (``focus.per_row``), the bars are unlabelled: the title
    carries the top weight."""
    token, top = tokens[focus.token], f"{focus.top[h]:.2f}"
    if focus.uniform[h]:
        best = None
        low = f"{focus.low[h]:.2f}"
        title = words.focus_uniform_title.format(head=head, token=token, lo=low, hi=top)
    else:
        best = focus.best[h]
        title = words.focus_title.format(head=head, token=token, target=tokens[best], w=top)
    fig = bars(
        tokens,
        weights,
        highlight=best,
        ymax=1.15,
        font_size=font_size,
        y_title=value_name,
        digits=2,
        fixed=True,
        label_min=0.03,
        title=title,
    )
    fig.layout.height = 320
    if focus.per_row > 2:
        fig.data[0].text = None
    return fig


def focus_heatmap(
    rows: ArrayLike,
    tokens: Sequence[str],
    titles: Sequence[str],
    token: int,
    *,
    value_name: str = "weight",
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 13,
) -> go.Figure:
    """The focus token's row in every head, ``rows`` (H, T): one heatmap, heads down, keys
    across (too many heads for a bar chart each)."""
    return heatmap(
        rows,
        tokens,
        titles,
        font_size=font_size,
        x_title=words.key,
        y_title=words.head,
        title=words.focus_heat_title.format(token=tokens[token]),
        value_name=value_name,
        **(colour or {}),
    )


def lines_figure(
    w: ArrayLike,
    tokens: Sequence[str],
    layer: int,
    titles: Sequence[str],
    visible: Sequence[int],
    *,
    threshold: float = 0.02,
    top_k: int | None = None,
    value_name: str = "weight",
    words: Words = WORDS,
    font_size: int = 13,
) -> go.Figure:
    """Layer ``layer`` (0-based) as lines, ``w`` (H, T, T): the heads ``visible``, named by
    ``titles``, edges below ``threshold`` and outside each query's ``top_k`` left out."""
    return filtered_lines(
        w,
        tokens,
        threshold=threshold,
        top_k=top_k,
        head_names=titles,
        visible=visible,
        font_size=font_size,
        value_name=value_name,
        title=words.lines_title.format(layer=layer + 1),
    )


def head_figure(
    w: ArrayLike,
    tokens: Sequence[str],
    head: str,
    layer: int,
    *,
    value_name: str = "weight",
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 13,
) -> go.Figure:
    """One head's map ``w`` (T, T) large, queries down and keys across, titled by the head's name
    ``head`` and its layer (0-based)."""
    return heatmap(
        w,
        tokens,
        tokens,
        font_size=font_size,
        x_title=words.key,
        y_title=words.query,
        value_name=value_name,
        title=words.one_title.format(head=head, layer=layer + 1),
        **(colour or {}),
    )


def step_matrix(panel: Panel, *, words: Words = WORDS, font_size: int = 13) -> go.Figure:
    """One matrix of the pipeline (a :class:`visattn.lessons.multi_head.Panel`): weights on the 0…1
    scale, anything else on its own; its rows and columns named by their kinds ("token",
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
        title=words.panel_title(panel),
        weights=panel.weights,
        font_size=font_size,
        show_text=text,
        height=int(min(700, max(230, 130 + panel.row_px * m.shape[0]))),
        x_title=words.axis(panel.col_axis),
        y_title=words.axis(panel.row_axis),
        value_name=words.weight if panel.weights else words.value,
    )
