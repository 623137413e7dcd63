"""The frame every page runs in: page config, language, sidebar navigation, presenter mode, URL notices.

Each page script starts with ``with page("multi_head"):`` so that a deep link such as
``/multi_head?lang=zh`` renders the same as navigating there from the home page (Streamlit runs a
page script without ``app.py`` on a deep link; this frame is what makes that harmless).
"""

from __future__ import annotations

from contextlib import contextmanager
from urllib.parse import urlencode

import streamlit as st

from . import url_state
from .i18n import LANGUAGES, browser_lang, lang, t
from .registry import BY_ID, PAGES
from .text import escape

NAV = {"home": "home.nav", "kernel": "kernel.nav", "single_head": "single_head.nav", "multi_head": "multi_head.nav",
       "positional": "positional.nav", "pretrained": "pretrained.nav", "reading": "reading.nav",
       "decoder": "decoder.nav"}
CARD = {"kernel": "kernel.card", "single_head": "single_head.card", "multi_head": "multi_head.card",
        "positional": "positional.card", "pretrained": "pretrained.card", "reading": "reading.card",
        "decoder": "decoder.card"}


def nav_label(page_id: str) -> str:
    """The page's name in the navigation and the browser tab."""
    return t(NAV[page_id])


def presenter() -> bool:
    """Presenter mode: larger fonts, fewer words (kept in the URL as ?present=1)."""
    return bool(st.session_state.get("present", False))


def font_size() -> int:
    """Base font size for figures: larger on a projector."""
    return 20 if presenter() else 13


def view_link(page_id: str, params: dict[str, str]) -> str:
    """The address that reopens this page with these settings (absolute when the browser told us its URL)."""
    name = BY_ID[page_id].url_path
    try:
        base = (st.context.url or "").rstrip("/")
    except Exception:  # no browser behind this run
        base = ""
    # st.context.url keeps the page's own path with file-based pages; the app's root is what we want
    for p in PAGES:
        stem = p.url_path
        if stem and base.endswith("/" + stem):
            base = base[: -len(stem) - 1]
            break
    query = urlencode(params)
    return f"{base}/{name}" + (f"?{query}" if query else "")


def _sidebar(current: str):
    """Language, presenter mode, navigation; returns the slot where the link to this view goes."""
    with st.sidebar:
        st.segmented_control(t("common.language"), list(LANGUAGES), format_func=LANGUAGES.get,
                             key=url_state.bind("lang", browser_lang(), options=list(LANGUAGES)),
                             required=True)
        st.toggle(t("common.presenter"), key=url_state.bind("present", False), help=t("common.presenter_help"))
        st.divider()
        keep = {"lang": lang()} | ({"present": "1"} if presenter() else {})
        for p in PAGES:
            st.page_link(p.path, label=nav_label(p.id), icon=p.icon, query_params=keep, disabled=p.id == current)
        link_slot = st.container()
        st.divider()
        st.caption(t("common.sidebar_footer"))
    return link_slot


def _presenter_css() -> None:
    """Scale the whole page by its root font size: every Streamlit size is in rem, so headings, metrics, widgets
    and captions grow together (headings stay larger than body text) and nothing is set twice."""
    st.markdown("<style>html { font-size: 20px; }</style>", unsafe_allow_html=True)


@contextmanager
def page(page_id: str):
    """Set up one page (call first in every page script) and, at its end, sync the URL."""
    url_state.start_run()
    # The language must be known before any text: bind it (URL, else browser) before drawing.
    url_state.bind("lang", browser_lang(), options=list(LANGUAGES))
    url_state.bind("present", False)          # and presenter mode, which sets the sidebar's first state
    st.set_page_config(page_title=f"{nav_label(page_id)} · visattn", page_icon=BY_ID[page_id].icon,
                       layout="wide", initial_sidebar_state="collapsed" if presenter() else "expanded")
    link_slot = _sidebar(page_id)
    if presenter():
        _presenter_css()
    notice_slot = st.container()
    try:
        yield
    finally:
        bad = url_state.finish()
        with link_slot:
            st.divider()
            st.markdown(t("common.link_title"), help=t("common.link_help"))
            # the language always travels with a shared link, even when it is this browser's default
            st.code(view_link(page_id, {"lang": lang()} | url_state.current_params()), language=None, wrap_lines=True)
        if bad:
            names = sorted(bad)[:10] + (["…"] if len(bad) > 10 else [])
            notice_slot.warning(t("common.bad_params", names=escape(t("common.list_sep").join(names))), icon="⚠️")


def explain(text: str) -> None:
    """Long explanations: shown normally, hidden in presenter mode (the figures stay)."""
    if not presenter():
        st.markdown(text)
