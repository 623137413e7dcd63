"""Widgets drawn from a lesson's :class:`visattn.controls.Control`: its key, bounds, step, options
and their labels come from the control, so a page writes only the words (label, help) and the
layout.

Each function draws one widget and returns its value, but :func:`in_figure`, which draws nothing: a
control drawn as a figure's slider (``Control.in_figure``) is read here and drawn by its figure.
``where`` is the container (``st`` by default, or a column). The page binds every control first
(``url_state.bind_controls(lesson.CONTROLS)``); the widgets here carry ``key=`` and never
``value=``, so the value lives in the session and the URL. A range another control narrows is
passed as ``hi=`` (never above the control's own bound), after the page clamped the session's
value with :func:`clamp`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from visattn.controls import Control

from . import url_state
from .i18n import labeller


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
