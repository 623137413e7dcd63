"""Warm-up: once per server, after the first page of any visit is drawn, a daemon thread imports the
lesson pages' libraries and fills the pretrained page's caches (MiniLM, its default sentence, the
Winograd twins), so a first visit there does not wait for them — also when the visit starts from a
deep link rather than the home page."""

from __future__ import annotations

import logging
import threading

import streamlit as st

THREAD_NAME = "visattn-warm-up"


def _warm_up() -> None:
    try:
        from . import cache_pretrained, charts  # noqa: F401 — Plotly, pandas, visattn and MiniLM's code, imported once

        cache_pretrained.warm_up()
    except Exception:  # noqa: BLE001 — a failed warm-up only means the page computes on its first visit, as before
        logging.getLogger(__name__).exception("visattn warm-up failed")


@st.cache_resource(show_spinner=False)
def in_background() -> threading.Thread:
    """Start the warm-up thread (once per server: a cached resource)."""
    thread = threading.Thread(target=_warm_up, name=THREAD_NAME, daemon=True)
    thread.start()
    return thread
