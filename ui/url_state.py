"""Every control's value lives in the URL, so a link reproduces the view.

A page calls :func:`bind` for each control key before creating the widget (with ``key=`` and no
``value=``): the first run of a session takes the value from ``st.query_params`` if it parses and is
in range, else the default, and remembers a notice. :func:`finish` (called by the page frame at the
end) writes every non-default value back to the URL, drops unknown parameters and shows the notices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from visattn.controls import MAX_MATRIX, MAX_TEXT, Control

_REGISTRY = "_url_registry"
_NOTICES = "_url_notices"
# characters of any one URL value read at all (a 64×64 matrix of exact floats is ~90 000)
MAX_RAW = 200_000


@dataclass(frozen=True)
class Param:
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str]


def _parse_bool(s: str) -> bool:
    if s.lower() in ("1", "true", "yes", "on"):
        return True
    if s.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(s)


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


def exact(v: float) -> str:
    """The shortest text that reads back as exactly ``v`` (``62.123456789``, ``1``, ``1e-200``)."""
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def encode_matrix(m) -> str:
    """Rows separated by ';', entries by ',' (``1,0;0,2``), each entry exact."""
    return ";".join(",".join(exact(v) for v in row) for row in np.asarray(m, dtype=float))


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
        return Param(default, _parse_bool, lambda v: "1" if v else "0")
    if isinstance(default, int):
        return Param(default, _number(int, lo, hi), str)
    if isinstance(default, float):
        return Param(default, _number(float, lo, hi), exact)
    if isinstance(default, str):
        return Param(default, _text(min(max_chars, MAX_TEXT)), str)
    raise TypeError(f"no URL form for {type(default).__name__}")


def registry() -> dict[str, Param]:
    return st.session_state.setdefault(_REGISTRY, {})


def notices() -> list[str]:
    return st.session_state.setdefault(_NOTICES, [])


def bind(key: str, default, **kind) -> str:
    """Register ``key`` as a URL parameter and give it its first value. Returns ``key`` for
    ``key=``."""
    p = param_for(default, **kind)
    registry()[key] = p
    if key not in st.session_state:
        raw = st.query_params.get(key)
        value = default
        if raw is not None and len(raw) > MAX_RAW:
            notices().append(key)
        elif raw is not None:
            try:
                value = p.parse(raw)
            except (ValueError, TypeError, OverflowError):
                notices().append(key)
        st.session_state[key] = value
    return key


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
    )


def bind_controls(controls: Mapping[str, Control]) -> None:
    """Bind every control of a lesson's ``CONTROLS`` on every full run, whether or not its widget
    is drawn now, so a link keeps the settings of the views it does not show."""
    for control in controls.values():
        bind_control(control)


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


def partial_rerun() -> bool:
    """Whether this run is a section's alone (an ``st.fragment``), not the whole page's: the URL is
    then written at the section's end (:func:`finish`), as a whole run writes it at the page's."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def finish() -> list[str]:
    """Write non-default values to the URL, drop unknown parameters; return the names that were
    reset."""
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
    if {k: st.query_params.get(k) for k in st.query_params} != wanted:
        st.query_params.from_dict(wanted)
    return bad


def _differs(a, b) -> bool:
    if isinstance(a, (list, np.ndarray)) or isinstance(b, (list, np.ndarray)):
        try:
            return not np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        except (TypeError, ValueError):
            return True
    return a != b
