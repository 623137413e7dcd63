"""Figures of the decoder lesson: the causal mask, the KV cache filling step by step (its slider and
play button are the control ``dec_step``), the cost with and without the cache, and the designed
induction circuit's heads, lines and loss over positions.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language);
tokens come with the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..controls import url_text
from ..lessons.decoder import CONTROLS
from .core import (
    DIVERGING_SCALE,
    TEMPLATE,
    _figure,
    _left_margin,
    _scale,
    _sized,
    _ticks,
    _title,
    compact,
)
from .lines import token_lines
from .matrices import head_grid, heatmap

FUTURE_GREY = "#d9d9d9"  # the plot's background: what a NaN cell (a key not cached yet) shows
NEW_ROW = "#ff7f0e"  # the row the step shown appends
CACHED_ROW = "#1f77b4"  # rows cached by earlier steps
COST_POINTS = 400  # steps drawn on a cost curve
UNITS_EN = "3:k 6:M 9:B 12:T"  # powers of ten named by a unit: 10¹¹ reads 100B
# Legends to the right of the plot: below it, a projector's larger axis title ran into them.
LEGEND = dict(x=1.02, xanchor="left", y=1, yanchor="top")
STEP = CONTROLS["dec_step"]  # the cache animation's slider
HEAD_CELL_PX = 420  # the circuit's two heads: cells large enough to read


@dataclass(frozen=True)
class Words:
    """The words of these figures. ``units``: the cost axis's powers of ten named by a unit
    ("exponent:name" pairs, :func:`power_ticks`; in Chinese 万 and 亿)."""

    query: str = "query"
    key: str = "key"
    value: str = "value"
    weight: str = "weight"
    token: str = "token"
    dimension: str = "dimension"
    position: str = "position"
    mask_title: str = "Causal attention weights (future keys masked)"
    key_cache: str = "key cache K"
    value_cache: str = "value cache V"
    new_weights: str = "weights of the new query"
    step_prefix: str = "step "
    play: str = "play"
    pause: str = "pause"
    with_cache: str = "with KV cache"
    without_cache: str = "without cache (whole prefix again)"
    cost_x: str = "step (tokens so far)"
    cost_y: str = "multiply-adds in this step"
    units: str = UNITS_EN
    head_previous: str = "layer 1 · previous-token head"
    head_induction: str = "layer 2 · induction head"
    intact: str = "intact"
    knocked_out: str = "previous-token head knocked out"
    second_copy: str = "second copy"
    loss_axis: str = "loss −ln p(next token)"
    uniform: str = "uniform guess (ln V)"


WORDS = Words()


def power_ticks(lo: float, hi: float, units: str = UNITS_EN) -> tuple[list[float], list[str]]:
    """Tick values at the powers of ten from ``lo`` to ``hi`` and their labels in ``units``
    ("exponent:name" pairs): each power in the largest unit not above it (10¹¹ → 100B in English,
    1000亿 in Chinese), a power below every unit as a plain number."""
    named = sorted(((int(e), name) for e, name in (p.split(":") for p in units.split())))
    values, labels = [], []
    for exponent in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1):
        below = [(e, name) for e, name in named if e <= exponent]
        e, name = below[-1] if below else (0, "")
        values.append(10.0**exponent)
        labels.append(f"{10 ** (exponent - e)}{name}")
    return values, labels


def mask_map(
    weights: ArrayLike,
    tokens: Sequence[str],
    future: ArrayLike,
    *,
    numbers: bool,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """Causal attention weights (T, T), the ``future`` keys (bool) veiled; each weight printed in
    its cell when ``numbers``, else in the hover only."""
    return heatmap(
        weights,
        list(tokens),
        list(tokens),
        masked=future,
        title=words.mask_title,
        x_title=words.key,
        y_title=words.query,
        value_name=words.weight,
        show_text=numbers,
        font_size=font_size,
    )


def _cache_step(K, V, W, step, *, full: bool, **base):
    """What step ``step`` (1 … T) changes in the three traces (K, V, the new query's weights); with
    ``full`` the whole traces."""
    T = K.shape[0]
    position = np.arange(1, T + 1)  # (T,) the tokens' positions, counted as the steps are
    hide = position > step  # (T,) rows not in the cache yet
    w = np.where(hide, 0.0, W[step - 1])  # (T,) row s − 1 of W holds step s's weights
    colour = np.where(position == step, NEW_ROW, np.where(hide, FUTURE_GREY, CACHED_ROW))
    bar = dict(
        type="bar",
        x=compact(w),
        marker=dict(color=colour.tolist()),
        text=["" if h else f"{v:.2f}" for v, h in zip(w, hide, strict=True)],
    )
    k = dict(type="heatmap", z=compact(np.where(hide[:, None], np.nan, K)))
    v = dict(type="heatmap", z=compact(np.where(hide[:, None], np.nan, V)))
    if full:
        k |= base["k"]
        v |= base["v"]
        bar |= base["bar"]
    return [k, v, bar]


def _with_frames(data: list[dict], layout: dict, frames: list[dict]) -> go.Figure:
    """A figure with animation frames, skipping Plotly's validation. ``_validate=False`` does not
    reach frames (Plotly would re-validate each one, at a cost per frame: benchmarks/README.md),
    so the frames are set directly; tests validate the result. Its text is at the layout's font
    size, as :func:`_figure`'s."""
    _sized(data, layout)
    layout.setdefault("template", TEMPLATE)
    fig = go.Figure({"data": data, "layout": layout}, _validate=False)
    fig._frame_objs = tuple(go.Frame(f, _validate=False) for f in frames)
    return fig


def cache_animation(
    K: ArrayLike,
    V: ArrayLike,
    W: ArrayLike,
    tokens: Sequence[str],
    step: int,
    *,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The cache after each step, as frames: K (T, Dk) and V (T, Dv) fill row by row (rows not
    cached yet are grey), and the new query's weights over the cached keys (the new row in orange).
    ``W`` (T, T) holds step s's weights in row s − 1. Plotly's own play button and slider run the
    frames in the browser; the slider is the control ``dec_step`` (named by its key, each step's
    value the step's URL text, so the frame shown moves it) and ``step`` (1 … T, as the lesson
    counts) is the frame shown first. A frame holds only what changes (the cells, the bars and
    their labels)."""
    K, V, W = (np.asarray(a, dtype=np.float64) for a in (K, V, W))
    T = K.shape[0]
    step = min(max(int(step), 1), T)
    yt, yl = _ticks(tokens, T)
    xt_k, xl_k = _ticks([f"k{j + 1}" for j in range(K.shape[1])], K.shape[1])
    xt_v, xl_v = _ticks([f"v{j + 1}" for j in range(V.shape[1])], V.shape[1])
    bound = float(max(np.abs(K).max(), np.abs(V).max())) or 1.0
    hover_m = (
        f"{words.token}: %{{y}}<br>{words.dimension}: %{{x}}<br>"
        f"{words.value}: %{{z:.3f}}<extra></extra>"
    )
    heat = dict(
        y=yl,
        zmin=-bound,
        zmax=bound,
        colorscale=_scale(DIVERGING_SCALE),
        showscale=False,
        hoverongaps=False,
        hovertemplate=hover_m,
    )
    base = dict(
        k=heat | dict(x=xl_k, xaxis="x", yaxis="y"),
        v=heat | dict(x=xl_v, xaxis="x2", yaxis="y2"),
        bar=dict(
            orientation="h",
            y=yl,
            xaxis="x3",
            yaxis="y3",
            textposition="outside",
            hovertemplate=f"{words.token}: %{{y}}<br>{words.weight}: %{{x:.3f}}<extra></extra>",
        ),
    )
    steps = range(1, T + 1)
    frames = [
        dict(name=str(s), data=_cache_step(K, V, W, s, full=False), traces=[0, 1, 2]) for s in steps
    ]
    anim = dict(
        mode="immediate", frame=dict(duration=600, redraw=True), transition=dict(duration=0)
    )
    slider = dict(
        name=STEP.key,
        active=step - 1,  # Plotly's index of the step's frame
        currentvalue=dict(prefix=words.step_prefix),
        pad=dict(t=30),
        x=0.1,
        len=0.9,
        steps=[
            dict(method="animate", label=str(s), value=url_text(s), args=[[str(s)], anim])
            for s in steps
        ],
    )
    buttons = dict(
        type="buttons",
        direction="left",
        x=0.0,
        y=0,
        xanchor="left",
        yanchor="top",
        pad=dict(t=30, r=10),
        showactive=False,
        buttons=[
            dict(
                label="▶ " + words.play,
                method="animate",
                args=[None, anim | dict(fromcurrent=True)],
            ),
            dict(
                label="■ " + words.pause,
                method="animate",
                args=[[None], dict(mode="immediate", frame=dict(duration=0, redraw=False))],
            ),
        ],
    )
    rows = dict(autorange="reversed", **yt)
    layout = dict(
        xaxis=dict(domain=[0.0, 0.3], side="top", title=_title(words.key_cache), **xt_k),
        yaxis=dict(anchor="x", **rows),
        xaxis2=dict(domain=[0.36, 0.66], side="top", title=_title(words.value_cache), **xt_v),
        yaxis2=dict(anchor="x2", showticklabels=False, **rows),
        xaxis3=dict(
            domain=[0.72, 1.0], side="top", range=[0, 1.15], title=_title(words.new_weights)
        ),
        yaxis3=dict(anchor="x3", showticklabels=False, **rows),
        plot_bgcolor=FUTURE_GREY,
        showlegend=False,
        font=dict(size=font_size),
        sliders=[slider],
        updatemenus=[buttons],
        height=int(min(1100, max(340, 190 + 22 * T))),
        margin=dict(l=_left_margin(yl, font_size, False), r=10, t=90, b=10),
    )
    return _with_frames(_cache_step(K, V, W, step, full=True, **base), layout, frames)


def circuit_heads(
    heads: ArrayLike, tokens: Sequence[str], *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The circuit's two heads (1, 2, T, T) side by side: layer 1's previous-token head and layer
    2's induction head, on the weights' 0…1 scale."""
    return head_grid(
        heads,
        list(tokens),
        list(tokens),
        cell_titles=(words.head_previous, words.head_induction),
        value_name=words.weight,
        query_name=words.query,
        key_name=words.key,
        font_size=font_size,
        cell_px=HEAD_CELL_PX,
    )


def induction_lines(
    line_weights: ArrayLike, tokens: Sequence[str], *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The induction head's rows of repeated tokens (1, T, T) as lines from token to key."""
    return token_lines(
        line_weights,
        list(tokens),
        head_names=(words.head_induction,),
        value_name=words.weight,
        font_size=font_size,
    )


def loss_curves(
    positions: ArrayLike,
    intact: ArrayLike,
    knocked_out: ArrayLike,
    *,
    second_start: float | None = None,
    chance: float | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The loss at each position (T − 1,) of the intact circuit and of the one whose previous-token
    head is knocked out; ``second_start`` shades where a repeated sequence's second copy begins;
    ``chance`` draws the loss of a uniform guess (ln V) as a dotted line."""
    x = compact(positions)
    x_title, y_title = words.position, words.loss_axis
    runs = ((words.intact, intact), (words.knocked_out, knocked_out))
    data = [
        dict(
            type="scatter",
            x=x,
            y=compact(np.asarray(y, dtype=np.float64)),
            mode="lines+markers",
            name=name,
            line=dict(dash="solid" if k == 0 else "dash", width=3 if k == 0 else 2),
            hovertemplate=f"{name}<br>{x_title}: %{{x}}<br>{y_title}: %{{y:.3f}}<extra></extra>",
        )
        for k, (name, y) in enumerate(runs)
    ]
    shapes, notes = [], []
    if chance is not None:
        shapes.append(
            dict(
                type="line",
                xref="paper",
                x0=0,
                x1=1,
                y0=chance,
                y1=chance,
                line=dict(dash="dot", color="#7f7f7f"),
            )
        )
        notes.append(
            dict(
                text=words.uniform,
                xref="paper",
                x=1,
                y=chance,
                xanchor="right",
                yanchor="bottom",
                showarrow=False,
            )
        )
    if second_start is not None:
        shapes.append(
            dict(
                type="rect",
                xref="x",
                yref="paper",
                x0=second_start - 0.5,
                x1=float(np.max(positions)) + 0.5,
                y0=0,
                y1=1,
                fillcolor="#2ca02c",
                opacity=0.08,
                line=dict(width=0),
            )
        )
        notes.append(
            dict(
                text=words.second_copy,
                xref="x",
                yref="paper",
                x=second_start - 0.5,
                y=1,
                xanchor="left",
                yanchor="bottom",
                showarrow=False,
            )
        )
    layout = dict(
        xaxis=dict(title=_title(x_title)),
        yaxis=dict(title=_title(y_title), rangemode="tozero"),
        title=_title(""),
        shapes=shapes,
        annotations=notes,
        height=380,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=LEGEND,
    )
    return _figure(data, layout)


def cost_curves(
    work_cached: ArrayLike,
    work_uncached: ArrayLike,
    *,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """Work of each generation step with and without the cache, on a log scale. Both curves are
    smooth, so at most ``COST_POINTS`` steps are drawn (evenly spaced, the first and last included):
    8 192 steps would be 240 kB. The log axis is labelled at powers of ten in ``words.units`` (see
    :func:`power_ticks`)."""
    T = len(work_cached)
    pick = np.unique(np.linspace(0, T - 1, min(T, COST_POINTS)).round().astype(int))
    steps = pick + 1
    x_title, y_title = words.cost_x, words.cost_y
    data = [
        dict(
            type="scatter",
            x=steps,
            y=compact(np.asarray(y, dtype=np.float64)[pick]),
            mode="lines",
            name=name,
            hovertemplate=f"{name}<br>{x_title}: %{{x}}<br>{y_title}: %{{y:.3e}}<extra></extra>",
        )
        for name, y in ((words.with_cache, work_cached), (words.without_cache, work_uncached))
    ]
    every = np.concatenate([np.asarray(work_cached), np.asarray(work_uncached)])
    tickvals, ticktext = power_ticks(float(every.min()), float(every.max()), words.units)
    layout = dict(
        xaxis=dict(title=_title(x_title)),
        yaxis=dict(title=_title(y_title), type="log", tickvals=tickvals, ticktext=ticktext),
        title=_title(""),
        height=360,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=LEGEND,
        colorway=["#1f77b4", "#d62728"],
    )
    return _figure(data, layout)


__all__ = [
    "FUTURE_GREY",
    "WORDS",
    "Words",
    "cache_animation",
    "circuit_heads",
    "cost_curves",
    "induction_lines",
    "loss_curves",
    "mask_map",
    "power_ticks",
]
