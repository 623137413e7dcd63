"""Showing figures and matrices: Plotly's toolbar PNG with a meaningful name, CSV downloads."""

from __future__ import annotations

import re
import weakref
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import streamlit as st

from visattn import export, lecture
from visattn.figures import live

from . import url_state
from .i18n import label_table, t
from .lecture import modes as lecture_modes
from .lecture import tour
from .widgets import token_label

PLOTLY_FONT = 12  # Plotly's font size when a figure names none


def streamlit_chunk(pattern: str) -> str:
    """The file name of one of the JavaScript chunks Streamlit ships (``static/js``), for an element
    of ours that reuses it."""
    return next((Path(st.__file__).parent / "static" / "static" / "js").glob(pattern)).name


def element_script(*names: str) -> str:
    """The script of one of our elements: the files ``ui/<name>`` one after another, after the
    prelude of every element that draws or follows a control (``ui/live.js``)."""
    here = Path(__file__).parent
    return "".join((here / name).read_text() for name in ("live.js", *names))


# The chart element (ui/chart.js): a figure redrawn in place with Plotly.react. It reuses the
# Plotly that Streamlit ships (its lazily loaded chunk, which sets window.Plotly).
CHART_NAME = "visattn_chart"
PLOTLY_CHUNK = streamlit_chunk("PlotlyChart.*.js")
_chart = st.components.v2.component(CHART_NAME, js=element_script("chart.js"), isolate_styles=False)


# The JSON of each figure drawn, while the figure lives: a cached figure (st.cache_resource, shared
# by every session and never changed once made) is drawn at every rerun of its section, and
# plotly.io.to_json would cost every rerun again for each one.
_JSON: dict[int, tuple[weakref.ref, str]] = {}


def figure_json(fig: go.Figure) -> str:
    """``fig`` as JSON, made once per figure object (by identity: a new figure with the same id
    after the old one is gone is not taken for it)."""
    key = id(fig)
    known = _JSON.get(key)
    if known is not None and known[0]() is fig:
        return known[1]
    text = plotly.io.to_json(fig, validate=False)

    def forget(_ref: weakref.ref) -> None:
        if _JSON.get(key, (None,))[0] is _ref:
            del _JSON[key]

    _JSON[key] = (weakref.ref(fig, forget), text)
    return text


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "visattn"


def plotly_words() -> dict:
    """Plotly's own words (its toolbar's tooltips, its notices) in the page's language, as entries
    of a chart's config: Streamlit ships Plotly without its locale files, so the dictionary is
    ours (``common.plotly_ui``, keyed by Plotly's English)."""
    return {
        "locale": "visattn",
        "locales": {"visattn": {"dictionary": label_table("common.plotly_ui")}},
    }


def show(fig: go.Figure, name: str, key: str | None = None) -> None:
    """Draw ``fig`` full width; the camera button saves ``visattn_<name>`` as a 1920×1080 slide (PNG
    or SVG, the lecture panel's choice) with its text as large as on the projector, in presenter
    mode or not (:func:`visattn.lecture.slide_layout`). With predict-then-reveal on, the
    figure is drawn without its numbers until its section, or the chart, is revealed."""
    stem = slug(name)
    key = key or f"chart_{stem}"  # also the figure's anchor on the page (class st-key-<key>)
    tour.charts()[key] = fig  # the page's charts of this run: the export zip, a step's figure
    width, height, scale = lecture.slide_layout(fig.layout.font.size or PLOTLY_FONT)
    config = {
        "displaylogo": False,
        # as Streamlit's own charts: no Chart Studio link (the app runs offline), no selection tools
        "showSendToCloud": False,
        "modeBarButtonsToRemove": ["sendDataToCloud", "lasso2d", "select2d"],
        "toImageButtonOptions": {
            "format": st.session_state.get(lecture.SLIDE_FORMAT.key, "png"),
            "filename": f"visattn_{stem}",
            "width": width,
            "height": height,
            "scale": scale,
        },
        **plotly_words(),
    }
    hidden = lecture_modes.hidden(key)
    drawn = export.without_numbers(fig, colours=lecture_modes.hide_level() > 1) if hidden else fig
    figure = figure_json(drawn)
    data = {
        "figure": figure,
        "config": config,
        "plotly": PLOTLY_CHUNK,
        "fullScreen": t("common.fullscreen"),
        "controls": {key: url_state.figure_state(key) for key in live.control_keys(fig)},
    }
    _chart(key=key, data=data)
    if hidden:
        lecture_modes.reveal_button(key)


def matrix_frame(m, row_labels=None, col_labels=None) -> pd.DataFrame:
    m = np.asarray(m, dtype=float)
    rows = (
        [str(x) for x in row_labels]
        if row_labels is not None
        else [str(i + 1) for i in range(m.shape[0])]
    )
    cols = (
        [str(x) for x in col_labels]
        if col_labels is not None
        else [str(j + 1) for j in range(m.shape[1])]
    )
    # Repeated tokens would make duplicate labels; number them (from 1, as the pages do) so the CSV
    # stays unambiguous.
    rows = [token_label(i, r) if rows.count(r) > 1 else r for i, r in enumerate(rows)]
    cols = [token_label(j, c) if cols.count(c) > 1 else c for j, c in enumerate(cols)]
    return pd.DataFrame(m, index=rows, columns=cols)


def table(
    data: pd.DataFrame,
    *,
    formats: dict[str, str] | None = None,
    index_title: str | None = None,
    hide_index: bool | None = None,
    width: str = "stretch",
    where=None,
) -> None:
    """A table of the page's numbers: sortable (st.dataframe, drawn on a canvas) on screen, a
    static HTML table in the handout so that print and PDF hold every cell. ``formats``: a printf
    format by column ("%.3f"); ``index_title``: the index column's heading."""
    where = st if where is None else where
    formats = formats or {}
    if lecture_modes.handout():
        shown = data.copy()
        for column, fmt in formats.items():
            shown[column] = [fmt % value for value in shown[column]]
        if index_title is not None:
            shown.index.name = index_title
        where.table(shown, hide_index=hide_index)
        return
    config = {column: st.column_config.NumberColumn(format=fmt) for column, fmt in formats.items()}
    if index_title is not None:
        config["_index"] = st.column_config.TextColumn(index_title)
    where.dataframe(data, hide_index=hide_index, width=width, column_config=config)


def download_csv(m, name: str, row_labels=None, col_labels=None, key: str | None = None) -> None:
    """A button that downloads matrix ``m`` as ``visattn_<name>.csv``. The file is written when
    the button is clicked (Streamlit's deferred download), and the click reruns nothing: a run only
    draws the button, where a file made at every run was also fetched by the browser at every
    change of a control above it."""
    frame = matrix_frame(m, row_labels, col_labels)

    def csv() -> bytes:
        return frame.to_csv(float_format="%.6g").encode("utf-8")

    st.download_button(
        t("common.download_csv"),
        csv,
        file_name=f"visattn_{slug(name)}.csv",
        mime="text/csv",
        on_click="ignore",
        key=key or f"csv_{slug(name)}",
        icon=":material/download:",
    )
