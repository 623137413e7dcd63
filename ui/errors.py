"""Turning a compute ``ValueError`` into a message on the page, keeping the last good view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from .i18n import t


def show_error(exc: Exception) -> None:
    """One red box with the translated heading and the compute package's message."""
    st.error(f"**{t('common.error_heading')}** {exc}", icon="🚫")


def last_good(slot: str) -> Any:
    """The last good result stored under ``slot`` by :func:`compute` (or None), captioned as such."""
    last = st.session_state.get("_last_good", {}).get(slot)
    if last is not None:
        st.caption(t("common.showing_last_good"))
    return last


def compute(slot: str, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``; on ValueError show it and return the last good result of ``slot`` (or None).

    With a previous good result the page keeps drawing it under the error, marked as such.
    """
    store = st.session_state.setdefault("_last_good", {})
    try:
        result = fn(*args, **kwargs)
    except ValueError as exc:
        show_error(exc)
        last = store.get(slot)
        if last is not None:
            st.caption(t("common.showing_last_good"))
        return last
    store[slot] = result
    return result
