"""The lecture's modes of a page, from the URL: ``hide=1`` (predict, then reveal: the numbers
hidden until revealed section by section or chart by chart, ``hide=2`` the heatmaps' colours too),
``handout=1`` (a printable page: no widget chrome, print CSS), ``speaker=1`` (the speaker view, on
the home page); and the sidebar's lecture panel that switches them.

Every lesson section (``ui.frame.section``) is drawn in a box of its own (:func:`section`): a keyed
container, so CSS can scope a reveal to it (``.st-key-lec_sec_<name>``), with its reveal button at
the top. Revealing a section reveals the sections drawn inside it too. Only results are hidden:
metric values, table cells, dataframes, formulas with their numbers and the charts' numbers; the
inputs (sliders, number boxes, the data editors) stay readable.

The modes are this session's (URL and session state); a reveal is an action, kept in the session
only, not in the link, while the page stays the same (another page opens with its numbers hidden).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from visattn import lecture

from .. import address, url_state, widgets
from ..i18n import t
from . import export, tour

_REVEALED = "_lecture_revealed"  # what this session revealed: chart keys, "§<section>"; "*": all
_PAGE = "_lecture_page"  # the page the reveals were made on (a new page starts hidden)
_OPEN = "_lecture_open"  # the sections being drawn now, innermost last
_PARENTS = "_lecture_parents"  # {section: the section it is drawn in}, as the full runs found it
_DRAWN = "_lecture_drawn"  # the sections boxed in this run (a box's key is used once a run)
SECTION_KEY = "lec_sec_{}"  # a section's box (its CSS class: st-key-lec_sec_<name>)
SECTION_BUTTON = "lec_section_{}"  # its reveal button


def handout() -> bool:
    return bool(st.session_state.get(lecture.HANDOUT.key, False))


def speaker() -> bool:
    return bool(st.session_state.get(lecture.SPEAKER.key, False))


def hide_level() -> int:
    """0 shown, 1 numbers hidden, 2 numbers and heatmap colours hidden (never in a handout)."""
    return 0 if handout() else int(st.session_state.get(lecture.HIDE.key) or 0)


def revealed() -> set[str]:
    return st.session_state.setdefault(_REVEALED, set())


def _open() -> list[str]:
    return st.session_state.setdefault(_OPEN, [])


def _parents() -> dict[str, str]:
    return st.session_state.setdefault(_PARENTS, {})


def section_revealed(name: str) -> bool:
    """Whether section ``name``, or a section it is drawn in, is revealed (a section rerun alone
    finds the sections around it in what the full runs saw)."""
    seen = set()
    while name and name not in seen:
        if "§" + name in revealed():
            return True
        seen.add(name)
        name = _parents().get(name, "")
    return "*" in revealed()


def hidden(name: str) -> bool:
    """Whether chart ``name`` is drawn without its numbers now: hiding is on and neither the chart
    nor the section it is drawn in (nor one around that) is revealed."""
    if hide_level() == 0 or {"*", name} & revealed():
        return False
    return not (_open() and section_revealed(_open()[-1]))


def reveal(name: str) -> None:
    revealed().add(name)


def toggle_section(name: str) -> None:
    """A section's button: reveal its numbers, or hide them again."""
    revealed().symmetric_difference_update({"§" + name})


def reveal_all() -> None:
    revealed().add("*")


def hide_again() -> None:
    revealed().clear()


# Predict, then reveal: the results blurred until revealed — metric values, table cells, a
# dataframe (a canvas: the whole element; a data editor, whose cells are not read-only, stays
# readable) and, in a section, its displayed formulas (ui.formulas, written with this input's
# numbers; the symbols inline in the prose stay readable); the same of an element that follows a
# figure's control (ui.follow).
RESULTS = (
    '[data-testid="stMetricValue"]',
    '[data-testid="stMetricDelta"]',
    '[data-testid="stTable"] td',
    '[data-testid="stTable"] tbody th',
    '[data-testid="stDataFrame"]:not(:has([aria-readonly="false"]))',
    '[class*="st-key-lec_sec_"] .katex-display',
    ".visattn-metric-value",
    ".visattn-table td",
    ".visattn-table tbody th",
)
HIDE_CSS = (
    ",\n".join(RESULTS)
    + " { filter: blur(0.55em); user-select: none; }\n"
    + '[data-testid="stElementContainer"]:has(.visattn-reveal) { display: none; }'
)
# A revealed section: its results (those of the sections inside it too) readable again.
REVEAL_CSS = """<style class="visattn-reveal">.st-key-{key} :is({results}) {{
  filter: none !important; user-select: auto !important; }}</style>"""
# The handout: the page as a document. No sidebar, header, toolbar or widget (an element holding an
# input, a button, a slider or a radio group; of a chart, a metric (its help icon is a button) or
# an element that follows a figure's control, only its own buttons), no chart toolbar; a table is
# a static one (ui.charts.table) and a fold is open; on paper the whole page flows over as many
# sheets as it takes, and a figure is never cut between two.
HANDOUT_CSS = """[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stHeader"], [data-testid="stToolbar"],
[data-testid="stDecoration"], [data-testid="stStatusWidget"], .modebar-container, .visattn-csv,
[data-testid="stElementToolbar"],
[data-testid="stElementContainer"]:not(:has(
.js-plotly-plot, .visattn-follow, [data-testid="stMetric"]
)):has(
input, button, textarea, select, [role="slider"], [role="radiogroup"], [data-testid="stDataFrame"]
) { display: none !important; }
[data-testid="stMain"] .block-container { padding-top: 1rem; max-width: 100%; }
@media print {
  @page { size: A4 landscape; margin: 10mm; }
  html, body, [data-testid="stApp"], [data-testid="stAppViewContainer"], [data-testid="stMain"],
  [data-testid="stMainBlockContainer"] { height: auto !important; overflow: visible !important;
    position: static !important; }
  .js-plotly-plot, [data-testid="stTable"] { break-inside: avoid; }
}"""


def install() -> None:
    """The styles of the modes that are on (called once per full run by the frame)."""
    st.session_state[_OPEN] = []  # a new full run: no section drawn yet
    st.session_state[_DRAWN] = set()
    ctx = get_script_run_ctx()
    here = ctx.page_script_hash if ctx else ""
    if st.session_state.setdefault(_PAGE, here) != here:  # another page: its numbers hidden anew
        revealed().clear()
        st.session_state[_PAGE] = here
    css = [tour.BAR_STYLE, tour.SPEAKER_STYLE] if speaker() else [tour.BAR_STYLE]
    if handout():
        css.append(HANDOUT_CSS)
    if hide_level() and "*" not in revealed():
        css.append(HIDE_CSS)
    st.html("<style>" + "\n".join(css) + "</style>")


def reveal_button(name: str) -> None:
    """Under a hidden chart: reveal its numbers."""
    st.button(
        t("lecture.reveal"),
        on_click=reveal,
        args=(name,),
        key=f"reveal_{name}",
        icon=":material/visibility:",
    )


@contextmanager
def section(name: str) -> Iterator[None]:
    """Draw lesson section ``name`` in its box; with predict-then-reveal on, its button first (and,
    once it is revealed, the style that shows its results: drawn inside the section, so the
    section's own rerun brings it up to date)."""
    drawn = st.session_state.setdefault(_DRAWN, set())
    if _open():
        _parents()[name] = _open()[-1]
    elif url_state.partial_rerun():
        drawn.clear()  # a section rerun alone: its run starts here
    else:
        _parents().pop(name, None)  # drawn at the top of the page this time
    _open().append(name)
    try:
        if name in drawn:  # drawn twice in one run: the second shares the first one's reveal
            yield
            return
        drawn.add(name)
        with st.container(key=SECTION_KEY.format(name)):
            if hide_level() and "*" not in revealed():
                _section_button(name)
            yield
    finally:
        _open().pop()


def _section_button(name: str) -> None:
    """Reveal (or hide again) this section; nothing while a section around it is revealed."""
    own = "§" + name in revealed()
    if not own and section_revealed(name):
        return
    if own:
        css = REVEAL_CSS.format(key=SECTION_KEY.format(name), results=", ".join(RESULTS))
        st.markdown(css, unsafe_allow_html=True)
    st.button(
        t("lecture.hide_section") if own else t("lecture.reveal_section"),
        on_click=toggle_section,
        args=(name,),
        key=SECTION_BUTTON.format(name),
        icon=":material/visibility_off:" if own else ":material/visibility:",
        help=t("lecture.reveal_section_help"),
    )


def sidebar(slot, page_id: str) -> None:
    """The sidebar's lecture panel: predict-then-reveal, the slide format, the handout, the tour."""
    if handout() or speaker():
        return
    with slot, st.expander(t("lecture.panel"), expanded=bool(tour.keep())):
        widgets.segmented(lecture.HIDE, t("lecture.hide"), help=t("lecture.hide_help"))
        if hide_level():
            show_all, again = st.columns(2)
            show_all.button(t("lecture.reveal_all"), on_click=reveal_all, key="lec_reveal_all")
            again.button(t("lecture.hide_again"), on_click=hide_again, key="lec_hide_again")
        widgets.segmented(lecture.SLIDE_FORMAT, t("lecture.slide"), help=t("lecture.slide_help"))
        export.slides_button(page_id)
        export.zip_button(page_id)
        address.link(t("lecture.handout"), "lec_handout", handout="1")
        st.divider()
        st.markdown(t("lecture.tour_title"))
        tour.panel(page_id)
