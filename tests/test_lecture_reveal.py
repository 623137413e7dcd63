"""The lecture through AppTest: predict, then reveal, section by section. Every lesson
section (``ui.frame.section``) is a keyed box with its own reveal button; what is hidden is what
the CSS of the page blurs (metrics, tables, dataframes, formulas) and the charts drawn without their
numbers, and revealing a section shows exactly its own (and those of the sections drawn inside it).
Also the camera button's slide layout (point 4): 1920×1080 pixels, the text at the presenter's
size."""

from __future__ import annotations

import json
import re

import pytest
from apptest_util import (
    PAGES,
    ROOT,
    assert_clean,
    chart_config,
    chart_spec,
    charts,
    english_words,
    followers,
    is_chart,
    run_page,
    shown,
)
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from ui.follow import FOLLOW_NAME
from ui.lecture import modes as lecture_modes
from ui.registry import PAGES as REGISTRY
from visattn import lecture
from visattn.display import PRESENTER_FONT

# The kernel page's sections: ① one_query (σ and what it redraws inside it: bandwidth), ② vectors,
# ③ self_attention (which reads ②'s weights), each in its tab's panel; every panel is drawn
# (ui.frame.tabs), so one run holds every section.
SECTIONS = ("one_query", "bandwidth", "vectors", "self_attention")
RESULT_TYPES = ("metric", "table", "arrow_data_frame")


def is_follower(element) -> bool:
    """An element that follows a figure's control (ui.follow: its metric, table, formula): the
    page's CSS blurs its results as it blurs a metric's or a table's."""
    return element.type == "bidi_component" and element.proto.component_name == FOLLOW_NAME


def kernel_page(params: dict) -> AppTest:
    """The kernel page with ``params`` in the URL."""
    return run_page("kernel_regression", params)


def buttons(at: AppTest) -> set[str]:
    """The keys of the page's buttons."""
    return {b.key for b in at.button if b.key}


def boxes(node, around: tuple[str, ...] = ()):
    """(element, the section boxes around it, outermost first) for every element on the page."""
    for child in node.children.values():
        if isinstance(child, Block):
            key = child.key or ""
            inner = (
                (*around, key.removeprefix("lec_sec_")) if key.startswith("lec_sec_") else around
            )
            yield from boxes(child, inner)
        else:
            yield child, around


def styles(at) -> str:
    return "\n".join([h.proto.body for h in at.get("html")] + [m.value for m in at.markdown])


def revealed_by_css(at) -> set[str]:
    """The sections whose results the page's style shows again."""
    return set(re.findall(r"\.st-key-lec_sec_(\w+) :is\(", styles(at)))


def chart_hidden(element) -> bool:
    """A chart drawn without its numbers: no cell or bar text and no "= number" in its notes."""
    spec = json.loads(chart_spec(element))
    texts = [trace.get("texttemplate") or trace.get("text") for trace in spec["data"]]
    notes = [a.get("text", "") for a in spec["layout"].get("annotations", [])]
    return not any(texts) and not any(re.search(r"=\s*[\d.]", n) for n in notes)


def hidden_results(at) -> dict[str, list[bool]]:
    """{section: whether each of its results (drawn directly in it) is hidden now}: a metric, table
    or dataframe by the page's CSS (the page-wide blur on, no box around it revealed by a style), a
    chart by its numbers."""
    blur = lecture_modes.HIDE_CSS in styles(at)
    shown = revealed_by_css(at)
    out: dict[str, list[bool]] = {}
    for element, around in boxes(at.main):
        if not (element.type in RESULT_TYPES or is_chart(element) or is_follower(element)):
            continue
        if not around:
            continue
        if element.type == "arrow_data_frame" and element.proto.editing_mode:
            continue  # a data editor: an input, never hidden
        if is_chart(element):
            hidden = chart_hidden(element)
        else:
            hidden = blur and not (set(around) & shown)
        out.setdefault(around[-1], []).append(hidden)
    return out


def revealed(at) -> set[str]:
    return set(at.session_state["_lecture_revealed"])


def test_every_section_is_a_box_with_its_reveal_button():
    at = kernel_page({"hide": "1"})
    assert_clean(at)
    assert {f"lec_section_{name}" for name in SECTIONS} <= buttons(at)
    labels = {b.key: b.label for b in at.button if b.key.startswith("lec_")}
    assert all(labels[f"lec_section_{name}"] == "Reveal this section" for name in SECTIONS)
    results = hidden_results(at)
    assert set(results) == {"bandwidth", "vectors", "self_attention"}  # ① draws its own in σ's
    assert all(all(hidden) for hidden in results.values())
    assert len(results["bandwidth"]) >= 4  # the estimate, the key-by-key table, its charts
    assert lecture_modes.HIDE_CSS in styles(at) and not revealed_by_css(at)


def test_a_section_reveals_its_own_numbers_and_not_the_next_sections():
    at = kernel_page({"hide": "1"})
    at.button(key="lec_section_bandwidth").click().run()
    assert_clean(at)
    assert revealed(at) == {"§bandwidth"}
    assert revealed_by_css(at) == {"bandwidth"}
    results = hidden_results(at)
    assert not any(results["bandwidth"])
    assert all(results["vectors"]) and all(results["self_attention"])
    estimate = shown(followers(at)["kernel_estimate"])["metric"]["value"]
    assert estimate == "112.5"  # article 002's estimate, 0.5 × 110 + 0.5 × 115
    assert at.button(key="lec_section_bandwidth").label == "Hide this section again"
    # the section's charts need no reveal of their own now; the next section's still have theirs
    chart_buttons = {key for key in buttons(at) if key.startswith("reveal_")}
    assert "reveal_chart_kernel_weights_bars" not in chart_buttons
    assert "reveal_chart_kernel_md_weights" in chart_buttons
    # kept across reruns (another input moved), and not in the link
    at.number_input(key="kr_q_n").set_value(64.0).run()
    assert_clean(at)
    results = hidden_results(at)
    assert not any(results["bandwidth"]) and all(results["vectors"])
    assert {k: at.query_params[k] for k in at.query_params}.keys() == {"hide", "kr_q"}
    # hidden again by its own button
    at.button(key="lec_section_bandwidth").click().run()
    assert revealed(at) == set() and all(hidden_results(at)["bandwidth"])


def test_a_section_reveals_the_sections_drawn_inside_it():
    at = kernel_page({"hide": "1"})
    at.button(key="lec_section_one_query").click().run()
    assert_clean(at)
    assert revealed(at) == {"§one_query"} and revealed_by_css(at) == {"one_query"}
    results = hidden_results(at)
    assert not any(results["bandwidth"])  # drawn inside ①
    assert all(results["vectors"])
    assert "lec_section_bandwidth" not in buttons(at)  # nothing left to reveal there
    at.button(key="lec_hide_again").click().run()  # the sidebar's: everything hidden again
    assert revealed(at) == set()
    assert all(all(hidden) for hidden in hidden_results(at).values())
    at.button(key="lec_reveal_all").click().run()
    assert_clean(at)
    assert not any(any(hidden) for hidden in hidden_results(at).values())
    assert lecture_modes.HIDE_CSS not in styles(at)
    assert not [key for key in buttons(at) if key.startswith(("lec_section_", "reveal_"))]


def test_hide_2_greys_only_the_heatmaps_of_hidden_sections():
    at = kernel_page({"hide": "2"})
    at.button(key="lec_section_bandwidth").click().run()
    assert_clean(at)
    grey = {}
    for element, around in boxes(at.main):
        if is_chart(element):
            for trace in json.loads(chart_spec(element))["data"]:
                if trace["type"] == "heatmap":
                    colours = {c for _, c in trace["colorscale"]}
                    grey.setdefault(around[-1], set()).add(colours == {"rgb(214, 214, 214)"})
    assert grey["bandwidth"] == {False}  # its heatmap in colour again
    assert grey["vectors"] == {True} and grey["self_attention"] == {True}


def test_in_chinese_and_in_presenter_mode():
    """On a zh page AppTest cannot click (it formats the selects' options in English outside the
    run): a reveal made earlier in the session is set before the run instead."""
    params = {"hide": "1", "lang": "zh", "present": "1", "kr_tab": "md"}
    at = kernel_page(params)
    assert_clean(at)
    assert at.button(key="lec_section_vectors").label == "揭晓本节"
    assert english_words(at) == {}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(PAGES["kernel_regression"])
    at.session_state["_lecture_revealed"] = {"§vectors"}  # see the docstring
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert_clean(at)
    assert english_words(at) == {}
    assert at.button(key="lec_section_vectors").label == "重新隐藏本节"
    results = hidden_results(at)
    assert not any(results["vectors"]) and all(results["bandwidth"])


@pytest.mark.parametrize("params", [{}, {"hide": "1", "handout": "1"}])
def test_no_reveal_buttons_when_nothing_is_hidden(params):
    at = kernel_page(params)
    assert_clean(at)
    assert not [key for key in buttons(at) if key.startswith(("lec_section_", "reveal_"))]
    assert lecture_modes.HIDE_CSS not in styles(at)
    assert section_boxes(at) == set(SECTIONS)


# --- point 4: the camera button's slide -----------------------------------------------------------
@given(st.floats(min_value=7.5, max_value=60))
def test_the_camera_slide_is_1920_by_1080_with_presenter_size_text(font):
    width, height, scale = lecture.slide_layout(font)
    assert (width * scale, height * scale) == (1920, 1080)  # exactly: a canvas truncates
    assert font * scale >= PRESENTER_FONT * lecture.SLIDE_SCALE  # ≥ 30 px on the slide


def test_the_presenter_font_gives_the_zips_layout():
    assert lecture.slide_layout(PRESENTER_FONT) == (1280, 720, 1.5)
    assert lecture.slide_layout(13) == (768, 432, 2.5)  # ui.frame.font_size() off a projector


@pytest.mark.parametrize(("present", "font"), [("0", 13), ("1", PRESENTER_FONT)])
def test_every_chart_s_camera_saves_a_slide(present, font):
    at = kernel_page({"present": present})
    assert_clean(at)
    drawn = charts(at)
    assert drawn
    for chart in drawn:
        options = chart_config(chart)["toImageButtonOptions"]
        assert json.loads(chart_spec(chart))["layout"]["font"]["size"] == font
        layout = (options["width"], options["height"], options["scale"])
        assert layout == lecture.slide_layout(font)


def section_boxes(at) -> set[str]:
    keys = [b.key or "" for b in at.get("flex_container")]
    return {k.removeprefix("lec_sec_") for k in keys if k.startswith("lec_sec_")}


@pytest.mark.parametrize("page", [p.id for p in REGISTRY if p.id != "home"])
def test_every_page_s_sections_have_their_reveal_button(page):
    at = run_page(page, {"hide": "1"})
    assert_clean(at)
    buttons = {b.key.removeprefix("lec_section_") for b in at.button if b.key}
    assert section_boxes(at) and section_boxes(at) <= buttons, page
    assert lecture_modes.HIDE_CSS in styles(at)


def numbered_steps_script():
    """A page's numbered steps made units of their own inside one section (no fragment)."""
    import streamlit as st

    from ui.lecture import modes as lecture_modes

    st.session_state["hide"] = 1
    lecture_modes.install()
    with lecture_modes.section("outer"):
        st.metric("x", 1)
        for step in (1, 2):
            with lecture_modes.section(f"step_{step}"):
                st.metric(f"step {step}", step)


def test_a_numbered_step_inside_a_section_is_a_unit_of_its_own():
    at = AppTest.from_function(numbered_steps_script, default_timeout=30)
    at.run()
    assert_clean(at)
    assert {b.key for b in at.button} == {
        "lec_section_outer",
        "lec_section_step_1",
        "lec_section_step_2",
    }
    at.button(key="lec_section_step_1").click().run()
    assert revealed_by_css(at) == {"step_1"}
    assert hidden_results(at) == {"outer": [True], "step_1": [False], "step_2": [True]}
    at.button(key="lec_section_outer").click().run()  # the outer section: its steps with it
    assert hidden_results(at) == {"outer": [False], "step_1": [False], "step_2": [False]}
    assert "lec_section_step_2" not in {b.key for b in at.button}


def test_another_page_opens_with_its_numbers_hidden():
    at = kernel_page({"hide": "1", "kr_tab": "md"})
    at.button(key="lec_section_vectors").click().run()
    assert revealed(at) == {"§vectors"}
    at.switch_page(PAGES["single_head"])
    at.query_params["hide"] = "1"  # hide is a page's own (the sidebar's page links leave it out)
    at.run()
    assert_clean(at)
    assert revealed(at) == set()
    assert at.button(key="lec_section_part_and_options").label == "Reveal this section"
