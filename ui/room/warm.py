"""Warm-up: once per server, after the first page of any visit is drawn, a daemon thread imports the
lesson pages' libraries and fills the pretrained page's caches (MiniLM, its default sentence, the
Winograd twins), so a first visit there does not wait for them — also when the visit starts from a
deep link rather than the home page."""

from __future__ import annotations

import gc
import logging
import threading

import streamlit as st

THREAD_NAME = "visattn-warm-up"


def _keep() -> None:
    """Streamlit runs a full garbage collection after every script run (runner.postScriptGC): over
    the libraries and everything imported that is ~170 ms per control change here, on the server's
    one Python thread. What is loaded by now lives as long as the server, so it is moved out of the
    collector's sight; what runs create later is collected as before."""
    gc.collect()
    gc.freeze()


def _warm_up() -> None:
    try:
        from .. import charts  # noqa: F401 — Plotly, pandas, visattn and MiniLM's code, imported once
        from ..cache import pretrained as cache_pretrained

        _keep()  # the libraries: most of the objects, and at once (MiniLM takes seconds)
        cache_pretrained.warm_up()
        _keep()  # MiniLM and its first sentences
    except Exception:  # noqa: BLE001 — a failed warm-up only means the page computes on its first visit, as before
        logging.getLogger(__name__).exception("visattn warm-up failed")


@st.cache_resource(show_spinner=False)
def in_background() -> threading.Thread:
    """Start the warm-up thread (once per server: a cached resource)."""
    thread = threading.Thread(target=_warm_up, name=THREAD_NAME, daemon=True)
    thread.start()
    return thread
