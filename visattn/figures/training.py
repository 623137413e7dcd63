"""Figures of the training page: loss and accuracy over the steps, each head's previous-token and
induction scores over the steps with the phase change marked, every head's map on the probe
sequence at each checkpoint (an in-figure slider, the control ``dec_tcheck``), one layer against
two, layer 1 feeding layer 2 (K-composition), and the induction heads on the reader's own
sequence.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language);
the heads' names and the tokens come with the data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..lessons.training import CONTROLS, LAST_CHECKPOINT, shown_checkpoint, slider_checkpoints
from .core import HEAD_COLOURS, _figure, _title, compact
from .live import SliderStep, add_slider, packed
from .matrices import head_grid, heatmap

LEGEND = dict(x=1.02, xanchor="left", y=1, yanchor="top")  # to the right, as the decoder's figures
PHASE_COLOUR = "#d62728"
CHECKPOINT = CONTROLS["dec_tcheck"]  # the maps' slider


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``n_layers`` with {L} (a run's
    layers)."""

    query: str = "query"
    key: str = "key"
    weight: str = "weight"
    loss: str = "training loss"
    repeated: str = "Accuracy on repeated tokens"
    first: str = "Accuracy on first-seen tokens"
    chance: str = "chance (1 / V)"
    phase: str = "Phase change (step)"
    step_axis: str = "training step"
    loss_axis: str = "loss −ln p(next token)"
    accuracy_axis: str = "accuracy"
    previous_score: str = "previous-token score"
    induction_score: str = "prefix-matching (induction) score"
    step_prefix: str = "step "
    n_layers: str = "{L} layer(s)"
    composition_x: str = "layer-2 head (its keys read)"
    composition_y: str = "layer-1 head (writes)"
    composition: str = "K-composition"
    own_map: str = "The induction heads' weights (their mean)"


WORDS = Words()


def _phase_line(step: float | None, label: str, yref: str = "paper") -> tuple[list, list]:
    """A dashed vertical line at the phase change and its label (nothing when there is none)."""
    if step is None:
        return [], []
    line = dict(
        type="line",
        xref="x",
        yref=yref,
        x0=step,
        x1=step,
        y0=0,
        y1=1,
        line=dict(dash="dash", color=PHASE_COLOUR, width=2),
    )
    note = dict(
        text=label,
        xref="x",
        yref=yref,
        x=step,
        y=1,
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font=dict(color=PHASE_COLOUR),
    )
    return [line], [note]


def training_curves(
    steps: ArrayLike,
    loss: ArrayLike,
    repeated: ArrayLike,
    first: ArrayLike,
    *,
    total_steps: int,
    chance: float,
    phase_step: float | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """Two panels over the steps: the training loss (top) and the accuracy on repeated and on
    first-seen tokens with chance dotted (bottom); the x axis spans ``total_steps`` from the start,
    so a live figure fills from the left."""
    x = compact(steps)
    data = [
        dict(
            type="scatter",
            x=x,
            y=compact(loss),
            mode="lines",
            name=words.loss,
            xaxis="x",
            yaxis="y",
            line=dict(color="#7f7f7f", width=2),
        ),
        dict(
            type="scatter",
            x=x,
            y=compact(repeated),
            mode="lines+markers",
            name=words.repeated,
            xaxis="x2",
            yaxis="y2",
            line=dict(color="#2ca02c", width=3),
        ),
        dict(
            type="scatter",
            x=x,
            y=compact(first),
            mode="lines",
            name=words.first,
            xaxis="x2",
            yaxis="y2",
            line=dict(color="#1f77b4", width=2, dash="dash"),
        ),
        dict(
            type="scatter",
            x=[0, total_steps],
            y=[chance, chance],
            mode="lines",
            name=words.chance,
            xaxis="x2",
            yaxis="y2",
            line=dict(color="#7f7f7f", width=1, dash="dot"),
        ),
    ]
    shapes, notes = _phase_line(phase_step, words.phase)
    span = [0, total_steps]
    layout = dict(
        xaxis=dict(domain=[0, 1], anchor="y", range=span, showticklabels=False),
        yaxis=dict(domain=[0.58, 1], title=_title(words.loss_axis), rangemode="tozero"),
        xaxis2=dict(domain=[0, 1], anchor="y2", range=span, title=_title(words.step_axis)),
        yaxis2=dict(domain=[0, 0.48], title=_title(words.accuracy_axis), range=[0, 1.05]),
        shapes=shapes,
        annotations=notes,
        height=480,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=40, b=10),
        legend=LEGEND,
        hovermode="x unified",
    )
    return _figure(data, layout)


def score_curves(
    steps: ArrayLike,
    previous: ArrayLike,
    induction: ArrayLike,
    head_labels: Sequence[str],
    *,
    total_steps: int,
    phase_step: float | None = None,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """Each head's two scores over the steps, side by side: ``previous`` and ``induction`` are
    (steps, heads); one colour per head in both panels, the legend naming each once."""
    x = compact(steps)
    previous, induction = (np.asarray(a, dtype=np.float64) for a in (previous, induction))
    data = []
    for column, (scores, axis) in enumerate(((previous, ""), (induction, "2"))):
        for h, name in enumerate(head_labels):
            data.append(
                dict(
                    type="scatter",
                    x=x,
                    y=compact(scores[:, h]),
                    mode="lines",
                    name=name,
                    legendgroup=name,
                    showlegend=column == 0,
                    xaxis=f"x{axis}",
                    yaxis=f"y{axis}",
                    line=dict(color=HEAD_COLOURS[h % len(HEAD_COLOURS)], width=2),
                    hovertemplate=f"{name}: %{{y:.2f}}<extra></extra>",
                )
            )
    shapes, notes = [], []
    for axis in ("", "2"):
        line, note = _phase_line(phase_step, words.phase)
        for item in line + note:
            item["xref"] = f"x{axis}"
        shapes += line
        notes += note
    span, x_title = [0, total_steps], _title(words.step_axis)
    layout = dict(
        xaxis=dict(domain=[0, 0.42], range=span, title=x_title),
        yaxis=dict(range=[0, 1.05], title=_title(words.previous_score)),
        xaxis2=dict(domain=[0.58, 1], range=span, title=x_title, anchor="y2"),
        yaxis2=dict(range=[0, 1.05], title=_title(words.induction_score), anchor="x2"),
        shapes=shapes,
        annotations=notes,
        height=400,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=40, b=10),
        legend=LEGEND,
    )
    return _figure(data, layout)


def checkpoint_maps(
    maps: ArrayLike,
    steps: Sequence[int],
    tokens: Sequence[str],
    cell_titles: Sequence[str],
    *,
    checkpoint: int = LAST_CHECKPOINT,
    words: Words = WORDS,
    font_size: int = 14,
    cell_px: int = 260,
) -> go.Figure:
    """Every head's weights on the probe sequence at each checkpoint: ``maps`` (C, L, H, T, T) at
    the training ``steps`` (C,), a layer × head grid with the slider of ``dec_tcheck`` over the
    checkpoints (no server round trip; the maps travel as float32 typed arrays). At most
    SLIDER_CHECKPOINTS of them, evenly spaced, the first and the last kept
    (:func:`~visattn.lessons.training.slider_checkpoints`). Opens at ``checkpoint``: a training
    step (the nearest the slider offers, :func:`~visattn.lessons.training.shown_checkpoint`) or
    LAST_CHECKPOINT, the last."""
    picked = list(slider_checkpoints(steps))
    maps, steps = np.asarray(maps, dtype=np.float64)[picked], [int(steps[i]) for i in picked]
    C, L, H, T, _ = maps.shape
    shown = shown_checkpoint(steps, checkpoint)
    active = C - 1 if shown == LAST_CHECKPOINT else steps.index(shown)
    fig = head_grid(
        maps[active],
        list(tokens),
        list(tokens),
        cell_titles=list(cell_titles),
        value_name=words.weight,
        query_name=words.query,
        key_name=words.key,
        font_size=font_size,
        cell_px=cell_px,
    )
    cells = [(layer, head) for layer in range(L) for head in range(H)]
    slider_steps = [
        SliderStep(
            {k: {"z": packed(maps[c, layer, head])} for k, (layer, head) in enumerate(cells)}
        )
        for c in range(C)
    ]
    return add_slider(
        fig,
        CHECKPOINT,
        label=words.step_prefix,
        values=steps,
        steps=slider_steps,
        active=active,
        fmt=str,
        digits=3,
    )


def layer_comparison(
    runs: Mapping[int, tuple[ArrayLike, ArrayLike]],
    *,
    total_steps: int,
    chance: float,
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """Repeated-token accuracy over the steps for each run {layers: (steps, accuracy)}: one layer
    against two, same seed and steps."""
    colours = ("#9467bd", "#2ca02c", "#ff7f0e")
    data = [
        dict(
            type="scatter",
            x=compact(x),
            y=compact(y),
            mode="lines",
            name=words.n_layers.format(L=layers),
            line=dict(color=colours[k % len(colours)], width=3),
        )
        for k, (layers, (x, y)) in enumerate(runs.items())
    ]
    data.append(
        dict(
            type="scatter",
            x=[0, total_steps],
            y=[chance, chance],
            mode="lines",
            name=words.chance,
            line=dict(color="#7f7f7f", width=1, dash="dot"),
        )
    )
    layout = dict(
        xaxis=dict(range=[0, total_steps], title=_title(words.step_axis)),
        yaxis=dict(range=[0, 1.05], title=_title(words.repeated)),
        height=340,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=30, b=10),
        legend=LEGEND,
    )
    return _figure(data, layout)


MARK_COLOUR = "#d62728"  # the outline of a named previous-token → induction pair


def composition_map(
    scores: ArrayLike,
    source_labels: Sequence[str],
    target_labels: Sequence[str],
    *,
    marked: Sequence[tuple[int, int]] = (),
    words: Words = WORDS,
    font_size: int = 14,
) -> go.Figure:
    """K-composition scores (H₁, H₂) of layer 1's heads (rows) with layer 2's (columns), 0 at the
    bottom of the scale; each ``marked`` (row, column) pair — a head named previous-token feeding
    one named induction — outlined."""
    scores = np.asarray(scores, dtype=np.float64)
    fig = heatmap(
        scores,
        list(target_labels),
        list(source_labels),
        x_title=words.composition_x,
        y_title=words.composition_y,
        value_name=words.composition,
        weights=False,
        zmin=0.0,
        zmax=float(np.nanmax(scores)) if scores.size else 1.0,
        font_size=font_size,
        tick_angle=0,
        height=int(160 + 70 * len(source_labels)),
    )
    outlines = [
        dict(
            type="rect",
            xref="x",
            yref="y",
            x0=col - 0.5,
            x1=col + 0.5,
            y0=row - 0.5,
            y1=row + 0.5,
            line=dict(color=MARK_COLOUR, width=4),
        )
        for row, col in marked
    ]
    fig.update_layout(shapes=outlines)
    return fig


def own_induction_map(
    weights: ArrayLike, labels: Sequence[str], *, words: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The mean weights (T, T) of the heads named induction heads on the reader's own sequence."""
    return heatmap(
        weights,
        list(labels),
        list(labels),
        title=words.own_map,
        x_title=words.key,
        y_title=words.query,
        value_name=words.weight,
        font_size=font_size,
    )


__all__ = [
    "WORDS",
    "Words",
    "checkpoint_maps",
    "composition_map",
    "layer_comparison",
    "own_induction_map",
    "score_curves",
    "training_curves",
]
