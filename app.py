"""visattn home page: what attention is, and a card per page (or, with ?speaker=1, a lecture's
speaker view). Run with `make run`."""

import streamlit as st

from ui.frame import explain, nav_label, page
from ui.i18n import lang, t
from ui.lecture.modes import speaker
from ui.lecture.tour import speaker_view
from ui.registry import PAGES

CARDS_PER_ROW = 3
ATTENTION = (
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
)


def cards() -> None:
    """What attention is, and a card per page."""
    st.title(t("home.title"))
    st.markdown(t("home.lead"))
    st.latex(ATTENTION)
    explain(t("home.intro"))
    keep = {"lang": lang()}  # a card's link opens its page in this language
    lesson_pages = [lesson_page for lesson_page in PAGES if lesson_page.card is not None]
    for first in range(0, len(lesson_pages), CARDS_PER_ROW):
        row = lesson_pages[first : first + CARDS_PER_ROW]
        # The last row may hold fewer cards than columns: its other columns stay empty.
        for column, lesson_page in zip(st.columns(CARDS_PER_ROW), row, strict=False):
            with column.container(border=True):
                st.subheader(f"{lesson_page.icon} {nav_label(lesson_page.id)}")
                st.markdown(t(lesson_page.card))
                st.page_link(
                    lesson_page.path,
                    label=t("home.open"),
                    icon=":material/arrow_forward:",
                    query_params=keep,
                )
    st.caption(t("home.footer"))


with page("home"):
    if speaker():  # ?speaker=1: the lecture's speaker view, on the lecturer's own screen
        speaker_view()
    else:
        cards()
