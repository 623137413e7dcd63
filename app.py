"""visattn home page: what attention is, and a card per view. Run with `make run`."""

import logging
import threading

import streamlit as st

from ui.frame import CARD, explain, nav_label, page
from ui.i18n import lang, t
from ui.registry import PAGES


def _warm_up() -> None:
    try:
        from ui import cache_pretrained, charts  # noqa: F401 — Plotly, pandas, visattn and MiniLM's code, imported once
        cache_pretrained.warm_up()
    except Exception:  # noqa: BLE001 — a failed warm-up only means the page computes on its first visit, as before
        logging.getLogger(__name__).exception("visattn warm-up failed")


@st.cache_resource(show_spinner=False)
def warm_up_in_background() -> threading.Thread:
    """Once per server, after the first home page is drawn: import the lesson pages' libraries and fill the
    pretrained page's caches (MiniLM, its default sentence, the Winograd twins) in a daemon thread, so a first
    visit there does not wait for them."""
    thread = threading.Thread(target=_warm_up, name="visattn-warm-up", daemon=True)
    thread.start()
    return thread


with page("home"):
    st.title(t("home.title"))
    st.markdown(t("home.lead"))
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V")
    explain(t("home.intro"))
    keep = {"lang": lang()}
    cards = [p for p in PAGES if p.id != "home"]
    for row in range(0, len(cards), 3):
        cols = st.columns(3)
        for col, p in zip(cols, cards[row:row + 3]):
            with col.container(border=True):
                st.subheader(f"{p.icon} {nav_label(p.id)}")
                st.markdown(t(CARD[p.id]))
                st.page_link(p.path, label=t("home.open"), icon="➡️", query_params=keep)
    st.caption(t("home.footer"))

warm_up_in_background()
