"""The lecture's modes of a page, from the URL: ``hide=1`` (predict, then reveal: the numbers
hidden until revealed chart by chart, ``hide=2`` the heatmaps' colours too), ``handout=1`` (a
printable page: no widget chrome, print CSS), ``speaker=1`` (the speaker view, on the home page);
and the sidebar's lecture panel that switches them.

The modes are this session's (URL and session state); a reveal is an action, kept in the session
only, not in the link.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from visattn.lessons import lecture as lesson

from . import controls as widgets
from . import export, tour
from .i18n import t
from .registry import BY_ID

_REVEALED = "_lecture_revealed"  # chart names revealed in this session; "*": all


def handout() -> bool:
    return bool(st.session_state.get(lesson.HANDOUT.key, False))


def speaker() -> bool:
    return bool(st.session_state.get(lesson.SPEAKER.key, False))


def hide_level() -> int:
    """0 shown, 1 numbers hidden, 2 numbers and heatmap colours hidden (never in a handout)."""
    return 0 if handout() else int(st.session_state.get(lesson.HIDE.key, 0))


def revealed() -> set[str]:
    return st.session_state.setdefault(_REVEALED, set())


def hidden(name: str) -> bool:
    """Whether chart ``name`` is drawn without its numbers now."""
    return hide_level() > 0 and not ({"*", name} & revealed())


def reveal(name: str) -> None:
    revealed().add(name)


def reveal_all() -> None:
    revealed().add("*")


def hide_again() -> None:
    revealed().clear()


# Predict, then reveal: metric values and table cells blurred until everything is revealed.
HIDE_CSS = """[data-testid="stMetricValue"], [data-testid="stMetricDelta"],
[data-testid="stTable"] td, [data-testid="stTable"] tbody th {
  filter: blur(0.55em); user-select: none; }"""
# The handout: the page as a document. No sidebar, header, toolbar or widget (an element holding an
# input, a button, a slider or a radio group), no chart toolbar; on paper the whole page flows over
# as many sheets as it takes, and a figure is never cut between two.
HANDOUT_CSS = """[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stHeader"], [data-testid="stToolbar"],
[data-testid="stDecoration"], [data-testid="stStatusWidget"], .modebar-container,
[data-testid="stElementToolbar"], [data-testid="stElementContainer"]:not(:has(.js-plotly-plot)):has(
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
    css = [tour.BAR_STYLE, tour.SPEAKER_STYLE] if speaker() else [tour.BAR_STYLE]
    if handout():
        css.append(HANDOUT_CSS)
    if hide_level() and "*" not in revealed():
        css.append(HIDE_CSS)
    st.html("<style>" + "\n".join(css) + "</style>")


def reveal_button(name: str) -> None:
    """Under a hidden chart: reveal its numbers."""
    st.button(t("lecture.reveal"), on_click=reveal, args=(name,), key=f"reveal_{name}", icon="👁")


def _here(page_id: str, **extra: str) -> str:
    """This view's link (relative to the app's root) with ``extra`` parameters."""
    params = {k: st.query_params.get(k) for k in st.query_params} | extra
    page = BY_ID[page_id]
    return f"./{page.url_path}?{urlencode(params)}"


def sidebar(slot, page_id: str) -> None:
    """The sidebar's lecture panel: predict-then-reveal, the slide format, the handout, the tour."""
    if handout() or speaker():
        return
    with slot, st.expander(t("lecture.panel"), expanded=bool(tour.keep())):
        widgets.segmented(lesson.HIDE, t("lecture.hide"), help=t("lecture.hide_help"))
        if hide_level():
            show_all, again = st.columns(2)
            show_all.button(t("lecture.reveal_all"), on_click=reveal_all, key="lec_reveal_all")
            again.button(t("lecture.hide_again"), on_click=hide_again, key="lec_hide_again")
        widgets.segmented(lesson.SLIDE_FORMAT, t("lecture.slide"), help=t("lecture.slide_help"))
        export.slides_button(page_id)
        export.zip_button(page_id)
        tour.link(t("lecture.handout"), _here(page_id, handout="1"), new_tab=True)
        st.divider()
        st.markdown(t("lecture.tour_title"))
        tour.panel(page_id)
