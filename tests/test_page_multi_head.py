"""Multi-head page through AppTest: the designed heads in every reading, random heads, bad input,
URL, Chinese."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_util import (
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    run_page,
    texts,
    warnings,
)

from visattn.models import designed

TOKENS = "The animal didn't cross the street because it was too tired .".split()
WIDE = "The animal didn't cross the street because it was too wide."


CJK = re.compile(r"[\u4e00-\u9fff]")


def title(fig: dict) -> str:
    t = fig["layout"].get("title")
    return (t.get("text") if isinstance(t, dict) else t) or ""


def bar_figs(at) -> dict[str, np.ndarray]:
    """Focus bars by title ("Coreference: it → animal (0.96)") → the weights drawn."""
    return {
        title(f): array(f["data"][0]["y"])
        for f in figures(at)
        if f["data"] and f["data"][0]["type"] == "bar"
    }


def focus_weights(at, head: str) -> np.ndarray:
    (w,) = [y for name, y in bar_figs(at).items() if name.startswith(head)]
    return w


def grid_fig(at) -> dict:
    (fig,) = [
        f
        for f in figures(at)
        if f["data"] and f["data"][0]["type"] == "heatmap" and len(f["data"]) > 1
    ]
    return fig


@pytest.fixture(scope="module")
def default_page():
    at = run_page("multi_head")
    assert_clean(at)
    return at


def test_defaults_show_it_animal_and_it_tired(default_page):
    at = default_page
    assert not errors(at) and not warnings(at)
    it, animal, tired = TOKENS.index("it"), TOKENS.index("animal"), TOKENS.index("tired")
    # the grid: all four heads of layer 2 on one 0…1 colour axis
    grid = grid_fig(at)
    assert len(grid["data"]) == 4 and {d.get("coloraxis") for d in grid["data"]} == {"coloraxis"}
    assert grid["layout"]["coloraxis"]["cmin"] == 0 and grid["layout"]["coloraxis"]["cmax"] == 1
    assert [a["text"] for a in grid["layout"]["annotations"]] == [
        "Coreference",
        "State",
        "Previous token",
        "Broad",
    ]
    coref = array(grid["data"][0]["z"]).reshape(len(TOKENS), len(TOKENS))
    assert coref[it, animal] >= 0.5
    # token focus: "it" in every head; coreference → animal, state → tired, both clearly
    assert at.selectbox(key="mh_tok").value == it
    bars = bar_figs(at)
    assert len(bars) == 4
    assert focus_weights(at, "Coreference")[animal] >= 0.5
    assert focus_weights(at, "State")[tired] >= 0.5
    assert any(name.startswith("Coreference: it → animal") for name in bars)
    assert any(name.startswith("State: it → tired") for name in bars)
    # and the numbers are the designed model's, layer 2
    r = designed.run(" ".join(TOKENS))
    np.testing.assert_allclose(focus_weights(at, "State"), r.head(1, "state")[it], atol=1e-6)
    # the lines: one colour per head, lines of "it" only by default
    (lines,) = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    assert {d["name"] for d in lines["data"] if d.get("mode") == "lines"} == {
        "Coreference",
        "State",
        "Previous token",
        "Broad",
    }
    assert all(
        y in (it, None) for d in lines["data"] if d.get("mode") == "lines" for y in d["y"][0::3]
    )
    # one head large, with its CSV
    assert at.selectbox(key="mh_head").value == 0
    assert at.get("download_button")
    assert "Coreference" in texts(at) and "tired → needs something animate" in texts(at)


def test_shape_explorer_shows_gpt3(default_page):
    metrics = {m.label: m.value for m in default_page.metric}
    assert metrics["d_head"] == "128"
    assert metrics["Parameters per layer (attention)"] == "603,979,776"
    assert "4 × 12,288² = 4 × 150,994,944 = 603,979,776" in texts(default_page)
    assert "96 blocks of (12,288, 128)" in texts(default_page)
    table = default_page.table[0].value
    shapes = dict(zip(table.index, table.iloc[:, 0], strict=True))
    assert list(table.index)[-4:] == [
        "W_o",
        "MHA",
        "residual",
        "Z",
    ]  # every row of the block, none hidden
    assert shapes["W_q_h"] == "(12,288, 128)" and shapes["A"] == "(96, 50, 50)"


def test_wide_preset_moves_coreference_to_street_in_layer_2():
    at = run_page("multi_head")
    at.button(key="mh_text__preset_wide").click().run()
    assert_clean(at)
    assert at.text_input(key="mh_text").value == WIDE
    tokens = WIDE.replace(".", " .").split()
    assert focus_weights(at, "Coreference")[tokens.index("street")] >= 0.5
    assert focus_weights(at, "State")[tokens.index("wide")] >= 0.5
    at.radio(key="mh_layer").set_value(1).run()  # layer 1 has not read the adjective's demand yet
    assert focus_weights(at, "Coreference")[tokens.index("animal")] >= 0.5
    assert at.query_params["mh_layer"] == ["1"] or at.query_params["mh_layer"] == "1"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "empty"),
        ("   ", "empty"),
        (" ".join(["word"] * 300), "300 tokens"),
    ],
)
def test_bad_text_gives_a_clear_message(text, expected):
    at = run_page("multi_head")
    at.text_input(key="mh_text").input(text).run()
    assert_clean(at)
    (err,) = errors(at)
    assert expected in err
    assert "Showing the last view that worked" in texts(at)  # the previous good view stays, marked


def test_bad_text_on_first_load_still_renders_the_page():
    at = run_page("multi_head", {"mh_text": " ".join(["word"] * 300)})
    assert_clean(at)
    assert any("300 tokens" in e and "64" in e for e in errors(at))
    assert not bar_figs(at)
    assert {m.label: m.value for m in at.metric}[
        "d_head"
    ] == "128"  # the shape explorer still works


def test_unknown_words_are_listed():
    at = run_page(
        "multi_head", {"mh_text": "The zebra didn't cross the street because it was too cold."}
    )
    assert_clean(at)
    (note,) = [str(i.value) for i in at.info]
    assert "zebra" in note and "cold" in note and "street" not in note


def test_random_heads_and_indivisible_heads():
    at = run_page("multi_head", {"mh_src": "random"})
    assert_clean(at)
    assert not errors(at)
    bars = bar_figs(at)
    assert len(bars) == 4 and all(
        w.max() < 0.5 for w in bars.values()
    )  # untrained heads are diffuse
    assert "Random heads have no reason" in texts(at)
    at.number_input(key="mh_d").set_value(30).run()
    assert_clean(at)
    (err,) = errors(at)
    assert (
        "d_model = 30" in err
        and "n_heads = 4" in err
        and "not divisible" in err
        and "1, 2, 3, 5, 6, 10, 15, 30" in err
    )
    at.number_input(key="mh_h").set_value(5).run()
    assert not errors(at)
    assert len(bar_figs(at)) == 5
    at.number_input(key="mh_h").set_value(
        10
    ).run()  # more than 8 heads: one heatmap of "it" per head
    assert not errors(at) and not bar_figs(at)
    assert any(title(f).startswith("Weights of “it”") for f in figures(at))


def test_shape_explorer_refuses_indivisible_heads():
    at = run_page("multi_head", {"mh_sH": "97"})
    assert_clean(at)
    (err,) = errors(at)
    assert "d_model = 12288" in err and "n_heads = 97" in err and "not divisible" in err
    at.button(key="mh_shapes_gpt3").click().run()
    assert not errors(at) and {m.label: m.value for m in at.metric}["d_head"] == "128"
    at.button(key="mh_shapes_here").click().run()
    metrics = {m.label: m.value for m in at.metric}
    assert (
        metrics["d_head"] == "8" and metrics["Parameters per layer (attention)"] == f"{4 * 32**2:,}"
    )


def test_pipeline_shows_every_step_with_its_shape():
    at = run_page("multi_head", {"mh_pipe": "1", "mh_layer": "1"})
    assert_clean(at)
    titles = [title(f) for f in figures(at)]
    for want in (
        "X: (12, 32)",
        "PE: (12, 8)",
        "Q₁: (12, 8)",
        "K₁: (12, 8)",
        "V₁: (12, 8)",
        "A₁: (12, 12)",
        "head₁ = A₁V₁: (12, 8)",
        "concat: (12, 32)",
        "W_O: (32, 32)",
        "MHA(X) = concat · W_O: (12, 32)",
        "X + MHA(X): (12, 32)",
        "Z = LayerNorm: (12, 32)",
    ):
        assert want in titles, want


def test_url_round_trip():
    at = run_page("multi_head")
    at.button(key="mh_text__preset_high").click().run()
    at.radio(key="mh_layer").set_value(1).run()
    at.selectbox(key="mh_head").set_value(1).run()
    at.selectbox(key="mh_tok").set_value(1).run()
    at.checkbox(key="mh_v3").uncheck().run()
    at.toggle(key="mh_lfoc").set_value(False).run()
    at.number_input(key="mh_sT").set_value(7).run()
    assert_clean(at)
    params = {k: at.query_params[k] for k in at.query_params}
    params = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
    assert (
        params["mh_text"].startswith("The cat")
        and params["mh_layer"] == "1"
        and params["mh_head"] == "1"
    )
    assert (
        params["mh_tok"] == "1"
        and params["mh_v3"] == "0"
        and params["mh_lfoc"] == "0"
        and params["mh_sT"] == "7"
    )
    again = run_page("multi_head", params)
    assert_clean(again)
    assert not warnings(again)
    assert again.text_input(key="mh_text").value == at.text_input(key="mh_text").value
    assert again.selectbox(key="mh_tok").value == 1 and again.selectbox(key="mh_head").value == 1
    assert again.checkbox(key="mh_v3").value is False
    assert [title(f) for f in figures(again)] == [title(f) for f in figures(at)]
    assert bar_figs(again).keys() == bar_figs(at).keys()


def test_focus_returns_to_the_pronoun_when_the_sentence_changes():
    at = run_page("multi_head", {"mh_tok": "2"})
    assert at.selectbox(key="mh_tok").value == 2
    at.text_input(key="mh_text").input("The dog saw the cat because it was hungry.").run()
    assert at.selectbox(key="mh_tok").value == 6  # "it"
    assert "mh_tok" not in at.query_params


def test_tampered_url_falls_back_with_a_warning():
    at = run_page(
        "multi_head",
        {
            "mh_src": "evil",
            "mh_layer": "7",
            "mh_d": "abc",
            "mh_tok": "99",
            "mh_sD": "-5",
            "mh_zzz": "1",
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    w = w.replace("\\_", "_")  # names are markdown-escaped
    for name in ("mh_src", "mh_layer", "mh_d", "mh_tok", "mh_sD", "mh_zzz"):
        assert name in w
    assert not errors(at)
    assert at.radio(key="mh_src").value == "designed" and at.radio(key="mh_layer").value == 2
    assert at.selectbox(key="mh_tok").value == TOKENS.index("it")
    assert focus_weights(at, "Coreference")[TOKENS.index("animal")] >= 0.5


def test_chinese():
    at = run_page("multi_head", {"lang": "zh", "mh_src": "random", "mh_d": "30"})
    assert_clean(at)
    assert at.title[0].value == "多头注意力"
    (err,) = errors(at)
    assert "不能被 n_heads = 4 整除" in err
    at = run_page("multi_head", {"lang": "zh"})
    assert_clean(at)
    assert "指代" in texts(at) and "状态" in texts(at)
    assert any(name.startswith("指代：它 → 动物") for name in bar_figs(at))
    assert any(name.startswith("状态：它 → 累") for name in bar_figs(at))
    assert "每层参数量（注意力）" in {m.label for m in at.metric}
    # a link that names the English sentence keeps it, and its words
    at = run_page("multi_head", {"lang": "zh", "mh_text": SENTENCE})
    assert_clean(at)
    assert at.text_input(key="mh_text").value == SENTENCE
    assert any(name.startswith("指代：it → animal") for name in bar_figs(at))
    assert "“it”指代谁" in texts(at) and "“…too tired”选中“animal”" in texts(at)


# ── the Chinese sentences ───────────────────────────────────────────────────────────────────────
TIRED_ZH = "动物没有穿过街道，因为它太累了。"
WIDE_ZH = "动物没有穿过街道，因为它太宽了。"
APPLE_ZH = "我买了一个苹果，它很甜。"


def coreference_row(at, text: str, layer: int) -> tuple[list[str], np.ndarray]:
    """The designed model's own coreference row of 它 in ``layer``, and the page's grid cell row."""
    r = designed.run(text)
    it = r.tokens.index("它")
    grid = grid_fig(at)
    T = len(r.tokens)
    drawn = array(grid["data"][0]["z"]).reshape(T, T)[it]  # the grid's first head: coreference
    np.testing.assert_allclose(drawn, r.head(layer, "coreference")[it], atol=1e-6)
    return r.tokens, drawn


def test_the_chinese_page_opens_on_the_chinese_sentence():
    at = run_page("multi_head", {"lang": "zh"})
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    assert at.text_input(key="mh_text").value == TIRED_ZH
    tokens, row = coreference_row(at, TIRED_ZH, designed.N_LAYERS - 1)
    assert at.selectbox(key="mh_tok").value == tokens.index("它")  # the focus is 它
    assert row[tokens.index("动物")] >= 0.5 and tokens[int(np.argmax(row))] == "动物"
    # the default is bound as the control's default in Chinese: the URL leaves it out
    assert "mh_text" not in at.query_params
    assert "mh_tok" not in at.query_params
    # the explanations name the Chinese words; nothing is called unknown (了 is a listed particle)
    shown = texts(at)
    assert "“它”指代谁" in shown and "“……太宽了”选中“街道”" in shown and "（没有）" in shown
    assert not [i for i in at.info if "不认识" in i.value]
    # the presets are the Chinese ones, then the English original
    keys = [b.key for b in at.button if b.key and b.key.startswith("mh_text__preset_")]
    assert keys == [
        f"mh_text__preset_{n}" for n in ("tired_zh", "wide_zh", "apple", "high_zh", "tired")
    ]
    assert english_words(at) == {}, english_words(at)


def preset_help(at, name: str) -> str:
    (button,) = [b for b in at.button if b.key == f"mh_text__preset_{name}"]
    return button.help


# On a zh page AppTest cannot click (a widget's format_func runs outside the script there, in
# English): the preset's sentence is read from its button and opened by URL, as a click sets it.
def test_the_wide_preset_in_chinese_links_it_to_the_street():
    at = run_page("multi_head", {"lang": "zh"})
    assert preset_help(at, "wide_zh") == f"“{WIDE_ZH}”"
    at = run_page("multi_head", {"lang": "zh", "mh_text": WIDE_ZH})
    assert_clean(at)
    tokens, row = coreference_row(at, WIDE_ZH, designed.N_LAYERS - 1)
    assert row[tokens.index("街道")] >= 0.5 and tokens[int(np.argmax(row))] == "街道"
    assert at.query_params["mh_text"] in (WIDE_ZH, [WIDE_ZH])  # not the default: kept in the link


def test_article_001_preset_links_it_to_the_apple_in_layer_1():
    at = run_page("multi_head", {"lang": "zh"})
    assert preset_help(at, "apple") == f"“{APPLE_ZH}”"
    at = run_page("multi_head", {"lang": "zh", "mh_layer": "1", "mh_text": APPLE_ZH})
    assert_clean(at)
    tokens, row = coreference_row(at, APPLE_ZH, 0)
    assert at.selectbox(key="mh_tok").value == tokens.index("它")  # 它, not the first pronoun 我
    assert tokens[int(np.argmax(row))] == "苹果" and row.max() >= 0.5


def switch_language(at, lang: str):
    """What the sidebar's language control does (AppTest has no segmented-control driver)."""
    at.session_state["lang"] = lang
    return at.run()


def test_the_default_sentence_follows_a_language_switch():
    # one switch per AppTest: after it, AppTest formats the old widgets' values in English
    at = run_page("multi_head")
    assert at.text_input(key="mh_text").value == SENTENCE
    switch_language(at, "zh")
    assert_clean(at)
    assert at.text_input(key="mh_text").value == TIRED_ZH and "mh_text" not in at.query_params
    tokens = designed.segment(TIRED_ZH)
    assert at.selectbox(key="mh_tok").value == tokens.index("它")
    # a sentence of one's own stays through a switch
    at = run_page("multi_head", {"mh_text": WIDE})
    switch_language(at, "zh")
    assert at.text_input(key="mh_text").value == WIDE


def test_the_default_sentence_of_each_language():
    from visattn.lessons.multi_head import sentence_for

    assert (sentence_for("en"), sentence_for("zh")) == (SENTENCE, TIRED_ZH)


def test_the_english_page_is_unchanged():
    at = run_page("multi_head")
    assert at.text_input(key="mh_text").value == SENTENCE
    keys = [b.key for b in at.button if b.key and b.key.startswith("mh_text__preset_")]
    assert keys == [
        f"mh_text__preset_{n}" for n in ("tired", "wide", "scared", "high", "two_adjectives")
    ]
    assert "mh_text" not in at.query_params


# ── a near-uniform row names no winner ──────────────────────────────────────────────────────────
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_near_uniform_focus_row_is_said_not_given_a_winner(lang):
    at = run_page("multi_head", {"lang": lang})
    assert_clean(at)
    text = SENTENCE if lang == "en" else TIRED_ZH
    r = designed.run(text)
    it = r.tokens.index("it" if lang == "en" else "它")
    rows = r.weights[-1, :, it]  # (H, T) the focus row of every head, last layer
    T = len(r.tokens)
    summary = next(
        m.value for m in at.markdown if "→ near uniform" in m.value or "→ 接近均匀" in m.value
    )
    bars = bar_figs(at)
    for h, name in enumerate(r.head_names):
        row = rows[h]
        # the rule, by hand: near uniform when the largest weight is below 1.5 / T (rows sum to 1)
        uniform = max(row) < 1.5 / T
        head = {"en": designed_head_en, "zh": designed_head_zh}[lang][name]
        (bar_title,) = [b for b in bars if b.startswith(head)]
        if uniform:
            said = f"{min(row):.2f}–{max(row):.2f}"
            word = "near uniform" if lang == "en" else "接近均匀"
            assert f"**{head}** → {word}" in summary and said in summary
            assert word in bar_title and said in bar_title
            (fig,) = [f for f in figures(at) if title(f) == bar_title]
            assert len(set(fig["data"][0]["marker"]["color"])) == 1  # no bar highlighted
        else:
            target = r.tokens[int(np.argmax(row))]
            assert f"**{head}** → **{target}**" in summary
    assert any(max(row) < 1.5 / T for row in rows)  # the broad head's row is one of them
    rule = "below 1.5 × the row's mean" if lang == "en" else "小于该行均值的 1.5 倍"
    assert rule in texts(at)


designed_head_en = {
    "coreference": "Coreference",
    "state": "State",
    "previous": "Previous token",
    "broad": "Broad",
}
designed_head_zh = {
    "coreference": "指代",
    "state": "状态",
    "previous": "前一个词元",
    "broad": "宽泛",
}


# ── bad inputs and every view, in Chinese ─────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "params, kind, says",
    [
        ({"mh_text": ""}, "error", "空"),
        ({"mh_text": "   "}, "error", "空"),
        ({"mh_text": " ".join(["word"] * 300)}, "error", "300"),
        (
            {"mh_text": "w " * 2400},
            "error",
            "2400",
        ),  # long but within the box: counted, not "empty"
        ({"mh_src": "random", "mh_d": "30", "mh_h": "4"}, "error", "1, 2, 3, 5, 6, 10, 15, 30"),
        ({"mh_sH": "97"}, "error", "12288"),
        (
            {"mh_text": "w" * 5001},
            "warning",
            "mh",
        ),  # longer than the box allows: refused, with a notice
        ({"mh_layer": "7", "mh_tok": "99"}, "warning", "mh"),
    ],
    ids=[
        "empty",
        "blank",
        "300 tokens",
        "2400 tokens",
        "heads",
        "explorer heads",
        "5001 characters",
        "tampered",
    ],
)
def test_bad_inputs_are_said_in_chinese(params, kind, says):
    at = run_page("multi_head", {"lang": "zh"} | params)
    assert_clean(at)
    said = errors(at) if kind == "error" else warnings(at)
    assert said and all(CJK.search(m) for m in said), said
    assert any(says in m.replace("\\_", "_") for m in said), said
    assert (
        english_words(at, allowed={"mh"}) == {}
    )  # parameter names (mh_text, escaped as mh\\_text) are not prose


@pytest.mark.parametrize(
    "params",
    [
        {"mh_pipe": "1", "mh_layer": "1"},
        {"mh_pipe": "1", "mh_layer": "2", "mh_head": "3"},
        {"mh_src": "random", "mh_pipe": "1", "mh_layer": "1"},
        {
            "mh_src": "random",
            "mh_d": "30",
            "mh_h": "10",
        },  # more than 8 heads: one heatmap of the focus row
        {
            "mh_text": "The zebra didn't cross the street because it was too cold.",
            "mh_v0": "0",
            "mh_v1": "0",
            "mh_v2": "0",
            "mh_v3": "0",
        },  # unknown words; no head in the lines
    ],
    ids=[
        "pipeline L1",
        "pipeline L2",
        "random pipeline",
        "10 random heads",
        "unknown words, no lines",
    ],
)
def test_every_view_in_chinese(params):
    at = run_page("multi_head", {"lang": "zh"} | params)
    assert_clean(at)
    assert not errors(at)
    assert english_words(at) == {}


def test_chinese_wording():
    at = run_page("multi_head", {"lang": "zh", "mh_pipe": "1", "mh_layer": "1"})
    shown = texts(at) + " ".join(str(r.options) for r in at.radio)
    assert "人工设计的头" in shown and "设计好的" not in shown
    assert "前一个词元" in texts(at) and "层规范化" in texts(at)
    prose = [line for line in texts(at).splitlines() if CJK.search(line)]
    for line in (
        prose
    ):  # no half-width separator between Chinese words: "；" not ";", "（0.96）" not "(0.96)"
        assert not re.search(
            r"[\u4e00-\u9fff][;,]|; |\(\d+\.\d+\)", re.sub(r"\$[^$]*\$", "", line)
        ), line


# ── the numbers the page shows, recomputed here ───────────────────────────────────────────────────
def test_layer1_input_columns_add_up():
    at = run_page("multi_head", {"mh_pipe": "1", "mh_layer": "1"})
    names = designed.DIM_NAMES
    groups = {
        "features": sum(n in designed.FEATURES for n in names),
        "positions": sum(n.startswith("pos_") for n in names),
        "slots": sum(
            n.startswith(("wants_", "refers_")) or n in ("after_determiner", "negated")
            for n in names
        ),
        "zero": names.count("zero"),
        "unused": sum(n.startswith("unused") for n in names),
    }
    assert sum(groups.values()) == len(names) == 32 and groups == {
        "features": 15,
        "positions": 8,
        "slots": 6,
        "zero": 1,
        "unused": 2,
    }
    assert "15 + 8 + 6 + 1 + 2 = 32" in texts(at)
    assert "4 heads get 8 columns each" in texts(at)


def test_pipeline_matrices_are_the_formula():
    """Q₁, A₁ and Z of layer 1 as drawn equal X·W_Q's first 8 columns, softmax(Q₁K₁ᵀ/√8) and the
    row-normalised residual, computed here from the designed weights."""
    at = run_page("multi_head", {"mh_pipe": "1", "mh_layer": "1"})
    figs = {title(f).split(":")[0]: f for f in figures(at)}
    X = designed.run(" ".join(TOKENS)).X
    W = designed.DESIGNED_CONFIG.layers[0]
    Q, K = X @ W.W_q[:, :8], X @ W.W_k[:, :8]
    s = Q @ K.T / np.sqrt(8)
    A = np.exp(s - s.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(array(figs["Q₁"]["data"][0]["z"]).reshape(Q.shape), Q, atol=1e-5)
    np.testing.assert_allclose(array(figs["A₁"]["data"][0]["z"]).reshape(A.shape), A, atol=1e-6)
    Z = array(figs["Z = LayerNorm"]["data"][0]["z"]).reshape(len(TOKENS), 32)
    np.testing.assert_allclose(Z.mean(axis=1), 0, atol=1e-5)
    np.testing.assert_allclose(Z.var(axis=1), 1, atol=1e-3)  # γ = 1, β = 0 here, as the text says
    assert "γ" in texts(at) and "β" in texts(at) and "standard normal distribution" in texts(at)


def test_diffuse_caption_is_measured():
    at = run_page("multi_head")
    w = designed.run(" ".join(TOKENS)).weights[1]
    want = np.mean([[max(row) for row in head] for head in w])
    assert f"**{want:.2f}**" in texts(at) and f"1/T = {1 / len(TOKENS):.2f}" in texts(at)


def test_text_box_states_and_enforces_its_limit():
    at = run_page("multi_head")
    box = at.text_input(key="mh_text")
    assert box.proto.max_chars == 5000 and "5000" in box.help
    at = run_page("multi_head", {"mh_text": "w" * 5001})
    assert at.text_input(key="mh_text").value == designed_sentence()
    assert any("mh\\_text" in w or "mh_text" in w for w in warnings(at))


def designed_sentence() -> str:
    from visattn.lessons.multi_head import SENTENCE

    return SENTENCE


def test_presets_are_told_apart_by_their_first_words():
    at = run_page("multi_head")
    labels = [b.label for b in at.button if b.key and b.key.startswith("mh_text__preset_")]
    assert len(labels) == 5 and len({label[:6] for label in labels}) == 5


def test_numbering_is_one_based():
    at = run_page("multi_head", {"mh_pipe": "1", "mh_head": "1"})
    assert "this head takes columns 9…16 of it" in texts(at)  # the second head of 8 columns
    assert "Tokens, heads, layers and columns are numbered from 1." in texts(at)
    assert [o for o in at.selectbox(key="mh_tok").options][:2] == ["1: The", "2: animal"]
    at = run_page("multi_head", {"mh_src": "random"})
    assert at.selectbox(key="mh_head").options[:2] == ["Head 1", "Head 2"]


def test_presenter_mode_keeps_every_table_row_and_two_metrics_a_row():
    at = run_page("multi_head", {"present": "1"})
    assert_clean(at)
    assert (
        len(at.table[0].value) == 19 and not at.dataframe
    )  # a static table: no scrolled-away rows
    assert len(at.metric) == 4


# ── the one reading selector on this page ───────────────────────────────────────────────────────
SENTENCE = "The animal didn't cross the street because it was too tired."
READINGS = ("weights", "norm_weighted", "mean", "max", "rollout", "flow")


def one_map(at) -> np.ndarray:
    """The one-head section's heatmap (its title reads "… · layer n"), as drawn."""
    (fig,) = [
        f
        for f in figures(at)
        if f["data"]
        and f["data"][0]["type"] == "heatmap"
        and len(f["data"]) == 1
        and ("layer" in title(f) or "层" in title(f))
    ]
    d = fig["data"][0]
    return array(d["z"]).reshape(len(d["y"]), len(d["x"]))


def loop_norms(r, params) -> np.ndarray:
    """‖x_j W_V^h W_O^h‖ token by token, head by head (no biases in these models)."""
    L, H = len(r.layers), r.weights.shape[1]
    out = np.zeros((L, H, len(r.tokens)))
    for layer, (trace, p) in enumerate(zip(r.layers, params, strict=True)):
        dh = p.W_v.shape[1] // H
        for h in range(H):
            cols = slice(h * dh, (h + 1) * dh)
            for j in range(len(r.tokens)):
                out[layer, h, j] = np.sqrt(
                    np.sum((trace.X_in[j] @ p.W_v[:, cols] @ p.W_o[cols, :]) ** 2)
                )
    return out


def expected_map(r, reading, layer, head, params) -> np.ndarray:
    """What the one-head heatmap must show, by plain NumPy over the run's weights (rows of A sum to
    1)."""
    A = r.weights.astype(np.float64)
    L, H, T, _ = A.shape
    if reading == "weights":
        return A[layer, head]
    if reading == "norm_weighted":
        W = A[layer, head] * loop_norms(r, params)[layer, head][None, :]
        return W / W.sum(axis=1, keepdims=True)
    if reading == "mean":
        return A[layer].mean(axis=0)
    if reading == "max":
        M = A[layer].max(axis=0)
        return M / M.sum(axis=1, keepdims=True)
    R = np.eye(T)
    for l in range(
        layer + 1
    ):  # rollout: residual half identity, head mean, rows renormalised, multiplied up
        At = 0.5 * np.eye(T) + 0.5 * A[l].mean(axis=0)
        R = (At / At.sum(axis=1, keepdims=True)) @ R
    return R


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("reading", READINGS)
def test_each_reading_on_the_designed_model(reading, lang):
    at = run_page("multi_head", {"lang": lang, "mh_view": reading, "mh_layer": "2", "mh_head": "1"})
    assert_clean(at)
    assert not errors(at)
    if lang == "zh":
        assert english_words(at) == {}, english_words(at)
    r = designed.run(SENTENCE if lang == "en" else "动物没有穿过街道，因为它太累了。")
    got = one_map(at)
    np.testing.assert_allclose(
        got.sum(axis=1), 1.0, atol=5e-3
    )  # every reading's rows sum to 1 (drawn in float32)
    if reading != "flow":
        np.testing.assert_allclose(
            got, expected_map(r, reading, 1, 1, designed.DESIGNED_CONFIG.layers), atol=1e-3
        )
    grids = [
        f
        for f in figures(at)
        if f["data"] and f["data"][0]["type"] == "heatmap" and "coloraxis" in f["layout"]
    ]
    assert [len(f["data"]) for f in grids] == [
        4 if reading in ("weights", "norm_weighted") else 1
    ]  # the heads, or one merged map


@pytest.mark.parametrize("reading", ["norm_weighted", "rollout", "max"])
def test_readings_of_the_random_model(reading):
    from visattn.models.random import run_random

    at = run_page(
        "multi_head",
        {
            "mh_src": "random",
            "mh_d": "12",
            "mh_h": "3",
            "mh_seed": "7",
            "mh_view": reading,
            "mh_layer": "2",
            "mh_head": "2",
        },
    )
    assert_clean(at)
    assert not errors(at)
    r = run_random(TOKENS, 12, 3, 7)
    np.testing.assert_allclose(one_map(at), expected_map(r, reading, 1, 2, r.params), atol=1e-3)


def test_flow_beyond_its_cap_shows_a_message_in_both_languages():
    from visattn.reading import FLOW_MAX_TOKENS

    long = " ".join(["the animal"] * 25)  # 50 tokens
    for lang in ("en", "zh"):
        at = run_page("multi_head", {"lang": lang, "mh_view": "flow", "mh_text": long})
        assert_clean(at)
        (msg,) = errors(at)
        assert str(FLOW_MAX_TOKENS) in msg and "50" in msg
        if lang == "zh":
            assert CJK.search(msg) and english_words(at) == {}, english_words(at)
        assert at.number_input(key="mh_sT").value >= 1  # the shape explorer is still drawn below


def test_colour_scale_and_line_filters_reach_the_figures():
    at = run_page(
        "multi_head",
        {
            "mh_palette": "Viridis",
            "mh_range": "max",
            "mh_scale": "log",
            "mh_thr": "0.3",
            "mh_topk": "1",
            "mh_lfoc": "0",
        },
    )
    assert_clean(at)
    grid = grid_fig(at)
    r = designed.run(SENTENCE)
    assert grid["layout"]["coloraxis"]["cmax"] == pytest.approx(float(r.weights.max()), abs=1e-6)
    (lines,) = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    drawn = [d for d in lines["data"] if d.get("mode") == "lines"]
    w = r.weights[1]  # layer 2, every head visible, every query: top-1 edges above 0.3
    want = sum(int(w[h, i].max() >= 0.3) for h in range(w.shape[0]) for i in range(w.shape[1]))
    assert sum(len([x for x in d["x"] if x is not None]) // 2 for d in drawn) == want
