"""Positional-encoding page through AppTest: every section, bad sizes, the URL, tampered links, Chinese."""

import re

import numpy as np
import pytest
from apptest_util import array, assert_clean, errors, figures, run_page, texts, warnings

CJK = re.compile(r"[\u4e00-\u9fff]")


def heatmap_z(fig) -> np.ndarray:
    (trace,) = [d for d in fig["data"] if d["type"] == "heatmap"]
    return array(trace["z"])


def test_defaults_render_the_table():
    at = run_page("positional")
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    assert at.title[0].value == "Positional encoding"
    figs = figures(at)
    assert len(figs) == 3                                   # table, curves, wavelengths
    z = heatmap_z(figs[0])
    assert z.shape == (64, 128) and z.dtype == np.float32
    assert z[5, 0] == pytest.approx(np.sin(5), abs=1e-6) and z[5, 1] == pytest.approx(np.cos(5), abs=1e-6)
    assert [d["name"] for d in figs[1]["data"]][:2] == ["dim 0 (sin, pair 0)", "dim 1 (cos, pair 0)"]
    assert not at.query_params.get("pe_n")                  # defaults stay out of the URL


@pytest.mark.parametrize("params,words", [
    ({"pe_d": "7"}, "odd"),
    ({"pe_n": "0"}, "at least one position"),
    ({"pe_d": "10000"}, "2048"),
    ({"pe_n": "100000"}, "4096"),
    ({"pe_n": "4097", "pe_d": "2050"}, "4096"),
])
def test_bad_table_sizes_show_a_message(params, words):
    at = run_page("positional", params)
    assert_clean(at)
    (msg,) = errors(at)
    assert words in msg
    assert not figures(at)                                  # nothing computed, nothing drawn
    assert not warnings(at)                                 # a typed value, not a broken link


def test_typing_a_bad_value_keeps_the_last_good_view():
    at = run_page("positional")
    at.number_input(key="pe_d").set_value(7).run()
    assert_clean(at)
    assert "odd" in errors(at)[0]
    assert "last view that worked" in texts(at)
    assert heatmap_z(figures(at)[0]).shape == (64, 128)
    at.number_input(key="pe_d").set_value(8).run()
    assert not errors(at) and heatmap_z(figures(at)[0]).shape == (64, 8)


def test_largest_table_is_downsampled():
    at = run_page("positional", {"pe_n": "4096", "pe_d": "2048"})
    assert_clean(at)
    assert not errors(at)
    assert "one position in 8 and one sine/cosine pair in 8 (512 × 256 cells" in texts(at)
    z = heatmap_z(figures(at)[0])
    assert z.shape == (512, 256) and z.dtype == np.float32
    assert "text" not in figures(at)[0]["data"][0] or not figures(at)[0]["data"][0]["text"]
    curves = figures(at)[1]["data"]
    assert len(array(curves[0]["y"])) == 4096               # the curves use every position


def test_dimension_list():
    at = run_page("positional", {"pe_dims": "0, 1, 999"})
    assert_clean(at)
    assert not errors(at)
    assert "999" in texts(at)                                # said to be left out
    assert len(figures(at)[1]["data"]) == 2
    for bad in ("zero, one", "", "1 2 3 4 5 6 7 8 9"):
        at.text_input(key="pe_dims").set_value(bad).run()
        assert_clean(at)
        assert len(errors(at)) == 1
        assert len(figures(at)) == 2                         # the table and the wavelengths still show


def test_relative_section():
    at = run_page("positional", {"pe_sec": "relative", "pe_rd": "16", "pe_rk": "4", "pe_ri": "1", "pe_rp": "3"})
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    dots = heatmap_z(figures(at)[0])
    assert dots.shape == (40, 40)
    assert dots[0, 0] == pytest.approx(8.0)                 # d/2 on the diagonal
    assert np.ptp(np.diagonal(dots, 4)) < 1e-5
    assert "depends on the offset only" in texts(at)
    latex = " ".join(e.value for e in at.get("latex"))
    assert "M_{4}" in latex and "PE(7)" in latex


def test_order_section_without_and_with_positions():
    at = run_page("positional", {"pe_sec": "order"})
    assert_clean(at)
    assert not errors(at)
    figs = figures(at)
    assert len(figs) == 4
    wa, wb = heatmap_z(figs[0]), heatmap_z(figs[1])
    perm = [5, 6, 2, 3, 4, 0, 1]                             # 苹果喜欢吃小明 from 小明喜欢吃苹果
    assert np.allclose(wb, wa[np.ix_(perm, perm)], atol=1e-6)
    assert not np.allclose(heatmap_z(figs[3]), heatmap_z(figs[2])[np.ix_(perm, perm)], atol=1e-3)
    (ok,) = [s.value for s in at.success]
    assert "zero up to rounding" in ok
    assert "苹 ← 5" in texts(at)


def test_order_english_and_custom_pairs():
    at = run_page("positional", {"pe_sec": "order", "pe_pair": "en"})
    assert_clean(at)
    assert not errors(at) and "zero up to rounding" in at.success[0].value
    at = run_page("positional", {"pe_sec": "order", "pe_pair": "custom", "pe_a": "cats chase mice", "pe_b": "mice chase cats"})
    assert_clean(at)
    assert not errors(at) and len(figures(at)) == 4
    at.text_input(key="pe_b").set_value("mice chase dogs").run()
    assert_clean(at)
    assert "not a reordering" in errors(at)[0]


def test_beyond_section():
    at = run_page("positional", {"pe_sec": "beyond", "pe_bh": "6", "pe_bn": "5"})
    assert_clean(at)
    assert not errors(at)
    score, alibi_lines, grid = figures(at)
    names = [d["name"] for d in score["data"]]
    assert names == ["added sinusoids, query at 0", "added sinusoids, query at 200", "RoPE, query at 0", "RoPE, query at 200"]
    assert np.allclose(array(score["data"][2]["y"]), array(score["data"][3]["y"]), atol=1e-4)
    assert len(alibi_lines["data"]) == 6
    assert "1/4, 1/16, 1/64, 1/256, 1/2, 1/8" in texts(at)
    heat = [d for d in grid["data"] if d["type"] == "heatmap"]
    assert len(heat) == 6                                    # one heatmap per head; the 2 empty cells draw none
    assert array(heat[0]["z"])[0, 4] == pytest.approx(-1.0)  # head 1, slope 1/4, distance 4


def test_url_round_trip():
    at = run_page("positional")
    at.number_input(key="pe_n").set_value(100).run()
    at.text_input(key="pe_dims").set_value("2, 3").run()
    at.segmented_control(key="pe_sec").set_value("beyond").run()
    at.slider(key="pe_bh").set_value(4).run()
    assert_clean(at)
    params = {k: at.query_params[k] for k in at.query_params}
    params = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
    assert params == {"pe_n": "100", "pe_dims": "2, 3", "pe_sec": "beyond", "pe_bh": "4"}
    again = run_page("positional", params)
    assert_clean(again)
    assert not warnings(again)
    assert again.segmented_control(key="pe_sec").value == "beyond"
    assert again.slider(key="pe_bh").value == 4
    assert len(figures(again)[1]["data"]) == 4               # four ALiBi heads
    # back to the table: the values set before the section switch are still there
    again.segmented_control(key="pe_sec").set_value("table").run()
    assert again.number_input(key="pe_n").value == 100
    assert heatmap_z(figures(again)[0]).shape == (100, 128)


def test_tampered_url_falls_back_with_a_warning():
    at = run_page("positional", {"pe_n": "abc", "pe_sec": "bogus", "pe_rd": "63", "pe_bh": "99", "zzz": "1"})
    assert_clean(at)
    (w,) = warnings(at)
    for name in ("pe_n", "pe_sec", "pe_rd", "pe_bh", "zzz"):
        assert name in w
    assert at.number_input(key="pe_n").value == 64
    assert heatmap_z(figures(at)[0]).shape == (64, 128)
    assert "zzz" not in at.query_params


@pytest.mark.parametrize("section", ["table", "relative", "order", "beyond"])
def test_chinese(section):
    at = run_page("positional", {"lang": "zh", "pe_sec": section})
    assert_clean(at)
    assert at.title[0].value == "位置编码"
    assert CJK.search(at.header[0].value)
    labels = [w.label for kind in ("number_input", "slider", "select_slider", "radio", "text_input") for w in at.get(kind)]
    assert labels and all(CJK.search(x) or x == "d_model" for x in labels), labels
    prose = texts(at)
    assert len(CJK.findall(prose)) > 100
    for fig in figures(at):
        assert CJK.search(fig["layout"]["title"]["text"]), fig["layout"]["title"]


def test_chinese_error_messages():
    at = run_page("positional", {"lang": "zh", "pe_d": "7"})
    assert_clean(at)
    (msg,) = errors(at)
    assert "奇数" in msg
    at = run_page("positional", {"lang": "zh", "pe_n": "5000"})
    assert "4096" in errors(at)[0] and CJK.search(errors(at)[0])
