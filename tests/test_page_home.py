"""Home page through AppTest: cards link to every view, both languages, tampered URL."""

from apptest_util import PAGES, assert_clean, run_page, texts, warnings


def test_home_defaults():
    at = run_page("home")
    assert_clean(at)
    assert "visattn" in at.title[0].value
    links = {e.proto.page for e in at.get("page_link")}  # URL path names; the home page's is ""
    assert links == {""} | {path.removeprefix("pages/").removesuffix(".py") for path in PAGES.values() if path != "app.py"}
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
