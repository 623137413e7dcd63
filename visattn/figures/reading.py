"""Figures of the reading page: two sentences side by side with their difference, and one head's
queries and keys in a 2-D plane. (The colour scales every attention figure takes are in
:mod:`.colour`, the filtered line view in :mod:`.lines`.)

Every word a figure shows is a parameter (English defaults for notebooks). Compute lives in
:mod:`visattn.reading`; these builders only draw.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..checks import as_array, positive_int
from ..errors import InputError
from ..reading import (
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
    titles: Sequence[str] = ("A", "B", "B − A"),
    title: str = "",
    query_name: str = "query",
    key_name: str = "key",
    value_name: str = "weight",
    diff_name: str = "difference",
    note_unaligned: str = "The two texts have different tokens, so there is no difference map.",
    colour: dict | None = None,
    font_size: int = 12,
    height: int | None = None,
) -> go.Figure:
    """Sentence A's and B's maps (Tq, Tk each) side by side, and B − A when their tokens align.

    The difference (diverging, symmetric around 0) is drawn only when
    :func:`visattn.reading.align_tokens` says the tokenisations line up; its labels read "a / b"
    where the tokens differ. Otherwise the figure shows A and B with ``note_unaligned`` under them.
    ``colour``: :func:`colour_scale`'s output for A and B."""
    wa = as_array(weights_a, "weights_a", 2)
    wb = as_array(weights_b, "weights_b", 2)
    for name, w, toks in (("tokens_a", wa, tokens_a), ("tokens_b", wb, tokens_b)):
        if len(toks) != w.shape[0] or w.shape[0] != w.shape[1]:
            raise InputError(
                "reading_labels",
                f"{name} has {len(toks)} tokens for a map of shape {w.shape}.",
                name=name,
                n=len(toks),
                shape=" × ".join(map(str, w.shape)),
            )
    al: TokenAlignment = align_tokens(tokens_a, tokens_b)
    colour = {"zmin": 0.0, "zmax": 1.0, **(colour or colour_scale())}
    panels = [(wa, tokens_a, titles[0]), (wb, tokens_b, titles[1])]
    diff = weight_difference(wa, wb) if al.aligned else None
    if diff is not None:
        labels = [
            a if a == b else f"{a} / {b}"
            for a, b in zip(map(str, tokens_a), map(str, tokens_b), strict=True)
        ]
        panels.append((diff, labels, titles[2]))
    n = len(panels)
    gap = 0.09  # room for the next panel's token labels
    width = (1 - gap * (n - 1)) / n
    layout: dict = {"annotations": []}
    data = []
    for k, (m, labels, name) in enumerate(panels):
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
                name=name,
                hovertemplate=(
                    f"{name}<br>{query_name}: %{{y}}<br>{key_name}: %{{x}}<br>{vname}: %{{z:.3f}}"
                    "<extra></extra>"
                ),
                **trace_axes,
            )
        )
        layout["annotations"].append(
            dict(
                text=name,
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
                text=note_unaligned,
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
    colour_by_position: bool = False,
    focus: int | None = None,
    top_k: int = 3,
    show_labels: bool | None = None,
    title: str = "",
    query_name: str = "query",
    key_name: str = "key",
    x_title: str = "PC 1",
    y_title: str = "PC 2",
    position_name: str = "position",
    top_keys_name: str = "top keys",
    font_size: int = 14,
    height: int = 560,
) -> go.Figure:
    """One head's queries (circles) and keys (diamonds) in the plane of
    :func:`visattn.reading.qk_projection`.

    With ``focus`` (a query position) and ``weights``, only the focus query and its ``top_k`` keys
    carry their token as text (a cluster of every label is unreadable); every point names its token
    on hover. Without ``focus``, markers are labelled by token (up to 40 tokens, or as
    ``show_labels`` says) and coloured by
    role, or with ``colour_by_position`` by position (1 … T, one colour bar named
    ``position_name``). Hovering a query lists its ``top_k`` keys by ``weights`` (Tq, Tk) — the
    head's attention row — under ``top_keys_name``. Axis titles are parameters (e.g. "PC 1 (41 % of
    the variance)")."""
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
            hover_q[i] += f"<br>{top_keys_name}:<br>{tops}"
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
