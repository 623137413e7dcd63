"""In Chinese, a user reads Chinese: every page's visible words (prose, labels, help, options,
alerts, table headers, figure titles, hovers, legends, colour bars) are Chinese except names,
symbols and the user's own or the lesson's quoted example words. Pages test their own bad inputs in
Chinese in ``test_page_<page>.py``."""

import re

import pytest
from apptest_util import (
    PAGES,
    assert_clean,
    chart_config,
    charts,
    english_words,
    run_page,
    visible_text,
)


@pytest.mark.parametrize("page", PAGES)  # a tabbed page draws every tab's panel (ui.frame.tabs)
def test_page_in_chinese_shows_no_english(page):
    at = run_page(page, {"lang": "zh"})
    assert_clean(at)
    assert len(visible_text(at)) > 20
    assert english_words(at) == {}


def test_the_detector_sees_english():
    at = run_page("home", {"lang": "en"})
    found = english_words(at)
    assert len(found) > 20, found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plotlys_own_words_follow_the_language(lang):
    """Every chart's config hands Plotly its toolbar's words in the page's language: the charts of
    ui.charts.show and the pretrained finder's st.plotly_chart alike."""
    at = run_page("pretrained", {"lang": lang})
    assert_clean(at)
    kinds = {chart.type for chart in charts(at)}
    assert kinds == {"bidi_component", "plotly_chart"}, kinds
    for chart in charts(at):
        config = chart_config(chart)
        words = config["locales"][config["locale"]]["dictionary"]
        assert words["Reset axes"] == ("重置坐标轴" if lang == "zh" else "Reset axes")
        if lang == "zh":
            assert all(re.search("[\u4e00-\u9fff]", text) for text in words.values()), words
        else:
            assert all(key == text for key, text in words.items())
