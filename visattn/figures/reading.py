"""Figures of the reading page: the chosen reading of a text (the grid, one map large, as lines),
two sentences side by side with their difference, and one head's queries and keys in a 2-D plane.
(The colour scales every attention figure takes are in :mod:`.colour`.)

Every word a figure shows is a field of :class:`Words` (English; the app fills it in the page's
language). Which reading a figure draws and the page's names for it (the reading control's
label tables) come as a :class:`Reading`; tokens and a map's name ("L4·H2") are data too. Compute
lives in :mod:`visattn.reading` and :mod:`visattn.lessons.reading`; these builders only draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..checks import as_array, positive_int
from ..display import layer_name
from ..errors import InputError
from ..models.encoder import N_LAYERS
from ..reading import (
    THROUGH_LAYERS,
    QKProjection,
    TokenAlignment,
    align_tokens,
    weight_difference,
)
from .colour import colour_scale
from .core import (
    DIVERGING_SCALE,
    HEAD_COLOURS,
    _figure,
    _scale,
    _ticks,
    _title,
    compact,
    plotly_text,
    unique_labels,
)
from .lines import filtered_lines
from .matrices import head_grid, heatmap

if TYPE_CHECKING:  # annotations only
    from ..lessons.reading import Geometry, Maps


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``output_token`` with {layer} ("L4");
    ``raw_title`` with {reading} (the reading's name); ``map_title`` with {reading} and {name} (the
    map's: "L4·H2"); ``lines_title``, ``lines_through_title`` (rollout and flow) and
    ``plane_title`` with {name}; ``principal_axis`` with {n} (1, 2) and {pct}."""

    query: str = "query"
    key: str = "key"
    output_token: str = "output token (after {layer})"
    output_token_grid: str = "output token (after the map's layer)"
    input_token: str = "input token"
    raw_title: str = "{reading} (unnormalised)"
    raw_value: str = "α‖f(x)‖"
    raw_relative: str = "α‖f(x)‖ ÷ largest"
    map_title: str = "{reading}: {name}"
    lines_title: str = "{name}: query → key"
    lines_through_title: str = "{name}: output token → input token"
    sentence_a: str = "Sentence A"
    sentence_b: str = "Sentence B"
    difference_title: str = "B − A"
    difference: str = "difference"
    unaligned: str = "Different numbers of tokens: no difference map."
    plane_title: str = "{name}: queries and keys"
    principal_axis: str = "principal axis {n} ({pct} %)"
    position: str = "position"
    top_keys: str = "strongest keys"


WORDS = Words()


@dataclass(frozen=True)
class Reading:
    """Which reading of the attention a figure draws, ``name`` (one of
    :data:`visattn.reading.READINGS`), and what the page calls it: ``label`` ("weights × ‖value‖")
    and ``value_name``, what a cell holds ("share") — the reading control's label tables, data
    rather than words of these figures. ``n_layers``: the model's (flow's one map is after its last
    layer); ``raw``: the norm-weighted reading unnormalised, α‖f(x)‖ itself (:class:`Words`'
    ``raw_title`` and ``raw_value`` name it)."""

    name: str = "weights"
    label: str = "weights"
    value_name: str = "weight"
    n_layers: int = N_LAYERS
    raw: bool = False


WEIGHTS = Reading()  # the attention weights, named in English


class AxisWords(Protocol):
    """The words :func:`axis_names` reads (this module's :class:`Words`, the pretrained
    figures')."""

    query: str
    key: str
    output_token: str
    output_token_grid: str
    input_token: str


def axis_names(reading: Reading, words: AxisWords, layer: str | None = None) -> tuple[str, str]:
    """What a map of ``reading`` has in its rows and its columns: queries and keys; for rollout and
    flow an output token, after ``layer`` ("L4"; flow: the model's last; None: a grid, each map
    after its own layer), and an input token."""
    if reading.name not in THROUGH_LAYERS:
        return words.query, words.key
    if reading.name == "flow":
        layer = layer_name(reading.n_layers - 1)
    output = words.output_token_grid if layer is None else words.output_token.format(layer=layer)
    return output, words.input_token


def reading_title(reading: Reading, words: Words = WORDS) -> str:
    """The reading's name as a figure titles it (unnormalised: said so)."""
    return words.raw_title.format(reading=reading.label) if reading.raw else reading.label


def cell_name(reading: Reading, words: Words = WORDS) -> str:
    """What a cell holds: the reading's value, or α‖f(x)‖ itself when unnormalised."""
    return words.raw_value if reading.raw else reading.value_name


def grid_figure(
    maps: Maps,
    tokens: Sequence[str],
    reading: Reading,
    *,
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 12,
) -> go.Figure:
    """The grid of ``maps`` (a :class:`visattn.lessons.reading.Maps`): a layer's heads, a
    reading's layers or flow's one map, on ``colour`` (:func:`colour_scale`'s output)."""
    rows, columns = axis_names(reading, words)
    return head_grid(
        maps.grid,
        tokens,
        tokens,
        cell_titles=maps.titles,
        value_name=cell_name(reading, words),
        query_name=rows,
        key_name=columns,
        font_size=font_size,
        title=reading_title(reading, words),
        **(colour or {}),
    )


def cell_figure(
    maps: Maps,
    tokens: Sequence[str],
    reading: Reading,
    *,
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 12,
) -> go.Figure:
    """The chosen cell of ``maps`` large: a heatmap, rows and columns named by what they are."""
    rows, columns = axis_names(reading, words, maps.name)
    return heatmap(
        maps.cell,
        tokens,
        tokens,
        title=words.map_title.format(reading=reading_title(reading, words), name=maps.name),
        value_name=cell_name(reading, words),
        x_title=columns,
        y_title=rows,
        font_size=font_size,
        **(colour or {}),
    )


def lines_figure(
    w: ArrayLike,
    tokens: Sequence[str],
    name: str,
    reading: Reading,
    *,
    threshold: float = 0.02,
    top_k: int | None = None,
    words: Words = WORDS,
    font_size: int = 12,
) -> go.Figure:
    """One map ``w`` (T, T) named ``name`` as lines, edges below ``threshold`` and outside each
    query's ``top_k`` left out (an unnormalised map: divided by its largest entry,
    :func:`visattn.lessons.reading.line_weights`)."""
    template = words.lines_through_title if reading.name in THROUGH_LAYERS else words.lines_title
    return filtered_lines(
        np.asarray(w)[None],  # (1, T, T): one head, at most 1
        tokens,
        threshold=threshold,
        top_k=top_k,
        head_names=[name],
        value_name=words.raw_relative if reading.raw else reading.value_name,
        title=template.format(name=name),
        font_size=font_size,
    )


def _panel_axes(
    k: int, x0: float, x1: float, labels_x, labels_y, n_x: int, n_y: int, show_y: bool
) -> tuple[dict, dict]:
    sfx = "" if k == 0 else str(k + 1)
    xt, xl = _ticks(labels_x, n_x)
    yt, yl = _ticks(labels_y, n_y)
    x = dict(domain=[x0, x1], anchor=f"y{sfx}", side="top", tickangle=-60, **xt)
    y = dict(domain=[0.0, 1.0], anchor=f"x{sfx}", autorange="reversed", showticklabels=show_y, **yt)
    return {f"xaxis{sfx}": x, f"yaxis{sfx}": y}, {
        "x": xl,
        "y": yl,
        "xaxis": f"x{sfx}",
        "yaxis": f"y{sfx}",
    }


def comparison(
    weights_a: ArrayLike,
    weights_b: ArrayLike,
    tokens_a: Sequence[str],
    tokens_b: Sequence[str],
    *,
    name: str = "",
    reading: Reading = WEIGHTS,
    colour: dict | None = None,
    words: Words = WORDS,
    font_size: int = 12,
    height: int | None = None,
) -> go.Figure:
    """Sentence A's and B's maps (Tq, Tk each) of ``reading`` side by side, and B − A when their
    tokens align; titled by the map's ``name`` ("L4·H2"; empty: no title).

    The difference (diverging, symmetric around 0) is drawn only when
    :func:`visattn.reading.align_tokens` says the tokenisations line up; its labels read "a / b"
    where the tokens differ. Otherwise the figure shows A and B with a note under them.
    ``colour``: :func:`colour_scale`'s output for A and B."""
    wa = as_array(weights_a, "weights_a", 2)
    wb = as_array(weights_b, "weights_b", 2)
    for argument, w, toks in (("tokens_a", wa, tokens_a), ("tokens_b", wb, tokens_b)):
        if len(toks) != w.shape[0] or w.shape[0] != w.shape[1]:
            raise InputError(
                "reading_labels",
                f"{argument} has {len(toks)} tokens for a map of shape {w.shape}.",
                name=argument,
                n=len(toks),
                shape=" × ".join(map(str, w.shape)),
            )
    al: TokenAlignment = align_tokens(tokens_a, tokens_b)
    colour = {"zmin": 0.0, "zmax": 1.0, **(colour or colour_scale())}
    query_name, key_name = axis_names(reading, words, name or None)
    value_name, diff_name = cell_name(reading, words), words.difference
    title = words.map_title.format(reading=reading_title(reading, words), name=name) if name else ""
    panels = [(wa, tokens_a, words.sentence_a), (wb, tokens_b, words.sentence_b)]
    diff = weight_difference(wa, wb) if al.aligned else None
    if diff is not None:
        labels = [
            a if a == b else f"{a} / {b}"
            for a, b in zip(map(str, tokens_a), map(str, tokens_b), strict=True)
        ]
        panels.append((diff, labels, words.difference_title))
    n = len(panels)
    gap = 0.09  # room for the next panel's token labels
    width = (1 - gap * (n - 1)) / n
    layout: dict = {"annotations": []}
    data = []
    for k, (m, labels, panel) in enumerate(panels):
        x0 = k * (width + gap)
        axes, trace_axes = _panel_axes(
            k, x0, min(x0 + width, 1.0), labels, labels, m.shape[1], m.shape[0], True
        )
        layout.update(axes)
        is_diff = diff is not None and k == 2
        vname = diff_name if is_diff else value_name
        data.append(
            dict(
                type="heatmap",
                z=compact(m),
                coloraxis="coloraxis2" if is_diff else "coloraxis",
                name=panel,
                hovertemplate=(
                    f"{panel}<br>{query_name}: %{{y}}<br>{key_name}: %{{x}}<br>{vname}: %{{z:.3f}}"
                    "<extra></extra>"
                ),
                **trace_axes,
            )
        )
        layout["annotations"].append(
            dict(
                text=panel,
                x=x0 + width / 2,
                y=1.0,
                xref="paper",
                yref="paper",
                showarrow=False,
                yanchor="bottom",
                yshift=60,
                font=dict(size=font_size + 1),
            )
        )
    layout["coloraxis"] = dict(
        colorscale=_scale(colour["colorscale"]),
        cmin=colour["zmin"],
        cmax=colour["zmax"],
        colorbar=dict(title=_title(value_name), thickness=12, x=1.0 if diff is None else 1.02),
    )
    if diff is not None:
        bound = float(np.abs(diff).max()) or 1.0
        layout["coloraxis2"] = dict(
            colorscale=_scale(DIVERGING_SCALE),
            cmin=-bound,
            cmax=bound,
            colorbar=dict(title=_title(diff_name), thickness=12, x=1.12),
        )
    else:
        layout["annotations"].append(
            dict(
                text=words.unaligned,
                x=0.5,
                y=0.0,
                xref="paper",
                yref="paper",
                showarrow=False,
                yanchor="top",
                yshift=-8,
                font=dict(size=font_size),
            )
        )
    side = max(len(tokens_a), len(tokens_b))
    layout.update(
        title=_title(title),
        font=dict(size=font_size),
        height=height or int(min(900, max(320, 160 + 22 * side))),
        margin=dict(
            l=10,
            r=10 if diff is None else 60,
            t=150 if title else 130,
            b=40 if diff is None else 10,
        ),
    )
    return _figure(data, layout)


def qk_geometry(
    projection: QKProjection,
    tokens: Sequence[str],
    weights: ArrayLike | None = None,
    *,
    name: str = "",
    colour_by_position: bool = False,
    focus: int | None = None,
    top_k: int = 3,
    show_labels: bool | None = None,
    words: Words = WORDS,
    font_size: int = 14,
    height: int = 560,
) -> go.Figure:
    """One head's queries (circles) and keys (diamonds) in the plane of
    :func:`visattn.reading.qk_projection`, titled by the head's ``name`` ("L4·H2"; empty: no
    title); each axis says its share of the variance.

    With ``focus`` (a query position) and ``weights``, only the focus query and its ``top_k`` keys
    carry their token as text (a cluster of every label is unreadable); every point names its token
    on hover. Without ``focus``, markers are labelled by token (up to 40 tokens, or as
    ``show_labels`` says) and coloured by role, or with ``colour_by_position`` by position (1 … T,
    one colour bar). Hovering a query lists its ``top_k`` keys by ``weights`` (Tq, Tk) — the
    head's attention row."""
    query_name, key_name, position_name = words.query, words.key, words.position
    title = words.plane_title.format(name=name) if name else ""
    x_title, y_title = (
        words.principal_axis.format(n=n, pct=f"{100 * share:.0f}")
        for n, share in enumerate(projection.explained[:2], start=1)
    )
    Pq, Pk = np.asarray(projection.queries), np.asarray(projection.keys)
    T = len(tokens)
    if Pq.shape[0] != T or Pk.shape[0] != T:
        raise InputError(
            "reading_labels",
            f"{T} tokens for {Pq.shape[0]} queries and {Pk.shape[0]} keys.",
            name="tokens",
            n=T,
            shape=f"{Pq.shape[0]} × {Pk.shape[0]}",
        )
    k = positive_int(top_k, "top_k")
    labels = [plotly_text(str(t)) for t in tokens]  # "<s>" shown as itself, not as markup
    hover_q = [f"{query_name}: {lab}" for lab in labels]
    if weights is not None:
        w = as_array(weights, "weights", 2)
        if w.shape != (T, T):
            raise InputError(
                "reading_labels",
                f"weights has shape {w.shape}; with {T} tokens it must be {T} × {T}.",
                name="weights",
                n=T,
                shape=" × ".join(map(str, w.shape)),
            )
        for i in range(T):
            order = np.argsort(-w[i], kind="stable")[:k]
            tops = "<br>".join(
                f"  {labels[j]} ({position_name} {j + 1}): {w[i, j]:.3f}" for j in order
            )
            hover_q[i] += f"<br>{words.top_keys}:<br>{tops}"
    hover_k = [f"{key_name}: {lab}" for lab in labels]
    show_labels = T <= 40 if show_labels is None else show_labels
    names = unique_labels(labels, T)
    text_q = text_k = names if show_labels else None
    if focus is not None:
        if weights is None or not 0 <= int(focus) < T:
            raise InputError(
                "reading_labels",
                f"focus {focus} needs the weights and a position in 0 … {T - 1}.",
                name="focus",
                n=T,
                shape=f"{T} × {T}",
            )
        focus = int(focus)
        top = set(np.argsort(-w[focus], kind="stable")[:k].tolist())
        text_q = [names[i] if i == focus else "" for i in range(T)]
        text_k = [names[j] if j in top else "" for j in range(T)]
        show_labels = True
    positions = np.arange(1, T + 1)
    data = []
    for role, P, symbol, colour, hover, text in (
        (query_name, Pq, "circle", HEAD_COLOURS[0], hover_q, text_q),
        (key_name, Pk, "diamond", HEAD_COLOURS[1], hover_k, text_k),
    ):
        marker = dict(symbol=symbol, size=11, line=dict(width=1, color="#333"))
        if colour_by_position:
            marker.update(color=positions.tolist(), coloraxis="coloraxis")
        else:
            marker["color"] = colour
        data.append(
            dict(
                type="scatter",
                x=compact(P[:, 0]),
                y=compact(P[:, 1]),
                name=role,
                mode="markers+text" if show_labels else "markers",
                marker=marker,
                text=text if show_labels else None,
                textposition="top center",
                customdata=hover,
                hovertemplate="%{customdata}<extra></extra>",
            )
        )
    layout = dict(
        title=_title(title),
        font=dict(size=font_size),
        height=height,
        xaxis=dict(title=_title(x_title), zeroline=True),
        yaxis=dict(title=_title(y_title), zeroline=True),
        legend=dict(orientation="h", y=-0.12),
        margin=dict(l=10, r=10, t=60 if title else 30, b=10),
    )
    if colour_by_position:
        layout["coloraxis"] = dict(
            colorscale=_scale("Viridis"),
            cmin=1,
            cmax=max(T, 2),
            colorbar=dict(title=_title(position_name), thickness=12),
        )
    return _figure(data, layout)


def plane_figure(
    geometry: Geometry,
    by_position: bool,
    focus: int,
    top_k: int = 3,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The query/key plane of a :class:`visattn.lessons.reading.Geometry`: the ``focus`` query and
    its ``top_k`` strongest keys labelled, every point named on hover, coloured by role (or
    ``by_position``)."""
    return qk_geometry(
        geometry.projection,
        geometry.tokens,
        geometry.weights,
        name=geometry.name,
        colour_by_position=by_position,
        focus=focus,
        top_k=top_k,
        words=words,
        font_size=font_size,
    )
