"""A page's controls as data: one :class:`Control` per URL parameter, declared in its lesson module.

A control is what a link remembers: its key (the URL parameter and the widget key), its default
and what it may take — bounds for a number, options for a choice, a length for a text, or a
matrix. The lesson declares each control once, in ``CONTROLS``; the page binds them all with one
call (``ui.url_state.bind_controls``) and draws each widget from its control (``ui.widgets``), so
a bound or an option list is never written twice. No Streamlit here: tests and notebooks read the
same table.

An option's label comes from a locale table named by ``labels`` (``"multi_head.sources"`` is the
table ``sources`` of ``ui/locales/<lang>/multi_head.json``) and keyed by the option's value; a test
checks that every option has a label in both languages.

A control is drawn once: as a widget of the page, or, with ``in_figure``, as the slider inside a
figure (:mod:`visattn.figures.live`), which moves it in the browser: the figure writes its value
into the address bar itself, so a link holds it as it holds a widget's. :func:`url_text` is the
one form a value takes in a URL, on either side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 5000  # characters of a text control (its widget's max_chars too): longer is refused
MAX_MATRIX = 64  # rows and columns of a matrix control


@dataclass(frozen=True)
class Control:
    """One URL-backed control: ``key`` (URL parameter and widget key), ``default``, and for a
    number its bounds ``lo``/``hi`` (and the widget's ``step``), for a choice its ``options``
    (values, not labels) with the locale table of their ``labels``, for a text its ``max_chars``,
    or ``matrix``. ``in_figure``: drawn as a figure's own slider, never as a widget of the page."""

    key: str
    default: Any
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple | None = None
    labels: str | None = None
    max_chars: int = MAX_TEXT
    matrix: bool = False
    in_figure: bool = False

    def __post_init__(self) -> None:
        if self.options is not None:
            object.__setattr__(self, "options", tuple(self.options))
            if self.default not in self.options:
                raise ValueError(f"{self.key}: the default {self.default!r} is not an option")
        if self.lo is not None and self.hi is not None and not self.lo <= self.default <= self.hi:
            raise ValueError(f"{self.key}: the default {self.default!r} is outside [lo, hi]")
        if self.labels is not None and self.options is None:
            raise ValueError(f"{self.key}: labels name the options' table; give options")
        if self.max_chars > MAX_TEXT:
            raise ValueError(f"{self.key}: max_chars is at most {MAX_TEXT}")
        if self.in_figure and (self.options is None) == (self.lo is None or self.hi is None):
            raise ValueError(f"{self.key}: a figure's slider needs bounds or options")

    def clamp(self, value: Any) -> Any:
        """``value`` within ``lo``…``hi`` (for a control whose range another control narrows)."""
        if self.lo is not None:
            value = max(value, type(value)(self.lo))
        if self.hi is not None:
            value = min(value, type(value)(self.hi))
        return value


def url_text(value: Any) -> str:
    """``value`` as a URL writes it: a float as the shortest text that reads back as exactly it
    (``62.123456789``, ``1``, ``1e-200``), a flag as 1 or 0, anything else as ``str``."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        text = repr(float(value))  # float() also of a NumPy float, whose repr names its type
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def table(*controls: Control | Iterable[Control]) -> Mapping[str, Control]:
    """``{key: control}`` of the controls (single ones, or groups such as a family of toggles), each
    key once."""
    out: dict[str, Control] = {}
    for item in controls:
        for control in (item,) if isinstance(item, Control) else item:
            if control.key in out:
                raise ValueError(f"the control {control.key!r} is declared twice")
            out[control.key] = control
    return out
