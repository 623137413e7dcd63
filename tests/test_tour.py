"""Tours: the Tour/Step model (edit, reorder, delete), one link and the JSON file read
back exactly, every bound, tampered links refused with an InputError, the built-in tour's steps
valid, and through AppTest: the URL's tour and step, "add this view", a lecturer's words
escaped."""

from __future__ import annotations

import base64
import json
import random
import zlib
from urllib.parse import urlencode

import numpy as np
import pytest
from apptest_util import assert_clean, figures, run_page, warnings
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.i18n import catalogue
from ui.lecture.tour import _CHARTS as CHARTS
from ui.registry import BY_ID, PAGES
from visattn import lecture
from visattn import tour as model
from visattn.errors import InputError
from visattn.tour import Step, Tour

A = Step("kernel_regression", "kr_q=2.5", "chart_kernel_weights_bars", "Weights", "Ask first.")
B = Step("single_head", "sh_view=sqrt", "", "√d_k", "")
C = Step("decoder", "", "", "", "Mask.\nThen cache.")


def test_add_edit_move_delete():
    tour = Tour().add(A).add(C).add(B, after=1)  # B lands between A and C
    assert [s.page for s in tour.steps] == ["kernel_regression", "single_head", "decoder"]
    tour = tour.edit(2, "Why scale", "Variance d_k.")
    assert tour.step(2).title == "Why scale" and tour.step(2).notes == "Variance d_k."
    assert tour.step(2).query == "sh_view=sqrt"  # the view stays
    moved = tour.move(3, -2)
    assert [s.page for s in moved.steps] == ["decoder", "kernel_regression", "single_head"]
    assert moved.move(1, -5).steps == moved.steps  # held within the tour
    assert [s.page for s in tour.delete(1).steps] == ["single_head", "decoder"]
    assert tour.step(0) == tour.step(1) and tour.step(99) == tour.step(3)


def test_params_of_a_step():
    assert A.params() == {"kr_q": "2.5"}
    assert model.view_query({"kr_q": "1", "lang": "zh", "tour": "x", "step": "2"}, {"lang"}) == (
        "kr_q=1&tour=x&step=2"
    )
    assert model.view_query({"kr_q": "1", "tour": "x"}, lecture.LECTURE_KEYS) == "kr_q=1"


words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
steps = st.builds(
    Step,
    st.sampled_from([p.id for p in BY_ID.values()]),
    st.sampled_from(["", "kr_q=2.5", "sh_view=sqrt&sh_temp=0.5", "dec_text=a%26b%3Dc"]),
    st.sampled_from(["", "chart_worked_x", "chart_decoder_kv_cache"]),
    words,
    words,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(steps, max_size=8))
def test_link_and_file_read_back_exactly(items):
    tour = Tour(tuple(items))
    link = model.to_link(tour)
    assert link.startswith(model.LINK_PREFIX) and len(link) <= model.MAX_LINK
    assert set(link[len(model.LINK_PREFIX) :]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )  # safe in a URL as it is
    assert model.from_link(link) == tour
    assert model.from_json(model.to_json(tour)) == tour


def test_bounds():
    long_title = Step("kernel_regression", title="x" * (model.MAX_TITLE + 1))
    long_notes = Step("kernel_regression", notes="x" * (model.MAX_NOTES + 1))
    for step, code in ((long_title, "tour_title_long"), (long_notes, "tour_notes_long")):
        with pytest.raises(InputError) as err:
            Tour().add(step)
        assert err.value.code == code
    assert Tour().add(Step("kernel_regression", title="x" * model.MAX_TITLE)).step(1).title
    full = Tour((A,) * model.MAX_STEPS)
    with pytest.raises(InputError) as err:
        full.add(B)
    assert err.value.code == "tour_full" and err.value.params["limit"] == model.MAX_STEPS
    with pytest.raises(InputError) as err:
        Tour().add(Step("kernel_regression", "k=" + "1" * model.MAX_QUERY))
    assert err.value.code == "tour_view_long"
    # random notes do not compress: a tour that no longer fits in a link is refused
    noise = random.Random(26)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    notes = ["".join(noise.choices(alphabet, k=model.MAX_NOTES)) for _ in range(12)]
    big = Tour(tuple(Step("kernel_regression", notes=text) for text in notes))
    with pytest.raises(InputError) as err:
        model.to_link(big)
    assert err.value.code == "tour_link_long"


FIELDS = ("page", "query", "figure", "title", "notes")


def packed(rows) -> str:
    raw = zlib.compress(json.dumps(rows).encode())
    return model.LINK_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


BAD_LINKS = [
    "",
    "intro2",
    "t1.",
    "t1.!!!!",
    "t1." + base64.urlsafe_b64encode(b"not zlib").decode(),
    packed({"steps": []}),
    packed([["kernel_regression", "", ""]]),
    packed([["Kernel!", "", "", "", ""]]),
    packed([["kernel_regression", "<b>=1", "", "", ""]]),
    packed([["kernel_regression", "", "a b", "", ""]]),
    packed([["kernel_regression", "", "", 5, ""]]),
    packed([["kernel_regression", "", "", "", ""]] * (model.MAX_STEPS + 1)),
    # a 37-character link nesting hundreds of lists (json.loads would recurse past Python's limit)
    "t1.eNqLjh4Fo2AUDHcQOwpGwSgY9gAAbqbO3w",
    packed([[["kernel_regression", "", "", "", ""]]]),
    # a small link that would unpack to far more than any tour (a zip bomb)
    model.LINK_PREFIX
    + base64.urlsafe_b64encode(zlib.compress(b"[" + b" " * 10_000_000 + b"]", 9))
    .decode()
    .rstrip("="),
]


@pytest.mark.parametrize("link", BAD_LINKS, ids=range(len(BAD_LINKS)))
def test_tampered_links_are_refused(link):
    with pytest.raises(InputError) as err:
        model.from_link(link)
    assert err.value.code in ("tour_bad", "tour_full")


DEEP_FILE = '{"visattn_tour": 1, "steps": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(
    "text", ["", "[]", '{"visattn_tour": 2, "steps": []}', "{" * 50, DEEP_FILE]
)
def test_bad_files_are_refused(text):
    with pytest.raises(InputError):
        model.from_json(text)


def test_the_builtin_tour_follows_the_articles():
    steps = lecture.INTRO.steps
    assert 10 <= len(steps) <= 14
    # every lesson page, in the registry's order (the home page's path), the live training and
    # today's LLMs included
    order = [page.id for page in PAGES if page.card is not None]
    assert order[-2:] == ["training", "modern_attention"]
    assert [p for i, p in enumerate(s.page for s in steps) if i == 0 or steps[i - 1].page != p] == (
        order
    )
    assert any(s.params().get("sh_view") == "sqrt" for s in steps)  # √d_k has its own steps
    for step in steps:
        assert model.check_step(step) == step and step.page in BY_ID
    assert model.from_link(model.to_link(Tour(steps))) == Tour(steps)


# --- through the app ------------------------------------------------------------------------------
def bar(at) -> str:
    """The tour bar's HTML (the st.html element holding it), or ""."""
    found = [h.proto.body for h in at.get("html") if 'id="visattn-lecture"' in h.proto.body]
    return found[0] if found else ""


def test_the_variance_note_says_independent_zero_mean_entries():
    """Var(q·k) = d_k needs the entries independent and zero-mean (with unit variance)."""
    step = next(s for s in lecture.INTRO.steps if s.params().get("sh_view") == "sqrt")
    assert "independent, zero-mean, unit-variance" in catalogue("en")[step.notes]
    assert "相互独立、均值为 0、方差为 1" in catalogue("zh")[step.notes]
    rng = np.random.default_rng(0)
    d_k = 64
    q, k = rng.standard_normal((2, 20_000, d_k))
    assert abs((q * k).sum(axis=1).var() / d_k - 1) < 0.05


def test_the_todays_llm_step_opens_the_cache_chart():
    (step,) = [s for s in lecture.INTRO.steps if s.page == "modern_attention"]
    at = run_page("modern_attention", step.params())
    assert_clean(at)
    assert step.params() == {"mo_sec": "cache"}
    assert step.figure in at.session_state[CHARTS]  # the charts this view drew, by key


def test_a_link_opens_the_builtin_tour_at_its_step():
    at = run_page("single_head", {"tour": "intro", "step": "4"})
    assert_clean(at)
    html = bar(at)
    assert 'data-step="4"' in html and f'data-total="{len(lecture.INTRO)}"' in html
    assert 'data-figure="chart_worked_weights"' in html
    assert f"Step 4 / {len(lecture.INTRO)}" in html and "Scores, softmax, weights" in html
    # Next opens step 5 (the √d_k view) with the tour; Prev step 3
    assert "./single_head?sh_view=sqrt&amp;lang=en&amp;tour=intro&amp;step=5" in html
    assert "./single_head?lang=en&amp;tour=intro&amp;step=3" in html
    assert dict(at.query_params) == {"tour": ["intro"], "step": ["4"]} or {
        k: at.query_params[k] for k in at.query_params
    } == {"tour": "intro", "step": "4"}


def test_a_link_naming_pages_by_their_former_ids_opens_them():
    """Tours packed before each page's id became its address's stem name the kernel-regression,
    positional-encoding and modern-attention pages "kernel", "positional" and "modern"; such a link
    (and such a file) still opens each step on its page."""
    old = [["kernel", "kr_q=2.5", "", "", ""], ["positional", "", "", "", ""]]
    old.append(["modern", "mo_sec=window", "", "", ""])
    current = [BY_ID[model.FORMER_PAGE_IDS[row[0]]] for row in old]
    tour = model.from_link(packed(old))
    assert [s.page for s in tour.steps] == [p.id for p in current]
    file = json.dumps(
        {"visattn_tour": 1, "steps": [dict(zip(FIELDS, row, strict=True)) for row in old]}
    )
    assert model.from_json(file) == tour
    at = run_page(current[1].id, {"tour": packed(old), "step": "2"})
    assert_clean(at)
    html = bar(at)
    for number, page in ((1, current[0]), (3, current[2])):  # Prev and Next, by today's address
        query = dict(tour.step(number).params()) | {"lang": "en", "tour": model.to_link(tour)}
        href = f"./{page.url_path}?" + urlencode(query | {"step": str(number)})
        assert href.replace("&", "&amp;") in html


def test_the_tour_in_chinese():
    at = run_page("kernel_regression", {"tour": "intro", "step": "1", "lang": "zh"})
    assert_clean(at)
    assert f"第 1 / {len(lecture.INTRO)} 步" in bar(at) and "注意力是加权平均" in bar(at)
    assert 'aria-disabled="true"' in bar(at)  # no step before the first


def test_a_lecturers_tour_is_escaped_everywhere():
    evil = Step(
        "kernel_regression", "", "", '<img src=x onerror=alert(1)>"', "**bold** [x](http://e.vil)"
    )
    at = run_page("kernel_regression", {"tour": model.to_link(Tour((evil, A)))})
    assert_clean(at)
    html = bar(at)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;&quot;" in html
    assert at.text_input(key="lec_title").value == evil.title  # the editor holds the words as typed
    assert at.text_area(key="lec_notes").value == evil.notes


@pytest.mark.parametrize("bad", ["t1.garbage", "x" * (model.MAX_LINK + 1), "nope"])
def test_a_tampered_tour_is_dropped_with_a_notice(bad):
    at = run_page("kernel_regression", {"tour": bad})
    assert_clean(at)
    assert warnings(at)  # which one: the tour could not be read, or the parameter was reset
    assert not bar(at)
    assert "tour" not in at.query_params


def add_view_script() -> None:
    """The "Add this view" button's callback, as a click calls it: with the address's query the
    browser sent (ui.address; the positions of the figures' sliders are there alone)."""
    import streamlit as st

    from ui import url_state
    from ui.lecture import tour
    from visattn import lecture

    url_state.start_run()
    url_state.bind("lang", "en", options=["en", "zh"])
    url_state.bind_controls(lecture.CONTROLS)
    tour.add_view(
        "kernel_regression", st.session_state.get("figure", ""), st.session_state["query"]
    )


def test_add_this_view_takes_the_browsers_address_less_the_lectures_parameters():
    at = AppTest.from_function(add_view_script)
    at.session_state["query"] = "kr_q=2.5&kr_sigma=0.6&lang=zh&tour=&step=3&hide=1"
    at.run()
    assert not at.exception
    packed = at.session_state["tour"]
    assert model.from_link(packed).steps == (Step("kernel_regression", "kr_q=2.5&kr_sigma=0.6"),)
    assert at.session_state["step"] == 1
    # a view past every bound is refused with the tour's message, the tour kept
    at.session_state["query"] = "kr_q=" + "9" * (model.MAX_QUERY * 4)
    at.run()
    assert at.session_state["_lecture_error"].code == "tour_view_long"
    assert at.session_state["tour"] == packed


def test_a_tours_step_is_edited_in_the_panel():
    packed = model.to_link(Tour((Step("kernel_regression", "kr_q=2.5"),)))
    at = run_page("kernel_regression", {"kr_q": "2.5", "tour": packed})
    at.text_input(key="lec_title").input("First look")
    at.text_area(key="lec_notes").input("Say why.")
    at.button(key="FormSubmitter:lec_edit-" + "Save title and notes").click().run()
    assert_clean(at)
    raw = at.query_params["tour"]
    tour = model.from_link(raw[0] if isinstance(raw, list) else raw)
    assert tour.step(1).title == "First look" and tour.step(1).notes == "Say why."


def test_a_bare_link_to_a_step_opens_its_view():
    at = run_page("home", {"tour": "intro", "step": "5"})
    assert_clean(at)
    assert 'data-open="./single_head?sh_view=sqrt&amp;lang=en&amp;tour=intro&amp;step=5"' in bar(at)
    here = run_page("single_head", {"tour": "intro", "step": "3"})  # already the step's view
    assert 'data-open=""' in bar(here)
    changed = run_page("single_head", {"tour": "intro", "step": "5", "sh_temp": "2"})
    assert 'data-open=""' in bar(changed)  # a view of its own (a step changed, then reloaded)


def test_brackets_inside_a_steps_words_are_not_nesting():
    """A title and notes may hold any brackets: only the JSON's own arrays and objects count."""
    words = Step("kernel_regression", title='[[[{"', notes=']]} \\ " [[[[[[[[[[')
    tour = Tour((words,))
    assert model.from_link(model.to_link(tour)).steps == (words,)
    assert model.from_json(model.to_json(tour)).steps == (words,)


def test_a_step_naming_no_page_of_this_app_says_so_and_opens_nothing():
    """A step whose page the app does not have: the bar names it and the page never reloads (a
    redirect there would open the same page again, each time in a new session)."""
    tour = model.to_link(Tour((Step("no_such_page", "kr_q=2"), B)))
    at = run_page("home", {"tour": tour, "step": "1"})
    assert_clean(at)
    assert 'data-open=""' in bar(at)
    shown = [w.replace("\\", "") for w in warnings(at)]  # markdown's escapes, as rendered
    assert any("no_such_page" in w for w in shown)
    zh = run_page("home", {"tour": tour, "step": "1", "lang": "zh"})
    assert any("no_such_page" in w.replace("\\", "") and "页面" in w for w in warnings(zh))


@pytest.mark.parametrize("page", ["home", "single_head"])
def test_a_step_whose_view_is_only_the_language_opens_without_a_loop(page):
    """A step whose query holds only lecture parameters (lang=zh): on its own page there is
    nothing to open; from another page, its page once."""
    tour = model.to_link(Tour((Step(page, "lang=zh"),)))
    here = run_page(page, {"tour": tour, "step": "1"})
    assert_clean(here)
    assert 'data-open=""' in bar(here)
    other = "single_head" if page == "home" else "home"
    there = run_page(other, {"tour": tour, "step": "1"})
    target = BY_ID[page].url_path
    assert f'data-open="./{target}?lang=en&amp;tour=' in bar(there)


@pytest.mark.parametrize("page", ["single_head", "home"])
def test_the_lecture_in_chinese_shows_no_english(page):
    from apptest_util import english_words

    params = {"lang": "zh", "tour": "intro", "step": "4", "hide": "1"}
    if page == "home":
        params["speaker"] = "1"
    at = run_page(page, params)
    assert_clean(at)
    assert english_words(at) == {}


def tour_of(at) -> Tour:
    raw = at.query_params["tour"]
    return model.from_link(raw[0] if isinstance(raw, list) else raw)


def test_reorder_and_delete_in_the_panel():
    steps = (
        Step("kernel_regression", "kr_q=2.5"),
        Step("kernel_regression", "kr_q=2.5", "chart_kernel_fitted_curve"),
    )
    at = run_page(
        "kernel_regression", {"kr_q": "2.5", "tour": model.to_link(Tour(steps)), "step": "2"}
    )
    assert_clean(at)
    assert [s.figure for s in tour_of(at).steps] == ["", "chart_kernel_fitted_curve"]
    assert at.query_params["step"] in ("2", ["2"])
    at.button(key="lec_up").click().run()  # step 2 becomes step 1
    assert [s.figure for s in tour_of(at).steps] == ["chart_kernel_fitted_curve", ""]
    assert "step" not in at.query_params  # step 1, the default
    at.button(key="lec_delete").click().run()
    assert [s.figure for s in tour_of(at).steps] == [""]
    at.button(key="lec_delete").click().run()  # the last step: no tour left
    assert_clean(at)
    assert "tour" not in at.query_params and not bar(at)


def test_the_figure_select_names_each_chart_by_its_title():
    """Not by its key (chart_kernel_weights_bars): in the page's language."""
    at = run_page("kernel_regression", {"lang": "zh"})
    assert_clean(at)
    options = at.selectbox(key="lec_figure").options
    assert options[0] == "页面的第一张图" and "查询 62 对各个键的注意力权重" in options
    assert not any("chart_" in o for o in options) and len(set(options)) == len(options)
    en = run_page("kernel_regression").selectbox(key="lec_figure").options
    assert "Attention weights of the query 62 over the keys" in en and len(en) == len(options)


def test_the_intro_tours_sigma_step_opens_the_curve_at_the_sigma_it_discusses():
    """σ is the fitted curve's own slider; a step's view holds its position as a link does."""
    step = lecture.INTRO.step(2)
    assert step.figure == "chart_kernel_fitted_curve"
    at = run_page(step.page, step.params())
    assert_clean(at)
    assert not warnings(at)
    curves = [f for f in figures(at) if f["layout"].get("sliders")]
    (slider,) = [
        f["layout"]["sliders"][0] for f in curves if f["layout"]["sliders"][0].get("visible", True)
    ]
    assert slider["name"] == "kr_sigma" and slider["steps"][slider["active"]]["value"] == "0.2"
    assert len(curves[0]["data"][0]["x"]) == 50  # the noisy curve's 50 points, the bars' keys
