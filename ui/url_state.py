"""Every control's value lives in the URL, so a link reproduces the view.

A page calls :func:`bind` for each control key before creating the widget (with ``key=`` and no
``value=``): the first run of a session takes the value from ``st.query_params`` if it parses and is
in range, else the default, and remembers a notice. :func:`finish` (called by the page frame at the
end) writes every non-default value back to the URL, drops unknown parameters and shows the notices.

A control drawn in a figure (``Control.in_figure``) is moved in the browser, which writes it into
the address bar itself and tells no server (``ui/live.js``): after the first run the session's
value is what the server last set, and the browser's may be newer. :func:`figure_state` is what a
drawn element learns of it: the session's value and when the server last changed it (its serial),
so that the browser keeps its own position unless the server has set another since (a button,
another control that narrows the figure's range).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from visattn.controls import MAX_MATRIX, MAX_TEXT, Control, url_text

_REGISTRY = "_url_registry"
_NOTICES = "_url_notices"
_MOVED = "_url_moved"  # {key: URL text} a link's values moved to the nearest the page can show
_LINKED = "_url_linked"  # the keys this run read from the URL (a link's, on a session's first run)
_SEEN = "_url_figure_seen"  # {key: a figure control's value as the server last drew it}
_SERIALS = "_url_figure_serials"  # {key: when the server last changed it, ns since the epoch}
# characters of any one URL value read at all (a 64×64 matrix of exact floats is ~90 000)
MAX_RAW = 200_000


@dataclass(frozen=True)
class Param:
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str]
    in_figure: bool = False  # moved in the browser (see the module's docstring)


def _parse_bool(s: str) -> bool:
    if s.lower() in ("1", "true", "yes", "on"):
        return True
    if s.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(s)


def _dump_bool(value: bool) -> str:
    return url_text(bool(value))


def _dump_float(value: float) -> str:
    return url_text(float(value))


def _number(kind, lo, hi):
    def parse(s: str):
        v = kind(float(s)) if kind is int and "." not in s and "e" not in s.lower() else kind(s)
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(s)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(s)
        return v

    return parse


def _choice(options):
    def parse(s: str):
        for o in options:
            if str(o) == s:
                return o
        raise ValueError(s)

    return parse


def _text(limit: int):
    def parse(s: str) -> str:
        if len(s) > limit:
            raise ValueError("too long")
        return s

    return parse


def encode_matrix(m) -> str:
    """Rows separated by ';', entries by ',' (``1,0;0,2``), each entry exact."""
    return ";".join(",".join(_dump_float(v) for v in row) for row in np.asarray(m, dtype=float))


def decode_matrix(s: str) -> list[list[float]]:
    rows = [[float(x) for x in r.split(",")] for r in s.split(";")]
    if (
        not rows
        or len({len(r) for r in rows}) != 1
        or len(rows) > MAX_MATRIX
        or len(rows[0]) > MAX_MATRIX
    ):
        raise ValueError("ragged or too large")
    if not all(math.isfinite(v) for r in rows for v in r):
        raise ValueError("not finite")
    return rows


def param_for(
    default,
    *,
    options: Sequence | None = None,
    lo=None,
    hi=None,
    matrix: bool = False,
    max_chars: int = MAX_TEXT,
) -> Param:
    """The parser and printer that fit ``default``'s type (and the options, bounds or text length:
    give the text widget the same ``max_chars``, so what the app accepts is what a link
    reproduces)."""
    if matrix:
        return Param(default, decode_matrix, encode_matrix)
    if options is not None:
        return Param(default, _choice(list(options)), str)
    if isinstance(default, bool):
        return Param(default, _parse_bool, _dump_bool)
    if isinstance(default, int):
        return Param(default, _number(int, lo, hi), str)
    if isinstance(default, float):
        return Param(default, _number(float, lo, hi), _dump_float)
    if isinstance(default, str):
        return Param(default, _text(min(max_chars, MAX_TEXT)), str)
    raise TypeError(f"no URL form for {type(default).__name__}")


def registry() -> dict[str, Param]:
    return st.session_state.setdefault(_REGISTRY, {})


def notices() -> list[str]:
    return st.session_state.setdefault(_NOTICES, [])


def bind(key: str, default, *, in_figure: bool = False, **kind) -> str:
    """Register ``key`` as a URL parameter and give it its first value. Returns ``key`` for
    ``key=``."""
    p = param_for(default, **kind)
    if in_figure:
        p = Param(p.default, p.parse, p.dump, in_figure=True)
    registry()[key] = p
    if key not in st.session_state:
        raw = st.query_params.get(key)
        value = default
        if raw is not None and len(raw) > MAX_RAW:
            notices().append(key)
        elif raw is not None:
            try:
                value = p.parse(raw)
                st.session_state.setdefault(_LINKED, set()).add(key)
            except (ValueError, TypeError, OverflowError):
                notices().append(key)
        st.session_state[key] = value
    return key


def moved() -> dict[str, str]:
    return st.session_state.setdefault(_MOVED, {})


def correct(key: str, value: Any) -> None:
    """Set ``key`` to ``value``, the one the page can show for what it held (a range another
    control narrows); a value that came with a link in this run is reported: as reset when
    ``value`` is the default, else as moved to ``value``."""
    if _differs(st.session_state.get(key), value):
        p = registry()[key]
        if key in st.session_state.get(_LINKED, ()) and not _differs(value, p.default):
            notices().append(key)
        elif key in st.session_state.get(_LINKED, ()):
            moved()[key] = p.dump(value)
        st.session_state[key] = value


def bind_control(control: Control) -> str:
    """:func:`bind` with the default, bounds, options, length or matrix form the control
    declares."""
    return bind(
        control.key,
        control.default,
        options=control.options,
        lo=control.lo,
        hi=control.hi,
        matrix=control.matrix,
        max_chars=control.max_chars,
        in_figure=control.in_figure,
    )


def bind_controls(controls: Mapping[str, Control]) -> None:
    """Bind every control of a lesson's ``CONTROLS`` on every full run, whether or not its widget
    is drawn now, so a link keeps the settings of the sections it does not show."""
    for control in controls.values():
        bind_control(control)


def figure_state(key: str) -> tuple[str, int, str]:
    """A figure control's (value, serial, default) as URL texts, for an element that draws it: the
    session's value, and when the server last changed it (0: never, the value is the link's or the
    default). The browser keeps a position of its own over the session's unless the serial is newer
    than the one it last took."""
    p = registry()[key]
    value = st.session_state.get(key, p.default)
    seen = st.session_state.setdefault(_SEEN, {})
    serials = st.session_state.setdefault(_SERIALS, {})
    if key in seen and _differs(value, seen[key]):
        serials[key] = time.time_ns()  # a button, a callback or a narrowed range set it
    seen[key] = value
    return p.dump(value), serials.get(key, 0), p.dump(p.default)


def follow_language(key: str, default_for: Callable[[str], Any], lang: str) -> None:
    """A control whose default depends on the language (a page's default sentence): switched from
    one language to another, a value still on the first language's default becomes the second's;
    any other value stays. Call it before binding the controls with ``lang``'s default."""
    memo = f"_{key}__lang"
    before = st.session_state.get(memo)
    if before is not None and before != lang and key in st.session_state:
        if st.session_state[key] == default_for(before):
            st.session_state[key] = default_for(lang)
    st.session_state[memo] = lang


def start_run() -> None:
    """Forget last run's registrations (each run registers what it draws)."""
    st.session_state[_REGISTRY] = {}
    st.session_state[_LINKED] = set()


def partial_rerun() -> bool:
    """Whether this run is a section's alone (an ``st.fragment``), not the whole page's: the URL is
    then written at the section's end (:func:`finish`), as a whole run writes it at the page's."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def finish() -> tuple[list[str], dict[str, str]]:
    """Write non-default values to the URL, drop unknown parameters; return the names that were
    reset, and the link's values that were moved ({name: the URL text of the value now})."""
    reg = registry()
    wanted = {}
    for key, p in reg.items():
        value = st.session_state.get(key, p.default)
        if _differs(value, p.default):
            try:
                wanted[key] = p.dump(value)
            except (TypeError, ValueError):
                continue
    unknown = [k for k in st.query_params if k not in reg]
    bad = [k if len(k) <= 40 else k[:39] + "…" for k in dict.fromkeys(notices() + unknown)]
    st.session_state[_NOTICES] = []
    shifted = st.session_state.pop(_MOVED, {})
    if {k: st.query_params.get(k) for k in st.query_params} != wanted:
        st.query_params.from_dict(wanted)
    return bad, shifted


def _differs(a, b) -> bool:
    if isinstance(a, (list, np.ndarray)) or isinstance(b, (list, np.ndarray)):
        try:
            return not np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        except (TypeError, ValueError):
            return True
    return a != b
