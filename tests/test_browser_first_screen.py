"""The first screen: at 1280×720 every page opens with the figure its lesson starts from in view,
in English and Chinese, for a reader and on a projector (where the page scrolls to its first
figure itself: ui/lecture/tour.py), each with the document's language set (<html lang>, for screen
readers). The pages come from the registry; home, with no lesson, has cards."""

import pytest
from browser_util import chromium, require_browser, settled_value, streamlit_server, wait_rendered

from ui.frame import HTML_LANG
from ui.registry import PAGES

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
SHOWN = 120  # px of the figure at least on the first screen: its title and its first rows
# the first chart that shows (a tab's closed panel holds charts of no height): its top and height
# in the window as it opened
FIRST_FIGURE = """() => {
  const charts = Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'))
    .filter((chart) => chart.getBoundingClientRect().height > 0);
  if (!charts.length) return null;
  const box = charts[0].getBoundingClientRect();
  return { top: Math.round(box.top), height: Math.round(box.height) };
}"""
LESSONS = [p for p in PAGES if p.lesson is not None]


@pytest.mark.parametrize("present", [False, True], ids=["reader", "projector"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_opens_on_its_first_figure(lang, present):
    require_browser()
    query = f"lang={lang}" + ("&present=1" if present else "")
    where, misses = {}, {}
    with streamlit_server() as url, chromium(WIDTH, HEIGHT) as page:
        for lesson_page in LESSONS:
            page.goto(f"{url}/{lesson_page.url_path}?{query}")
            wait_rendered(page, True)
            # a screen reader reads the page in its language
            page.wait_for_function(
                f"() => document.documentElement.lang === '{HTML_LANG[lang]}'", timeout=30_000
            )
            first = settled_value(page, FIRST_FIGURE)
            where[lesson_page.id] = first
            shown = min(first["height"], SHOWN)
            if not 0 <= first["top"] <= HEIGHT - shown:
                misses[lesson_page.id] = first
    print(lang, "projector" if present else "reader", where)  # pytest -s: the numbers
    assert not misses, f"first figure not on the first {WIDTH}×{HEIGHT} screen: {misses}"


PHONE = 390, 844
# the sidebar's width and how far the page scrolls sideways
PHONE_LAYOUT = """() => {
  const side = document.querySelector('[data-testid="stSidebar"]');
  const doc = document.scrollingElement;
  return { sidebar: side ? Math.round(side.getBoundingClientRect().width) : 0,
           sideways: doc.scrollWidth - doc.clientWidth };
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_every_page_opens_with_the_sidebar_closed_and_no_sideways_scroll(lang):
    """At 390×844 the sidebar starts closed (it covered ~77 % of the screen), and no page is wider
    than the screen."""
    require_browser()
    found = {}
    with streamlit_server() as url, chromium(*PHONE) as page:
        for each in PAGES:
            page.goto(f"{url}/{each.url_path}?lang={lang}")
            wait_rendered(page, each.lesson is not None)
            found[each.id] = settled_value(page, PHONE_LAYOUT)
    print(lang, found)
    wrong = {k: v for k, v in found.items() if v["sidebar"] > 0 or v["sideways"] > 0}
    assert not wrong, f"at {PHONE[0]}×{PHONE[1]}: {wrong}"
