"""Home page through AppTest: cards link to every view, both languages, tampered URL."""

from apptest_util import PAGES, assert_clean, run_page, texts, warnings

from visattn import lecture


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


# --- the speaker view (?speaker=1), on the home page ----------------------------------------------
def speaker_html(at) -> str:
    found = [h.proto.body for h in at.get("html") if 'id="visattn-speaker"' in h.proto.body]
    return found[0] if found else ""


def test_speaker_view_shows_the_steps_notes_and_the_next_title():
    at = run_page("home", {"speaker": "1", "tour": "intro", "step": "3"})
    assert_clean(at)
    html = speaker_html(at)
    assert f"Step 3 / {len(lecture.INTRO)}" in html and "Q, K and V from the same X" in html
    assert "Let the class compute q₁ by hand" in html  # step 3's notes
    assert "Next: Scores, softmax, weights" in html
    assert [e.value for e in at.title] == ["Speaker view"]  # and not the home page's cards


def test_speaker_view_in_chinese_and_without_a_tour():
    at = run_page("home", {"speaker": "1", "tour": "intro", "lang": "zh"})
    assert_clean(at)
    assert f"第 1 / {len(lecture.INTRO)} 步" in speaker_html(
        at
    ) and "下一步：核回归" not in speaker_html(at)
    assert "下一步：估计值：权重乘以值" in speaker_html(at)
    alone = run_page("home", {"speaker": "1"})
    assert_clean(alone)
    assert not speaker_html(alone) and "No tour is open" in texts(alone)


def test_a_lecturers_notes_are_escaped_in_the_speaker_view():
    from visattn import tour as model

    step = model.Step(
        "kernel_regression", title="<b>x</b>", notes="</div><script>alert(1)</script>"
    )
    at = run_page("home", {"speaker": "1", "tour": model.to_link(model.Tour((step,)))})
    assert_clean(at)
    html = speaker_html(at)
    assert "<script>alert" not in html and "&lt;/div&gt;&lt;script&gt;alert(1)" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_the_home_path_walks_every_lesson_page():
    """The path on the home page has one stop per lesson page (the registry's), the live training
    and today's LLMs included, in both languages."""
    from ui.i18n import catalogue
    from ui.registry import PAGES as REGISTRY

    lesson_pages = [page for page in REGISTRY if page.card is not None]
    for lang, training, modern in (
        ("en", "learns that head by gradient descent, live", "today's LLMs"),
        ("zh", "现场学会这个头", "当今大模型"),
    ):
        stops = catalogue(lang)["home.intro"].split("→ ")  # not "键→值对"
        assert len(stops) == len(lesson_pages), lang
        assert training in stops[-2] and modern in stops[-1], lang
