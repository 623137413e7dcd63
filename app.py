"""visattn home page: what attention is, and a card per page. Run with `make run`."""

import streamlit as st

from ui.frame import explain, nav_label, page
from ui.i18n import lang, t
from ui.registry import PAGES

CARDS_PER_ROW = 3

with page("home"):
    st.title(t("home.title"))
    st.markdown(t("home.lead"))
    st.latex(
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
    )
    explain(t("home.intro"))
    keep = {"lang": lang()}
    cards = [p for p in PAGES if p.card is not None]
    for first in range(0, len(cards), CARDS_PER_ROW):
        row = cards[first : first + CARDS_PER_ROW]
        for col, p in zip(st.columns(CARDS_PER_ROW), row, strict=False):
            with col.container(border=True):
                st.subheader(f"{p.icon} {nav_label(p.id)}")
                st.markdown(t(p.card))
                st.page_link(p.path, label=t("home.open"), icon="➡️", query_params=keep)
    st.caption(t("home.footer"))
