"""Every widget a page draws, each from the :class:`visattn.controls.Control` it sets: its key,
bounds, step, options and their labels come from the control, so a page writes only the words
(label, help) and the layout.

Each widget function draws one widget and returns its value, but :func:`in_figure`, which draws
nothing: a control drawn as a figure's slider (``Control.in_figure``) is read here and drawn by its
figure. ``where`` is the container (``st`` by default, or a column). The page binds every control
first (``url_state.bind_controls(lesson.CONTROLS)``); the widgets here carry ``key=`` and never
``value=``, so the value lives in the session and the URL. A range another control narrows is
passed as ``hi=`` (never above the control's own bound), after the page clamped the session's
value with :func:`clamp`.

Then the widgets of several controls or of a matrix: the matrix editor, slider + exact box,
example buttons, token pickers."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from visattn.checks import MAX_MAGNITUDE
from visattn.controls import Control
from visattn.errors import InputError

from . import url_state
from .i18n import labeller, t


def clamp(control: Control, hi: float | None = None) -> None:
    """Bring the session's value of ``control`` into its range (narrowed to ``hi``) before its
    widget is drawn: Streamlit refuses a value outside a widget's range."""
    value = control.clamp(st.session_state[control.key])
    if hi is not None:
        value = min(value, type(value)(hi))
    st.session_state[control.key] = value


def in_figure(control: Control, shown: Callable[[Any], Any] | None = None) -> Any:
    """The value of a control whose slider is a figure's (the figure draws it and the browser
    moves it). ``shown``: the value the figure can show for the session's, when another control
    narrows its range (the divisors of H); it becomes the control's value."""
    if not control.in_figure:
        raise ValueError(f"{control.key} is a widget of the page, not a figure's slider")
    value = st.session_state[control.key]
    if shown is not None:
        url_state.correct(control.key, shown(value))
    return st.session_state[control.key]


def _options(control: Control, kw: dict) -> dict:
    if control.labels is not None and "format_func" not in kw:
        kw["format_func"] = labeller(control.labels)
    return kw


def _upper(control: Control, hi: float | None) -> float | None:
    if hi is None:
        return control.hi
    return hi if control.hi is None else min(hi, control.hi)


def slider(control: Control, label: str, *, where: Any = st, hi: float | None = None, **kw) -> Any:
    """A slider over ``control.lo`` … ``control.hi`` (or ``hi``) in steps of ``control.step``."""
    return where.slider(
        label,
        min_value=control.lo,
        max_value=_upper(control, hi),
        step=control.step,
        key=control.key,
        **kw,
    )


def number(control: Control, label: str, *, where: Any = st, hi: float | None = None, **kw) -> Any:
    """A number box over ``control.lo`` … ``control.hi`` (or ``hi``)."""
    return where.number_input(
        label,
        min_value=control.lo,
        max_value=_upper(control, hi),
        step=control.step if control.step is not None else 1,
        key=control.key,
        **kw,
    )


def radio(
    control: Control, label: str, *, where: Any = st, horizontal: bool = True, options=None, **kw
) -> Any:
    """A radio over ``control.options`` (or a subset ``options`` of them), labelled from
    ``control.labels``."""
    shown = control.options if options is None else tuple(options)
    return where.radio(
        label, shown, key=control.key, horizontal=horizontal, **_options(control, kw)
    )


def select(control: Control, label: str, *, where: Any = st, options=None, **kw) -> Any:
    """A select box over ``control.options`` (or a subset ``options`` of them)."""
    shown = control.options if options is None else tuple(options)
    return where.selectbox(label, shown, key=control.key, **_options(control, kw))


def select_slider(
    control: Control, label: str, *, where: Any = st, hi: float | None = None, **kw
) -> Any:
    """A slider that steps through ``control.options`` or, for a number control, every value of
    ``control.lo`` … ``control.hi`` (or ``hi``) in steps of ``control.step`` — which may be a single
    value, where ``st.slider`` needs two."""
    options = control.options
    if options is None:
        step = int(control.step or 1)
        options = tuple(range(int(control.lo), int(_upper(control, hi)) + 1, step))
    return where.select_slider(label, options, key=control.key, **_options(control, kw))


def segmented(control: Control, label: str, *, where: Any = st, **kw) -> Any:
    """A segmented control over ``control.options`` (one always chosen)."""
    return where.segmented_control(
        label, control.options, key=control.key, required=True, **_options(control, kw)
    )


def toggle(control: Control, label: str, *, where: Any = st, **kw) -> bool:
    return where.toggle(label, key=control.key, **kw)


def checkbox(control: Control, label: str, *, where: Any = st, **kw) -> bool:
    return where.checkbox(label, key=control.key, **kw)


def text(control: Control, label: str, *, where: Any = st, **kw) -> str:
    """A one-line text box that takes at most ``control.max_chars`` characters."""
    return where.text_input(label, key=control.key, max_chars=control.max_chars, **kw)


def text_area(control: Control, label: str, *, where: Any = st, **kw) -> str:
    """A text area that takes at most ``control.max_chars`` characters."""
    return where.text_area(label, key=control.key, max_chars=control.max_chars, **kw)


# ---- widgets of a matrix, of a value shown twice, of examples and tokens -----------------------


def parse_frame(df: pd.DataFrame, name: str) -> np.ndarray:
    """The edited table as a float matrix, or an InputError naming every cell that is not a finite
    number."""
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise InputError(
            "table_empty", f"The table {name} is empty; add at least one row.", name=name
        )
    bad = []
    out = np.empty(df.shape)
    for i in range(df.shape[0]):
        for j in range(df.shape[1]):
            v = df.iat[i, j]
            try:
                x = float(v) if v is not None and str(v).strip() != "" else math.nan
            except (TypeError, ValueError):
                x = None
            if x is None or not math.isfinite(x) or abs(x) > MAX_MAGNITUDE:
                shown = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
                bad.append(
                    t(
                        "common.bad_cell",
                        row=_row_name(df.index[i]),
                        col=df.columns[j],
                        value=shown[:20],
                    )
                )
            else:
                out[i, j] = x
    if bad:
        more = t("common.and_more", n=len(bad) - 5) if len(bad) > 5 else ""
        raise InputError(
            "table_cells",
            f"Every cell of {name} must be a finite number: {'; '.join(bad[:5])}{more}.",
            name=name,
            cells=t("common.list_sep").join(bad[:5]) + more,
            limit=f"{MAX_MAGNITUDE:.0e}",
        )
    return out


def _row_name(index) -> str:
    """A row as the user sees it: 1-based for a numbered table, else its label."""
    return str(index + 1) if isinstance(index, (int, np.integer)) else str(index)


def set_matrix(key: str, m) -> None:
    """Replace the matrix under ``key`` (a preset, a new shape): the editor starts again from it."""
    st.session_state[key] = np.asarray(m, dtype=float).tolist()
    st.session_state[f"{key}__base"] = st.session_state[key]
    st.session_state[f"{key}__v"] = st.session_state.get(f"{key}__v", 0) + 1


def reset_if_reshaped(key: str, default) -> None:
    """A link whose matrix under ``key`` has another shape than ``default`` is reset to it, with
    the "settings were reset" notice."""
    if np.shape(st.session_state[key]) != np.shape(default):
        set_matrix(key, default)
        url_state.notices().append(key)


def matrix_editor(
    control: Control,
    default=None,
    *,
    name: str,
    row_labels=None,
    col_labels=None,
    dynamic_rows: bool = False,
    height="auto",
    fixed_shape: bool = False,
    max_rows: int | None = None,
) -> np.ndarray:
    """An editable matrix kept in the URL under ``control.key``; returns it as floats or raises
    InputError. ``default``: the matrix a link without this parameter opens (the control's own
    default unless the page derives one, e.g. seeded at the chosen sizes).

    The editor shows the value the session started from (URL or default); edits are applied on top
    of it. ``fixed_shape``: a link whose matrix has another shape than ``default`` is reset to it,
    with a notice. ``max_rows`` (with ``dynamic_rows``): an edit past that many rows is refused
    before Streamlit applies it (a paste of thousands of rows would hold the session); the editor
    starts again from the last table taken."""
    key = control.key
    default = control.default if default is None else default
    url_state.bind(key, np.asarray(default, dtype=float).tolist(), matrix=True)
    ss = st.session_state
    if fixed_shape:
        reset_if_reshaped(key, default)
    asked = 0
    if max_rows is not None:
        edits = ss.get(f"{key}__ed{ss.get(f'{key}__v', 0)}") or {}
        asked = (
            len(ss.get(f"{key}__base", ss[key]))
            + len(edits.get("added_rows", []))
            - len(edits.get("deleted_rows", []))
        )
        if asked > max_rows:
            set_matrix(key, ss[key])
    base = np.asarray(ss.setdefault(f"{key}__base", ss[key]), dtype=float)
    rows = list(row_labels) if row_labels is not None and len(row_labels) == base.shape[0] else None
    cols = (
        [str(c) for c in col_labels]
        if col_labels is not None and len(col_labels) == base.shape[1]
        else None
    )
    frame = pd.DataFrame(base, columns=cols)
    if rows is not None and not dynamic_rows:
        frame.index = [
            str(r) if rows.count(r) == 1 else token_label(i, r) for i, r in enumerate(rows)
        ]
    edited = st.data_editor(
        frame,
        key=f"{key}__ed{ss.get(f'{key}__v', 0)}",
        num_rows="dynamic" if dynamic_rows else "fixed",
        height=height,
        hide_index=dynamic_rows,
    )
    if max_rows is not None and max(asked, len(edited)) > max_rows:
        n = max(asked, len(edited))
        raise InputError(
            "table_too_long",
            f"{name} has {n} rows; this page takes at most {max_rows}.",
            rows=n,
            limit=max_rows,
        )
    m = parse_frame(edited, name)
    ss[key] = m.tolist()
    return m


# ---- one value shown as a slider and an exact box ------------------------------------------------


def _copy(src: str, dst: str) -> None:
    st.session_state[dst] = st.session_state[src]


def slider_and_number(
    control: Control,
    label: str,
    help: str | None = None,
    *,
    lo: float | None = None,
    hi: float | None = None,
    step: float | None = None,
) -> float:
    """One value (``control``, already bound to the URL) shown twice: a slider over its bounds for
    dragging, and a box beside it for any exact number (the box may leave the slider's range; the
    slider then sits at its end). ``lo``, ``hi``, ``step``: the slider's range where the data set it
    (a control that takes any number, such as a query over the keys of an editable table)."""
    key = control.key
    lo = control.lo if lo is None else lo
    hi = control.hi if hi is None else hi
    step = control.step if step is None else step
    v = float(st.session_state[key])
    st.session_state[key + "_s"] = float(min(max(v, lo), hi))
    st.session_state[key + "_n"] = v
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    c1.slider(
        label,
        float(lo),
        float(hi),
        step=float(step),
        key=key + "_s",
        on_change=_copy,
        args=(key + "_s", key),
        help=help,
    )
    c2.number_input(
        label,
        step=float(step),
        format="%g",
        key=key + "_n",
        on_change=_copy,
        args=(key + "_n", key),
        label_visibility="collapsed",
    )
    return float(st.session_state[key])


# ---- example buttons that fill a text box --------------------------------------------------------


def _set(key: str, value) -> None:
    st.session_state[key] = value


def preset_buttons(
    target_key: str,
    presets: dict[str, tuple[str, str]],
    *,
    caption: str | None = None,
    help_template: str = "{text}",
) -> None:
    """A row of buttons, one per preset {name: (label, text)}; a click puts the text in
    ``target_key``.

    Each button's tooltip shows (the start of) its text, through ``help_template`` (e.g. "“{text}”"
    to quote an example sentence)."""
    if caption:
        st.caption(caption)
    for col, (name, (label, text)) in zip(st.columns(len(presets)), presets.items(), strict=True):
        col.button(
            label,
            on_click=_set,
            args=(target_key, text),
            key=f"{target_key}__preset_{name}",
            help=help_template.format(text=text[:120] + ("…" if len(text) > 120 else "")),
            width="stretch",
        )


# ---- a token position that follows its sentence --------------------------------------------------


def token_label(i: int, token: str) -> str:
    """How a token position is named in every picker: 1-based, as the pages count tokens."""
    return f"{i + 1}: {token}"


def bind_token(control: Control, tokens: list[str] | None, default: int | None = None) -> str:
    """Keep a token position (``control``, bound to the URL) inside its sentence. It goes back to
    ``default`` (the control's own unless given) when the tokens change and, with a notice, when the
    URL's position is past the end. With ``tokens`` None (nothing to pick from) the URL's value is
    kept for the next text. Returns the key."""
    default = control.default if default is None else default
    memo = f"_{control.key}__tokens"
    if memo not in st.session_state:
        # the session's first call: bound again, so a position the URL does not give (or gives
        # wrong) is this default, not the control's own that bind_controls gave it
        st.session_state.pop(control.key, None)
    # bound with the sentence's own default, so a link leaves out a position that is the default
    key = url_state.bind(control.key, default, lo=control.lo, hi=control.hi)
    if tokens is None:
        st.session_state[memo] = []
        return key
    prev = st.session_state.get(memo)
    if prev is not None and prev != list(tokens):
        st.session_state[key] = default
    elif not 0 <= int(st.session_state[key]) < len(tokens):
        url_state.notices().append(key)
        st.session_state[key] = default
    st.session_state[memo] = list(tokens)
    return key


def token_select(label: str, key: str, tokens: list[str], help: str | None = None) -> int:
    """A select box over the positions of ``tokens`` (bound first with :func:`bind_token`)."""
    return st.selectbox(
        label,
        list(range(len(tokens))),
        format_func=lambda i: token_label(i, tokens[i]),
        key=key,
        help=help,
    )
