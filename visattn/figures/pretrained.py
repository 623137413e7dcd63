"""Figures of the pretrained-model lesson (:mod:`visattn.lessons.pretrained`): the head grid, the
head finder's bars, one head as a heatmap and as lines.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language).
Which reading a figure draws and the page's names for it come as a
:class:`visattn.figures.reading.Reading`; tokens and heads' names ("L4·H2") are data."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from ..lessons.pretrained import Finder, Grid, Lines, OneHead
from ..reading import PER_HEAD
from .core import plotly_text, smallest_text
from .lines import bars, filtered_lines
from .matrices import head_grid, heatmap
from .reading import WEIGHTS, Reading, axis_names


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``output_token`` with {layer} ("L4");
    ``finder_title`` and ``finder_maps_title`` with {src} and {tgt} (the tokens) and {n} (bars);
    ``head_title`` and ``lines_title`` with {head} ("L4·H2"); ``map_title`` with {reading}
    (the reading's name) and {name} (the map's)."""

    query: str = "query"
    key: str = "key"
    output_token: str = "output token (after {layer})"
    output_token_grid: str = "output token (after the map's layer)"
    input_token: str = "input token"
    finder_title: str = "{src} → {tgt}: the {n} strongest heads"
    finder_maps_title: str = "{src} → {tgt}: the strongest maps of this view ({n})"
    finder_x: str = "head (layer·head)"
    finder_maps_x: str = "Layer"
    head_title: str = "{head}: attention weights (rows: queries, columns: keys)"
    map_title: str = "{reading}: {name}"
    lines_title: str = "{head}: who looks at whom"


WORDS = Words()


def grid_figure(
    g: Grid,
    reading: Reading = WEIGHTS,
    *,
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 13,
    presenter: bool = False,
) -> go.Figure:
    """All 72 heads (6 × 12 small squares), or one layer's 12 (3 × 4), a reading's 6 layers
    (2 × 3) or flow's one map (larger ones), on the shared 0…1 scale or ``colour``
    (:func:`visattn.figures.colour.colour_scale`'s output).

    Cell titles are centred on their cells: Plotly's default anchor for paper-positioned text is
    "auto" (left in the figure's left third, right in its right third), which drew "L1·H4" into
    "L1·H5" on a 1024–1280 px projector."""
    rows, columns = axis_names(reading, words)
    look = dict(
        value_name=reading.value_name,
        query_name=rows,
        key_name=columns,
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
            **look,
        )
    return head_grid(
        g.w,
        g.labels,
        g.labels,
        cell_titles=g.titles,
        font_size=font_size,
        cell_px=260 if g.w.shape[1] > 1 else 520,
        **look,
    )


def finder_figure(
    f: Finder,
    source: str,
    target: str,
    reading: Reading = WEIGHTS,
    *,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The strongest heads (of a reading without heads: maps) by the weight the token ``source``
    puts on ``target``, as bars (the open head orange); each bar carries [layer, head] (0-based) as
    customdata, which a click reports."""
    drawn = {"src": plotly_text(source), "tgt": plotly_text(target)}  # "<s>" is not markup
    if reading.name in PER_HEAD:
        title, x_title = words.finder_title.format(n=len(f.top), **drawn), words.finder_x
    else:
        title = words.finder_maps_title.format(n=len(f.top), **drawn)
        x_title = words.finder_maps_x
    fig = bars(
        list(f.names),
        [hw.weight for hw in f.top],
        highlight=f.opened,
        ymax=1.1,
        y_title=reading.value_name,
        x_title=x_title,
        digits=2,
        title=title,
        font_size=font_size,
    )
    fig.data[0].customdata = [[hw.layer, hw.head] for hw in f.top]
    return fig


def head_figure(
    h: OneHead,
    reading: Reading = WEIGHTS,
    *,
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """One head (or a reading's map) large: queries down, keys across (rollout and flow: output and
    input tokens), numbers in the cells when they fit."""
    if reading.name == "weights":
        title = words.head_title.format(head=h.name)
    else:
        title = words.map_title.format(reading=reading.label, name=h.name)
    rows, columns = axis_names(reading, words, h.name)
    return heatmap(
        h.shown,
        h.labels,
        h.labels,
        title=title,
        x_title=columns,
        y_title=rows,
        value_name=reading.value_name,
        font_size=font_size,
        **(colour or {}),
    )


def lines_figure(
    ln: Lines,
    name: str,
    reading: Reading = WEIGHTS,
    *,
    threshold: float = 0.02,
    top_k: int | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The window of one head as the Tensor2Tensor picture (``name`` is the head's legend entry),
    edges below ``threshold`` and outside each query's ``top_k`` left out."""
    return filtered_lines(
        ln.w,
        ln.tokens,
        threshold=threshold,
        top_k=top_k,
        head_names=[name],
        title=words.lines_title.format(head=name),
        value_name=reading.value_name,
        font_size=font_size,
    )
