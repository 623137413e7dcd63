"""Kernel-regression page through AppTest: defaults, every bad input, URL round trip, tampered URL,
Chinese."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apptest_util import (
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    followers,
    formulas,
    open_section,
    panel,
    run_page,
    shown,
    texts,
    warnings,
)

EDITOR = "kr_data__ed0"
WAIST, WEIGHT = "waist (cm)", "weight (jin)"


def metric(at) -> str:
    """①'s estimate as the server drew it (an element that follows σ, the curve's slider)."""
    return shown(followers(at)["kernel_estimate"])["metric"]["value"]


def sigma_notes(at) -> list[str]:
    """What ① warns of at the server's σ (no estimate there), as text."""
    notes = shown(followers(at)["kernel_estimate"]).get("notes", [])
    return [re.sub(r"<[^>]+>", "", note["html"]) for note in notes]


def numbers(at) -> dict:
    """The key-by-key table and formula at the server's σ."""
    return shown(followers(at)["kernel_1d"])


def breakdown(at) -> pd.DataFrame:
    """The per-key table (the one with a Σ row)."""
    table = numbers(at)["table"]
    return pd.DataFrame(table["rows"], index=table["index"], columns=table["columns"])


def bar_weights(at) -> np.ndarray:
    (bars,) = [f for f in figures(at) if f["data"][0]["type"] == "bar"]
    return array(bars["data"][0]["y"])


def edit(at, edited=None, deleted=None, added=None, key=EDITOR):
    at.session_state[key] = {
        "edited_rows": edited or {},
        "added_rows": added or [],
        "deleted_rows": deleted or [],
    }
    at.run()
    return at


def test_defaults_waist_62():
    at = run_page("kernel_regression")
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    # article 002: scores −18, −2, −2 for keys 68, 60, 64 → weights ≈ 0, ½, ½ and 0.5·110 + 0.5·115
    # = 112.5
    assert float(metric(at)) == pytest.approx(112.5, abs=1e-4)
    z = math.exp(-18) + 2 * math.exp(-2)
    assert np.allclose(
        bar_weights(at),
        [math.exp(-18) / z, 0.5 * 2 * math.exp(-2) / z, 0.5 * 2 * math.exp(-2) / z],
        atol=1e-6,
    )
    df = breakdown(at)
    assert [float(w) for w in df.iloc[:3, 4]] == [0.0, 0.5, 0.5]
    assert [float(c) for c in df.iloc[:3, 5]] == [0.0, 55.0, 57.5]
    assert float(df.iloc[3, 5]) == 112.5  # the last column sums to the estimate
    tex = numbers(at)["tex"]
    assert "112.5" in tex and r"0.5\times 110" in tex
    one_query = figures(panel(at, "kernel_regression", "1d"))
    assert len(one_query) == 3  # ①'s bars, curve and heatmap
    curve = one_query[1]  # its legend: each entry named for what it is, none twice
    assert [tr["name"] for tr in curve["data"]] == [
        "estimate f(q)",
        "key→value pairs",
        "estimate at the query 62",
    ]
    assert dict(at.query_params) == {}  # defaults leave the link clean


# ---- acceptance 4: every bad input shows a message and keeps the last good view ------------------


@pytest.mark.parametrize(
    "name,change,expect",
    [
        ("text cell", dict(edited={0: {WAIST: "abc"}}), "finite number"),
        ("NaN", dict(edited={1: {WEIGHT: None}}), "finite number"),
        ("empty table", dict(deleted=[0, 1, 2]), "is empty"),
        ("single row", dict(deleted=[1, 2]), "at least two keys"),
    ],
)
def test_bad_table_keeps_last_good_view(name, change, expect):
    at = run_page("kernel_regression")
    edit(at, **change)
    assert_clean(at)
    assert any(expect in e for e in errors(at)), (name, errors(at))
    assert "last view that worked" in texts(at)
    assert float(metric(at)) == pytest.approx(112.5, abs=1e-4)
    assert np.allclose(bar_weights(at), [0, 0.5, 0.5], atol=1e-6)


@pytest.mark.parametrize("sigma", ["0", "-1", "nan"])
def test_a_link_whose_sigma_is_not_positive_is_reset_with_a_notice(sigma):
    """σ is the fitted curve's slider, which offers only σ > 0: a link's σ ≤ 0 is reported and
    the data set's σ taken."""
    at = run_page("kernel_regression", {"kr_sigma": sigma})
    assert_clean(at)
    (w,) = warnings(at)
    assert "kr\\_sigma" in w and not errors(at) and "kr_sigma" not in at.query_params
    assert float(metric(at)) == pytest.approx(112.5, abs=1e-4)  # σ = 1


def test_fit_sigma_moves_the_curves_slider():
    """The button sets σ on the server: the figures and the elements that follow σ open there, and
    their serial is newer than any position the browser kept (ui/live.js)."""
    at = run_page("kernel_regression", {"kr_sigma": "3"})
    before = followers(at)["kernel_estimate"]["server"]
    at.button(key="kr_fit").click().run()
    assert_clean(at)
    after = followers(at)["kernel_estimate"]["server"]
    assert at.session_state["kr_sigma"] != 3 and after[0] != before[0] and after[1] > before[1]
    curve = figures(at)[1]["layout"]["sliders"][0]
    assert curve["steps"][curve["active"]]["value"] == after[0]
    assert "cannot choose a bandwidth" in texts(at)  # 3 pairs: leave-one-out is flat


def test_duplicate_keys_warn_and_name_the_rows():
    at = run_page("kernel_regression")
    edit(at, edited={0: {WAIST: 60}})  # keys 60, 60, 64
    assert_clean(at)
    assert not errors(at)
    (w,) = warnings(at)
    assert "60" in w and "rows 1, 2" in w
    # each copy of 60 gets its own weight: e^−2 for all three keys → the plain mean
    assert float(metric(at)) == pytest.approx((126 + 110 + 115) / 3, abs=1e-4)


def test_query_out_of_reach_says_so():
    at = run_page("kernel_regression", {"kr_kernel": "epanechnikov"})
    at.number_input(key="kr_q_n").set_value(200.0).run()
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    (w,) = sigma_notes(at)  # at this σ: the note follows σ, as the figures do
    assert "200" in w and "no estimate" in w
    assert metric(at) == "—"
    assert np.all(bar_weights(at) == 0)
    # at 72, 4 from the nearest key: no note and an estimate where σ reaches it (the versions the
    # slider swaps in), a note where it does not
    at.number_input(key="kr_q_n").set_value(72.0).run()
    variants = followers(at)["kernel_estimate"]["variants"]
    for sigma, version in variants.items():
        reached = float(sigma) > 4
        assert ("notes" not in version) == reached, sigma
        assert (version["metric"]["value"] != "—") == reached, sigma


# ---- presets, fit σ, 2-D keys, the multi-dimensional tabs ----------------------------------------


def test_fit_sigma_sets_the_leave_one_out_minimum():
    from visattn.kernel_regression import fit_bandwidth
    from visattn.lessons.kernel_regression import noisy_samples

    at = run_page("kernel_regression")
    at.selectbox(key="kr_preset").set_value("noisy").run()
    assert at.session_state["kr_sigma"] == 0.5 and len(breakdown(at)) == 51
    assert "kr_sigma" not in at.query_params  # the data set's own σ
    at.button(key="kr_fit").click().run()
    assert_clean(at)
    x, y = noisy_samples().T
    assert at.session_state["kr_sigma"] == pytest.approx(fit_bandwidth(x, y)[0], rel=1e-9)
    assert float(at.query_params["kr_sigma"]) == pytest.approx(
        at.session_state["kr_sigma"], rel=1e-5
    )

    def loo_drawn() -> bool:
        return any(
            "Leave-one-out" in (f["layout"].get("title") or {}).get("text", "") for f in figures(at)
        )

    assert not loo_drawn()  # drawn only while its expander is open
    at.session_state["kr_loo_open"] = True
    at.run()
    assert loo_drawn()
    assert "cannot choose a bandwidth" not in texts(at)  # 50 noisy points have a real optimum


def test_game_two_features_in_the_plane():
    at = run_page("kernel_regression")
    at.selectbox(key="kr_preset").set_value("game_both").run()
    assert_clean(at)
    assert "illustrative" in texts(at)
    keys = np.array([[150, 320], [180, 260], [200, 300], [215, 240], [240, 280], [270, 200]], float)
    ability = np.array([85, 80, 90, 82, 93, 88], float)
    g = np.exp(-((keys - [207, 289]) ** 2).sum(1) / (2 * 20.0**2))
    assert float(metric(at)) == pytest.approx(float(g @ ability / g.sum()), abs=1e-3)
    scatter = [
        tr
        for f in figures(at)
        for tr in f["data"]
        if tr["type"] == "scatter" and "markers" in tr.get("mode", "")
    ]
    sizes = array(scatter[0]["marker"]["size"])
    assert np.argmax(sizes) == np.argmax(g)  # the biggest point is the heaviest key


def test_raw_features_one_hot_and_standardised():
    at = run_page("kernel_regression", {"kr_tab": "md"})
    at.radio(key="kr_score").set_value("dot").run()
    w = array(
        [f for f in figures(at) if "softmax" in f["layout"]["title"]["text"]][0]["data"][0]["z"]
    )
    assert np.all(np.isfinite(w)) and np.allclose(w.max(1), 1, atol=1e-6)  # scores ~1e4: one-hot
    at.toggle(key="kr_std").set_value(True).run()
    w = array(
        [f for f in figures(at) if "softmax" in f["layout"]["title"]["text"]][0]["data"][0]["z"]
    )
    assert w.max(1).min() < 0.99 and np.allclose(w.sum(1), 1, atol=2e-3)  # shown to 3 decimals
    assert_clean(at)


# ---- acceptance 5: the URL and both languages ----------------------------------------------------


def test_every_tab_is_drawn_and_the_open_one_shows():
    """Each section in its panel, whichever tab is open; the tab bar's style rule hides the others
    (ui.frame.tabs), and a link to ③ opens ③."""
    at = run_page("kernel_regression")
    assert "kernel_estimate" in followers(panel(at, "kernel_regression", "1d"))
    assert {r.key for r in panel(at, "kernel_regression", "md").radio} == {"kr_score"}
    assert {r.key for r in panel(at, "kernel_regression", "self").radio} == {"kr_sa_score"}
    assert open_section(at, "kernel_regression") == "1d"
    at = run_page("kernel_regression", {"kr_tab": "self"})
    assert_clean(at)
    assert open_section(at, "kernel_regression") == "self"
    at.session_state["kr_tab"] = "1d"
    at.run()
    assert_clean(at)
    assert open_section(at, "kernel_regression") == "1d" and "kr_tab" not in at.query_params


def test_url_round_trip():
    at = run_page("kernel_regression")
    at.selectbox(key="kr_preset").set_value("game_both").run()
    at.selectbox(key="kr_kernel").set_value("laplace")
    at.slider(key="kr_q2_s").set_value(250.0).run()
    at.session_state["kr_sigma"] = 33.0  # as the plane's slider would (in the browser), then a run
    at.run()
    estimate = metric(at)  # ①'s
    at.session_state["kr_tab"] = "self"  # tab ③ opened
    at.run()
    at.radio(key="kr_score").set_value("additive")
    at.toggle(key="kr_sa_std").set_value(True)
    edit(at, edited={0: {"feature 1": 70}}, key="kr_Q__ed0")
    assert_clean(at)
    params = dict(at.query_params)
    assert (
        params["kr_preset"] == "game_both"
        and params["kr_kernel"] == "laplace"
        and params["kr_q2"] == "250"
    )
    assert (
        params["kr_sigma"] == "33"
        and params["kr_score"] == "additive"
        and params["kr_sa_std"] == "1"
    )
    assert params["kr_Q"] == "70,85;61,80" and params["kr_tab"] == "self"
    again = run_page("kernel_regression", params)
    assert_clean(again)
    assert not warnings(again)
    for key in (
        "kr_preset",
        "kr_kernel",
        "kr_q",
        "kr_q2",
        "kr_sigma",
        "kr_score",
        "kr_sa_std",
        "kr_Q",
        "kr_tab",
    ):
        assert again.session_state[key] == at.session_state[key], key
    assert dict(again.query_params) == params
    again.session_state["kr_tab"] = "1d"  # the link opens tab ③; back to ①
    again.run()
    assert metric(again) == estimate


def test_edited_table_round_trips():
    at = run_page("kernel_regression")
    edit(at, edited={2: {WEIGHT: 118}}, added=[{WAIST: 72, WEIGHT: 135}])
    assert at.query_params["kr_data"] == "68,126;60,110;64,118;72,135"
    again = run_page("kernel_regression", dict(at.query_params))
    assert breakdown(again).shape[0] == 5 and metric(again) == metric(at)


def test_tampered_url_falls_back_with_a_warning():
    at = run_page(
        "kernel_regression",
        {
            "kr_preset": "zzz",
            "kr_kernel": "cubic",
            "kr_q": "abc",
            "kr_data": "1,2;3",
            "kr_score": "cosine",
            "kr_std": "maybe",
            "kr_bogus": "1",
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    w = w.replace("\\", "")  # names are markdown-escaped (kr\_q)
    for name in ("kr_preset", "kr_kernel", "kr_q", "kr_data", "kr_score", "kr_std", "kr_bogus"):
        assert name in w
    assert float(metric(at)) == pytest.approx(112.5, abs=1e-4)
    assert dict(at.query_params) == {}


def test_chinese():
    at = run_page("kernel_regression", {"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == "把注意力看作核回归"
    assert "腰围" in texts(at) and "自注意力" in " ".join(tab.label for tab in at.tabs)
    assert not errors(at) and not warnings(at)
    assert figures(at)[1]["data"][2]["name"] == "查询 62 处的估计值"  # the curve's star
    # (AppTest calls format_func outside the script run, in English, so the Chinese page is driven
    # by its URL)
    at = run_page("kernel_regression", {"lang": "zh", "kr_sigma": "0"})
    assert_clean(at)
    (w,) = warnings(at)  # σ > 0 is all the curve's slider offers: the link's is reset
    assert "kr\\_sigma" in w and "默认值" in w
    at = run_page("kernel_regression", {"lang": "zh", "kr_data": "60,110"})
    assert any("至少" in e for e in errors(at))


# ---- every bad input in Chinese: the message is Chinese ------------------------------------------

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize(
    "params",
    [
        {"kr_sigma": "0"},
        {"kr_sigma": "-1"},
        {"kr_sigma": "1e-200"},
        {"kr_data": "60,110"},
        {"kr_data": "1,2,3,4;5,6,7,8"},
        {"kr_kernel": "epanechnikov", "kr_q": "200"},
        {"kr_data": "60,110;60,120;64,115"},
        {"kr_q": "abc", "kr_kernel": "cubic"},
        {"kr_X": "1,2,3;4,5,6;7,8,9"},
        {"kr_X": "1,2,3,4"},
        {"kr_V": "1;2;3"},
        {"kr_wv": "1,2;3,4"},
    ],
    ids=lambda p: "&".join(f"{k}={v}" for k, v in p.items()),
)
def test_bad_inputs_in_chinese(params):
    at = run_page("kernel_regression", {"lang": "zh"} | params)
    assert_clean(at)
    said = errors(at) + warnings(at) + sigma_notes(at)
    assert said and all(CJK.search(m) for m in said), said
    assert (
        english_words(at, allowed={"kr"}) == {}
    )  # (the link's own parameter names are named as they are)


def test_rows_count_from_one():
    # (AppTest cannot edit a table on a lang=zh page: its format_func runs in English; the editor's
    # errors are the shared ui.widgets ones, translated through common.bad_cell)
    at = run_page("kernel_regression")
    edit(at, edited={0: {WAIST: "abc"}})
    (e,) = errors(at)
    assert "row 1, column waist (cm)" in e.replace("\\", "")
    at = run_page("kernel_regression", {"lang": "zh", "kr_data": "60,110;60,120;64,115"})
    (w,) = warnings(at)
    assert "第 1、2 行" in w


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"kr_preset": "game_both"},
        {"kr_preset": "noisy"},
        {"kr_score": "additive", "kr_sa_score": "dot"},
        {"kr_std": "1", "kr_sa_std": "1", "kr_kernel": "laplace"},
        {"present": "1"},
    ],
)
def test_chinese_views(params):
    at = run_page("kernel_regression", {"lang": "zh"} | params)
    assert_clean(at)
    assert not errors(at) and english_words(at) == {}


# ---- links with the wrong shape, big tables, a tiny σ --------------------------------------------


@pytest.mark.parametrize(
    "key,value",
    [
        ("kr_X", "1,2,3;4,5,6;7,8,9"),
        ("kr_X", "1,2,3,4"),
        ("kr_V", "1;2;3"),
        ("kr_Q", "1,2"),
        ("kr_Wq", "1,2,3;4,5,6"),
        ("kr_wv", "1"),
    ],
)
def test_wrong_shape_links_fall_back_with_a_notice(key, value):
    """Reset when the link opens, whichever tab is open; tab ③ (and with it ②) then draws what a
    clean link's does."""
    at = run_page("kernel_regression", {key: value})
    assert_clean(at)
    (w,) = warnings(at)
    assert key in w.replace("\\", "") and not errors(at)
    assert key not in at.query_params  # the default matrix, so the link is clean again
    at = run_page("kernel_regression", {key: value, "kr_tab": "self"})
    assert_clean(at)
    clean = run_page("kernel_regression", {"kr_tab": "self"})
    assert figures(clean) and len(figures(at)) == len(figures(clean))


def test_table_past_the_row_limit_is_refused_quickly():
    import time

    at = run_page("kernel_regression")
    start = time.perf_counter()
    edit(at, added=[{WAIST: 60 + i % 10, WEIGHT: 100 + i} for i in range(5000)])
    assert time.perf_counter() - start < 20  # refused before any kernel work
    assert_clean(at)
    (e,) = errors(at)
    assert "5003 rows" in e and "at most 64" in e
    assert float(metric(at)) == pytest.approx(112.5, abs=1e-4)  # the last table taken
    assert "kr_data" not in at.query_params  # the link keeps it too
    assert "At most 64 rows" in texts(at)


def test_tiny_sigma_with_gaussian_explains_overflow_not_kernel_choice():
    at = run_page("kernel_regression", {"kr_sigma": "1e-200"})
    assert_clean(at)
    (w,) = sigma_notes(at)
    assert "overflows float64" in w and "choose the Gaussian" not in w
    assert metric(at) == "—" and at.query_params["kr_sigma"] == "1e-200"
    # the curve's slider holds it exactly, beside its even grid
    curve = figures(at)[1]["layout"]["sliders"][0]
    assert curve["steps"][curve["active"]]["value"] == "1e-200" and curve["active"] == 0


def test_underflow_statement_is_numpy_s():
    at = run_page("kernel_regression", {"kr_score": "scaled_dot", "kr_tab": "md"})
    text = texts(at)
    assert "simply 0" not in text and "0 to any computer" not in text
    with np.errstate(under="ignore"):
        assert f"e⁻³⁰⁰ = {np.exp(-300.0):.2g}" in text  # 5.1e-131, measured
    assert "-745.13" in text
    # the sum it explains: f(q₁) = 1·v₁ + e^(−(12087 − 11235)/√2)·v₂ + …, a weight far below ε, not
    # a zero
    latex = " ".join(formulas(at))
    assert r"2.28\times 10^{-262}" in latex


def test_article_002_table():
    at = run_page("kernel_regression", {"kr_tab": "md"})
    (table,) = [tb.value for tb in at.table if "printed in article 002" in tb.value.columns]
    assert table.shape == (11, 3) and list(table["agrees"]).count("✗") == 3
    row = table.loc["α(q₁, k₁) — the weight"]
    assert row["printed in article 002"] == "Softmax(q₁k₁ᵀ) = 12087" and float(
        row["computed here"]
    ) == pytest.approx(1.0)
    assert table.loc["q₁ · k₁ — the score", "computed here"] == "12087"


def test_table_links_round_trip_up_to_the_limit():
    rows = ";".join(
        f"{50 + i * 0.5:g},{100 + i}" for i in range(64)
    )  # 64 rows: taken, and written back as given
    at = run_page("kernel_regression", {"kr_data": rows})
    assert_clean(at)
    assert not errors(at) and not warnings(at) and len(breakdown(at)) == 65
    assert at.query_params["kr_data"] == rows
    at = run_page(
        "kernel_regression", {"kr_data": rows + ";90,200"}
    )  # 65: refused on reading the link, with a notice
    (w,) = warnings(at)
    assert "kr_data" in w.replace("\\", "") and len(breakdown(at)) == 4


# ---- σ is the fitted curve's slider, and what it changes follows it --------------------------


def sigma_sliders(at) -> dict:
    """{first trace type: the figure's slider of σ} (shown, or followed) of ①'s figures."""
    return {
        f["data"][0]["type"]: f["layout"]["sliders"][0]
        for f in figures(at)
        if f["layout"].get("sliders")
    }


@pytest.mark.parametrize(
    "params,sigma,est",
    [
        ({}, "1", "112.5"),
        ({"kr_q": "63.2", "kr_sigma": "2.5"}, "2.5", None),
        ({"kr_preset": "game_both", "lang": "zh"}, "20", None),
    ],
)
def test_the_figures_open_at_the_links_sigma_and_follow_one_slider(params, sigma, est):
    at = run_page("kernel_regression", params)
    assert_clean(at)
    s = sigma_sliders(at)
    plane = params.get("kr_preset") == "game_both"
    curve = s["heatmap" if plane else "scatter"]  # the one shown: the curve's, or the plane's
    assert curve["name"] == "kr_sigma" and curve.get("visible", True) is True
    assert curve["steps"][curve["active"]]["label"] == sigma
    followed = [sl for kind, sl in s.items() if sl is not curve]
    assert followed and all(sl["name"] == "kr_sigma" and sl["visible"] is False for sl in followed)
    values = [step["value"] for step in curve["steps"]]
    for sl in followed:  # the same positions, at the same σ
        assert [step["value"] for step in sl["steps"]] == values and sl["active"] == curve["active"]
    bars = s["bar"]
    note = bars["steps"][bars["active"]]["args"][1]["annotations[0].text"]
    assert f"{float(metric(at)):.6g}" in note and (est is None or est in note)
    # the elements that follow σ have a version at every position of the slider
    for data in followers(at).values():
        assert data["control"] == "kr_sigma" and list(data["variants"]) == sorted(
            data["variants"], key=float
        )
        assert set(data["variants"]) == set(values) and data["server"][0] == sigma
    if params.get("lang") == "zh":
        assert note.startswith("估计值") and curve["currentvalue"]["prefix"].startswith("带宽")
    else:
        assert note.startswith("estimate") and curve["currentvalue"]["prefix"] == "bandwidth σ = "


def test_every_position_of_sigma_is_the_kernel_at_that_sigma():
    """Each version the slider swaps in is computed at its own σ: the bars, the table and the
    formula of one position agree with Nadaraya–Watson written out here."""
    at = run_page("kernel_regression")
    keys, values = np.array([68.0, 60.0, 64.0]), np.array([126.0, 110.0, 115.0])
    bars = sigma_sliders(at)["bar"]
    table = followers(at)["kernel_1d"]["variants"]
    for step in bars["steps"]:
        sigma = float(step["value"])
        scores = -((62 - keys) ** 2) / (2 * sigma**2)
        weights = np.exp(scores - scores.max())
        weights /= weights.sum()
        (sent,) = step["args"][0]["y"]
        np.testing.assert_allclose(array(sent), weights, rtol=1e-5, atol=1e-7)
        rows = table[step["value"]]["table"]["rows"]
        assert [float(r[4]) for r in rows[:3]] == pytest.approx(weights, abs=1e-4)
        assert float(rows[3][5]) == pytest.approx(weights @ values, abs=1e-4)  # the Σ row
        assert f"{weights @ values:.6g}" in table[step["value"]]["tex"]


def test_each_tab_is_a_section_and_sigma_one_inside_the_first():
    page = (Path(__file__).resolve().parent.parent / "pages" / "kernel_regression.py").read_text(
        encoding="utf-8"
    )
    assert page.count("@section") == 4  # ①, ②, ③, and σ with what it redraws inside ①
    assert "@section\ndef bandwidth(" in page
    at = run_page("kernel_regression")
    # AppTest runs the whole page; the answer is the same
    at.slider(key="kr_q_s").set_value(64.0).run()
    assert_clean(at)
    assert float(metric(at)) == pytest.approx(115, abs=0.5) and at.query_params["kr_q"] == "64"
    assert not [w for w in at.get("slider") if w.key.startswith("kr_sigma")]  # the curve's alone


def test_the_chinese_page_names_d2l_s_attention_pooling():
    """d2l-zh's name for Nadaraya–Watson pooling, 注意力汇聚, on the card and in the
    introduction (and attention pooling in English)."""
    zh = run_page("kernel_regression", {"lang": "zh"})
    assert_clean(zh)
    assert "注意力汇聚" in texts(zh)
    home = run_page("home", {"lang": "zh"})
    assert "注意力汇聚" in texts(home)
    assert "attention pooling" in texts(run_page("kernel_regression"))


# --- predict, then reveal (?hide=1) --------------------------------------------------------------
def test_hide_keeps_the_estimate_for_the_reveal():
    shown = run_page("kernel_regression")
    at = run_page("kernel_regression", {"hide": "1"})
    assert_clean(at)
    notes = [a["text"] for f in figures(at) for a in f["layout"].get("annotations", [])]
    before = [a["text"] for f in figures(shown) for a in f["layout"].get("annotations", [])]
    assert any("112.5" in n for n in before)  # article 002's estimate, 0.5 × 110 + 0.5 × 115
    assert not any("112.5" in n for n in notes) and any("= ?" in n for n in notes)
    assert any("stMetricValue" in h.proto.body and "blur" in h.proto.body for h in at.get("html"))
    assert len(figures(at)) == len(figures(shown))  # the same figures, with a Reveal under each
    assert len([b for b in at.button if b.key.startswith("reveal_")]) == len(figures(at))
