"""The real thing: every page opened by its URL as the first request to a freshly started server."""

import json

import pytest
from apptest_util import ROOT
from browser_util import chromium, require_browser, streamlit_server, wait_rendered

pytestmark = pytest.mark.browser

# (URL path, page id, expects a Plotly chart)
PAGES = [("", "home", False), ("kernel_regression", "kernel", True), ("single_head", "single_head", True),
         ("multi_head", "multi_head", True), ("positional_encoding", "positional", True),
         ("pretrained", "pretrained", True)]


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
