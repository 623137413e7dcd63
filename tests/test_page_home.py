"""Home page through AppTest: cards link to every view, both languages, tampered URL."""

from apptest_util import PAGES, assert_clean, run_page, texts, warnings


def test_home_defaults():
    at = run_page("home")
    assert_clean(at)
    assert "visattn" in at.title[0].value
    links = {e.proto.page for e in at.get("page_link")}  # URL path names; the home page's is ""
    assert links == {""} | {
        path.removeprefix("pages/").removesuffix(".py")
        for path in PAGES.values()
        if path != "app.py"
    }
    assert not warnings(at)


def test_home_in_chinese():
    at = run_page("home", {"lang": "zh"})
    assert_clean(at)
    assert "注意力" in texts(at)


def test_home_tampered_url():
    at = run_page("home", {"lang": "klingon", "present": "maybe", "zzz": "1"})
    assert_clean(at)
    (w,) = warnings(at)
    assert "lang" in w and "present" in w and "zzz" in w
    assert at.title[0].value.startswith("visattn")  # English fallback


def test_parameter_names_are_escaped():
    """Unknown parameter names are echoed in the notice with every markdown character escaped (the
    browser test checks that nothing is fetched or linked)."""
    at = run_page("home", {"![t](http://127.0.0.1:9/p.png)": "1", "[Click](http://x)": "1"})
    assert_clean(at)
    (w,) = warnings(at)
    assert r"\!\[t\]\(" in w and r"\[Click\]\(" in w and "http\u200b" in w, w


def test_notice_is_bounded():
    """A link with many long unknown names gets one short notice, not a wall of text."""
    at = run_page("home", {f"{'x' * 300}{i}": "1" for i in range(50)})
    (w,) = warnings(at)
    assert len(w) < 1000


def test_url_numbers_round_trip_exactly():
    from ui import url_state

    for v in (62.123456789, 1e-200, 0.1 + 0.2, -3.0, 123456789012.5):
        p = url_state.param_for(1.0)
        assert p.parse(p.dump(v)) == v
    m = [[0.1 + 0.2, 1e-200], [62.123456789, -7.0]]
    assert url_state.decode_matrix(url_state.encode_matrix(m)) == m
