"""The real thing: every page opened by its URL as the first request to a freshly started server."""

import json

import pytest
from apptest_util import ROOT
from browser_util import chromium, require_browser, streamlit_server, wait_rendered

from ui.registry import PAGES as REGISTRY

pytestmark = pytest.mark.browser

# (URL path, page id, expects a Plotly chart): every page of the app draws one, but home
PAGES = [(p.url_path, p.id, p.id != "home") for p in REGISTRY]


def title_of(pid: str, lang: str) -> str:
    nav = json.loads((ROOT / "ui" / "locales" / lang / f"{pid}.json").read_text(encoding="utf-8"))["nav"]
    return f"{nav} · visattn"


@pytest.mark.parametrize("path,pid,chart", PAGES, ids=[p[1] for p in PAGES])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_deep_link_on_fresh_server(path, pid, chart, lang, tmp_path):
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/{path}?lang={lang}")
        wait_rendered(page, chart)
        page.screenshot(path=str(tmp_path / f"{pid}_{lang}.png"), full_page=True)
        assert page.title() == title_of(pid, lang)
        assert page.locator('[data-testid="stException"]').count() == 0
        if chart:
            assert page.locator(".js-plotly-plot").count() >= 1


FIGURE_DATA = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
    el => (el.data || []).map(tr => JSON.stringify([tr.type, tr.z ?? null, tr.y ?? null])))"""


def test_link_reproduces_the_view():
    """A view changed by clicking, reopened from its link in a new browser session, draws the same figures."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/multi_head?lang=en")
        wait_rendered(page, True)
        page.get_by_text("Layer 1", exact=True).click()            # a non-default setting, made by the user
        page.wait_for_function("() => location.search.includes('mh_layer=1')", timeout=60_000)
        wait_rendered(page, True)
        link = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').inner_text().strip()
        assert "mh_layer=1" in link and link.startswith(url)
        made = page.evaluate(FIGURE_DATA)
        other = page.context.browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        other.goto(link)
        wait_rendered(other, True)
        assert other.evaluate(FIGURE_DATA) == made
        assert other.locator('[data-testid="stException"]').count() == 0


def test_presenter_mode_on_a_projector(tmp_path):
    """1280×720 with ?present=1: larger text than normal, the figures still there, no exception."""
    require_browser()
    sizes = {}
    with streamlit_server() as url, chromium(1280, 720) as page:
        for present in ("0", "1"):
            page.goto(f"{url}/multi_head?lang=en&present={present}")
            wait_rendered(page, True)
            page.screenshot(path=str(tmp_path / f"presenter_{present}.png"))
            sizes[present] = page.evaluate("""() => {
                const p = document.querySelector('[data-testid="stMarkdownContainer"] p');
                const h = document.querySelector('h1');
                return [parseFloat(getComputedStyle(p).fontSize), parseFloat(getComputedStyle(h).fontSize)];
            }""")
            assert page.locator(".js-plotly-plot").count() >= 1
            assert page.locator('[data-testid="stException"]').count() == 0
    assert sizes["1"][0] > sizes["0"][0] * 1.15, sizes   # body text
    assert sizes["1"][1] > sizes["0"][1], sizes           # the title
