"""The frame every page runs in: page config, language, sidebar navigation, presenter mode, URL notices.

Each page script starts with ``with page("multi_head"):`` so that a deep link such as
``/multi_head?lang=zh`` renders the same as navigating there from the home page (Streamlit runs a
page script without ``app.py`` on a deep link; this frame is what makes that harmless).
"""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from . import url_state
from .i18n import LANGUAGES, browser_lang, lang, t

# (page id, script path relative to the app root, emoji icon) in the order of the lesson.
PAGES = (
    ("home", "app.py", "🏠"),
    ("kernel", "pages/kernel_regression.py", "📈"),
    ("single_head", "pages/single_head.py", "🔎"),
    ("multi_head", "pages/multi_head.py", "🧠"),
    ("positional", "pages/positional_encoding.py", "〰️"),
    ("pretrained", "pages/pretrained.py", "🤖"),
)
PAGE_ICONS = {pid: icon for pid, _, icon in PAGES}


def presenter() -> bool:
    """Presenter mode: larger fonts, fewer words (kept in the URL as ?present=1)."""
    return bool(st.session_state.get("present", False))


def font_size() -> int:
    """Base font size for figures: larger on a projector."""
    return 20 if presenter() else 13


def _sidebar(current: str) -> None:
    with st.sidebar:
        st.segmented_control(t("common.language"), list(LANGUAGES), format_func=LANGUAGES.get,
                             key=url_state.bind("lang", browser_lang(), options=list(LANGUAGES)),
                             required=True)
        st.toggle(t("common.presenter"), key=url_state.bind("present", False), help=t("common.presenter_help"))
        st.divider()
        keep = {"lang": lang()} | ({"present": "1"} if presenter() else {})
        for pid, path, icon in PAGES:
            st.page_link(path, label=t(f"{pid}.nav"), icon=icon, query_params=keep, disabled=pid == current)
        st.divider()
        st.caption(t("common.sidebar_footer"))


def _presenter_css() -> None:
    st.markdown(
        """<style>
        html, body, [class*="st-"] { font-size: 1.25rem; }
        h1 { font-size: 2.6rem !important; } h2, h3 { font-size: 1.9rem !important; }
        .stMarkdown p, .stCaption { font-size: 1.25rem !important; }
        </style>""",
        unsafe_allow_html=True,
    )


@contextmanager
def page(page_id: str):
    """Set up one page (call first in every page script) and, at its end, sync the URL."""
    url_state.start_run()
    # The language must be known before any text: bind it (URL, else browser) before drawing.
    url_state.bind("lang", browser_lang(), options=list(LANGUAGES))
    st.set_page_config(page_title=f"{t(page_id + '.nav')} · visattn", page_icon=PAGE_ICONS[page_id],
                       layout="wide", initial_sidebar_state="expanded")
    _sidebar(page_id)
    if presenter():
        _presenter_css()
    notice_slot = st.container()
    try:
        yield
    finally:
        bad = url_state.finish()
        if bad:
            notice_slot.warning(t("common.bad_params", names=", ".join(sorted(bad))), icon="⚠️")


def explain(text: str) -> None:
    """Long explanations: shown normally, hidden in presenter mode (the figures stay)."""
    if not presenter():
        st.markdown(text)
