"""Live figures: a Plotly slider inside a figure, with every position precomputed.

Where a lesson turns on one number over a small range (a query, a bandwidth σ, a temperature), the page's
Streamlit control stays the URL-backed source of truth, and :func:`add_slider` puts a second slider *inside* the
figure: its steps use Plotly's ``"update"`` method with the traces' data and the layout's texts computed in advance
for every grid value, so dragging redraws the figure in the browser with no round trip to the server. The slider
starts at the control's value (:func:`with_value` puts that value into the grid exactly).

A step says what changes at its grid value (:class:`Step`): per trace, attribute paths such as ``"y"``,
``"text"``, ``"z"`` or ``"marker.color"``; in the layout, paths such as ``"title.text"`` or
``"annotations[0].text"``. Every step must change the same things, so no value of one position stays behind at
another. Numbers go to the browser as plain lists rounded to a few significant digits (NaN as ``null``, a gap).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

DIGITS = 6               # significant digits of the numbers sent in the steps
MARGIN = 90              # pixels added below the plot for the slider


@dataclass(frozen=True)
class Step:
    """What the figure shows at one slider position.

    ``traces`` maps a trace index to ``{attribute path: value}`` (``{"y": [...], "marker.color": [...]}``);
    ``layout`` maps a layout path to its value (``{"title.text": "…", "annotations[0].text": "…"}``).
    """
    traces: Mapping[int, Mapping[str, Any]]
    layout: Mapping[str, Any] = field(default_factory=dict)


def with_value(grid: Sequence[float], value: float) -> tuple[tuple[float, ...], int]:
    """The grid, sorted, with ``value`` in it exactly (inserted when no grid value equals it), and its index."""
    values = sorted({float(v) for v in grid} | {float(value)})
    return tuple(values), values.index(float(value))


def even_grid(lo: float, hi: float, step: float, most: int = 101) -> tuple[float, ...]:
    """At most ``most`` values from ``lo`` to ``hi`` (both included), each a multiple of ``step`` from ``lo`` — values
    a Streamlit slider with that range and step can take, spread evenly."""
    if hi <= lo or step <= 0:
        return (float(lo),)
    n = int(np.floor((hi - lo) / step + 1e-9))           # steps from lo to hi
    picks = np.unique(np.round(np.linspace(0, n, min(n + 1, most))).astype(int))
    return tuple(sorted({float(lo + k * step) for k in picks} | {float(hi)}))


def log_grid(lo: float, hi: float, step: float, most: int = 41) -> tuple[float, ...]:
    """At most ``most`` values from ``lo`` to ``hi``, spaced evenly on a log scale (for a bandwidth or a scale) and
    rounded to multiples of ``step``; duplicates after rounding are dropped."""
    if hi <= lo or lo <= 0 or step <= 0:
        return (float(lo),)
    raw = np.geomspace(lo, hi, most)
    return tuple(sorted({float(round(round(v / step) * step, 12)) for v in raw if round(v / step) > 0}))


def _sig(v: float, digits: int) -> float | None:
    return None if not np.isfinite(v) else float(f"{v:.{digits}g}")


def plain(value: Any, digits: int = DIGITS) -> Any:
    """``value`` as JSON-ready Python: arrays become (nested) lists, floats keep ``digits`` significant digits, NaN
    and ±inf become ``None`` (a gap in a line); strings and other values pass through."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" or value.dtype.kind in "iub":
            return plain(value.tolist(), digits)
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v, digits) for v in value]
    if isinstance(value, (float, np.floating)):
        return _sig(float(value), digits)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _current(fig: go.Figure, index: int, path: str) -> Any:
    """The figure's own value of a trace attribute (a trace that one step leaves alone keeps it)."""
    node: Any = fig.data[index].to_plotly_json()
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return plain(node) if node is not None else None


def _check(steps: Sequence[Step]) -> tuple[list[int], list[str], list[str]]:
    """(trace indices, attribute paths, layout paths) every step must share."""
    first = steps[0]
    shape = ({i: set(a) for i, a in first.traces.items()}, set(first.layout))
    for s in steps[1:]:
        if ({i: set(a) for i, a in s.traces.items()}, set(s.layout)) != shape:
            raise ValueError("every step must update the same traces, attributes and layout paths")
    attrs = sorted(set().union(*shape[0].values())) if shape[0] else []
    return sorted(first.traces), attrs, sorted(shape[1])


def step_args(fig: go.Figure, step: Step, traces: list[int], attrs: list[str], digits: int = DIGITS) -> list:
    """The ``"update"`` arguments of one step: [data update, layout update, trace indices]. A trace that does not
    list an attribute another trace changes keeps the figure's value of it."""
    data = {a: [plain(step.traces[i][a], digits) if a in step.traces[i] else _current(fig, i, a) for i in traces] for a in attrs}
    return [data, {k: plain(v, digits) for k, v in step.layout.items()}, traces]


def add_slider(fig: go.Figure, *, label: str, values: Sequence[float], steps: Sequence[Step], active: int,
               fmt: Callable[[float], str] = lambda v: f"{v:.4g}", digits: int = DIGITS, margin: int = MARGIN,
               tick_labels: bool = False) -> go.Figure:
    """Add an in-figure slider to ``fig`` (in place; returned too): position ``k`` shows ``steps[k]`` at
    ``values[k]``, and the slider starts at ``active``. ``label`` prefixes the value shown above the slider
    (translated by the caller, e.g. "σ = "). The figure as built should already show ``steps[active]``.

    ``tick_labels``: print every grid value under the slider (fine for a dozen, a blur for a hundred). Adds
    ``margin`` pixels below the plot for the slider.
    """
    if len(values) != len(steps) or not steps:
        raise ValueError("one step per grid value, at least one")
    if not 0 <= active < len(steps):
        raise ValueError(f"active index {active} outside 0…{len(steps) - 1}")
    traces, attrs, _ = _check(steps)
    slider = dict(
        active=active, currentvalue=dict(prefix=label, visible=True, xanchor="left"), pad=dict(t=40, b=10), len=1.0, x=0.0,
        y=0.0, xanchor="left", yanchor="top", ticklen=3 if tick_labels else 0, minorticklen=0,
        steps=[dict(method="update", label=fmt(v), value=fmt(v), args=step_args(fig, s, traces, attrs, digits))
               for v, s in zip(values, steps)])
    if not tick_labels:
        slider["font"] = dict(color="rgba(0,0,0,0)")     # hides the tick labels; the current value keeps its own font
        slider["currentvalue"]["font"] = dict(color="#444")
    m = dict(fig.layout.margin.to_plotly_json()) if fig.layout.margin else {}
    fig.update_layout(sliders=[*(fig.layout.sliders or ()), slider], margin=m | dict(b=(m.get("b") or 10) + margin),
                      height=(fig.layout.height or 400) + margin)
    return fig


def live(fig: go.Figure, *, label: str, grid: Sequence[float], value: float, step: Callable[[float], Step],
         **kw: Any) -> go.Figure:
    """:func:`add_slider` from a grid and the control's current ``value`` (put into the grid exactly):
    ``step(v)`` computes what the figure shows at ``v``. ``kw`` goes to :func:`add_slider`."""
    values, active = with_value(grid, value)
    return add_slider(fig, label=label, values=values, steps=[step(v) for v in values], active=active, **kw)
