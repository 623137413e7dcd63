"""The frame every page runs in: page config, language, sidebar navigation, presenter mode, URL
notices.

Each page script starts with ``with page("multi_head"):`` so that a deep link such as
``/multi_head?lang=zh`` renders the same as navigating there from the home page (Streamlit runs a
page script without ``app.py`` on a deep link; this frame is what makes that harmless).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from functools import partial, wraps
from pathlib import Path
from typing import Any

import streamlit as st

from visattn import lecture
from visattn.controls import Control

from . import url_state
from .i18n import LANGUAGES, browser_lang, labeller, lang, t
from .lecture import modes as lecture_modes
from .lecture import tour
from .registry import BY_ID, PAGES
from .room import connection, warm
from .text import escape

# The browser tab's icon, inside the page as a data: URL. A ":material/…:" page icon would make the
# browser fetch it from fonts.gstatic.com (the icons inside the page use Streamlit's own font); a
# file would be served as a media URL without caching, which the browser fetched again at every
# rerun, a control's change included: one HTTP request to the server each time (tests/test_browser)
FAVICON = "data:image/png;base64," + base64.b64encode(
    Path(__file__).with_name("favicon.png").read_bytes()
).decode("ascii")


def nav_label(page_id: str) -> str:
    """The page's name in the navigation and the browser tab."""
    return t(BY_ID[page_id].nav)


def presenter() -> bool:
    """Presenter mode: larger fonts, fewer words (kept in the URL as ?present=1)."""
    return bool(st.session_state.get("present", False))


def font_size() -> int:
    """Base font size for figures: larger on a projector."""
    return 20 if presenter() else 13


def _sidebar(current: str):
    """Language, presenter mode, navigation; returns the slot where the link to this view goes."""
    with st.sidebar:
        st.segmented_control(
            t("common.language"),
            list(LANGUAGES),
            format_func=LANGUAGES.get,
            key=url_state.bind("lang", browser_lang(), options=list(LANGUAGES)),
            required=True,
        )
        st.toggle(
            t("common.presenter"),
            key=url_state.bind("present", False),
            help=t("common.presenter_help"),
        )
        st.divider()
        keep = {"lang": lang()} | ({"present": "1"} if presenter() else {}) | tour.keep()
        for p in PAGES:
            st.page_link(
                p.path,
                label=nav_label(p.id),
                icon=p.icon,
                query_params=keep,
                disabled=p.id == current,
            )
        lecture_slot = st.container()
        link_slot = st.container()
        st.divider()
        st.caption(t("common.sidebar_footer"))
    return lecture_slot, link_slot


# The page starts under the header's height, not Streamlit's 6rem: 40 px more of the first screen
# for the page's first figure (the handout's own rule, more specific, keeps its 1rem).
FIRST_SCREEN_CSS = '<style>[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }</style>'


def _presenter_css() -> None:
    """Scale the whole page by its root font size: every Streamlit size is in rem, so headings,
    metrics, widgets and captions grow together (headings stay larger than body text) and nothing is
    set twice."""
    st.markdown("<style>html { font-size: 20px; }</style>", unsafe_allow_html=True)


@contextmanager
def page(page_id: str):
    """Set up one page (call first in every page script) and, at its end, sync the URL."""
    url_state.start_run()
    # The language must be known before any text: bind it (URL, else browser) before drawing.
    url_state.bind("lang", browser_lang(), options=list(LANGUAGES))
    url_state.bind("present", False)  # and presenter mode, which sets the sidebar's first state
    url_state.bind_controls(lecture.CONTROLS)  # a tour and its step, hide, handout, speaker view
    tour.forget_charts()
    st.set_page_config(
        page_title=f"{nav_label(page_id)} · visattn",
        page_icon=FAVICON,
        layout="wide",
        initial_sidebar_state="collapsed" if presenter() or lecture_modes.handout() else "auto",
    )
    lecture_slot, link_slot = _sidebar(page_id)
    connection.install()  # Streamlit's connection texts translated; a moved session rebuilt
    st.html(FIRST_SCREEN_CSS)
    if presenter():
        _presenter_css()
    lecture_modes.install()  # handout's and predict-then-reveal's styles
    notice_slot = st.container()
    if not lecture_modes.handout() and not lecture_modes.speaker():
        tour.bar(page_id)  # the tour's counter, Prev/Next; on a projector, the first figure
    try:
        yield
    finally:
        reported = url_state.finish()
        lecture_modes.sidebar(lecture_slot, page_id)
        _link(link_slot)
        warm.in_background()  # once per server, after the first page a visitor opens
        _reset_notice(*reported, notice_slot)


def _reset_notice(bad: list[str], moved: dict[str, str], slot) -> None:
    """The translated notices of a link's settings: "reset" naming (at most ten of) the parameters
    in ``bad``, "moved" with each of ``moved``'s new values."""
    sep = t("common.list_sep")
    if bad:
        names = sorted(bad)[:10] + (["…"] if len(bad) > 10 else [])
        slot.warning(
            t("common.bad_params", names=escape(sep.join(names))), icon=":material/warning:"
        )
    if moved:
        settings = [f"{name} = {value}" for name, value in sorted(moved.items())]
        slot.warning(
            t("common.moved_params", settings=escape(sep.join(settings))),
            icon=":material/warning:",
        )


# The link box reads the address bar, so it stays right after a section's partial rerun (which
# cannot redraw the sidebar): a static script (no user data in it) shows location.href, with the
# language added when the URL leaves it out, and copies it; where the clipboard is not allowed
# (plain http on a room's network) a click selects the whole link instead.
_LINK_HTML = """<div class="visattn-link">
<code id="visattn-link" style="display:block;user-select:all;word-break:break-all;font-size:0.8rem;
padding:0.5rem;border-radius:0.5rem;background:rgba(128,128,128,0.12)"></code>
<button id="visattn-copy" type="button" style="margin-top:0.3rem;font-size:0.8rem;
padding:0.2rem 0.6rem;border-radius:0.4rem;border:1px solid rgba(128,128,128,0.4);
background:transparent;color:inherit;cursor:pointer">{copy}</button></div>
<script>(() => {{
  const code = document.getElementById("visattn-link"), lang = "{lang}";
  const link = () => {{
    const u = new URL(window.location.href);
    if (!u.searchParams.get("lang")) u.searchParams.set("lang", lang);
    u.hash = "";
    return u.toString();
  }};
  const draw = () => {{ const l = link(); if (code.textContent !== l) code.textContent = l; }};
  draw();
  clearInterval(window.visattnLinkTimer);
  window.visattnLinkTimer = setInterval(draw, 300);
  document.getElementById("visattn-copy").onclick = () => {{
    const select = () => window.getSelection().selectAllChildren(code);
    if (navigator.clipboard && window.isSecureContext) {{
      navigator.clipboard.writeText(link()).catch(select);
    }} else {{
      select();
    }}
  }};
}})();</script>"""


# The document's language, so that a screen reader reads a Chinese page with a Chinese voice
# (Streamlit writes <html lang="en"> whatever the page says). One static script per language.
_LANG_HTML = '<script>document.documentElement.lang = "{html_lang}";</script>'
HTML_LANG = {"en": "en", "zh": "zh-CN"}  # the page's language → the document's (BCP 47)


def _link(slot) -> None:
    """The sidebar's "link to this view" box: the address of the view as it is now, and a copy
    button; and the document's language."""
    with slot:
        st.divider()
        st.markdown(t("common.link_title"), help=t("common.link_help"))
        st.html(
            _LINK_HTML.format(copy=html.escape(t("common.link_copy")), lang=lang()),
            unsafe_allow_javascript=True,
        )
        st.html(_LANG_HTML.format(html_lang=HTML_LANG[lang()]), unsafe_allow_javascript=True)


def rerun_alone(fn: Callable) -> Callable:
    """A part of a page that reruns alone (``st.fragment``) when one of its own controls changes;
    afterwards the URL and the link box are brought up to date, as at the end of a whole run. Rule:
    a control inside it may only change what it draws (a control that others depend on lives
    outside it)."""

    @wraps(fn)
    def body(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            if url_state.partial_rerun():
                _reset_notice(*url_state.finish(), st)  # shown at the part's end

    return st.fragment(body)


def section(fn: Callable) -> Callable:
    """A lesson section (:func:`rerun_alone`) in its own box, predict-then-reveal's unit."""

    @wraps(fn)
    def boxed(*args, **kwargs):
        with lecture_modes.section(fn.__name__):
            return fn(*args, **kwargs)

    return rerun_alone(boxed)


def tabs(control: Control) -> dict[Any, Any]:
    """One tab per option of ``control`` (a page's sections), labelled from ``control.labels``;
    returns option → the panel to draw that section in, in the options' order. The open tab is the
    control's value, in the URL. Every panel is drawn, below the tab bar, and a style rule
    (:func:`panel_rule`) hides each panel whose tab is not selected: the browser shows the panel of
    the tab clicked at once, a panel it holds, while the tab bar reruns alone (:func:`_tab_bar`)
    to bring the control and the URL up to date. Mounting a section at each switch was most of
    a switch's time in the browser's main thread (a section's tables, metrics and sliders;
    ``benchmarks/interact.py``). The sections are not in Streamlit's own tab panels: those look for
    a focusable element in every mounted panel at each render, and in a hidden one that walks
    every node (with all four of the modern page's kept, every control of it got slower); a chart
    in a hidden panel is drawn when it first shows (ui/chart.js). The handout prints every
    section, one after another, each under its tab's name."""
    handout = lecture_modes.handout()
    if not handout:  # on paper, no tabs
        _tab_bar(control)
        st.html(panel_rule(control))
    panels = {option: st.container(key=panel_key(control, option)) for option in control.options}
    if handout:  # each section under its tab's name
        names = labeller(control.labels)
        for option, panel in panels.items():
            panel.subheader(names(option))
    return panels


def panel_key(control: Control, option: Any) -> str:
    """The key of ``option``'s panel (its CSS class: ``st-key-`` and the key)."""
    return f"{control.key}_panel_{option}"


def panel_rule(control: Control) -> str:
    """The style rule that hides the panel of each tab not selected in the browser: tab i of the
    tab bar (key ``control.key + "_tab"``) with ``aria-selected="false"`` hides the wrapper of
    option i's panel (the wrapper, not the panel alone, which would keep its gap in the page). It
    reads the tab bar's state in the browser, so a click shows its panel before the server has
    answered; it names no user text."""
    bar = f'.st-key-{control.key}_tab [role="tab"]'
    rules = []
    for i, option in enumerate(control.options, start=1):
        closed = f'{bar}:nth-child({i} of [role="tab"])[aria-selected="false"]'
        wrapper = f'[data-testid="stLayoutWrapper"]:has(> .st-key-{panel_key(control, option)})'
        rules.append(f".stMain:has({closed}) {wrapper}")
    return "<style>" + ",\n".join(rules) + " { display: none }</style>"


@rerun_alone
def _tab_bar(control: Control) -> None:
    """The tabs: Streamlit's stateful tabs, their own panels empty. The open tab is the control's
    (the URL's, a tour step's), and Streamlit's own state follows it; a tab opened in the browser
    sets the control (:func:`_tab_opened`)."""
    names = labeller(control.labels)
    labels = [names(option) for option in control.options]
    key = control.key + "_tab"
    st.session_state[key] = labels[control.options.index(st.session_state[control.key])]
    st.tabs(labels, key=key, on_change=partial(_tab_opened, control, key, labels))


def _tab_opened(control: Control, key: str, labels: list[str]) -> None:
    """The browser opened another tab (Streamlit's state ``key`` holds its label): the control
    takes the option it shows. A label no tab has (sent by a hostile tab) changes nothing."""
    opened = st.session_state[key]
    if opened in labels:
        st.session_state[control.key] = control.options[labels.index(opened)]


def controls_row():
    """A row for a section's controls, side by side (wrapping on a narrow screen): one flex
    container, where ``st.columns`` makes a block per column too, each a React element that every
    rerun of the section draws again (benchmarks/README.md: less of the browser's main thread per
    change of a slider)."""
    return st.container(horizontal=True, vertical_alignment="bottom")


def explain(text: str, fold: str | None = None) -> None:
    """Long explanations: shown normally, hidden in presenter mode (the figures stay). ``fold``:
    the locale key of the title of an expander to fold them into (open on a handout): a page's or
    a section's opening prose, so that the first screen reaches the figure the lesson starts
    from."""
    if presenter():
        return
    if fold is None:
        st.markdown(text)
        return
    with st.expander(t(fold), expanded=lecture_modes.handout()):
        st.markdown(text)


TITLE_CHARS = 40  # of a text shown in the title of the fold it is typed in


def title_text(control: Control) -> str:
    """The text of ``control`` (a text box's) as the title of its fold shows it: on one line, cut
    to :data:`TITLE_CHARS`, escaped."""
    text = " ".join(str(st.session_state.get(control.key, control.default)).split())
    if len(text) > TITLE_CHARS:
        text = text[: TITLE_CHARS - 1] + "…"
    return escape(text)


def fold(title: str, opened: bool = False):
    """An expander of the page's own content (a table of sources, the article's printed numbers):
    closed unless ``opened``, and open on a handout, which prints every number the page shows."""
    return st.expander(title, expanded=opened or lecture_modes.handout())


def folded_controls(title: str, controls: Iterable[Control]):
    """An expander for a section's secondary controls (a reading, a colour scale), so that the
    first screen reaches the figure they tune; open when one of them is off its default (a link's
    setting shows where it is set) and on a handout."""
    changed = any(_kept(c, st.session_state.get(c.key, c.default)) != c.default for c in controls)
    return st.expander(title, expanded=changed or lecture_modes.handout())


def _kept(control: Control, value: Any) -> Any:
    """``value`` in the form of ``control``'s default (a matrix: rows of floats, as tuples)."""
    return tuple(tuple(row) for row in value) if control.matrix else value


def when_open(label: str, key: str):
    """An expander whose content is drawn only while it is open (opening or closing it reruns the
    section it is in), so that a control above it redraws nothing inside it while it is closed;
    the handout prints it open. Returns the expander when open, else None."""
    box = st.expander(label, expanded=lecture_modes.handout(), key=key, on_change="rerun")
    return box if box.open else None
