"""Live figures: a Plotly slider inside a figure, with every position precomputed.

Where a lesson turns on one number over a small range (a bandwidth σ, a temperature, the number of
key/value heads), that number is a control drawn in the figure (``Control(…, in_figure=True)``):
:func:`add_slider` puts the slider inside the figure, its steps Plotly's ``"update"`` method with
the traces' data and the layout's texts computed in advance for every grid value, so dragging
redraws the figure in the browser with no round trip to the server. The slider is named by the
control's key and each step's value is the value's URL text: the page's element (``ui/live.js``)
writes it into the address bar as it moves, so a link opens the figure where it was left. The
slider starts at the control's value (:func:`with_value` puts that value into the grid exactly).

A figure that shows the same number without a slider of its own *follows* it (:func:`follow`): a
hidden slider named by the same key, whose steps the page applies when the visible one moves — one
control, however many figures draw what it changes.

A step says what changes at its grid value (:class:`SliderStep`): per trace, attribute paths such as
``"y"``, ``"text"``, ``"z"`` or ``"marker.color"``; in the layout, paths such as ``"title.text"`` or
``"annotations[0].text"``. Every step must change the same things, so no value of one position stays
behind at another. Numbers go to the browser as plain lists rounded to a few significant digits (NaN
as ``null``, a gap), or as typed arrays where the caller wraps a data array in :func:`packed` (long
curves and surfaces: cheaper to send)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..controls import Control, url_text
from ..display import with_value

DIGITS = 6  # significant digits of the numbers sent in the steps
MARGIN = 90  # pixels added below the plot for the slider


@dataclass(frozen=True)
class SliderStep:
    """What the figure shows at one slider position.

    ``traces`` maps a trace index to ``{attribute path: value}`` (``{"y": [...], "marker.color":
    [...]}``); ``layout`` maps a layout path to its value (``{"title.text": "…",
    "annotations[0].text": "…"}``)."""

    traces: Mapping[int, Mapping[str, Any]]
    layout: Mapping[str, Any] = field(default_factory=dict)


def rounded(a: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """``a`` (floats) rounded to ``digits`` significant digits, each entry the double nearest a
    short decimal (so it prints short in JSON): scaled by an exact power of ten, rounded, scaled
    back."""
    a = np.asarray(a, dtype=np.float64)
    finite = np.isfinite(a) & (a != 0)
    k = np.zeros(a.shape, dtype=np.int64)
    k[finite] = digits - 1 - np.floor(np.log10(np.abs(a[finite]))).astype(np.int64)
    k = np.clip(k, -300, 300)
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.where(k >= 0, np.round(a * 10.0 ** np.maximum(k, 0)) / 10.0 ** np.maximum(k, 0), a)
        return np.where(
            k < 0, np.round(a / 10.0 ** np.maximum(-k, 0)) * 10.0 ** np.maximum(-k, 0), up
        )


def packed(a: Any) -> dict:
    """A numeric array as Plotly's typed-array spec (float32, base64): no per-number work to send
    it, 4 bytes a number. Only for data arrays (``x``, ``y``, ``z``: Plotly.js decodes them on a
    restyle too); NaN stays a gap."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    spec = {"dtype": "f4", "bdata": base64.b64encode(a.tobytes()).decode("ascii")}
    return spec | ({"shape": ", ".join(str(n) for n in a.shape)} if a.ndim > 1 else {})


def plain(value: Any, digits: int = DIGITS) -> Any:
    """``value`` ready for the figure's JSON: numbers become float64 arrays rounded to ``digits``
    significant digits (cheap to copy, printed short by Plotly's encoder), or lists with ``None`` (a
    gap in a line) for NaN and ±inf; lists of strings become string arrays; a single float is
    rounded; other values (a :func:`packed` array) pass through."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return np.asarray(value, dtype=str)
    if isinstance(value, (list, tuple)) and not all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        for v in value
    ):
        return [plain(v, digits) for v in value]
    if isinstance(value, (list, tuple, np.ndarray)):
        a = np.asarray(value)
        if a.dtype.kind not in "fiu":
            return a
        r = rounded(a, digits)
        if np.isfinite(r).all():
            return r
        out = r.astype(object)
        out[~np.isfinite(r)] = None
        return out.tolist()
    if isinstance(value, (float, np.floating)):
        r = float(rounded(np.asarray(value), digits))
        return r if np.isfinite(r) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _current(trace: dict, path: str) -> Any:
    """A trace's own value of an attribute (a trace that one step leaves alone keeps it)."""
    node: Any = trace
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return plain(node) if node is not None else None


def _check(steps: Sequence[SliderStep]) -> tuple[list[int], list[str]]:
    """(trace indices, attribute paths) every step must share, with the same layout paths."""
    first = steps[0]
    shape = ({i: set(a) for i, a in first.traces.items()}, set(first.layout))
    for s in steps[1:]:
        if ({i: set(a) for i, a in s.traces.items()}, set(s.layout)) != shape:
            raise ValueError("every step must update the same traces, attributes and layout paths")
    return sorted(first.traces), sorted(set().union(*shape[0].values())) if shape[0] else []


def step_args(
    step: SliderStep,
    traces: list[int],
    attrs: list[str],
    kept: dict[tuple[int, str], Any],
    digits: int = DIGITS,
) -> list:
    """The ``"update"`` arguments of one step: [data update, layout update, trace indices].
    ``kept[(i, a)]`` is the value of attribute ``a`` for trace ``i`` when the step does not list it
    (another trace changes ``a``)."""
    data = {
        a: [
            plain(step.traces[i][a], digits) if a in step.traces[i] else kept[(i, a)]
            for i in traces
        ]
        for a in attrs
    }
    return [data, {k: plain(v, digits) for k, v in step.layout.items()}, traces]


def _steps(
    fig: go.Figure, values: Sequence[float], steps: Sequence[SliderStep], active: int, digits: int
) -> tuple[list, dict, list]:
    """(data, layout, the slider's steps) of ``fig`` with ``steps`` at ``values``, checked; each
    step's label is filled in by the caller."""
    if len(values) != len(steps) or not steps:
        raise ValueError("one step per grid value, at least one")
    if not 0 <= active < len(steps):
        raise ValueError(f"active index {active} outside 0…{len(steps) - 1}")
    traces, attrs = _check(steps)
    spec = fig.to_plotly_json()
    data, layout = spec["data"], dict(spec["layout"])
    kept = {
        (i, a): _current(data[i], a) for i in traces for a in attrs if a not in steps[0].traces[i]
    }
    slider_steps = [
        dict(
            method="update",
            value=url_text(v),
            args=step_args(s, traces, attrs, kept, digits),
        )
        for v, s in zip(values, steps, strict=True)
    ]
    return data, layout, slider_steps


def add_slider(
    fig: go.Figure,
    control: Control,
    *,
    label: str,
    values: Sequence[float],
    steps: Sequence[SliderStep],
    active: int,
    fmt: Callable[[float], str] = lambda v: f"{v:.4g}",
    digits: int = DIGITS,
    margin: int = MARGIN,
    tick_labels: bool = False,
) -> go.Figure:
    """``fig`` with ``control``'s slider inside it (a new figure; ``fig`` is left alone): position
    ``k`` shows ``steps[k]`` at ``values[k]``, and the slider starts at ``active``. ``label``
    prefixes the value shown above the slider (translated by the caller, e.g. "σ = "). The figure as
    built should already show ``steps[active]``.

    ``tick_labels``: print every grid value under the slider (fine for a dozen, a blur for a
    hundred). Adds ``margin`` pixels below the plot for the slider; a second slider goes below
    the first (the two compose when each changes traces and layout paths the other leaves alone).
    The result skips Plotly's validation (slow on long steps)."""
    if not control.in_figure:
        raise ValueError(f"{control.key} is a widget of the page, not a figure's slider")
    data, layout, slider_steps = _steps(fig, values, steps, active, digits)
    for value, step in zip(values, slider_steps, strict=True):
        step["label"] = fmt(value)
    earlier = [s for s in layout.get("sliders") or () if s.get("visible", True)]
    slider = dict(
        name=control.key,
        active=active,
        currentvalue=dict(prefix=label, visible=True, xanchor="left"),
        pad=dict(t=40 + margin * len(earlier), b=10),  # a second slider goes below the first
        len=1.0,
        x=0.0,
        y=0.0,
        xanchor="left",
        yanchor="top",
        ticklen=3 if tick_labels else 0,
        minorticklen=0,
        steps=slider_steps,
    )
    if not tick_labels:
        slider["font"] = dict(
            color="rgba(0,0,0,0)"
        )  # hides the tick labels; the current value keeps its own font
        slider["currentvalue"]["font"] = dict(color="#444")
    margins = dict(layout.get("margin") or {})
    layout["margin"] = margins | dict(b=(margins.get("b") or 10) + margin)
    layout["height"] = (layout.get("height") or 400) + margin
    layout["sliders"] = [*(layout.get("sliders") or ()), slider]
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def follow(
    fig: go.Figure,
    control: Control,
    *,
    values: Sequence[float],
    steps: Sequence[SliderStep],
    active: int,
    digits: int = DIGITS,
    margin: int = 0,
) -> go.Figure:
    """``fig`` following ``control``, whose slider is another figure's: a hidden slider named by
    its key, whose step at each of ``values`` the page applies when that slider moves (a new
    figure; the figure as built should show ``steps[active]``). ``margin``: pixels left below the
    plot, to line up with a figure beside it that shows the slider (:data:`MARGIN`)."""
    data, layout, slider_steps = _steps(fig, values, steps, active, digits)
    hidden = dict(name=control.key, active=active, visible=False, steps=slider_steps)
    layout["sliders"] = [*(layout.get("sliders") or ()), hidden]
    if margin:
        margins = dict(layout.get("margin") or {})
        layout["margin"] = margins | dict(b=(margins.get("b") or 10) + margin)
        layout["height"] = (layout.get("height") or 400) + margin
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def control_keys(fig: go.Figure) -> tuple[str, ...]:
    """The keys of the controls ``fig`` draws or follows (its sliders' names)."""
    return tuple(s.name for s in fig.layout.sliders or () if s.name)


def live(
    fig: go.Figure,
    control: Control,
    *,
    label: str,
    grid: Sequence[float],
    value: float,
    step: Callable[[float], SliderStep],
    **kw: Any,
) -> go.Figure:
    """:func:`add_slider` from a grid and the control's current ``value`` (put into the grid
    exactly): ``step(v)`` computes what the figure shows at ``v``. ``kw`` goes to
    :func:`add_slider`."""
    values, active = with_value(grid, value)
    return add_slider(
        fig,
        control,
        label=label,
        values=values,
        steps=[step(v) for v in values],
        active=active,
        **kw,
    )
