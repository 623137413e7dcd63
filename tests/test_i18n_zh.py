"""In Chinese, a user reads Chinese: every page's visible words (prose, labels, help, options,
alerts, table headers, figure titles, hovers, legends, colour bars) are Chinese except names,
symbols and the user's own or the lesson's quoted example words. Pages test their own bad inputs in
Chinese in ``test_page_<page>.py``."""

import pytest
from apptest_util import PAGES, assert_clean, english_words, run_page, visible_text


@pytest.mark.parametrize("page", list(PAGES))
def test_page_in_chinese_shows_no_english(page):
    at = run_page(page, {"lang": "zh"})
    assert_clean(at)
    assert len(visible_text(at)) > 20
    assert english_words(at) == {}


def test_the_detector_sees_english():
    at = run_page("home", {"lang": "en"})
    found = english_words(at)
    assert len(found) > 20, found
