"""visattn home page: what attention is, and a card per view. Run with `make run`."""

import streamlit as st

from ui.frame import CARD, explain, nav_label, page
from ui.i18n import lang, t
from ui.registry import PAGES

with page("home"):
    st.title(t("home.title"))
    st.markdown(t("home.lead"))
    st.latex(
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
    )
    explain(t("home.intro"))
    keep = {"lang": lang()}
    cards = [p for p in PAGES if p.id != "home"]
    for row in range(0, len(cards), 3):
        cols = st.columns(3)
        for col, p in zip(cols, cards[row : row + 3]):
            with col.container(border=True):
                st.subheader(f"{p.icon} {nav_label(p.id)}")
                st.markdown(t(CARD[p.id]))
                st.page_link(p.path, label=t("home.open"), icon="➡️", query_params=keep)
    st.caption(t("home.footer"))
