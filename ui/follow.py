"""What a page shows beside its figures that a control drawn in a figure changes: a table (with its
CSV), a displayed formula, a note. One element (``ui/follow.js``) holds a version for every
position of the figure's slider and shows the one the slider stands on, swapped in the browser as
it moves (``ui/live.js``): no sentence of the page lags behind its figure, and nothing is asked of
the server. The versions are keyed as the slider's steps are, by the value's URL text."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from visattn.controls import Control, url_text

from . import url_state
from .charts import element_script, matrix_frame, slug
from .formulas import KATEX_CHUNK
from .i18n import t

FOLLOW_NAME = "visattn_follow"
_follow = st.components.v2.component(
    FOLLOW_NAME, js=element_script("katex.js", "follow.js"), isolate_styles=False
)
NOTE_LEVELS = ("warning", "info", "success")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ICON = re.compile(r":material/([a-z0-9_]+):")  # Streamlit's icon shortcode, as st.warning reads it


@dataclass(frozen=True)
class Version:
    """What the element shows at one position, top down: notes ((level, text) with ``**bold**``,
    the text of the app's locale files; a level of NOTE_LEVELS, drawn as st.warning, st.info and
    st.success draw), a metric (label, value), a table of texts (its rows named by ``index``), a
    formula (TeX), a caption, and a CSV to download (the table's, or any matrix's)."""

    notes: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    metric: tuple[str, str] | None = None
    table: pd.DataFrame | None = None
    csv: str = ""
    tex: str | None = None
    caption: str = ""


def note_html(text: str) -> str:
    """A note's text (the locale files' markdown) as HTML: escaped, with its ``**bold**`` and its
    ``:material/name:`` icons drawn as Streamlit draws them (the icon is not read out)."""
    bold = _BOLD.sub(r"<strong>\1</strong>", html.escape(text))
    return _ICON.sub(r'<span class="visattn-icon" aria-hidden="true">\1</span>', bold)


def _note(level: str, text: str) -> dict:
    if level not in NOTE_LEVELS:
        raise ValueError(f"a note is one of {NOTE_LEVELS}")
    return {"level": level, "html": note_html(text)}


def _variant(version: Version) -> dict:
    out: dict = {}
    if version.notes:
        out["notes"] = [_note(level, text) for level, text in version.notes]
    if version.metric is not None:
        out["metric"] = dict(zip(("label", "value"), version.metric, strict=True))
    if version.table is not None:
        frame = version.table
        out["table"] = {
            "columns": [str(c) for c in frame.columns],
            "index": [str(i) for i in frame.index],
            "rows": [[str(v) for v in row] for row in frame.itertuples(index=False)],
        }
    if version.csv:
        out["csv"] = version.csv
    if version.tex is not None:
        out["tex"] = version.tex
    if version.caption:
        out["caption"] = version.caption
    return out


def follow(control: Control, versions: Mapping[float, Version], name: str, csv: str = "") -> None:
    """One element following ``control`` (drawn in a figure): ``versions`` maps each value of its
    slider to what to show there. ``name`` (unique on the page) keeps the element from one run to
    the next; ``csv``: the file name (``visattn_<csv>.csv``) of the versions' CSV, when they have
    one (its button is drawn last)."""
    data = {
        "control": control.key,
        "server": url_state.figure_state(control.key),
        "variants": {url_text(v): _variant(version) for v, version in versions.items()},
        "chunk": KATEX_CHUNK,
    }
    if csv:
        data["csv"] = {"label": t("common.download_csv"), "name": f"visattn_{slug(csv)}.csv"}
    _follow(key=f"follow_{name}", data=data)


def chart_csv(chart: str, rows, cols, name: str) -> None:
    """A button that downloads what the chart of key ``chart`` shows now (its first trace's
    matrix, rows named ``rows`` and columns ``cols``) as ``visattn_<name>.csv``: made in the
    browser, so it holds the matrix at whatever position the figure's slider stands on."""
    frame = matrix_frame(np.zeros((len(rows), len(cols))), rows, cols)  # the names, made unique
    data = {
        "chart": chart,
        "index": [str(i) for i in frame.index],
        "columns": [str(c) for c in frame.columns],
        "label": t("common.download_csv"),
        "name": f"visattn_{slug(name)}.csv",
    }
    _follow(key=f"csv_{slug(name)}", data=data)
