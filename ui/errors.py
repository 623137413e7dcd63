"""The one error path: a compute failure becomes a translated message, and the page keeps its last
good view.

``visattn`` raises :class:`visattn.errors.InputError` with a ``code`` and ``params``; here it is
said in the page's language as ``errors.<code>``. Anything else (a bug) is logged and shown as a
short translated apology, never as a traceback."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import streamlit as st

from visattn.errors import InputError

from .i18n import has, t
from .text import escape

_log = logging.getLogger(__name__)


def _param(name: str, value: Any) -> Any:
    """An error parameter as shown: argument names translated where a translation exists, text
    escaped."""
    if name == "name" and isinstance(value, str) and has(f"errors.name_{value}"):
        return t(f"errors.name_{value}")
    return escape(str(value)) if isinstance(value, str) else value


def message(exc: Exception) -> str:
    """``exc`` said in the page's language (markdown-safe)."""
    if isinstance(exc, InputError):
        return t(f"errors.{exc.code}", **{k: _param(k, v) for k, v in exc.params.items()})
    _log.exception("unexpected error while computing a result", exc_info=exc)
    return t("errors.unexpected")


def show_error(exc: Exception) -> None:
    """One red box with the translated heading and message."""
    st.error(f"**{t('errors.heading')}** {message(exc)}", icon=":material/block:")


def last_good(slot: str) -> Any:
    """The last good result stored under ``slot`` by :func:`compute` (or None), captioned as
    such."""
    last = st.session_state.get("_last_good", {}).get(slot)
    if last is not None:
        st.caption(t("errors.showing_last_good"))
    return last


def compute(slot: str, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``; on failure show why and return the last good result of ``slot`` (or
    None).

    With a previous good result the page keeps drawing it under the error, marked as such.
    """
    store = st.session_state.setdefault("_last_good", {})
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 — Streamlit's rerun/stop signals are BaseExceptions and pass through
        show_error(exc)
        return last_good(slot)
    store[slot] = result
    return result
