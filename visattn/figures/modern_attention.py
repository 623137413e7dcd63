"""The figures of the lesson on attention as today's LLMs run it: which query heads share which K/V
head (a slider over G, the controls ``mo_g``) and every head's map (following it), the KV cache
against context length, the sliding-window mask (a slider over the sinks kept, ``mo_sinks``) and
its receptive field (a slider over the layer written out, ``mo_wl``), FlashAttention's online
softmax (a slider over the loop's steps, ``mo_fstep``), and the memory traffic of standard and
flash attention.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language);
names of models and number formats come with the data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..lessons.modern_attention import CONTROLS, flash_shown
from . import live
from .core import (
    DIVERGING_SCALE,
    HEAD_COLOURS,
    HOVER_NUMBER,
    WEIGHT_SCALE,
    _figure,
    _scale,
    _title,
    cell_text,
    compact,
)
from .matrices import heatmap

if TYPE_CHECKING:
    from ..lessons.modern_attention import FlashSection, GQASteps, GroupingSteps, WindowSection

SINK = HEAD_COLOURS[1]  # orange: a sink kept over the band of the window


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``grouping_title`` with {H}, {G},
    {kind} and {per} (query heads a group); ``head_cell`` with {h} (query head) and {g} (K/V head);
    ``maps_title`` with {G} and {kind}; ``cache_title`` with {dtype}; ``mask_title`` with {w};
    ``reach_title`` with {T}; ``after_layer`` with {l} and {n}; ``reach_layer`` with {l}, {n}, {T}
    and {bound}; ``flash_title`` and ``flash_skipped`` with {i}, {j}, {n}, {err} and {rescale};
    ``traffic_title`` with {d} and {size}. The kinds' names (``mha`` …) are the page's too."""

    mha: str = "multi-head attention"
    gqa: str = "grouped-query attention"
    mqa: str = "multi-query attention"
    mla: str = "multi-head latent attention"
    query: str = "query"
    key: str = "key"
    weight: str = "weight"
    query_heads: str = "query heads"
    kv_heads: str = "K/V heads"
    query_head: str = "query head"
    kv_head: str = "K/V head"
    grouping_title: str = (
        "Which key/value head each query head reads<br>{H} query heads share {G} key/value heads:"
        " {kind}, query heads per group: {per}"
    )
    g_prefix: str = "G = "
    head_cell: str = "query head {h} · K/V head {g}"
    maps_title: str = "Attention weights of every query head: G = {G}, {kind}"
    cache_title: str = "KV cache of one sequence against its length ({dtype})"
    context_axis: str = "context length (tokens, log scale)"
    cache_axis: str = "KV cache of one sequence (GB, log scale)"
    mask_title: str = (
        "Sliding-window causal mask, W = {w} (dark: the window; orange: the attention sinks kept)"
    )
    sinks_prefix: str = "attention sinks = "
    in_window: str = "in the window"
    reach_title: str = (
        "Which positions token {T} depends on, layer by layer (dark; beside each layer, how many)"
    )
    after_layer: str = "after layer {l}: {n}"
    reach_layer: str = "after {l} layers: {n} of {T} positions; L(W − 1) + 1 = {bound}"
    layer_prefix: str = "layer L = "
    position: str = "position"
    layer_axis: str = "layer"
    reaches: str = "reaches"
    panel_scores: str = "scores S (never held whole)"
    panel_acc: str = "accumulator Õ"
    panel_estimate: str = "Õ / ℓ so far"
    flash_title: str = (
        "Query block {i}, after key/value block {j} of {n}: rescale e^(m_old − m) = {rescale}"
        "<br><sup>largest |Õ/ℓ − final O| of these rows: {err}</sup>"
    )
    flash_skipped: str = (
        "Query block {i}, key/value block {j} of {n}: skipped (all of it is in the future)"
        "<br><sup>largest |Õ/ℓ − final O| of these rows: {err}</sup>"
    )
    flash_step_prefix: str = "query block · key/value block: "
    standard_name: str = "standard (Algorithm 0)"
    traffic_title: str = "HBM reads and writes of one head (d = {d}, M = {size})"
    traffic_x: str = "sequence length N (log scale)"
    traffic_y: str = "HBM accesses (log)"

    def kind(self, name: str) -> str:
        """The name of a kind of attention (mha, gqa, mqa or mla)."""
        return getattr(self, name)


WORDS = Words()


def _layout(title: str, x_title: str, y_title: str, font_size: int, height: int = 420, **extra):
    return dict(
        title=_title(title),
        xaxis=dict(title=_title(x_title)) | extra.pop("xaxis", {}),
        yaxis=dict(title=_title(y_title)) | extra.pop("yaxis", {}),
        height=height,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=70, b=10),
        **extra,
    )


def _kv_x(kv_head: Sequence[int]) -> list[float]:
    """Where each K/V head sits: under the middle of its query heads."""
    G = max(kv_head) + 1
    return [float(np.mean([h for h, k in enumerate(kv_head) if k == g])) for g in range(G)]


def _colour(g: int) -> str:
    return HEAD_COLOURS[g % len(HEAD_COLOURS)]


def grouping(
    kv_head: Sequence[int],
    *,
    words: Words = WORDS,
    title: str = "",
    font_size: int = 14,
) -> go.Figure:
    """Query heads (top row) joined to the K/V head each reads (bottom row), one colour a group."""
    kv_head = [int(g) for g in kv_head]
    H, G = len(kv_head), max(kv_head) + 1
    kv_x = _kv_x(kv_head)
    data = []
    for h, g in enumerate(kv_head):
        data.append(
            dict(
                type="scatter",
                x=[h, kv_x[g]],
                y=[1, 0],
                mode="lines",
                line=dict(color=_colour(g), width=3),
                hoverinfo="skip",
                showlegend=False,
            )
        )
    size = 34 if H <= 8 else 24
    colours = [_colour(g) for g in kv_head]
    data.append(
        dict(
            type="scatter",
            x=list(range(H)),
            y=[1] * H,
            mode="markers+text",
            marker=dict(size=size, color=colours, line=dict(color="white", width=2)),
            text=[str(h + 1) for h in range(H)],
            textfont=dict(color="white", size=font_size),
            hovertemplate=f"{words.query_head} %{{text}}<extra></extra>",
            showlegend=False,
        )
    )
    data.append(
        dict(
            type="scatter",
            x=kv_x,
            y=[0] * G,
            mode="markers+text",
            marker=dict(
                size=size + 8,
                symbol="square",
                color=[_colour(g) for g in range(G)],
                line=dict(color="white", width=2),
            ),
            text=[str(g + 1) for g in range(G)],
            textfont=dict(color="white", size=font_size),
            hovertemplate=f"{words.kv_head} %{{text}}<extra></extra>",
            showlegend=False,
        )
    )
    layout = _layout(
        title,
        "",
        "",
        font_size,
        height=300,
        xaxis=dict(visible=False, range=[-0.7, H - 0.3]),
        yaxis=dict(
            tickvals=[0, 1],
            ticktext=[words.kv_heads, words.query_heads],
            range=[-0.4, 1.4],
            zeroline=False,
            showgrid=False,
        ),
    )
    return _figure(data, layout)


def grouping_live(steps: GroupingSteps, *, words: Words = WORDS, font_size: int = 14) -> go.Figure:
    """:func:`grouping` at the control's G, with the slider of ``mo_g`` over every G that divides
    H: each position redraws the lines, the colours, the K/V heads and the title (which says what
    the grouping is: H query heads sharing G, the kind, how many a group)."""
    H = steps.kv_heads.shape[1]

    def title(k: int) -> str:
        G = steps.Gs[k]
        kind = words.kind(steps.kinds[k])
        return words.grouping_title.format(H=H, G=G, kind=kind, per=H // G)

    g = steps.active
    fig = grouping(steps.kv_heads[g], words=words, title=title(g), font_size=font_size)

    def step(k: int) -> live.SliderStep:
        kv_head, G = steps.kv_heads[k], steps.Gs[k]
        kv_x = _kv_x([int(k) for k in kv_head])
        lines = {
            h: {"x": [h, kv_x[k]], "line.color": _colour(int(k))} for h, k in enumerate(kv_head)
        }
        queries = {H: {"marker.color": [_colour(int(k)) for k in kv_head]}}
        kv = {
            H + 1: {
                "x": kv_x,
                "y": [0] * G,
                "text": [str(k + 1) for k in range(G)],
                "marker.color": [_colour(k) for k in range(G)],
            }
        }
        return live.SliderStep(traces=lines | queries | kv, layout={"title.text": title(k)})

    return live.add_slider(
        fig,
        CONTROLS["mo_g"],
        label=words.g_prefix,
        values=steps.Gs,
        active=g,
        fmt=str,
        tick_labels=True,
        steps=[step(k) for k in range(len(steps.Gs))],
    )


def _tiles(weights: np.ndarray, columns: int, gap_rows: int) -> np.ndarray:
    """(R·(T + gap_rows) − gap_rows, C·(Tk + 1) − 1) every head's (T, Tk) map of ``weights``
    (H, T, Tk) tiled ``columns`` to a row, with blank (NaN) rows and a blank column between the
    tiles, and blank tiles after the last head."""
    H, T, Tk = weights.shape
    C = min(columns, H)
    R = -(-H // C)
    padded = np.full((R * C, T + gap_rows, Tk + 1), np.nan)
    padded[:H, :T, :Tk] = weights
    padded = padded.reshape(R, C, T + gap_rows, Tk + 1)  # (R, C, T + gap, Tk + 1)
    rows = padded.transpose(0, 2, 1, 3).reshape(R * (T + gap_rows), C * (Tk + 1))
    return rows[:-gap_rows, :-1]


def maps_live(
    steps: GQASteps,
    *,
    words: Words = WORDS,
    columns: int = 4,
    font_size: int = 12,
    tile_px: int = 260,
) -> go.Figure:
    """Every query head's weights at the control's G, ``columns`` to a row, each titled with the
    K/V head it reads, following ``mo_g`` (the grouping figure's slider): each G that divides H
    sends every head's weights and retitles the tiles and the figure.

    The heads are tiles of one heatmap, a blank row and column between them, on one pair of axes
    whose ticks number the positions in each tile: Plotly redraws one heatmap faster than a
    heatmap per head on axes of its own (benchmarks/README.md), and a change of T or of the mask
    waits for that redraw. The hover names the head."""
    H, T = steps.weights.shape[1:3]
    C = min(columns, H)
    R = -(-H // C)
    # blank rows between the tiles: room for the tile titles (1.6 lines at font_size)
    line = 1.6 * font_size
    gap = max(1, int(np.ceil(line * T / (tile_px - line))))
    s = steps.active
    tiles = _tiles(steps.weights[s], C, gap)  # (R·(T + gap) − gap, C·(T + 1) − 1)
    # per cell: its head, query and key (1-based); a blank never hovers, its numbers never show
    rows, cols = np.indices(tiles.shape)  # (rows, columns) each
    r, i = np.divmod(rows, T + gap)
    c, j = np.divmod(cols, T + 1)
    customdata = np.stack([r * C + c + 1, i + 1, j + 1], axis=-1)  # (rows, columns, 3)
    x0 = [c * (T + 1) for c in range(C)]  # each tile column's first key
    y0 = [r * (T + gap) for r in range(R)]  # each tile row's first query
    # every position numbered where the numbers fit (on a 1280 px screen with the sidebar open a
    # tile is about 160 px wide, a row tile_px / (T + gap) high), else every other one or fewer
    across = int(np.ceil(T * 0.6 * font_size * len(str(T)) / 160))
    down = int(np.ceil(1.2 * font_size * (T + gap) / tile_px))
    shown_x, shown_y = range(0, T, max(1, across)), range(0, T, max(1, down))

    def names(kv_heads: np.ndarray) -> list[str]:
        return [words.head_cell.format(h=h + 1, g=int(g) + 1) for h, g in enumerate(kv_heads)]

    def title(k: int) -> str:
        return words.maps_title.format(G=steps.Gs[k], kind=words.kind(steps.kinds[k]))

    head_name, query_name, key_name = words.query_head, words.query, words.key
    value_name = words.weight

    data = [
        dict(
            type="heatmap",
            z=live.packed(tiles),
            customdata=customdata.tolist(),
            zmin=0.0,
            zmax=1.0,
            colorscale=_scale(WEIGHT_SCALE),
            hoverongaps=False,
            hovertemplate=(
                f"{head_name} %{{customdata[0]}}<br>{query_name}: %{{customdata[1]}}"
                f"<br>{key_name}: %{{customdata[2]}}<br>{value_name}: %{{z:.3f}}<extra></extra>"
            ),
            colorbar=dict(title=_title(value_name), thickness=14),
        )
    ]
    annotations = [
        dict(
            text=name,
            x=x0[h % C] + (T - 1) / 2,
            y=y0[h // C] - 0.5,
            xref="x",
            yref="y",
            yanchor="bottom",
            showarrow=False,
            font=dict(size=font_size),
        )
        for h, name in enumerate(names(steps.kv_heads[s]))
    ]
    ticks = dict(showgrid=False, zeroline=False, ticks="", tickangle=0)
    layout = dict(
        title=_title(title(s)),
        annotations=annotations,
        xaxis=dict(
            title=_title(key_name),
            tickvals=[x + j for x in x0 for j in shown_x],
            ticktext=[str(j + 1) for _ in x0 for j in shown_x],
            **ticks,
        ),
        yaxis=dict(
            title=_title(query_name),
            autorange="reversed",
            tickvals=[y + i for y in y0 for i in shown_y],
            ticktext=[str(i + 1) for _ in y0 for i in shown_y],
            **ticks,
        ),
        font=dict(size=font_size),
        height=int(min(2400, 80 + tile_px * R)),
        margin=dict(l=10, r=10, t=90, b=10),
    )

    def step(k: int) -> live.SliderStep:
        retitled = {
            f"annotations[{h}].text": name for h, name in enumerate(names(steps.kv_heads[k]))
        }
        return live.SliderStep(
            traces={0: {"z": live.packed(_tiles(steps.weights[k], C, gap))}},
            layout=retitled | {"title.text": title(k)},
        )

    return live.follow(
        _figure(data, layout),
        CONTROLS["mo_g"],
        values=steps.Gs,
        active=s,
        steps=[step(k) for k in range(len(steps.Gs))],
    )


def cache_curves(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    gb_range: tuple[float, float] | None = None,
    dtype: str = "bf16",
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """One line per model {name: (context lengths, GB)}, each up to the model's own context, on
    log–log axes, the cache's number format (its name, ``dtype``) in the title; the y axis spans
    ``gb_range`` (GB) when given, else the curves. A fixed axis
    also spares the browser a second drawing: when a change moves the tick labels, Plotly's
    automargin draws the whole chart again (benchmarks/README.md)."""
    dashes = ("solid", "dash", "dot", "dashdot")
    data = [
        dict(
            type="scatter",
            x=compact(x),
            y=compact(y),
            mode="lines+markers",
            name=str(name),
            line=dict(color=HEAD_COLOURS[k % len(HEAD_COLOURS)], dash=dashes[k % len(dashes)]),
            marker=dict(size=5),
            hovertemplate=f"{name}<br>%{{x:,}}: %{{y:.3g}} GB<extra></extra>",
        )
        for k, (name, (x, y)) in enumerate(curves.items())
    ]
    # ticks at the contexts the lines are drawn at, written out, and at powers of ten of GB
    contexts = {int(n) for x, _ in curves.values() for n in np.asarray(x)}
    layout = _layout(
        words.cache_title.format(dtype=dtype),
        words.context_axis,
        words.cache_axis,
        font_size,
        height=520,
        xaxis=_counted_log_axis(contexts),
        yaxis=dict(type="log", dtick=1) | _log_range(gb_range),
    )
    return _figure(data, layout)


def _counted_log_axis(counts) -> dict:
    """A log axis ticked at each count drawn, written whole ("131,072"): Plotly's own log ticks
    ("5", "1000", "2", "10k") read as numbers of their own, and "k" is an English abbreviation."""
    ticks = sorted(int(n) for n in counts)
    return dict(type="log", tickvals=ticks, ticktext=[f"{n:,}" for n in ticks])


def _log_range(span: tuple[float, float] | None, pad: float = 0.05) -> dict:
    """A log axis's fixed range (in decades, as Plotly takes it) over ``span``, padded by a
    fraction of it at each end; no range (autorange) for None."""
    if span is None:
        return {}
    lo, hi = np.log10(span)
    margin = pad * max(hi - lo, 1.0)
    return {"range": [float(lo - margin), float(hi + margin)]}


def traffic_curves(
    N: ArrayLike,
    standard: ArrayLike,
    flash: ArrayLike,
    *,
    d: int,
    sram: str,
    y_range: tuple[float, float] | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """HBM reads and writes of both algorithms against N for head width ``d`` and the on-chip
    memory ``sram`` ("100 kB", "192 KiB"), on log–log axes; the y axis spans ``y_range`` when
    given (as :func:`cache_curves`). Its y ticks are powers of ten (10⁸, not Plotly's "100M", whose
    M and B are English abbreviations), its x ticks each N drawn, the hover the whole count."""
    data = [
        dict(
            type="scatter",
            x=compact(N),
            y=compact(y),
            mode="lines+markers",
            name=name,
            hovertemplate=f"{name}<br>N = %{{x:,}}: %{{y:,}}<extra></extra>",
        )
        for name, y in ((words.standard_name, standard), ("FlashAttention", flash))
    ]
    yaxis = dict(type="log", exponentformat="power") | _log_range(y_range)
    xaxis = _counted_log_axis(np.asarray(N))
    title = words.traffic_title.format(d=d, size=sram)
    layout = _layout(title, words.traffic_x, words.traffic_y, font_size, xaxis=xaxis, yaxis=yaxis)
    return _figure(data, layout)


def _mask_z(mask: np.ndarray) -> np.ndarray:
    return np.asarray(mask, dtype=np.float64)


def _sink_shapes(T: int, most: int) -> list[dict]:
    """Sink j (0-based) as an orange rectangle over key j from query j down (a sink is kept by
    every query from its own position on), hidden until the sinks slider reaches it. Shapes, not a
    second heatmap: the slider toggles their visibility, and a change of the controls redraws one
    heatmap, not two (benchmarks/main_thread.py)."""
    return [
        dict(
            type="rect",
            xref="x",
            yref="y",  # category axes: cell k spans k − ½ … k + ½
            x0=j - 0.5,
            x1=j + 0.5,
            y0=j - 0.5,
            y1=T - 0.5,
            fillcolor=SINK,
            line=dict(width=0),
            visible=False,
        )
        for j in range(min(most, T))
    ]


def window_live(
    section: WindowSection, sinks: int = 0, *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The banded causal mask of the section's window (1, dark = in the window; no colour bar: the
    title says so) with the attention sinks over it (orange), and the slider of ``mo_sinks`` over
    the sinks kept (0 … MAX_SINKS, starting at ``sinks``): it shows or hides the sinks' shapes."""
    T = section.T
    positions = list(range(1, T + 1))
    fig = heatmap(
        _mask_z(section.mask),
        positions,
        positions,
        title=words.mask_title.format(w=section.window),
        x_title=words.key,
        y_title=words.query,
        value_name=words.in_window,
        show_text=False,
        font_size=font_size,
        tick_angle=0,
        height=min(760, 160 + 14 * T),
        colour_bar=False,
    )
    control = CONTROLS["mo_sinks"]
    shown = min(int(control.hi), T)  # no sink past the last token
    active = min(sinks, shown)
    shapes = _sink_shapes(T, shown)
    for j in range(active):
        shapes[j]["visible"] = True
    fig.update_layout(shapes=shapes)
    return live.add_slider(
        fig,
        control,
        label=words.sinks_prefix,
        values=list(range(shown + 1)),
        active=active,
        fmt=str,
        tick_labels=True,
        steps=[
            live.SliderStep(traces={}, layout={f"shapes[{j}].visible": j < s for j in range(shown)})
            for s in range(shown + 1)
        ],
    )


def reach_live(
    section: WindowSection, layer: int, *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """(L, T) which positions reach the last token after each layer (1, dark = yes; no colour bar:
    the title says so), every layer at once — the band's growth is the staircase — each named with
    how many it reaches, and the slider of ``mo_wl`` over the layers: the layer it stands on framed,
    its count and the formula L(W − 1) + 1 written under the title, starting at ``layer``."""
    reach = np.asarray(section.reach, dtype=np.float64)
    L, T = reach.shape
    names = [words.after_layer.format(l=k, n=n) for k, n in enumerate(section.spans, start=1)]

    def title(layer: int) -> str:
        count = words.reach_layer.format(
            l=layer, n=section.spans[layer - 1], T=T, bound=section.bounds[layer - 1]
        )
        return f"{words.reach_title.format(T=T)}<br>{count}"

    def frame(layer: int) -> dict:
        """The frame around layer ``layer``'s row (category axes: row k spans k − ½ … k + ½)."""
        return {"shapes[0].y0": layer - 1.5, "shapes[0].y1": layer - 0.5}

    layers = range(1, L + 1)
    active = min(max(layer, 1), L) - 1
    fig = heatmap(
        reach,
        list(range(1, T + 1)),
        names,
        title=title(active + 1),
        x_title=words.position,
        y_title=words.layer_axis,
        value_name=words.reaches,
        show_text=False,
        font_size=font_size,
        tick_angle=0,
        height=150 + 2 * font_size * L,
        colour_bar=False,
    )
    box = dict(type="rect", xref="paper", yref="y", x0=0, x1=1, line=dict(width=3, color=SINK))
    fig.update_layout(shapes=[box | {"y0": active - 0.5, "y1": active + 0.5}])
    return live.add_slider(
        fig,
        CONTROLS["mo_wl"],
        label=words.layer_prefix,
        values=list(layers),
        active=active,
        fmt=str,
        tick_labels=True,
        steps=[
            live.SliderStep(traces={}, layout={"title.text": title(layer)} | frame(layer))
            for layer in layers
        ],
    )


# ---------------------------------------------------------------- FlashAttention


def _panel(z, text, xaxis: str, yaxis: str, colorscale, hover: str, **extra) -> dict:
    return dict(
        type="heatmap",
        z=compact(z),
        text=text,
        texttemplate="%{text}" if text is not None else None,
        colorscale=_scale(colorscale),
        showscale=False,
        xaxis=xaxis,
        yaxis=yaxis,
        hovertemplate=hover,
        **extra,
    )


def flash_live(
    section: FlashSection,
    value: int = 0,
    *,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """The online softmax, step by step in its loop's order (each query block, each key/value
    block): the whole score matrix S with the query block's rows and the current tile outlined (a
    picture: flash never holds S), then m, ℓ, the accumulator Õ and Õ/ℓ of the block's rows after
    that step, with the slider of ``mo_fstep`` over every step, starting at the control's ``value``
    (:func:`visattn.lessons.modern_attention.flash_shown`). Each step's title names query block i
    after key/value block j of n (1-based), its rescale factor and how far its rows still are
    from the final output.

    The four running panels share one pair of axes, one column apart (m, ℓ, then Õ's and Õ/ℓ's
    d columns): a Plotly redraw costs per axis, and these four change together. Their y axis
    follows the query block, always ``block_q`` rows tall (the last block may be shorter)."""
    T = section.T
    steps = section.steps
    Bq = section.block_q
    n_k = section.result.n_k_blocks
    d = steps[0].acc.shape[1]
    # the running panels' columns on their shared x axis: m, ℓ, Õ (d wide), Õ/ℓ (d wide)
    acc_x = list(range(5, 5 + d))
    estimate_x = list(range(6 + d, 6 + 2 * d))
    columns = ([1], [3], acc_x, estimate_x)
    S = np.where(np.isfinite(section.scores), section.scores, np.nan)
    bound = float(np.nanmax(np.abs(S))) or 1.0
    positions = list(range(1, T + 1))
    small = font_size - 2
    query_name, key_name = words.query, words.key
    panel_titles = (words.panel_scores, "m", "ℓ", words.panel_acc, words.panel_estimate)
    hover = f"{query_name} %{{y}}<br>{key_name} %{{x}}<br>S = %{{z:.3f}}<extra></extra>"

    all_text = cell_text(np.nan_to_num(S), 1, fixed=True) if T <= 12 else None

    def S_text(step) -> list[list[str]] | None:
        """S's numbers where the lesson is, the query block's rows (none on a masked cell): a
        number in every cell would be T² text elements to draw at each change of T."""
        if all_text is None:
            return None
        r0, r1 = step.rows
        return [
            [text if np.isfinite(v) else "" for text, v in zip(row, S[i], strict=True)]
            if r0 <= i < r1
            else [""] * T
            for i, row in enumerate(all_text)
        ]

    g = flash_shown(section, value)
    data = [
        _panel(
            S,
            S_text(steps[g]),
            "x",
            "y",
            DIVERGING_SCALE,
            hover,
            x=positions,
            y=positions,
            zmin=-bound,
            zmax=bound,
            textfont=dict(size=max(8, small - 3)),
        )
    ]

    def panels(step) -> list[tuple[np.ndarray, list]]:
        """(z, text) of m, ℓ, Õ and Õ/ℓ after ``step``."""
        m = step.m[:, None]
        ell = step.ell[:, None]
        return [
            (m, cell_text(m, 2, fixed=True)),
            (ell, cell_text(ell, 2, fixed=True)),
            (step.acc, cell_text(step.acc, 2, fixed=True)),
            (step.estimate, cell_text(step.estimate, 2, fixed=True)),
        ]

    def rows(step) -> list[int]:
        r0, r1 = step.rows
        return list(range(r0 + 1, r1 + 1))

    for k, (z, text) in enumerate(panels(steps[g])):
        name = panel_titles[k + 1]
        data.append(
            _panel(
                z,
                text,
                "x2",
                "y2",
                WEIGHT_SCALE if k < 2 else DIVERGING_SCALE,
                f"{query_name} %{{y}}<br>{name}: %{{z:{HOVER_NUMBER}}}<extra></extra>",
                x=columns[k],
                y=rows(steps[g]),
                textfont=dict(size=small),
            )
        )
    axis = dict(dtick=1, showgrid=False, zeroline=False)
    layout: dict = dict(
        font=dict(size=font_size),
        height=max(360, 120 + 8 * font_size + 26 * T),
        # room above the panels, top down: the two-line title, the panel titles, the tick labels
        margin=dict(l=10, r=10, t=30 + 7 * font_size, b=10),
        xaxis=axis | dict(domain=[0.0, 0.34], anchor="y", side="top"),
        yaxis=axis | dict(domain=[0.0, 1.0], anchor="x", autorange="reversed"),
        xaxis2=axis
        | dict(
            domain=[0.40, 1.0],
            anchor="y2",
            side="top",
            range=[0.5, estimate_x[-1] + 0.5],
            # Õ's and Õ/ℓ's columns are numbered 1 … d; m and ℓ have only their titles
            tickmode="array",
            tickvals=acc_x + estimate_x,
            ticktext=[str(j) for j in range(1, d + 1)] * 2,
        ),
        # the query block's rows, left of m
        yaxis2=axis | dict(domain=[0.0, 1.0], anchor="x2", tickmode="array"),
    )
    centres = [("x", (T + 1) / 2)] + [("x2", sum(x) / len(x)) for x in columns]
    layout["annotations"] = [
        dict(
            text=text,
            x=x,
            y=1.0,
            xref=xref,
            yref="paper",
            yanchor="bottom",
            yshift=int(2.3 * font_size),  # above the top tick labels
            showarrow=False,
            font=dict(size=font_size),
        )
        for text, (xref, x) in zip(panel_titles, centres, strict=True)
    ]

    def boxes(step) -> dict:
        """Where ``step`` is: its query block's rows (shapes[0], the band), its tile (shapes[1]),
        and the running panels' rows (reversed: the block's first query on top)."""
        (r0, r1), (c0, c1) = step.rows, step.cols
        return {
            "shapes[0].y0": r0 + 0.5,
            "shapes[0].y1": r1 + 0.5,
            "shapes[1].x0": c0 + 0.5,
            "shapes[1].x1": c1 + 0.5,
            "shapes[1].y0": r0 + 0.5,
            "shapes[1].y1": r1 + 0.5,
            "yaxis2.range": [r0 + Bq + 0.5, r0 + 0.5],
            "yaxis2.tickvals": list(range(r0 + 1, r1 + 1)),  # no row numbers past T
        }

    def heading(j: int) -> str:
        s = steps[j]
        rescale = ", ".join(f"{v:.3g}" for v in s.rescale)
        template = words.flash_skipped if s.skipped else words.flash_title
        error = f"{section.errors[j]:.1e}"
        return template.format(i=s.i + 1, j=s.j + 1, n=n_k, err=error, rescale=rescale)

    def step_label(shown: int) -> str:
        """The step the control's value ``shown`` stands for, as "query block · key/value
        block"."""
        s = steps[flash_shown(section, int(shown))]
        return f"{s.i + 1}·{s.j + 1}"

    box = dict(type="rect", xref="x", yref="y")  # placed by boxes(steps[g]) below
    layout["shapes"] = [
        box | dict(x0=0.5, x1=T + 0.5, line=dict(width=2, dash="dot")),  # the query block
        box | dict(line=dict(width=3, color="#111")),  # the tile
    ]
    layout["title"] = dict(
        text=heading(g),
        x=0.0,
        xanchor="left",
        y=1.0,
        yref="container",
        yanchor="top",
        pad=dict(t=font_size),  # the first line whole: Plotly tops a two-line title by its second
    )
    fig = _figure(data, layout)
    fig.plotly_relayout(boxes(steps[g]))  # as the slider's step g places them
    return live.add_slider(
        fig,
        CONTROLS["mo_fstep"],
        label=words.flash_step_prefix,
        values=list(range(1, len(steps) + 1)),
        active=g,
        fmt=step_label,
        tick_labels=len(steps) <= 16,  # a label under every step while they are legible
        steps=[
            live.SliderStep(
                # S's numbers follow the query block (its z is sent again with them: an update
                # step lists each attribute for all its traces)
                traces=({0: {"text": S_text(step)}} if all_text else {})
                | {
                    k + 1: {"z": z, "text": text, "y": rows(step)}
                    for k, (z, text) in enumerate(panels(step))
                },
                layout={"title.text": heading(j)} | boxes(step),
            )
            for j, step in enumerate(steps)
        ],
    )
