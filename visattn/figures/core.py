"""Conventions every figure shares.

Token labels may repeat ("the" twice in one sentence), and Plotly merges equal category names, so a
repeated label gets invisible zero-width spaces appended: it reads the same and stays its own row.
The axes are categorical, so hover text names query and key without per-cell custom data (a 12-head
grid of 128 tokens stays about 1 MB). Weights share one colour scale 0…1. Cell text is drawn only
where it stays readable (≤ 24×24), and arrays are sent as float32 to keep the page light."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.colors import get_colorscale

from .. import display

WEIGHT_SCALE = "Blues"
# A number in a hover: four significant digits, trailing zeros dropped (d3's plain ".4g" writes a
# mask's 0 and 1 as "0.000" and "1.000", a weight of 0.25 as "0.2500")
HOVER_NUMBER = ".4~g"
DIVERGING_SCALE = "RdBu_r"
HEAD_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#ad494a",
)

# The look of every figure: Streamlit's light chart theme, written out (the values its browser code
# fills in for ``theme="streamlit"``, read from the figures it drew). The app draws with
# ``theme=None`` (``ui.charts``): the browser then skips re-theming each figure's JSON on every
# redraw (a third of the GQA maps' redraw in a scratch app; benchmarks/README.md), and a figure
# looks the same in the app, in a notebook and in an exported file.
_FONT = '"Source Sans", sans-serif'
_TEXT, _HEADING, _BODY, _GRID = "#808495", "#2F2D2B", "#262730", "#e6eaf1"
_SEQUENTIAL = "#e4f5ff #c7ebff #a6dcff #83c9ff #60b4ff #3d9df3 #1c83e1 #0068c9 #0054a3 #004280"
_DIVERGING = "#7d353b #bd4043 #ff4b4b #ff8c8c #ffc7c7 #a6dcff #60b4ff #1c83e1 #0054a3 #004280"


def _steps(colours: str) -> list[list]:
    """A colour scale of evenly spaced colours (Streamlit's ten)."""
    names = colours.split()
    return [[i / (len(names) - 1), name] for i, name in enumerate(names)]


def _axis(**extra) -> dict:
    return {
        "zerolinecolor": _GRID,
        "gridcolor": _GRID,
        "minor": {"gridcolor": _GRID},
        "tickcolor": _GRID,
        "tickfont": {"color": _TEXT, "size": 12},
        "automargin": True,
        # Plotly's default ("hide past div") measures every tick label against the figure's edges
        # each time one is placed: much of a redraw in Chromium. Labels never
        # reach the edge here (automargin makes room), so that check is skipped.
        "ticklabeloverflow": "allow",
        **extra,
    }


TEMPLATE = {
    "layout": {
        "font": {"color": _TEXT, "family": _FONT, "size": 12, "weight": 400},
        "title": {
            "font": {"family": _FONT, "size": 16, "color": _HEADING, "weight": 700},
            "pad": {"l": 4},
            "xanchor": "left",
            "x": 0,
        },
        "legend": {
            "title": {"font": {"size": 12, "color": _TEXT}, "side": "top"},
            "valign": "top",
            "bordercolor": "rgba(0,0,0,0)",
            "borderwidth": 0,
            "font": {"size": 12, "color": _BODY},
        },
        "paper_bgcolor": "#FFFFFF",
        "plot_bgcolor": "#FFFFFF",
        "xaxis": _axis(
            showgrid=False,
            zeroline=False,
            title={"font": {"color": _TEXT, "size": 14}, "standoff": 20},
        ),
        "yaxis": _axis(
            ticklabelposition="outside",
            title={"font": {"color": _TEXT, "size": 14}, "standoff": 24},
        ),
        "margin": {"pad": 8, "r": 0, "l": 0},
        "hoverlabel": {
            "bgcolor": "#FFFFFF",
            "bordercolor": "#DCD8D4",
            "font": {"color": _TEXT, "family": _FONT, "size": 12},
        },
        "coloraxis": {
            "colorbar": {
                "thickness": 16,
                "xpad": 24,
                "ticklabelposition": "outside",
                "outlinecolor": "rgba(0,0,0,0)",
                "outlinewidth": 8,
                "len": 0.75,
                "y": 0.5745,
                "title": {"font": {"color": _TEXT, "size": 14}},
                "tickfont": {"color": _TEXT, "size": 12},
            }
        },
        "colorscale": {
            "sequential": _steps(_SEQUENTIAL),
            "sequentialminus": _steps(_SEQUENTIAL),
            "diverging": _steps(_DIVERGING),
        },
        "colorway": [
            "#0068c9",
            "#83c9ff",
            "#ff2b2b",
            "#ffabab",
            "#29b09d",
            "#7defa1",
            "#ff8700",
            "#ffd16a",
            "#6d3fc0",
            "#d5dae5",
        ],
    },
    "data": {"scatter": [{"marker": {"line": {"width": 0}}}]},
}


def _fmt(v: float, digits: int) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 10**5 or abs(v) < 10 ** (-digits):
        return f"{v:.{max(digits - 1, 1)}e}"
    return f"{v:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{v:.0f}"


def cell_text(m: np.ndarray, digits: int = 2, fixed: bool = False) -> list[list[str]]:
    """Matrix of short number strings: scientific notation for very large or small entries, or with
    ``fixed`` always ``digits`` decimals (weights read 0.000 rather than 2.7e-04)."""
    if fixed:
        return [[f"{float(v):.{digits}f}" for v in row] for row in m]
    return [[_fmt(float(v), digits) for v in row] for row in m]


F32_MAX = float(np.finfo(np.float32).max)


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace and layout dicts, skipping Plotly's property validation, its text
    at the layout's font size (:func:`_sized`).

    Validation is most of a figure's cost, paid on every rerun of a page;
    the builders here write only well-formed properties (tests validate every builder's output
    once)."""
    _sized(data, layout)
    layout.setdefault("template", TEMPLATE)
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def _sized(data: list[dict], layout: dict) -> None:
    """Give every tick label, axis title, legend, colour bar and the hover label the layout's font
    size where the builder set none. Streamlit's chart theme otherwise sets tick labels to 0.75 rem
    and titles to 0.875 rem (15 px and 17.5 px on a projector, whatever ``font_size`` asked for),
    and the template's hover label is 12 px."""
    size = (layout.get("font") or {}).get("size")
    if not size:
        return
    layout.setdefault("xaxis", {})
    layout.setdefault("yaxis", {})
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis.setdefault("tickfont", {}).setdefault("size", size)
            if isinstance(axis.get("title"), dict):
                axis["title"].setdefault("font", {}).setdefault("size", size)
    if isinstance(layout.get("title"), dict):
        layout["title"].setdefault("font", {}).setdefault("size", size)
    # the hover label too: the template's 12 px is hard to read on a projector (20 px text)
    layout.setdefault("hoverlabel", {}).setdefault("font", {}).setdefault("size", size)
    # a legend shows by default once there are two traces (and wherever one asks for it)
    if (
        isinstance(layout.get("legend"), dict)
        or len(data) > 1
        or any(d.get("showlegend") for d in data)
    ):
        layout.setdefault("legend", {}).setdefault("font", {}).setdefault("size", size)
    # the colour bars of the traces and of the shared colour axes (coloraxis, coloraxis2, …)
    shared = [
        axis.setdefault("colorbar", {})
        for key, axis in layout.items()
        if key.startswith("coloraxis") and isinstance(axis, dict)
    ]
    own = [
        trace.setdefault("colorbar", {})
        if trace.get("type") == "heatmap"
        else trace.get("colorbar")
        for trace in data
        if "coloraxis" not in trace
    ]
    for colorbar in own + shared:
        if isinstance(colorbar, dict):
            colorbar.setdefault("tickfont", {}).setdefault("size", size)
            if isinstance(colorbar.get("title"), dict):
                colorbar["title"].setdefault("font", {}).setdefault("size", size)


def _title(text: str) -> dict:
    return {"text": text}


def _scale(name_or_list):
    """A colour scale as the explicit list plotly.js needs (names like "RdBu_r" exist only in
    Python)."""
    return get_colorscale(name_or_list) if isinstance(name_or_list, str) else name_or_list


def compact(a: ArrayLike) -> np.ndarray:
    """``a`` as float32 (half the bytes to the browser) unless an entry is beyond float32's
    range."""
    a = np.asarray(a, dtype=np.float64)
    return a.astype(np.float32) if not (np.abs(a[np.isfinite(a)]) > F32_MAX).any() else a


def plotly_text(text: str) -> str:
    """``text`` as Plotly shows it literally: Plotly reads ``<s>``, ``<b>`` … in any label as its
    own markup (a LLaMA tokenizer's "<s>" struck through every label after it and broke the
    heatmap's layout), so "<" becomes the entity "&lt;". Applying it twice changes nothing."""
    return text.replace("<", "&lt;")


def unique_labels(labels: Iterable[object] | None, n: int) -> list[str]:
    """``labels`` as strings (or 0…n−1), shown literally (:func:`plotly_text`), each repeat made
    distinct with trailing zero-width spaces."""
    labels = (
        [plotly_text(str(x)) for x in labels] if labels is not None else [str(i) for i in range(n)]
    )
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        k = seen.get(lab, 0)
        seen[lab] = k + 1
        out.append(lab + "\u200b" * k)
    return out


MAX_TICKS = 40


def smallest_text(font_size: int) -> int:
    """The least a text of a figure drawn at ``font_size`` may shrink to."""
    return display.PRESENTER_MIN_TEXT if font_size >= display.PRESENTER_FONT else display.MIN_TEXT


def cell_text_px(font_size: int, side: int) -> int:
    """The size a heatmap of ``side`` rows or columns writes its cell numbers in."""
    return max(smallest_text(font_size), font_size - 2 - side // 6)


def _ticks(labels, n, most: int = MAX_TICKS):
    labels = unique_labels(labels, n)
    axis = dict(type="category", categoryorder="array", categoryarray=labels)
    if (
        n > most
    ):  # a long axis names every k-th category (at most ``most``); the hover still names every cell
        axis["tickvals"] = labels[:: -(-n // most)]
    return axis, labels


# Widths in em of Source Sans, the app's font, by kind of character (measured in Chromium): a
# generous guess of how wide a tick label draws, to leave room for it before Plotly measures it.
_NARROW, _WIDE = set("ijlftr.,:;'!|()[] "), set("mwMW@%")


def _char_em(c: str) -> float:
    if unicodedata.east_asian_width(c) in "WF":
        return 1.0
    if c in _NARROW:
        return 0.32
    if c in _WIDE:
        return 0.9
    return 0.68 if c.isupper() else 0.56


def _label_px(labels, font_size: int) -> float:
    """The widest label's width in pixels at ``font_size``, a little generous; repeat markers
    (zero-width spaces) take none."""
    widest = max((sum(map(_char_em, str(s).replace("\u200b", ""))) for s in labels), default=1)
    return font_size * widest


# Room Plotly's automargin takes beyond the labels themselves (margin.pad, tick, label gap), and for
# an axis title beside them (its standoff and its line), in pixels: fitted to what it pushes for
# labels of 1 to 12 characters, Latin and Chinese, at font sizes 14 and 22.
def _tick_room(font_size: int) -> float:
    return 24 + font_size / 2


def _left_margin(labels, font_size: int, title: bool) -> int:
    """Room left of a plot for its row labels (and an axis title beside them), a little more than
    Plotly's automargin pushes. Automargin still widens it for a label wider than guessed; but
    when the labels change (another sentence, another length) and fit, the browser draws the
    figure once instead of twice (benchmarks/README.md)."""
    title_room = 18 + font_size if title else 0
    return int(_tick_room(font_size) + _label_px(labels, font_size) + title_room)


def _bottom_margin(labels, font_size: int, degrees: float) -> int:
    """Room below a plot for column labels slanted by ``degrees``, as :func:`_left_margin`."""
    slant = math.radians(abs(degrees))
    height = _label_px(labels, font_size) * math.sin(slant) + 1.2 * font_size * math.cos(slant)
    return int(_tick_room(font_size) + 0.3 * font_size + height)


def _top_margin(labels, font_size: int, angled: bool, title: bool) -> int:
    """Room above a heatmap for its title and its (possibly slanted) top tick labels."""
    longest = max((len(s.rstrip("\u200b")) for s in labels), default=1)
    ticks = (0.5 * font_size * min(longest, 14) * 0.72) if angled else font_size * 1.4
    return int(30 + ticks + (font_size * 2.4 if title else 0))
