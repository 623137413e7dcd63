"""Figures leaving the app: a standalone interactive HTML file per figure (plotly.js inlined, no
server, no network: its in-figure sliders still work), a page's figures in one zip, and a figure
drawn without its numbers (predict, then reveal).

No Streamlit here. The figures given are shared (cached) and never modified: every function works
on a copy.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Mapping

import plotly.graph_objects as go

# The hover of a hidden heatmap: where the pointer is, never the value.
HOVER_HIDDEN = "%{x}, %{y}<extra></extra>"
HIDDEN_GREY = "rgb(214, 214, 214)"  # a heatmap whose colours are hidden: one flat grey
_NUMBER = re.compile(r"\s*[-−]?[\d.,]+(e[-+]?\d+)?\s*%?\s*")
_RESULT = re.compile(r"=\s*[-−]?[\d.,]+(e[-+]?\d+)?")


def without_numbers(fig: go.Figure, colours: bool = False) -> go.Figure:
    """A copy of ``fig`` with no number on it: no cell or bar text, no value in the hover (and with
    ``colours``, every heatmap one flat grey with no colour bar)."""
    out = go.Figure(fig)
    for trace in out.data:
        kind = trace.type
        if "texttemplate" in trace:
            trace.texttemplate = None
        if "text" in trace and kind in ("heatmap", "bar", "scatter"):
            trace.text = None
        if kind == "heatmap":
            trace.hovertemplate = HOVER_HIDDEN
            if colours:
                trace.colorscale = [[0, HIDDEN_GREY], [1, HIDDEN_GREY]]
                trace.showscale = False
                trace.coloraxis = None
        elif "hoverinfo" in trace:
            trace.hovertemplate = None
            trace.hoverinfo = "x+name"
    if colours:
        for axis in [k for k in out.layout if k.startswith("coloraxis")]:
            out.layout[axis].colorscale = [[0, HIDDEN_GREY], [1, HIDDEN_GREY]]
            out.layout[axis].showscale = False
    # numbers written as annotations: a cell's number goes, a result's ("estimate f(62) = 112.5")
    # becomes "= ?"
    for note in out.layout.annotations or ():
        text = str(note.text or "")
        if _NUMBER.fullmatch(text):
            note.text = ""
        else:
            note.text = _RESULT.sub("= ?", text)
    return out


def standalone_html(fig: go.Figure, title: str, lang: str = "en") -> str:
    """One HTML file that shows ``fig`` interactively from disk: plotly.js inlined, no MathJax, no
    request to any host."""
    body = go.Figure(fig).to_html(
        include_plotlyjs=True,
        include_mathjax=False,
        full_html=False,
        config={"displaylogo": False, "responsive": True},
        default_width="100%",
        default_height="90vh",
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head>"
        f'<body style="margin:0;font-family:sans-serif">{body}</body></html>\n'
    )


def figures_zip(figures: Mapping[str, go.Figure], lang: str = "en") -> bytes:
    """Every figure of ``figures`` ({file stem: figure}) as ``<stem>.html`` (standalone,
    interactive) and ``<stem>.json`` (the Plotly figure), in one zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for stem, fig in figures.items():
            archive.writestr(f"{stem}.html", standalone_html(fig, stem, lang))
            archive.writestr(f"{stem}.json", go.Figure(fig).to_json())
    return buffer.getvalue()
