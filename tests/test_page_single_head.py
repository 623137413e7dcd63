"""The single-head page through AppTest: defaults, every bad input, URL state, tampered links,
Chinese.

Expected matrices come from the plain-loop implementation in test_single_head.py, never from
visattn."""

import math
import re

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
    qp,
    run_page,
    shown,
    texts,
    warnings,
)
from test_single_head import REF, W_K, W_Q, W_V, X, reference, softmax_row

from ui import url_state
from visattn import scaling
from visattn.lessons import single_head as lesson

# Figures of the worked example, in page order, and the reference matrix each must show.
WORKED = [
    ("X", X),
    ("W_Q", W_Q),
    ("W_K", W_K),
    ("W_V", W_V),
    ("Q", REF["Q"]),
    ("K", REF["K"]),
    ("V", REF["V"]),
    ("QKᵀ", REF["raw"]),
    ("÷√d_k", REF["scores"]),
    ("weights", REF["weights"]),
    ("Z", REF["Z"]),
]


def zs(at):
    return [
        array(f["data"][0]["z"]).astype(float)
        for f in figures(at)
        if f["data"][0].get("type") == "heatmap"
    ]


def plain(s: str) -> str:
    """A message as it reads on the page: markdown escapes removed (sh\\_temp → sh_temp)."""
    return re.sub(r"\\(.)", r"\1", s)


def edit(rows):
    return {"edited_rows": rows, "added_rows": [], "deleted_rows": []}


def row_latex(at) -> str:
    """The query's row written out, as the server drew it: its lines before the softmax (the same
    at every τ) and those that follow τ, at τ's value."""
    follow = [shown(data)["tex"] for data in followers(at).values() if "tex" in shown(data)]
    return "\n".join(formulas(at) + follow)


def test_defaults_show_the_computed_worked_example():
    at = run_page("single_head")
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    got = zs(at)
    assert len(got) == len(WORKED)
    for m, (name, want) in zip(got, WORKED, strict=True):
        # figures are sent as float32: agree to float32 precision
        np.testing.assert_allclose(
            m, np.array(want, dtype=float), rtol=1e-6, atol=1e-6, err_msg=name
        )
    assert not at.query_params  # defaults leave the URL clean


def test_query_row_written_out_with_its_numbers():
    at = run_page("single_head")
    latex = row_latex(at)
    assert r"\left[2,\ 0,\ 1,\ 1\right]" in latex  # q₁ = [2, 0, 1, 1]
    assert r"\frac{3}{2} = 1.5" in latex and r"\frac{10}{2} = 5" in latex
    w = [f"{v:.4f}".rstrip("0") for v in REF["weights"][0]]
    assert rf"\left[{w[0]},\ {w[1]}\right]" in latex
    at.selectbox(key="sh_q").set_value(1).run()
    latex = row_latex(at)
    assert r"\mathbf{q}_2" in latex and r"\frac{12}{2} = 6" in latex
    assert qp(at)["sh_q"] == "1"


def test_the_row_lines_after_the_softmax_follow_tau():
    """The weights and z of the row change with τ, the lines before the softmax do not: those are
    formulas, these follow the weights' slider, one version per position, each the row at its τ."""
    at = run_page("single_head")
    follow = {name: data for name, data in followers(at).items() if name.startswith("single")}
    assert len(follow) == 2 and all(d["control"] == "sh_temp" for d in follow.values())
    (weights_line, z_line) = follow.values()
    slider, _ = [f["layout"]["sliders"][0] for f in figures(at) if f["layout"].get("sliders")]
    assert slider["name"] == "sh_temp"  # the weights' (Z follows it too)
    assert set(weights_line["variants"]) == {step["value"] for step in slider["steps"]}
    for tau in ("0.5", "1", "2.5"):
        w = softmax_row([v / float(tau) for v in REF["scores"][0]])
        assert f"{w[1]:.4f}".rstrip("0") in weights_line["variants"][tau]["tex"], tau
        z = np.array(w) @ np.array(REF["V"], dtype=float)
        assert f"{z[0]:.4f}".rstrip("0").rstrip(".") in z_line["variants"][tau]["tex"], tau
    assert len(formulas(at)) == 1 + 3  # the page's, then q₁ and its two scores: the same at every τ


def fmt(v):
    v = float(v)
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:.4f}".rstrip("0").rstrip(".")


def as_text(v) -> str:
    return "[" + ", ".join(fmt(x) for x in v) + "]"


def test_printed_vs_computed_note():
    at = run_page("single_head")
    table = at.table[0].value
    cols = list(table.columns)
    printed, computed, agrees = (
        table[cols[0]].tolist(),
        table[cols[1]].tolist(),
        table[cols[2]].tolist(),
    )
    assert printed[0] == "[2, 0, 2, 0]" and computed[0] == as_text(REF["Q"][0]) and agrees[0] == "✗"
    assert printed[2] == "[1, 1, 1, 1]" and computed[2] == as_text(REF["V"][0]) and agrees[2] == "✓"
    assert computed[6] == as_text(REF["raw"][0]) and computed[8] == as_text(REF["weights"][0])
    body = texts(at)
    assert as_text(softmax_row([2, 8])) in body  # what the printed scores really give
    assert "1.988" in body  # 0.012·v₁ + 0.988·v₂


def test_options_scaling_off_causal_and_temperature():
    at = run_page("single_head", {"sh_scale": "0", "sh_causal": "1", "sh_temp": "0.5"})
    assert_clean(at)
    got = zs(at)
    raw = np.array(REF["raw"], dtype=float)
    np.testing.assert_allclose(got[8], raw)  # scaling off: scores = QKᵀ
    w = got[9]
    assert w[0, 1] == 0 and w[0, 0] == pytest.approx(1)
    np.testing.assert_allclose(w[1], softmax_row([v / 0.5 for v in REF["raw"][1]]), rtol=1e-6)
    np.testing.assert_allclose(w.sum(axis=1), 1, rtol=1e-6)


def test_edit_part_defaults_to_article_and_recomputes_edits():
    at = run_page("single_head", {"sh_view": "edit"})
    assert_clean(at)
    got = zs(at)
    np.testing.assert_allclose(got[-1], np.array(REF["Z"]), rtol=1e-6)
    at.session_state["sh_x__ed0"] = edit({1: {"0": 3.0}})
    at.run()
    X2 = [[1, 0, 1, 0], [3, 2, 0, 2]]
    ref = reference(X2, W_Q, W_K, W_V)
    np.testing.assert_allclose(zs(at)[-1], np.array(ref["Z"]), rtol=1e-6)
    assert qp(at)["sh_x"] == "1,0,1,0;3,2,0,2"


def test_bad_text_cell():
    at = run_page("single_head", {"sh_view": "edit"})
    before = zs(at)
    at.session_state["sh_wq__ed0"] = edit({2: {"1": "abc"}})
    at.run()
    assert_clean(at)
    assert any("W^Q" in plain(e) and "row 3, column 1" in plain(e) for e in errors(at)), errors(
        at
    )  # rows count from 1
    # nothing is computed from the broken table: the last good view stays, marked as such
    after = zs(at)
    assert len(after) == len(before)
    assert all(np.array_equal(a, b) for a, b in zip(after, before, strict=True))
    assert any("last view that worked" in c.value for c in at.caption)


def test_mismatched_shapes_explained():
    at = run_page("single_head", {"sh_view": "edit", "sh_x": "1,2,3;4,5,6", "sh_wk": "1,2;3,4"})
    assert_clean(at)
    msg = plain(" ".join(errors(at)))
    assert "X: 2×3 → 2×4 (T × d_model)" in msg and "W^K: 2×2 → 4×4 (d_model × d_k)" in msg
    assert (
        "W^Q" not in msg.split("needed):")[1].split(".")[0]
    )  # only the matrices that do not fit are named


def test_dk_zero():
    at = run_page("single_head", {"sh_view": "edit"})
    at.number_input(key="sh_dk").set_value(0).run()
    assert_clean(at)
    assert any("d_k = 0" in e and "d_k ≥ 1" in e for e in errors(at)), errors(at)


def test_changing_shape_refills_with_seeded_random_values():
    at = run_page("single_head", {"sh_view": "edit"})
    at.number_input(key="sh_T").set_value(5).run()
    at.number_input(key="sh_dk").set_value(3).run()
    assert_clean(at) and not errors(at)
    got = zs(at)
    assert got[0].shape == (5, 3) and got[-1].shape == (5, 3)  # Q (T × d_k) … Z (T × d_v)
    x = np.array([[float(v) for v in r.split(",")] for r in qp(at)["sh_x"].split(";")])
    assert x.shape == (5, 4)
    again = run_page("single_head", qp(at))
    np.testing.assert_allclose(zs(again)[-1], got[-1], rtol=1e-5)


def test_empty_sentence():
    at = run_page("single_head", {"sh_view": "sentence"})
    at.text_input(key="sh_text").set_value("   ").run()
    assert_clean(at)
    assert any("empty" in e for e in errors(at)), errors(at)


def test_500_tokens():
    at = run_page("single_head", {"sh_view": "sentence"})
    at.text_input(key="sh_text").set_value("word " * 500).run()
    assert_clean(at)
    assert any("500 tokens" in e and "64" in e for e in errors(at)), errors(at)


def test_sentence_chinese_characters_and_64_tokens():
    at = run_page(
        "single_head", {"sh_view": "sentence", "sh_text": "小明喜欢吃苹果", "sh_causal": "1"}
    )
    assert_clean(at) and not errors(at)
    w = zs(at)[0]
    assert w.shape == (7, 7)
    assert (np.triu(w, 1) == 0).all()
    at = run_page(
        "single_head", {"sh_view": "sentence", "sh_text": " ".join(f"w{i}" for i in range(64))}
    )
    assert_clean(at) and not errors(at)
    assert zs(at)[0].shape == (64, 64)


def test_sqrt_panel_measures_variance():
    at = run_page("single_head", {"sh_view": "sqrt", "sh_vdk": "256"})
    assert_clean(at)
    moments = followers(at)["sqrt_moments"]
    rows = shown(moments)["table"]["rows"]
    var_raw, var_scaled = float(rows[0][2]), float(rows[1][2])
    assert abs(var_raw / 256 - 1) < 0.1 and abs(var_scaled - 1) < 0.1
    assert len(figures(at)) == 4
    # at every d_k of the histogram's slider: the measured variance near d_k, and the theory's
    assert set(moments["variants"]) == {str(d) for d in lesson.DK_CHOICES}
    for d_k, version in moments["variants"].items():
        (raw, scaled) = version["table"]["rows"]
        assert raw[3] == d_k and scaled[3] == "1" and version["table"]["index"][1].endswith(d_k)
        assert abs(float(raw[2]) / int(d_k) - 1) < 0.2 and abs(float(scaled[2]) - 1) < 0.2
    # the page's own sample at its d_k (as many pairs as the budget allows), the shared one else
    assert shown(moments)["caption"].startswith(f"{scaling.samples_for(256)} sampled pairs")
    assert moments["variants"]["24"]["caption"].startswith(f"{lesson.LIVE_PAIRS} sampled pairs")


def test_url_round_trip():
    at = run_page("single_head", {"sh_temp": "0.5"})  # τ: the weights' slider, moved in a browser
    at.segmented_control(key="sh_view").set_value("sentence").run()
    at.toggle(key="sh_causal").set_value(True).run()
    at.text_input(key="sh_text").set_value("小明喜欢吃苹果").run()
    at.number_input(key="sh_sdk").set_value(4).run()
    params = qp(at)
    assert params == {
        "sh_view": "sentence",
        "sh_causal": "1",
        "sh_temp": "0.5",
        "sh_text": "小明喜欢吃苹果",
        "sh_sdk": "4",
    }
    again = run_page("single_head", params)
    assert_clean(again) and not warnings(again)
    assert again.toggle(key="sh_causal").value is True and again.session_state["sh_temp"] == 0.5
    np.testing.assert_array_equal(zs(again)[0], zs(at)[0])


@pytest.mark.parametrize(
    "params, bad",
    [
        ({"sh_temp": "abc"}, "sh_temp"),
        ({"sh_view": "bogus"}, "sh_view"),
        ({"sh_view": "edit", "sh_x": "1,2;3"}, "sh_x"),
        ({"sh_view": "sqrt", "sh_vdk": "5000"}, "sh_vdk"),
        ({"sh_q": "nine"}, "sh_q"),
        ({"unknown": "1"}, "unknown"),
    ],
)
def test_tampered_params_fall_back_with_a_warning(params, bad):
    at = run_page("single_head", params)
    assert_clean(at)
    assert any(bad in plain(w) for w in warnings(at)), warnings(at)
    assert not errors(at)
    assert zs(at) or figures(at)


def test_chinese():
    at = run_page("single_head", {"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == "单头自注意力的每一个数字"
    body = texts(at)
    assert "文中数字与计算结果对照" in body and "错在哪里" in body
    at = run_page("single_head", {"lang": "zh", "sh_view": "sentence", "sh_text": "   "})
    assert any("文本是空的" in e for e in errors(at)), errors(at)
    at = run_page("single_head", {"lang": "zh", "sh_view": "edit", "sh_dk": "0"})
    assert any("d_k = 0 不可行" in e for e in errors(at)), errors(at)
    at = run_page("single_head", {"lang": "zh", "sh_view": "sqrt"})
    assert_clean(at)
    assert "均值为 0、方差为 d_k" in texts(at)


def test_variance_figures_are_within_ten_percent_at_every_choice():
    """The √d_k panel's own sample size, fixed seed: every d_k the slider offers (acceptance 3)."""
    from visattn import scaling

    for d_k in (1, 3, 24, 1024):
        s = scaling.sample_dot_products(d_k, seed=0)
        assert math.isclose(s.raw_var, d_k, rel_tol=0.1) and math.isclose(
            s.scaled_var, 1, rel_tol=0.1
        )


def test_sentence_with_minilm_embeddings():
    from visattn.models.encoder import BertEncoder

    at = run_page(
        "single_head",
        {
            "sh_view": "sentence",
            "sh_emb": "pretrained",
            "sh_sd": "16",
            "sh_text": "The cat is unbelievably fluffy.",
        },
    )
    assert_clean(at) and not errors(at)
    assert "principal axes" in texts(at)
    model = BertEncoder.load()
    tokens, ids, _, _ = model.tokenize("The cat is unbelievably fluffy.")
    assert "##bel" in tokens and f"{len(tokens) - 2} tokens" in texts(
        at
    )  # MiniLM's word pieces, no [CLS]/[SEP]
    assert zs(at)[0].shape == (len(tokens) - 2,) * 2
    X = model.reduced_embeddings(ids[1:-1], 16)  # (T, 16), projected and scaled
    assert X.shape == (len(tokens) - 2, 16)
    all_rows = model.reduced_embeddings(list(range(model.config.vocab_size)), 16)
    assert abs(float(np.mean(all_rows**2)) - 1.0) < 1e-6  # mean square 1 over the vocabulary
    at = run_page(
        "single_head", {"sh_view": "sentence", "sh_emb": "pretrained", "sh_text": "word " * 70}
    )
    assert any("70 tokens" in e for e in errors(at)), errors(at)


# --- every bad input in Chinese: the message is Chinese and nothing English shows -----------------
def cjk(s: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", s))


@pytest.mark.parametrize(
    "params, edit_cell",
    [
        ({"sh_view": "sentence", "sh_text": "   "}, None),  # empty sentence
        ({"sh_view": "sentence", "sh_text": "词" * 70}, None),  # 70 tokens, limit 64
        ({"sh_view": "sentence", "sh_text": "word " * 500}, None),  # 500 English tokens
        ({"sh_view": "edit", "sh_dk": "0"}, None),  # d_k = 0
        (
            {"sh_view": "edit", "sh_x": "1,2,3;4,5,6", "sh_wk": "1,2;3,4"},
            None,
        ),  # shapes that do not fit
        ({"sh_view": "edit"}, ("sh_wq__ed0", 2, "1", "abc")),  # text in a cell
        ({"sh_temp": "abc", "sh_q": "nine"}, None),  # tampered link
        ({"sh_view": "sqrt", "sh_nkeys": "256"}, None),  # the old heavy link
    ],
)
def test_bad_inputs_in_chinese(params, edit_cell):
    at = run_page("single_head", {"lang": "zh"} | params)
    if edit_cell:
        key, row, col, value = edit_cell
        at.session_state[key] = edit({row: {col: value}})
        at.run()
    assert_clean(at)
    said = errors(at) + warnings(at)
    assert said and all(cjk(m) for m in said), said
    # a reset notice names the URL parameters themselves (sh_q → "sh\\_q" once escaped): names, not
    # English prose
    assert english_words(at, allowed={"sh"}) == {}, english_words(at)


@pytest.mark.parametrize(
    "params",
    [
        {"sh_view": "edit"},
        {"sh_view": "edit", "sh_causal": "1", "sh_T": "5"},
        {"sh_view": "sentence", "sh_side": "1", "sh_causal": "1"},
        {"sh_view": "sentence", "sh_text": " ".join(f"w{i}" for i in range(30))},
        {"sh_view": "sqrt"},
        {"sh_scale": "0", "sh_temp": "0.5", "sh_causal": "1"},
    ],
)
def test_every_view_in_chinese(params):
    at = run_page("single_head", {"lang": "zh"} | params)
    assert_clean(at) and not errors(at)
    assert english_words(at) == {}, english_words(at)


# --- the lesson's numbers, by hand ----------------------------------------------------------------
def test_note_rows_and_numbers_by_hand():
    note = lesson.article_note()
    rows = {r.what: r for r in note.rows}
    assert (
        rows["q₁ = x₁·W^Q"].printed == "[2, 0, 2, 0]"
        and rows["q₁ = x₁·W^Q"].computed == "[2, 0, 1, 1]"
    )
    assert (
        not rows["q₁ = x₁·W^Q"].agrees and rows["v₁ = x₁·W^V"].agrees and rows["v₂ = x₂·W^V"].agrees
    )
    assert rows["scores"].computed == "[3, 10]" and rows["scaled"].computed == "[1.5, 5]"
    e = math.exp(-3.5)
    assert (
        rows["weights"].computed == f"[{e / (1 + e):.4f}, {1 / (1 + e):.4f}]"
        and not rows["weights"].agrees
    )
    assert note.picked_rows == (1, 3)  # x₁ = [1, 0, 1, 0] picks rows 1 and 3
    assert (
        note.values["wimp"] == f"[{1 / (1 + math.exp(6)):.4f}, {1 / (1 + math.exp(-6)):.4f}]"
    )  # softmax([2, 8])
    assert note.values["zimp"] == "1.988" and note.values["z1"] == f"{1 + 1 / (1 + e):.4f}"


def test_note_names_the_columns_it_describes():
    for lang in ("en", "zh"):
        at = run_page("single_head", {"lang": lang})
        heads = list(at.table[0].value.columns)
        note = next(m.value for m in at.markdown if "####" in m.value)
        assert f"“{heads[0]}”" in note and f"“{heads[1]}”" in note, (heads, note)


def test_follow_latex_causal_by_hand():
    tr = lesson.worked(causal=True)
    lines = lesson.follow_latex(tr, 0, scale=True, temperature=1.0)
    assert r"s_{1,j} = -\infty \quad (j > 1)" in lines
    assert any(
        r"\frac{e^{1.5}}{e^{1.5}},\ 0" in line and r"\left[1,\ 0\right]" in line for line in lines
    )
    assert lines[-1].endswith(r"\left[1,\ 1,\ 1,\ 1\right]\end{aligned}")  # z₁ = v₁ = x₁·W^V


def test_random_matrices_shapes_rounding_and_seed():
    a, b, c = (
        lesson.random_matrices(3, 5, 2, 7),
        lesson.random_matrices(3, 5, 2, 7),
        lesson.random_matrices(3, 5, 2, 8),
    )
    assert [a[k].shape for k in ("sh_x", "sh_wq", "sh_wk", "sh_wv")] == [
        (3, 5),
        (5, 2),
        (5, 2),
        (5, 2),
    ]
    np.testing.assert_array_equal(a["sh_x"] * 10, np.round(a["sh_x"] * 10))  # one decimal
    np.testing.assert_allclose(a["sh_wq"] * 100, np.round(a["sh_wq"] * 100), atol=1e-9)
    assert all(np.array_equal(a[k], b[k]) for k in a) and not np.array_equal(a["sh_x"], c["sh_x"])
    assert (
        lesson.refill(False, 3, 5, 0, 7) == {}
        and lesson.refill(True, 3, 5, 0, 7)["sh_x"] == lesson.X
    )


def test_sampling_budget_by_hand():
    assert scaling.samples_for(64) == 20_000 and scaling.samples_for(1024) == 2**22 // 2048 == 2048
    assert scaling.rows_for(16, lesson.PEAK_GRID) == 2**22 // (17 * 2047) == 120
    assert scaling.rows_for(lesson.MAX_KEYS, lesson.PEAK_GRID) == 2**22 // (65 * 2047) == 31
    w = lesson.why_sqrt(32, seed=1)
    (own,) = [p for p in lesson.sqrt_positions(w, lesson.sqrt_steps(1)) if p.d_k == 32]
    table = lesson.variance_table(own, ["m", "m0", "v", "v0"])
    assert table.loc["q·k", "v"] == f"{np.var(w.sample.raw, ddof=1):.3f}".rstrip("0").rstrip(".")
    assert table.loc["q·k / √32", "v0"] == "1" and table.loc["q·k", "v0"] == "32"
    assert own.n == len(w.sample.raw) == scaling.samples_for(32)


# --- presenter mode, the √d_k figures, and input bounded like the URL -----------------------------
def titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at)]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"sh_view": "edit", "sh_T": "3"},
        {"sh_view": "sqrt"},
        {"sh_view": "sentence", "sh_side": "1"},
    ],
)
def test_presenter_mode_keeps_every_figure(params):
    normal, present = (
        run_page("single_head", params),
        run_page("single_head", params | {"present": "1"}),
    )
    assert_clean(present)
    assert len(figures(present)) == len(figures(normal)) > 0
    assert titles(present) == titles(normal)  # V = X·W^V included


def test_sqrt_legends_sit_below_the_axis_titles():
    for f in figures(run_page("single_head", {"sh_view": "sqrt"})):
        legend, margin = f["layout"]["legend"], f["layout"]["margin"]
        assert legend["yref"] == "container" and legend["y"] == 0 and legend["yanchor"] == "bottom"
        assert (
            margin["b"] >= 4 * f["layout"]["font"]["size"]
        )  # room for ticks, axis title, then legend


def test_sizes_without_matrices_fill_seeded_matrices():
    at = run_page("single_head", {"sh_view": "edit", "sh_T": "12", "sh_d": "12", "sh_dk": "12"})
    assert_clean(at) and not errors(at) and not warnings(at)
    got = zs(at)
    assert got[0].shape == (12, 12) and got[-1].shape == (12, 12)
    want = lesson.random_matrices(12, 12, 12, 0)
    x = np.array([[float(v) for v in r.split(",")] for r in qp(at)["sh_x"].split(";")])
    np.testing.assert_array_equal(x, want["sh_x"])
    again = run_page("single_head", qp(at))
    np.testing.assert_allclose(zs(again)[-1], got[-1])


def test_heavy_sqrt_link_is_capped_and_fast():
    at = run_page("single_head", {"sh_view": "sqrt", "sh_vdk": "1024", "sh_nkeys": "256"})
    assert any("sh_nkeys" in plain(w) for w in warnings(at)), warnings(
        at
    )  # beyond the bound: reset, with a notice
    assert at.number_input(key="sh_nkeys").max == lesson.MAX_KEYS == 64
    w, p = (
        lesson.why_sqrt(1024, seed=11),
        lesson.peakedness(lesson.MAX_KEYS, seed=11),
    )  # bounded by the draw budget (no clock in tests)
    assert 2 * 1024 * len(w.sample.raw) <= scaling.BUDGET
    assert p.n_rows * (p.n_keys + 1) * sum(lesson.PEAK_GRID) <= scaling.BUDGET
    assert (
        len(
            figures(
                run_page("single_head", {"sh_view": "sqrt", "sh_vdk": "1024", "sh_nkeys": "64"})
            )
        )
        == 4
    )


def test_text_box_is_bounded_like_the_url():
    at = run_page("single_head", {"sh_view": "sentence"})
    box = at.text_input(key="sh_text")
    assert box.max_chars == url_state.MAX_TEXT and str(url_state.MAX_TEXT) in box.help
    at = run_page("single_head", {"sh_view": "sentence", "sh_text": "word " * 500})
    assert any("500" in e and "64" in e for e in errors(at)) and not any(
        "100000" in e for e in errors(at)
    )


def test_tokens_are_numbered_from_one():
    for lang in ("en", "zh"):
        at = run_page("single_head", {"lang": lang})
        sel = at.selectbox(key="sh_q")
        assert sel.options == ["1: Thinking", "2: Machines"] and "1" in sel.help


# --- the in-figure sliders: the figure's slider starts at the control's value ---------------------
def live_figures(at) -> list[dict]:
    return [f for f in figures(at) if f["layout"].get("sliders")]


@pytest.mark.parametrize("params", [{"sh_temp": "0.35"}, {"sh_temp": "2.5", "sh_q": "1"}, {}])
def test_worked_weights_carry_tau_and_z_follows(params):
    at = run_page("single_head", params)
    assert_clean(at)
    fig, z = live_figures(at)  # the softmax panel of the pipeline, and Z after it
    s = fig["layout"]["sliders"][0]
    tau = float(params.get("sh_temp", 1.0))
    assert s["name"] == "sh_temp" and float(s["steps"][s["active"]]["value"]) == tau
    assert not [w for w in at.get("slider") if w.key == "sh_temp"]  # the figure's alone
    followed = z["layout"]["sliders"][0]
    assert followed["name"] == "sh_temp" and followed["visible"] is False
    assert [x["value"] for x in followed["steps"]] == [x["value"] for x in s["steps"]]
    V = np.array(REF["V"], dtype=float)
    for step in followed["steps"][::9]:
        weights = [softmax_row([v / float(step["value"]) for v in row]) for row in REF["scores"]]
        np.testing.assert_allclose(array(step["args"][0]["z"][0]), weights @ V, rtol=1e-5)
    assert len(s["steps"]) >= 100 and all(step["method"] == "update" for step in s["steps"])

    def by_hand(temperature):  # softmax of the reference's scaled scores / τ
        return [softmax_row([v / temperature for v in row]) for row in REF["scores"]]

    for step in s["steps"][::7] + [s["steps"][s["active"]]]:
        t_ = float(step["value"])
        np.testing.assert_allclose(array(step["args"][0]["z"][0]), by_hand(t_), rtol=1e-5)
        assert step["args"][1]["title.text"] == (
            "weights = softmax" if t_ == 1 else f"softmax(scores / {lesson.short_number(t_)})"
        )
    np.testing.assert_allclose(
        array(fig["data"][0]["z"]), by_hand(tau), rtol=1e-5
    )  # drawn = active
    assert fig["layout"]["title"]["text"] == s["steps"][s["active"]]["args"][1]["title.text"]


def test_sentence_weights_and_sqrt_histograms_are_live():
    at = run_page("single_head", {"sh_view": "sentence", "sh_temp": "0.5", "sh_q": "3"})
    assert_clean(at)  # an old link's query position: no notice
    (weights,) = live_figures(at)
    s = weights["layout"]["sliders"][0]
    assert float(s["steps"][s["active"]]["value"]) == 0.5
    np.testing.assert_allclose(
        array(s["steps"][s["active"]]["args"][0]["z"][0]), array(weights["data"][0]["z"]), rtol=1e-5
    )  # drawn = active
    for step in s["steps"]:
        np.testing.assert_allclose(
            array(step["args"][0]["z"][0]).sum(axis=1), 1.0, atol=1e-4
        )  # softmax rows each
    at = run_page("single_head", {"sh_view": "sqrt", "sh_vdk": "24"})
    assert_clean(at)
    hists = live_figures(at)
    assert len(hists) == 2  # q·k and q·k/√d_k; the peakedness curves stay as they are
    for fig, shows in zip(hists, (True, False), strict=True):  # the first shows the slider
        s = fig["layout"]["sliders"][0]
        assert s["name"] == "sh_vdk" and s.get("visible", True) is shows
        assert [int(x["value"]) for x in s["steps"]] == list(lesson.DK_CHOICES) and int(
            s["steps"][s["active"]]["value"]
        ) == 24
        assert "d<sub>k</sub> = 24:" in fig["layout"]["title"]["text"]


def test_a_link_keeps_the_settings_of_the_parts_it_does_not_show():
    """A part switch is a section's partial rerun: the other parts' settings stay in the URL, so a
    link made on the √d_k part still carries τ, the edit sizes and the sentence, with no "reset"
    notice, and they return with their part."""
    link = {
        "sh_view": "sqrt",
        "sh_temp": "2",
        "sh_T": "3",
        "sh_text": "hello world",
        "sh_vdk": "24",
        "sh_q": "1",
    }
    at = run_page("single_head", link)
    assert_clean(at)
    assert not warnings(at)
    assert qp(at) == link  # nothing dropped, nothing added
    at.segmented_control(key="sh_view").set_value("worked").run()
    assert not warnings(at) and at.selectbox(key="sh_q").value == 1
    (weights,) = [f for f in live_figures(at) if f["layout"]["sliders"][0].get("visible", True)]
    s = weights["layout"]["sliders"][0]
    assert s["steps"][s["active"]]["value"] == "2"
    at.segmented_control(key="sh_view").set_value("sentence").run()
    assert not warnings(at) and at.text_input(key="sh_text").value == "hello world"


# --- each step's matrices share one colour scale, and the page says which ----------------------
def colour_of(figure: dict) -> tuple:
    trace = figure["data"][0]
    return trace["zmin"], trace["zmax"], trace.get("zmid")


def heatmaps(at) -> list[dict]:
    return [f for f in figures(at) if f["data"][0].get("type") == "heatmap"]


def test_worked_example_matrices_share_a_scale_a_step():
    at = run_page("single_head")
    assert_clean(at)
    got = [colour_of(f) for f in heatmaps(at)]
    names = [name for name, _ in WORKED]
    by_name = dict(zip(names, got, strict=True))

    def top(*matrices):
        return max(v for m in matrices for row in m for v in row)

    # no negative entry: 0 (white) to the largest entry of the step's matrices
    for name in ("X", "W_Q", "W_K", "W_V"):
        assert by_name[name] == (0, top(X, W_Q, W_K, W_V), None), name
    vectors = top(REF["Q"], REF["K"], REF["V"], REF["Z"])
    for name in ("Q", "K", "V", "Z"):
        assert by_name[name] == pytest.approx((0, vectors, None)), name
    for name in ("QKᵀ", "÷√d_k"):
        assert by_name[name] == (0, top(REF["raw"], REF["scores"]), None), name
    assert by_name["weights"][:2] == (0, 1)
    # Z's 1.7311 and 1.9707 are both about half way up the scale of Q, K, V (4)
    z = np.array(REF["Z"])
    assert np.all((z > 0.4 * vectors) & (z < 0.5 * vectors))
    captions = [c.value for c in at.caption]
    assert (
        f"Colour: Q, K and V (and Z in step 4) share one scale, from 0 (white) to {vectors:g}"
        in (" ".join(captions))
    )
    assert sum(c.startswith("Colour:") for c in captions) == 4  # one a step


def test_random_matrices_get_a_diverging_scale_centred_on_zero():
    params = {"sh_view": "edit", "sh_T": "3", "sh_d": "4", "sh_dk": "3", "sh_seed": "5"}
    at = run_page("single_head", params)
    assert_clean(at)
    got = heatmaps(at)  # Q, K, V, QKᵀ, ÷√d_k, weights, Z (the editors hold X and the W's)
    edited = [np.asarray(at.session_state[k], dtype=float).tolist() for k in lesson.ARTICLE]
    ref = reference(*edited)
    bound = max(abs(v) for m in ("Q", "K", "V", "Z") for row in ref[m] for v in row)
    assert min(v for m in ("Q", "K", "V") for row in ref[m] for v in row) < 0
    for figure in (*got[:3], got[-1]):  # Q, K, V and Z
        zmin, zmax, zmid = colour_of(figure)
        assert zmid == 0 and zmin == pytest.approx(-bound, rel=1e-6)
        assert zmax == pytest.approx(bound, rel=1e-6)
    assert any("diverging scale centred on 0" in c.value for c in at.caption)


def test_zh_colour_captions():
    at = run_page("single_head", {"lang": "zh"})
    assert_clean(at)
    captions = [c.value for c in at.caption if c.value.startswith("颜色：")]
    assert len(captions) == 4 and "Q、K、V（以及第 4 步的 Z）共用一个色标" in " ".join(captions)


# --- Chinese wording and the Chinese default sentence -------------------------------------------
ZH_SENTENCE = "我买了一个苹果，它很甜。"  # article 001's 它 → 苹果, one token a character


def zh_strings():
    import json
    from pathlib import Path

    data = json.loads(Path("ui/locales/zh/single_head.json").read_text("utf-8"))

    def walk(v):
        if isinstance(v, dict):
            for w in v.values():
                yield from walk(w)
        else:
            yield v

    return list(walk(data))


def test_zh_says_mask_as_d2l_does():
    strings = zh_strings()
    assert not [s for s in strings if "掩蔽" in s]
    assert any("掩码" in s for s in strings)


def test_seeded_table_is_named_briefly():
    from ui.i18n import tables

    assert len(tables("zh")["single_head.embeddings"]["seeded"]) <= 10
    assert len(tables("en")["single_head.embeddings"]["seeded"].split()) <= 5


def test_zh_sentence_part_opens_on_the_chinese_sentence():
    at = run_page("single_head", {"lang": "zh", "sh_view": "sentence"})
    assert_clean(at) and not errors(at)
    assert at.text_input(key="sh_text").value == ZH_SENTENCE
    assert "sh_text" not in qp(at)
    n = len(ZH_SENTENCE)  # every character (and mark) is a token of the seeded table
    assert f"{n} 个词元：" + " · ".join(ZH_SENTENCE) in texts(at)
    assert zs(at)[0].shape == (n, n)


def test_english_sentence_part_is_unchanged():
    at = run_page("single_head", {"sh_view": "sentence"})
    assert at.text_input(key="sh_text").value == lesson.SENTENCE
    assert "sh_text" not in qp(at)


def test_a_link_that_names_its_sentence_keeps_it():
    text = "A cat sat on the mat."
    at = run_page("single_head", {"lang": "zh", "sh_view": "sentence", "sh_text": text})
    assert at.text_input(key="sh_text").value == text and qp(at)["sh_text"] == text
    at = run_page("single_head", {"sh_view": "sentence", "sh_text": ZH_SENTENCE})
    assert at.text_input(key="sh_text").value == ZH_SENTENCE and qp(at)["sh_text"] == ZH_SENTENCE


def test_the_default_sentence_follows_a_language_switch():
    at = run_page("single_head", {"sh_view": "sentence"})
    at.session_state["lang"] = "zh"  # what the sidebar's language control does
    at.run()
    assert_clean(at)
    assert at.text_input(key="sh_text").value == ZH_SENTENCE and "sh_text" not in qp(at)
    at = run_page("single_head", {"sh_view": "sentence", "sh_text": "A cat sat."})
    at.session_state["lang"] = "zh"
    at.run()
    assert at.text_input(key="sh_text").value == "A cat sat."


def test_minilm_says_a_chinese_sentence_is_mostly_unk():
    import json

    from visattn.models.encoder import BertEncoder

    model = BertEncoder.load()
    tokenizer = json.loads((model.path / "tokenizer.json").read_text("utf-8"))
    vocab = tokenizer["model"]["vocab"]
    unknown = [c for c in ZH_SENTENCE if c not in vocab]  # BERT splits Chinese by characters
    assert len(unknown) > len(ZH_SENTENCE) / 2  # mostly [UNK]
    at = run_page("single_head", {"lang": "zh", "sh_view": "sentence", "sh_emb": "pretrained"})
    assert_clean(at) and not errors(at)
    note = " ".join(i.value for i in at.info)
    chars = "、".join(dict.fromkeys(unknown))
    assert f"这 {len(ZH_SENTENCE)} 个词元中有 {len(unknown)} 个是 [UNK]（{chars}）" in note
    assert "中文句子对它来说大多是 [UNK]" in texts(at)
    at = run_page("single_head", {"sh_view": "sentence", "sh_emb": "pretrained"})
    assert not at.info or "[UNK]" not in " ".join(i.value for i in at.info)


# --- predict, then reveal (?hide=1, ?hide=2) and the handout (?handout=1) -------------------------
def heatmap_traces(at) -> list[dict]:
    return [f["data"][0] for f in figures(at) if f["data"][0].get("type") == "heatmap"]


def test_hide_keeps_the_matrices_but_not_their_numbers_until_revealed():
    at = run_page("single_head", {"hide": "1"})
    assert_clean(at)
    traces = heatmap_traces(at)
    assert len(traces) == len(WORKED)
    for trace, (name, want) in zip(traces, WORKED, strict=True):
        assert not trace.get("text") and not trace.get("texttemplate"), name
        assert "%{z" not in trace.get("hovertemplate", ""), name
        # the colours still show the (right) matrix
        np.testing.assert_allclose(
            array(trace["z"]).astype(float), np.array(want, float), atol=1e-6
        )
    assert any("filter: blur" in h.proto.body for h in at.get("html"))  # metrics and tables
    at.button(key="reveal_chart_worked_q").click().run()
    assert_clean(at)
    q = heatmap_traces(at)[4]
    assert [[float(c) for c in row] for row in q["text"]] == REF["Q"]
    assert not heatmap_traces(at)[5].get("text")  # K is still hidden
    assert {k: at.query_params[k] for k in at.query_params} in ({"hide": "1"}, {"hide": ["1"]})


def test_hide_2_hides_the_colours_too_and_reveal_all_shows_everything():
    at = run_page("single_head", {"hide": "2", "lang": "zh"})
    assert_clean(at)
    for trace in heatmap_traces(at):
        assert {c for _, c in trace["colorscale"]} == {"rgb(214, 214, 214)"}
    at.button(key="lec_reveal_all").click().run()
    assert_clean(at)
    assert all(trace.get("texttemplate") for trace in heatmap_traces(at))
    assert not any("filter: blur" in h.proto.body for h in at.get("html"))


@pytest.mark.parametrize("bad", ["3", "yes", "-1"])
def test_a_tampered_hide_is_reset(bad):
    at = run_page("single_head", {"hide": bad})
    assert_clean(at)
    assert any("hide" in plain(w) for w in warnings(at))
    assert all(trace.get("texttemplate") for trace in heatmap_traces(at))


def test_handout_draws_the_worked_example_without_widget_chrome():
    at = run_page("single_head", {"handout": "1", "hide": "1"})
    assert_clean(at)
    css = "".join(h.proto.body for h in at.get("html"))
    assert '[data-testid="stSidebar"]' in css and "@media print" in css
    assert all(trace.get("texttemplate") for trace in heatmap_traces(at))  # never hidden on paper
    assert "lec_add" not in [b.key for b in at.button]  # no lecture panel
    assert "Printed vs computed" in texts(at)  # the article's differing numbers
