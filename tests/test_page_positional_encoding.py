"""Positional-encoding page through AppTest: every section, bad sizes, the URL, tampered links,
Chinese."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from apptest_util import (
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    followers,
    formulas,
    panel,
    run_page,
    texts,
    warnings,
)
from apptest_util import shown as server_version

from visattn.lessons import positional_encoding as lesson

CJK = re.compile(r"[\u4e00-\u9fff]")


def shown(at):
    """The panel of the open section (every section is drawn, the others hidden: ui.frame.tabs)."""
    return panel(at, "positional_encoding", at.session_state["pe_sec"])


def heatmap_z(fig) -> np.ndarray:
    (trace,) = [d for d in fig["data"] if d["type"] == "heatmap"]
    return array(trace["z"])


def test_defaults_render_the_table():
    at = run_page("positional_encoding")
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    assert at.title[0].value == "Positional encoding"
    figs = figures(shown(at))
    assert len(figs) == 3  # table, curves, wavelengths
    z = heatmap_z(figs[0])
    assert z.shape == (64, 128) and z.dtype == np.float32
    assert z[5, 0] == pytest.approx(np.sin(5), abs=1e-6) and z[5, 1] == pytest.approx(
        np.cos(5), abs=1e-6
    )
    assert [d["name"] for d in figs[1]["data"]][:2] == [
        "dimension 0 (sin, pair 0)",
        "dimension 1 (cos, pair 0)",
    ]
    assert not at.query_params.get("pe_n")  # defaults stay out of the URL


@pytest.mark.parametrize(
    "params,words",
    [
        ({"pe_d": "7"}, "odd"),
        ({"pe_n": "0"}, "at least one position"),
        ({"pe_d": "10000"}, "2048"),
        ({"pe_n": "100000"}, "4096"),
        ({"pe_n": "4097", "pe_d": "2050"}, "4096"),
    ],
)
def test_bad_table_sizes_show_a_message(params, words):
    at = run_page("positional_encoding", params)
    assert_clean(at)
    (msg,) = errors(at)
    assert words in msg
    assert not figures(shown(at))  # nothing computed, nothing drawn
    assert not warnings(at)  # a typed value, not a broken link


def test_typing_a_bad_value_keeps_the_last_good_view():
    at = run_page("positional_encoding")
    at.number_input(key="pe_d").set_value(7).run()
    assert_clean(at)
    assert "odd" in errors(at)[0]
    assert "last view that worked" in texts(at)
    assert heatmap_z(figures(shown(at))[0]).shape == (64, 128)
    at.number_input(key="pe_d").set_value(8).run()
    assert not errors(at) and heatmap_z(figures(shown(at))[0]).shape == (64, 8)


def test_largest_table_is_downsampled():
    at = run_page("positional_encoding", {"pe_n": "4096", "pe_d": "2048"})
    assert_clean(at)
    assert not errors(at)
    assert "one position in 8 and one sine/cosine pair in 8 (512 × 256 cells" in texts(at)
    z = heatmap_z(figures(shown(at))[0])
    assert z.shape == (512, 256) and z.dtype == np.float32
    assert (
        "text" not in figures(shown(at))[0]["data"][0]
        or not figures(shown(at))[0]["data"][0]["text"]
    )
    curves = figures(shown(at))[1]["data"]
    assert len(array(curves[0]["y"])) == 4096  # the curves use every position


def test_dimension_list():
    at = run_page("positional_encoding", {"pe_dims": "0, 1, 999"})
    assert_clean(at)
    assert not errors(at)
    assert "999" in texts(at)  # said to be left out
    assert len(figures(shown(at))[1]["data"]) == 2
    for bad in ("zero, one", "", "1 2 3 4 5 6 7 8 9"):
        at.text_input(key="pe_dims").set_value(bad).run()
        assert_clean(at)
        assert len(errors(at)) == 1
        assert len(figures(shown(at))) == 3  # the table, the wavelengths and the last good curves
        assert "last view that worked" in texts(at)


def test_relative_section():
    at = run_page(
        "positional_encoding",
        {"pe_sec": "relative", "pe_rd": "16", "pe_rk": "4", "pe_ri": "1", "pe_rp": "3"},
    )
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    dots = heatmap_z(figures(shown(at))[0])
    assert dots.shape == (40, 40)
    assert dots[0, 0] == pytest.approx(8.0)  # d/2 on the diagonal
    assert np.ptp(np.diagonal(dots, 4)) < 1e-5
    assert "depends on the offset only" in texts(at)
    rotation = server_version(followers(at)["positional_rotation"])  # at the link's k
    assert "M_{4}" in rotation["tex"] and "PE(7)" in rotation["tex"]
    assert "Largest difference between M_k·PE(3) and PE(7)" in rotation["caption"]


def test_order_section_without_and_with_positions():
    at = run_page("positional_encoding", {"pe_sec": "order"})
    assert_clean(at)
    assert not errors(at)
    figs = figures(shown(at))
    assert len(figs) == 4
    wa, wb = heatmap_z(figs[0]), heatmap_z(figs[1])
    perm = [5, 6, 2, 3, 4, 0, 1]  # 苹果喜欢吃小明 from 小明喜欢吃苹果
    assert np.allclose(wb, wa[np.ix_(perm, perm)], atol=1e-6)
    assert not np.allclose(heatmap_z(figs[3]), heatmap_z(figs[2])[np.ix_(perm, perm)], atol=1e-3)
    (ok,) = [s.value for s in shown(at).success]
    assert "zero up to rounding" in ok
    assert "苹 ← 5" in texts(at)


def test_order_english_and_custom_pairs():
    at = run_page("positional_encoding", {"pe_sec": "order", "pe_pair": "en"})
    assert_clean(at)
    assert not errors(at) and "zero up to rounding" in shown(at).success[0].value
    at = run_page(
        "positional_encoding",
        {
            "pe_sec": "order",
            "pe_pair": "custom",
            "pe_a": "cats chase mice",
            "pe_b": "mice chase cats",
        },
    )
    assert_clean(at)
    assert not errors(at) and len(figures(shown(at))) == 4
    at.text_input(key="pe_b").set_value("mice chase dogs").run()
    assert_clean(at)
    assert "not a reordering" in errors(at)[0]


def test_beyond_section():
    at = run_page("positional_encoding", {"pe_sec": "beyond", "pe_bh": "6", "pe_bn": "5"})
    assert_clean(at)
    assert not errors(at)
    score, alibi_lines, grid = figures(shown(at))
    names = [d["name"] for d in score["data"]]
    assert names == [
        "added sinusoids, query at 0",
        "added sinusoids, query at 200",
        "RoPE, query at 0",
        "RoPE, query at 200",
    ]
    assert np.allclose(array(score["data"][2]["y"]), array(score["data"][3]["y"]), atol=1e-4)
    assert len(alibi_lines["data"]) == 6
    assert "1/4, 1/16, 1/64, 1/256, 1/2, 1/8" in texts(at)
    heat = [d for d in grid["data"] if d["type"] == "heatmap"]
    assert len(heat) == 6  # one heatmap per head; the 2 empty cells draw none
    assert array(heat[0]["z"])[0, 4] == pytest.approx(-1.0)  # head 1, slope 1/4, distance 4


def test_url_round_trip():
    at = run_page("positional_encoding")
    at.number_input(key="pe_n").set_value(100).run()
    at.text_input(key="pe_dims").set_value("2, 3").run()
    at.session_state["pe_sec"] = "beyond"  # a tab opened (the tabs' on_change sets the control)
    at.run()
    at.slider(key="pe_bh").set_value(4).run()
    assert_clean(at)
    params = {k: at.query_params[k] for k in at.query_params}
    params = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
    assert params == {"pe_n": "100", "pe_dims": "2, 3", "pe_sec": "beyond", "pe_bh": "4"}
    again = run_page("positional_encoding", params)
    assert_clean(again)
    assert not warnings(again)
    assert again.session_state["pe_sec"] == "beyond"
    assert again.slider(key="pe_bh").value == 4
    assert len(figures(shown(again))[1]["data"]) == 4  # four ALiBi heads
    # back to the table: the values set before the section switch are still there
    again.session_state["pe_sec"] = "table"
    again.run()
    assert again.number_input(key="pe_n").value == 100
    assert heatmap_z(figures(shown(again))[0]).shape == (100, 128)


def test_tampered_url_falls_back_with_a_warning():
    at = run_page(
        "positional_encoding",
        {"pe_n": "abc", "pe_sec": "bogus", "pe_rd": "63", "pe_bh": "99", "zzz": "1"},
    )
    assert_clean(at)
    (w,) = warnings(at)
    w = w.replace("\\", "")  # names are markdown-escaped
    for name in ("pe_n", "pe_sec", "pe_rd", "pe_bh", "zzz"):
        assert name in w
    assert at.number_input(key="pe_n").value == 64
    assert heatmap_z(figures(shown(at))[0]).shape == (64, 128)
    assert "zzz" not in at.query_params


@pytest.mark.parametrize("section", ["table", "relative", "order", "beyond"])
def test_chinese(section):
    at = run_page("positional_encoding", {"lang": "zh", "pe_sec": section})
    assert_clean(at)
    assert at.title[0].value == "位置编码"
    assert CJK.search(at.header[0].value)
    labels = [
        w.label
        for kind in ("number_input", "slider", "select_slider", "radio", "text_input")
        for w in at.get(kind)
    ]
    assert labels and all(CJK.search(x) or x == "d_model" for x in labels), labels
    prose = texts(at)
    assert len(CJK.findall(prose)) > 100
    for fig in figures(shown(at)):
        assert CJK.search(fig["layout"]["title"]["text"]), fig["layout"]["title"]


def test_chinese_error_messages():
    at = run_page("positional_encoding", {"lang": "zh", "pe_d": "7"})
    assert_clean(at)
    (msg,) = errors(at)
    assert "奇数" in msg
    at = run_page("positional_encoding", {"lang": "zh", "pe_n": "5000"})
    assert "4096" in errors(at)[0] and CJK.search(errors(at)[0])


# ------------------------------------------------------- Chinese: each bad input, each section

ZH_BAD = [
    ({"pe_d": "7"}, "7"),
    ({"pe_d": "0"}, "0"),
    ({"pe_d": "4000"}, "2048"),
    ({"pe_n": "0"}, "0"),
    ({"pe_n": "5000"}, "4096"),
    ({"pe_dims": "zero, one"}, "zero"),
    ({"pe_dims": "1 2 3 4 5 6 7 8 9"}, "9"),
    ({"pe_sec": "order", "pe_pair": "custom", "pe_a": ""}, ""),
    ({"pe_sec": "order", "pe_pair": "custom", "pe_a": "a b c", "pe_b": "a b d"}, ""),
    ({"pe_sec": "order", "pe_pair": "custom", "pe_a": "a " * 70, "pe_b": "a " * 70}, "70"),
]


@pytest.mark.parametrize(
    "params,number",
    ZH_BAD,
    ids=[",".join(f"{k}={v[:12]}" for k, v in p.items()) for p, _ in ZH_BAD],
)
def test_bad_inputs_in_chinese(params, number):
    at = run_page("positional_encoding", {"lang": "zh"} | params)
    assert_clean(at)
    (msg,) = errors(at)
    assert CJK.search(msg) and number in msg.replace("\\", "")
    assert english_words(at, allowed={"LLaMA"}) == {}, english_words(at)


@pytest.mark.parametrize(
    "params",
    [
        {"pe_sec": "relative"},
        {"pe_sec": "order"},
        {"pe_sec": "order", "pe_pair": "en"},
        {"pe_sec": "order", "pe_pair": "custom"},
        {"pe_sec": "beyond"},
        {"pe_sec": "beyond", "pe_bh": "6", "pe_bqk": "random"},
        {"pe_n": "4096", "pe_d": "2048"},
        {"pe_dims": "0, 1, 999"},
        {"present": "1", "pe_sec": "beyond"},
        {"pe_sec": "relative", "pe_rk": "200"},
        {"pe_sec": "beyond", "pe_bp": "0", "pe_bqk": "random"},
    ],
)
def test_every_view_in_chinese_shows_no_english(params):
    at = run_page("positional_encoding", {"lang": "zh"} | params)
    assert_clean(at)
    assert not errors(at)
    assert english_words(at, allowed={"LLaMA"}) == {}  # LLaMA is a model's name


# ---------------------------------------------------------------- bounded, escaped text


def test_text_boxes_state_their_limit_and_links_keep_it():
    at = run_page("positional_encoding", {"pe_sec": "order", "pe_pair": "custom"})
    for key, limit in (("pe_a", 200), ("pe_b", 200)):
        box = at.text_input(key=key)
        assert box.proto.max_chars == limit and str(limit) in box.help
    at = run_page("positional_encoding")
    box = at.text_input(key="pe_dims")
    assert box.proto.max_chars == 80 and "80" in box.help
    # a link with more than the box accepts is refused with the usual notice, not half-accepted
    at = run_page("positional_encoding", {"pe_dims": "1," * 41})
    assert_clean(at)
    assert "pe_dims" in warnings(at)[0].replace("\\", "")
    assert at.text_input(key="pe_dims").value == "0, 1, 20, 21, 60"
    at = run_page(
        "positional_encoding", {"pe_sec": "order", "pe_pair": "custom", "pe_a": "x" * 201}
    )
    assert "pe_a" in warnings(at)[0].replace("\\", "")
    long_ok = " ".join(["cat"] * 50)  # 199 characters: accepted and kept in the URL
    at = run_page(
        "positional_encoding",
        {"pe_sec": "order", "pe_pair": "custom", "pe_a": long_ok, "pe_b": long_ok},
    )
    assert not warnings(at) and at.query_params["pe_a"] in (long_ok, [long_ok])


UNESCAPED_LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\s*(?<!\\)\(")


@pytest.mark.parametrize(
    "params",
    [
        {"pe_dims": "![t](http://127.0.0.1:9/p.png)"},
        {"pe_dims": "[Click here](http://x.example)"},
        {
            "pe_sec": "order",
            "pe_pair": "custom",
            "pe_a": "![t](http://127.0.0.1:9/p.png)",
            "pe_b": "[Click](http://x.example) me",
        },
        {"pe_sec": "order", "pe_pair": "custom", "pe_a": "[a](b) *x*", "pe_b": "*x* (b)[a]"},
    ],
)
def test_links_in_inputs_render_as_plain_text(params):
    at = run_page("positional_encoding", params)
    assert_clean(at)
    shown = errors(at) + [str(m.value) for m in at.markdown]
    assert errors(at) or "\\[ · a · \\] · \\(" in texts(
        at
    )  # an error, or the tokens listed (escaped)
    for text in shown:
        assert not UNESCAPED_LINK.search(text), text  # no markdown image or link survives
    if "pe_dims" in params:
        assert (
            "t\\]\\(http" in errors(at)[0] or "here\\]\\(http" in errors(at)[0]
        )  # said, escaped, as typed


def test_rope_claim_names_content_and_offset():
    """RoPE's score depends on q and k and on the positions only through the offset, in
    both languages."""
    at = run_page("positional_encoding", {"pe_sec": "beyond"})
    prose = texts(shown(at))
    assert (
        "depends only on how far apart" not in prose and "depends on the distance only" not in prose
    )
    assert "only through the offset" in prose and "still depends on what $q$ and $k$ are" in prose
    same = array(figures(shown(at))[0]["data"][3]["y"])
    other = array(
        figures(shown(run_page("positional_encoding", {"pe_sec": "beyond", "pe_bqk": "random"})))[
            0
        ]["data"][3]["y"]
    )
    assert np.abs(same - other).max() > 0.1  # other content, other scores at the same positions
    zh = texts(shown(run_page("positional_encoding", {"lang": "zh", "pe_sec": "beyond"})))
    assert (
        "只取决于两个词元相隔多远" not in zh
        and "位置只通过偏移" in zh
        and "仍然取决于 $q$ 和 $k$" in zh
    )


def test_presenter_mode_breaks_formulas_and_widens_the_alibi_grid():
    """On a projector (1280×720) RoPE's θᵢ and PE(p + k) get lines of their own and ALiBi's 8 heads
    sit 2 a row, so no formula is cut and no two cell titles run into each other (as seen in
    the browser)."""
    normal, big = (
        run_page("positional_encoding", {"pe_sec": "beyond"}),
        run_page("positional_encoding", {"pe_sec": "beyond", "present": "1"}),
    )
    rope = [tex for tex in formulas(big) if "RoPE" in tex][0]
    assert r"\\ \theta_i = 10000^{-2i/d}" in rope
    assert r",\quad \theta_i" in [tex for tex in formulas(normal) if "RoPE" in tex][0]

    def columns(at):
        grid = figures(shown(at))[2]["layout"]
        return len({tuple(v["domain"]) for k, v in grid.items() if k.startswith("xaxis")})

    assert columns(normal) == 4 and columns(big) == 2
    assert len(figures(shown(big))) == len(figures(shown(normal))) == 3
    rel = run_page("positional_encoding", {"pe_sec": "relative", "present": "1"})
    assert r" \\ PE(8)" in server_version(followers(rel)["positional_rotation"])["tex"]


# --- the in-figure sliders start at the control's value and carry the formula's values ----
def test_rotation_and_score_figures_are_live_from_the_controls():
    at = run_page(
        "positional_encoding",
        {"pe_sec": "relative", "pe_rd": "16", "pe_rk": "9", "pe_ri": "1", "pe_rp": "3"},
    )
    assert_clean(at)
    (circle,) = [f for f in figures(shown(at)) if f["layout"].get("sliders")]
    s = circle["layout"]["sliders"][0]
    assert int(s["steps"][s["active"]]["value"]) == 9
    omega = 10000 ** (-2 / 16)
    for step in s["steps"]:
        k = int(step["value"])
        assert array(step["args"][0]["x"][0])[0] == pytest.approx(np.sin((3 + k) * omega), abs=1e-5)
        assert array(step["args"][0]["y"][0])[0] == pytest.approx(np.cos((3 + k) * omega), abs=1e-5)
        assert step["args"][0]["name"] == [f"PE({3 + k})"]
    assert circle["data"][2]["name"] == "PE(12)" and "k = 9" in circle["layout"]["title"]["text"]
    at = run_page("positional_encoding", {"pe_sec": "beyond", "pe_bp": "300", "pe_bmax": "40"})
    assert_clean(at)
    (score,) = [f for f in figures(shown(at)) if f["layout"].get("sliders")]
    s = score["layout"]["sliders"][0]
    assert int(s["steps"][s["active"]]["value"]) == 300
    assert [d["name"] for d in score["data"]][1::2] == [
        "added sinusoids, query at 300",
        "RoPE, query at 300",
    ]
    for step in s["steps"]:
        rope_at_p = array(step["args"][0]["y"][1])
        np.testing.assert_allclose(
            rope_at_p, array(score["data"][2]["y"]), atol=1e-3
        )  # RoPE at p = RoPE at 0, for every p


def test_fidelity_round_three_wording():
    """Article 003 says nothing of tokenisation; ALiBi's slope is not RoPE's position m
    (the papers both write m: here the slope is λ_h); no stray space between Chinese words."""
    locales = Path(__file__).resolve().parent.parent / "ui" / "locales"
    texts_of = {
        lang: json.loads((locales / lang / "positional_encoding.json").read_text("utf-8"))
        for lang in ("en", "zh")
    }
    for text in texts_of.values():
        assert "003" not in text["order_intro"]
        assert "λ_h" in text["alibi_intro"] and "m_h" not in text["alibi_intro"]
        assert r"\lambda_h" in text["beyond_intro"] and "R(m)" in text["beyond_intro"]
    assert r"\lambda_h" in lesson.ALIBI_LATEX and "m_h" not in lesson.ALIBI_LATEX
    stray = re.compile(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]")
    strings = [v for v in texts_of["zh"].values() if isinstance(v, str)]
    assert not [s for s in strings if stray.search(s)]


# ---- the figures' own sliders: the offset k (pe_rk) and the query's position p (pe_bp) ----------


def slider_of(at, key: str) -> dict:
    """The one in-figure slider named by ``key`` (the control it moves) on the page."""
    (found,) = [
        s for f in figures(at) for s in f["layout"].get("sliders") or () if s["name"] == key
    ]
    return found


def figure_of(at, key: str) -> dict:
    """The one figure whose slider is named by ``key``."""
    (found,) = [
        f for f in figures(at) if key in [s["name"] for s in f["layout"].get("sliders") or ()]
    ]
    return found


def active_value(slider: dict) -> str:
    return slider["steps"][slider["active"]]["value"]


def sinusoid(pos: float, d: int) -> np.ndarray:
    """Row ``pos`` of the sinusoidal table, from the article's formula."""
    angles = [pos / 10000 ** (2 * (j // 2) / d) for j in range(d)]
    return np.array([math.sin(a) if j % 2 == 0 else math.cos(a) for j, a in enumerate(angles)])


def test_k_and_p_are_the_figures_sliders_not_widgets_of_the_page():
    at = run_page("positional_encoding")  # every tab's panel is drawn
    assert_clean(at)
    keys = {w.key for kind in ("number_input", "slider", "select_slider") for w in at.get(kind)}
    assert {"pe_rp", "pe_ri", "pe_bmax"} <= keys and not {"pe_rk", "pe_bp"} & keys
    circle, score = slider_of(at, "pe_rk"), slider_of(at, "pe_bp")
    assert [int(s["value"]) for s in circle["steps"]] == list(range(lesson.LIVE_K + 1))
    assert active_value(circle) == "3" and active_value(score) == "200"  # the defaults
    assert followers(at)["positional_rotation"]["control"] == "pe_rk"
    assert followers(at)["positional_gaps"]["control"] == "pe_bp"
    assert "pe_rk" not in at.query_params and "pe_bp" not in at.query_params


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_opens_the_circle_its_formula_and_its_check_at_the_links_k(lang):
    d, i, p, k = 16, 1, 3, 200  # k beyond the slider's 0 … LIVE_K: put in exactly
    params = {"pe_sec": "relative", "pe_rd": "16", "pe_ri": "1", "pe_rp": "3", "pe_rk": "200"}
    at = run_page("positional_encoding", {"lang": lang} | params)
    assert_clean(at)
    assert not warnings(at) and at.query_params["pe_rk"] in ("200", ["200"])
    circle = slider_of(at, "pe_rk")
    assert active_value(circle) == "200"
    assert [int(s["value"]) for s in circle["steps"]] == [*range(lesson.LIVE_K + 1), k]
    assert figure_of(at, "pe_rk")["data"][2]["name"] == f"PE({p + k})"
    rotation = followers(at)["positional_rotation"]
    assert rotation["server"][0] == "200"
    assert set(rotation["variants"]) == {s["value"] for s in circle["steps"]}  # one a position
    omega = 10000 ** (-2 * i / d)
    for value, version in rotation["variants"].items():
        offset = int(value)
        tex, caption = version["tex"], version["caption"]
        theta = f"{offset}\\times{omega:.4g} = {offset * omega:.4g}"
        assert f"M_{{{offset}}}" in tex and f"PE({p + offset})" in tex and theta in tex, value
        assert f"PE({p})" in caption and f"PE({p + offset})" in caption, value
        err = re.findall(r"[:：]\s*([-+.0-9e]+)", caption)[-1].rstrip(".")
        assert float(err) < 1e-12, value  # M_k·PE(p) is PE(p + k) up to rounding
    if lang == "zh":
        assert english_words(at, allowed={"LLaMA"}) == {}


def test_a_link_opens_the_scores_and_their_notes_at_the_links_p():
    d, far = 16, 40
    params = {
        "pe_sec": "beyond",
        "pe_bd": "16",
        "pe_bmax": "40",
        "pe_bqk": "random",
        "pe_bp": "437",
    }
    at = run_page("positional_encoding", params)
    assert_clean(at)
    assert not warnings(at) and at.query_params["pe_bp"] in ("437", ["437"])
    score = slider_of(at, "pe_bp")
    assert active_value(score) == "437"
    names = [trace["name"] for trace in figure_of(at, "pe_bp")["data"]]
    assert names[1::2] == ["added sinusoids, query at 437", "RoPE, query at 437"]
    gaps = followers(at)["positional_gaps"]
    assert gaps["server"][0] == "437"
    assert set(gaps["variants"]) == {s["value"] for s in score["steps"]}  # one a position
    # by hand: the lesson's seeded q and k, the sinusoids from the article's formula
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(d), rng.standard_normal(d)

    def added(at_p: int, delta: int) -> float:
        return (q + sinusoid(at_p, d)) @ (k + sinusoid(at_p + delta, d)) / math.sqrt(d)

    checked = [v for v in gaps["variants"]][::9] + ["437"]
    assert "0" in checked
    for value in checked:
        at_p = int(value)
        success, info = gaps["variants"][value]["notes"]
        assert (success["level"], info["level"]) == ("success", "info")
        assert f"at 0 and at {at_p} coincide" in success["html"]
        rope = re.search(r"largest difference ([^)]+)\)", success["html"]).group(1)
        assert float(rope) < 1e-9, value  # RoPE: the same curve wherever the query is
        sin = re.search(r"differ by up to ([-+.0-9e]+);", info["html"]).group(1)
        want = max(abs(added(at_p, delta) - added(0, delta)) for delta in range(far + 1))
        assert float(sin) == pytest.approx(want, rel=5e-3, abs=1e-12), value  # 3 digits printed


def test_alibi_does_not_change_with_p():
    """ALiBi's score is q·k/√d − λ_h·Δ wherever the query is: its figures follow no slider."""
    drawn = [
        figures(run_page("positional_encoding", {"pe_sec": "beyond", "pe_bp": p}))[-2:]
        for p in ("0", "900")
    ]
    assert drawn[0] == drawn[1]
    assert not any(f["layout"].get("sliders") for f in drawn[0])


@pytest.mark.parametrize(
    "key,value",
    [("pe_rk", "1001"), ("pe_rk", "-1"), ("pe_rk", "2.5"), ("pe_bp", "abc"), ("pe_bp", "1001")],
)
def test_a_bad_position_in_a_link_is_reported_and_reset(key, value):
    at = run_page("positional_encoding", {key: value})
    assert_clean(at)
    (w,) = warnings(at)
    assert key in w.replace("\\", "") and key not in at.query_params
    default = str(lesson.CONTROLS[key].default)
    assert active_value(slider_of(at, key)) == default
    name = {"pe_rk": "positional_rotation", "pe_bp": "positional_gaps"}[key]
    assert followers(at)[name]["server"][0] == default
