"""A page's figures leaving the app: one zip of every chart the page drew in this run, each as a
standalone interactive HTML file (plotly.js inlined: opens from disk, offline, its in-figure
sliders working) and as its Plotly JSON. Built only when the button is pressed
(:mod:`visattn.export`); a chart's own camera button saves it as a 1920×1080 slide."""

from __future__ import annotations

from functools import partial

import streamlit as st

from visattn import export

from .i18n import lang, t
from .tour import charts


def _stem(key: str) -> str:
    """A chart's file name from its key (chart_worked_x → visattn_worked_x)."""
    return "visattn_" + key.removeprefix("chart_")


def zip_button(page_id: str) -> None:
    """The lecture panel's "export figures" button (nothing when the page drew no chart)."""
    figures = {_stem(key): fig for key, fig in charts().items()}
    if not figures:
        return
    st.download_button(
        t("lecture.export_zip", n=len(figures)),
        partial(export.figures_zip, figures, lang()),
        file_name=f"visattn_{page_id}_figures.zip",
        mime="application/zip",
        key="lec_zip",
        icon="📦",
        on_click="ignore",
        help=t("lecture.export_help"),
    )
