"""Pretrained page through AppTest: MiniLM's 72 heads, the head finder, toggles, bad input, URL,
Chinese, no model.

The model loads once per process (st.cache_resource); a forward pass of a short sentence takes
milliseconds. Layers, heads and tokens are numbered from 1 on the page (the URL keeps 0-based
indices): L4·H2 and L6·H12, i.e. attentions[3, 1] and attentions[5, 11], are the two heads that link
it → animal."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import re
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from apptest_util import (
    FAMILY_IDS,
    FIXTURE_MODELS,
    array,
    assert_clean,
    chart_spec,
    charts,
    english_words,
    errors,
    figures,
    mechanism_sentences,
    run_page,
    texts,
    warnings,
)

from ui import url_state
from ui.cache import pretrained as cache_pretrained
from ui.cache.pretrained import head_of_point, load_model
from ui.room import budget
from ui.text import escape
from visattn.lessons import pretrained as lesson
from visattn.models import encoder
from visattn.models.encoder import INSTALL_COMMAND, BertEncoder, ModelNotInstalled
from visattn.shown_tokens import HeadWeight, pool
from visattn.text import PARAGRAPH

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
TOKENS = [
    "[CLS]",
    "the",
    "animal",
    "didn",
    "'",
    "t",
    "cross",
    "the",
    "street",
    "because",
    "it",
    "was",
    "too",
    "tired",
    ".",
    "[SEP]",
]
IT, ANIMAL, STREET = 10, 2, 8
MAX_FIGURE_BYTES = 1_500_000


def title(fig: dict) -> str:
    t = fig["layout"].get("title")
    return (t.get("text") if isinstance(t, dict) else t) or ""


def grid_fig(at) -> dict:
    (fig,) = [f for f in figures(at) if f["data"][0]["type"] == "heatmap" and len(f["data"]) > 1]
    return fig


def head_fig(at) -> dict:
    (fig,) = [f for f in figures(at) if f["data"][0]["type"] == "heatmap" and len(f["data"]) == 1]
    return fig


def head_matrix(at) -> tuple[list[str], np.ndarray]:
    d = head_fig(at)["data"][0]
    x = [s.rstrip("\u200b") for s in d["x"]]
    return x, array(d["z"]).reshape(len(d["y"]), len(x))


def bars(at) -> tuple[list[str], np.ndarray]:
    (fig,) = [f for f in figures(at) if f["data"][0]["type"] == "bar"]
    return list(fig["data"][0]["x"]), array(fig["data"][0]["y"])


def line_fig(at) -> dict:
    (fig,) = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    return fig


def params(at) -> dict[str, str]:
    return {
        k: (v[0] if isinstance(v, list) else v)
        for k, v in ((k, at.query_params[k]) for k in at.query_params)
    }


@pytest.fixture(scope="module")
def model() -> BertEncoder:
    return BertEncoder.load()


@pytest.fixture(scope="module")
def default_page():
    at = run_page("pretrained")
    assert_clean(at)
    return at


def test_defaults_render_grid_head_lines_and_finder(default_page, model):
    at = default_page
    assert not errors(at) and not warnings(at)
    r = model.run(SENTENCE)
    assert r.tokens == TOKENS
    # all 72 heads in one figure on the shared 0…1 colour axis, each the model's own matrix
    grid = grid_fig(at)
    assert len(grid["data"]) == 72 and {d.get("coloraxis") for d in grid["data"]} == {"coloraxis"}
    assert grid["layout"]["coloraxis"]["cmin"] == 0 and grid["layout"]["coloraxis"]["cmax"] == 1
    names = [a["text"] for a in grid["layout"]["annotations"]]
    assert names[0] == "L1·H1" and names[13] == "L2·H2" and names[-1] == "L6·H12"
    assert {a["xanchor"] for a in grid["layout"]["annotations"]} == {
        "center"
    }  # titles over their own cells
    T = len(TOKENS)
    np.testing.assert_allclose(
        array(grid["data"][3 * 12 + 1]["z"]).reshape(T, T), r.attentions[3, 1], atol=1e-6
    )
    # the finder: it → animal by default, L4·H2 first with more than half the weight, L6·H12 second
    assert at.selectbox(key="pt_src").value == IT and at.selectbox(key="pt_tgt").value == ANIMAL
    x, y = bars(at)
    assert len(x) == 15 and x[:2] == ["L4·H2", "L6·H12"]
    assert y[0] > 0.5 and y[1] > 0.5 and y[2] < 0.5 and np.all(np.diff(y) <= 0)
    np.testing.assert_allclose(y[0], r.attentions[3, 1, IT, ANIMAL], atol=1e-6)
    page_text = texts(at)
    assert (
        "**2** head(s) put more than half of the attention of “it” on “animal”: "
        "**L4·H2** (0.677), **L6·H12** (0.673)"
    ) in page_text
    assert page_text.count("numbered from 1") == 1 and "**L3·H1** = layer 3, head 1" in page_text
    best = np.unravel_index(np.argmax(r.attentions[:, :, IT, ANIMAL]), r.attentions.shape[:2])
    paper = f"{best[0]}.{best[1]}"  # papers count from 0
    assert f"the strongest, **{x[0]}**, is head **{paper}** in papers" in page_text
    assert "call the same head 2.0" in page_text  # L3·H1 of the grid's caption, from 0
    n_cls = int(
        (r.attentions[..., :, 0].mean(axis=-1) > 0.5).sum()
    )  # heads parked on [CLS], measured live
    assert f"**{n_cls}** of the 72 heads give [CLS] more than half" in page_text and n_cls > 20
    i = np.arange(1, T)  # previous/next-token heads, 1-based names
    prev = [
        f"L{l + 1}·H{h + 1}"
        for l, h in zip(*np.nonzero(r.attentions[:, :, i, i - 1].mean(-1) > 0.5), strict=True)
    ]
    nxt = [
        f"L{l + 1}·H{h + 1}"
        for l, h in zip(*np.nonzero(r.attentions[:, :, i - 1, i].mean(-1) > 0.5), strict=True)
    ]
    assert (
        prev
        and nxt
        and f"previous token: {', '.join(prev)}; at the next token: {', '.join(nxt)}." in page_text
    )
    # the open head (L4·H2 by default) large, with numbers in the cells, rows summing to 1
    assert at.selectbox(key="pt_layer").value == 3 and at.selectbox(key="pt_head").value == 1
    labels, m = head_matrix(at)
    assert labels == TOKENS and title(head_fig(at)).startswith("L4·H2")
    np.testing.assert_allclose(m, r.attentions[3, 1], atol=1e-6)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-5)
    assert head_fig(at)["data"][0]["text"][IT][ANIMAL] == "0.68"
    # its lines: one head, every line a (query, key) pair of the open head
    lines = line_fig(at)
    assert {d["name"] for d in lines["data"] if d.get("mode") == "lines"} == {"L4·H2"}
    assert at.get("download_button")


def test_the_wide_twin_is_described_honestly(default_page, model):
    text = texts(default_page)
    assert "L4·H2 (0.68)" in text and "L6·H12 (0.56)" in text  # it → animal, tired and wide
    assert "does not move the weight to “street”" in text
    assert "not the model's answer" in text
    at = run_page("pretrained", {"pt_text": WIDE, "pt_tgt": str(STREET)})
    assert_clean(at)
    assert at.selectbox(key="pt_tgt").value == STREET
    x, y = bars(at)
    assert y[0] < 0.5  # no head favours street
    assert (
        "No head puts more than half of the attention of “it” on “street”; "
        f"the strongest is **{x[0]}**" in texts(at)
    )


def test_open_head_by_button_and_by_selectbox(model):
    at = run_page("pretrained", {"pt_layer": "0", "pt_head": "0"})
    assert title(head_fig(at)).startswith("L1·H1")
    at.button(key="pt_open_top").click().run()  # "Open L4·H2": the finder's first bar
    assert at.selectbox(key="pt_layer").value == 3 and at.selectbox(key="pt_head").value == 1
    assert title(head_fig(at)).startswith("L4·H2")
    at.selectbox(key="pt_layer").set_value(5).run()
    at.selectbox(key="pt_head").set_value(11).run()
    assert_clean(at)
    _, m = head_matrix(at)
    np.testing.assert_allclose(m, model.run(SENTENCE).attentions[5, 11], atol=1e-6)
    # the orange bar is the open head
    (fig,) = [f for f in figures(at) if f["data"][0]["type"] == "bar"]
    colours = fig["data"][0]["marker"]["color"]
    assert colours[fig["data"][0]["x"].index("L6·H12")] == "#ff7f0e"
    assert fig["data"][0]["customdata"][1] == [5, 11]  # what a click on the bar reports
    assert params(at)["pt_layer"] == "5" and params(at)["pt_head"] == "11"


def test_a_clicked_bar_names_its_head():
    assert head_of_point({"point_index": 1, "x": "L6·H12", "customdata": [5, 11]}) == (5, 11)
    assert head_of_point({"point_index": 0}) is None
    assert head_of_point({"customdata": ["a", "b"]}) is None
    assert head_of_point(None) is None


def test_source_and_target_rank_other_pairs_and_reset_with_the_text(model):
    at = run_page("pretrained")
    at.selectbox(key="pt_tgt").set_value(13).run()  # it → tired
    r = model.run(SENTENCE)
    w = r.attentions[:, :, IT, 13]
    x, y = bars(at)
    assert x[0] == "L{}·H{}".format(
        *(i + 1 for i in np.unravel_index(np.argmax(w), w.shape))
    )  # named from 1
    np.testing.assert_allclose(y[0], w.max(), atol=1e-6)
    assert params(at)["pt_tgt"] == "13"
    at.text_area(key="pt_text").input(
        "The trophy didn't fit in the suitcase because it was too big."
    ).run()
    assert_clean(at)
    tokens = model.run("The trophy didn't fit in the suitcase because it was too big.").tokens
    assert at.selectbox(key="pt_src").value == tokens.index(
        "it"
    )  # back to it; no "animal": the next word
    assert at.selectbox(key="pt_tgt").value == 1
    assert "pt_src" not in at.query_params and "pt_tgt" not in at.query_params


def test_hide_specials_drops_cls_and_sep_and_renormalises():
    at = run_page("pretrained")
    at.toggle(key="pt_hide").set_value(True).run()
    assert_clean(at)
    labels, m = head_matrix(at)
    assert labels == TOKENS[1:-1]
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-5)
    grid = grid_fig(at)
    for d in grid["data"][::7]:
        assert "[CLS]" not in d["x"] and "[SEP]" not in d["x"]
        np.testing.assert_allclose(array(d["z"]).reshape(14, 14).sum(axis=1), 1.0, atol=1e-5)
    assert (
        at.selectbox(key="pt_src").value == IT - 1
        and at.selectbox(key="pt_tgt").value == ANIMAL - 1
    )
    assert params(at)["pt_hide"] == "1"


def test_merge_joins_word_pieces_into_words(model):
    text = "The cat is unbelievably fluffy."
    assert "##bel" in model.run(text).tokens
    at = run_page("pretrained", {"pt_text": text, "pt_merge": "1", "pt_hide": "1"})
    assert_clean(at)
    labels, m = head_matrix(at)
    assert labels == ["the", "cat", "is", "unbelievably", "fluffy", "."]
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-5)
    assert "6 tokens: the · cat · is · unbelievably · fluffy · \\." in texts(
        at
    )  # markdown source: the user's tokens escaped


def test_tokens_reach_markdown_escaped(model):
    """The user's tokens in the caption, the head finder's sentence and the notices are
    markdown-escaped: a typed link or emphasis shows as itself."""
    at = run_page(
        "pretrained", {"pt_text": "see [x](http://127.0.0.1:9/p.png) **bold** $a$ it animal"}
    )
    assert_clean(at)
    shown = texts(at)
    assert (
        "\\[ · x · \\] · \\( · http" in shown
        and "\\* · \\* · bold" in shown
        and "\\$ · a · \\$" in shown
    )
    assert "](http" not in shown and "**bold**" not in shown


def test_600_tokens_are_cut_to_512_with_a_notice():
    at = run_page("pretrained", {"pt_text": "word " * 600})
    assert_clean(at)
    (w,) = warnings(at)
    assert "602 tokens" in w and "first 512 tokens" in w
    assert "512 tokens:" in texts(at)
    # one layer's 12 heads, pooled to 128 a side; the large head pooled to 256; every figure light
    grid = grid_fig(at)
    assert len(grid["data"]) == 12 and len(grid["data"][0]["x"]) == 128
    assert len(head_fig(at)["data"][0]["x"]) == 256
    assert "pooled into 128" in texts(at) and "pooled into 256" in texts(at)
    _, m = head_matrix(at)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-4)
    assert all(len(chart_spec(c)) <= MAX_FIGURE_BYTES for c in charts(at))
    at.radio(key="pt_glayer").set_value(4).run()
    assert [a["text"] for a in grid_fig(at)["layout"]["annotations"]][:2] == ["L5·H1", "L5·H2"]


def test_figures_stay_light_at_128_tokens(model):
    text = (
        "Attention lets every word in a sentence look at every other word and decide how much "
        "each one matters. "
        "In a transformer, each token is turned into a query, a key and a value. "
    ) * 4
    _, _, offsets, _ = model.tokenize(text, 128)
    text = text[: offsets[126][1]]  # exactly 126 pieces + [CLS] + [SEP]
    at = run_page("pretrained", {"pt_text": text})
    assert_clean(at)
    assert "128 tokens:" in texts(at)
    assert len(grid_fig(at)["data"]) == 12  # one layer, not 72 heads
    sizes = [len(chart_spec(c)) for c in charts(at)]
    assert max(sizes) <= MAX_FIGURE_BYTES, sizes
    assert "Tokens 1–64 of 128: the line view draws a window of 64 tokens" in texts(
        at
    )  # source: word 1


@pytest.mark.parametrize(
    "text, kind, expected",
    [
        ("", "error", "The text is empty"),
        ("   \n ", "error", "The text is empty"),
        ("😀 🎉", "warning", "every character (😀 🎉) became [UNK]"),
        ("小明喜欢吃苹果", "info", "5 token(s) are [UNK]"),
        ("I love 🍕 pizza", "info", "1 token(s) are [UNK]"),
    ],
)
def test_emoji_chinese_and_empty_text_give_clear_messages(text, kind, expected):
    at = run_page("pretrained", {"pt_text": text})
    assert_clean(at)
    shown = {"error": errors(at), "warning": warnings(at), "info": [str(i.value) for i in at.info]}[
        kind
    ]
    assert any(expected in s for s in shown), shown
    if kind != "error":
        assert not errors(at) and grid_fig(at)
    if text == "小明喜欢吃苹果":
        assert "喜 欢 吃 苹 果" in shown[0]
        assert "6 tokens" not in texts(at) and "9 tokens: \\[CLS\\] · 小 · 明 · \\[UNK\\]" in texts(
            at
        )  # escaped markdown source


def test_bad_text_after_a_good_one_keeps_the_last_view():
    at = run_page("pretrained")
    at.text_area(key="pt_text").input("").run()
    assert_clean(at)
    (err,) = errors(at)
    assert "empty" in err and "Showing the last view that worked" in texts(at)
    assert bars(at)[0][0] == "L4·H2"


def test_presets():
    at = run_page("pretrained")
    at.button(key="pt_text__preset_chinese").click().run()
    assert at.text_area(key="pt_text").value == "小明喜欢吃苹果。"
    assert any("[UNK]" in str(i.value) for i in at.info)
    at.button(key="pt_text__preset_paragraph").click().run()
    assert_clean(at)
    assert len(grid_fig(at)["data"]) == 12 and at.radio(key="pt_glayer").value == 0
    at.button(key="pt_text__preset_tired").click().run()
    assert len(grid_fig(at)["data"]) == 72


def test_lines_only_source():
    at = run_page("pretrained", {"pt_lfoc": "1"})
    assert_clean(at)
    lines = [d for d in line_fig(at)["data"] if d.get("mode") == "lines"]
    ys = [y for d in lines for y in d["y"][0::3] if y is not None]  # a legend swatch has no point
    assert ys and set(ys) == {IT}


def test_url_round_trip():
    at = run_page("pretrained")
    at.button(key="pt_text__preset_wide").click().run()
    at.toggle(key="pt_hide").set_value(True).run()
    at.selectbox(key="pt_tgt").set_value(STREET - 1).run()
    at.selectbox(key="pt_layer").set_value(5).run()
    at.selectbox(key="pt_head").set_value(2).run()
    at.toggle(key="pt_lfoc").set_value(True).run()
    assert_clean(at)
    p = params(at)
    assert p["pt_text"] == WIDE and p["pt_hide"] == "1" and p["pt_tgt"] == str(STREET - 1)
    assert p["pt_layer"] == "5" and p["pt_head"] == "2" and p["pt_lfoc"] == "1"
    again = run_page("pretrained", p)
    assert_clean(again)
    assert not warnings(again)
    assert again.text_area(key="pt_text").value == WIDE
    assert (
        again.selectbox(key="pt_tgt").value == STREET - 1
        and again.selectbox(key="pt_head").value == 2
    )
    assert bars(again)[0] == bars(at)[0]
    assert [title(f) for f in figures(again)] == [title(f) for f in figures(at)]


def test_tampered_url_falls_back_with_a_warning():
    at = run_page(
        "pretrained",
        {
            "pt_layer": "9",
            "pt_head": "-1",
            "pt_hide": "maybe",
            "pt_src": "99",
            "pt_tgt": "x",
            "pt_glayer": "abc",
            "pt_zzz": "1",
            "pt_text": "a" * 6000,
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    for name in (
        "pt_layer",
        "pt_head",
        "pt_hide",
        "pt_src",
        "pt_tgt",
        "pt_glayer",
        "pt_zzz",
        "pt_text",
    ):
        assert name.replace("_", "\\_") in w  # names are markdown-escaped
    assert not errors(at)
    assert at.text_area(key="pt_text").value == SENTENCE
    assert at.selectbox(key="pt_src").value == IT and bars(at)[0][0] == "L4·H2"


def test_chinese():
    at = run_page("pretrained", {"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == "真实训练过的 Transformer"
    text = texts(at)
    assert (
        "有 **2** 个头把“it”一半以上的注意力放在“animal”上：**L4·H2**（0.677）、**L6·H12**（0.673）"
        in text
    )
    assert (
        "层、头和词元都从 1 开始编号：**L3·H1** 表示第 3 层的第 1 个头。" in text
        and "所有的头" in text
    )
    assert "第四层" not in text and "（即" not in text  # one convention, said once
    assert title(head_fig(at)).startswith("L4·H2：")
    at = run_page("pretrained", {"lang": "zh", "pt_text": "😀"})
    assert_clean(at)
    assert any("都变成了 [UNK]" in w for w in warnings(at))
    at = run_page("pretrained", {"lang": "zh", "pt_text": " "})
    assert any("文本是空的" in e for e in errors(at))


def test_missing_package_says_how_to_install():
    load_model.clear()
    try:
        with mock.patch.object(encoder, "model_dir", side_effect=ModelNotInstalled("no package")):
            at = run_page("pretrained", {"pt_layer": "5"})
            assert_clean(at)
            (err,) = errors(at)
            assert "not installed" in err
            assert at.code[0].value == INSTALL_COMMAND
            assert not figures(at) and not warnings(at)  # the URL's settings are kept
            assert params(at)["pt_layer"] == "5"
            zh = run_page("pretrained", {"lang": "zh"})
            assert_clean(zh)
            assert "没有安装" in errors(zh)[0] and english_words(zh) == {}
            home = run_page("multi_head")  # the rest of the app is untouched
            assert_clean(home)
            assert figures(home)
    finally:
        load_model.clear()
    at = run_page("pretrained")  # installed again: a failure is not cached
    assert_clean(at)
    assert bars(at)[0][0] == "L4·H2"


def test_pool_keeps_rows_summing_to_one():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 10, 10))
    a /= a.sum(axis=-1, keepdims=True)
    tokens = [f"t{i}" for i in range(10)]
    v = pool(tokens, a, 4)
    assert v.tokens == ["1–3", "4–6", "7–9", "t9"] and v.attn.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(v.attn.sum(axis=-1), 1.0)
    np.testing.assert_allclose(v.attn[..., 0, 0], a[..., 0:3, 0:3].sum(axis=-1).mean(axis=-1))
    assert pool(tokens, a, 10).tokens == tokens
    with pytest.raises(ValueError, match="max_tokens"):
        pool(tokens, a, 0)


# ---------------------------------------------------------------- bad inputs and views, in Chinese

ZH_BAD = [  # (URL parameters, where the message is, a Chinese phrase of it)
    ({"pt_text": ""}, "error", "文本是空的"),
    ({"pt_text": " \n "}, "error", "文本是空的"),
    ({"pt_text": "\u200b"}, "error", "模型读不出"),
    ({"pt_text": "😀 🎉"}, "warning", "都变成了 [UNK]"),
    ({"pt_text": "word " * 600}, "warning", "只保留了前 512 个词元"),
    ({"pt_text": "小明喜欢吃苹果"}, "info", "个词元是 [UNK]"),
    ({"pt_text": "[CLS]", "pt_hide": "1"}, "info", "除了 [CLS] 和 [SEP]"),
]


@pytest.mark.parametrize("params, kind, phrase", ZH_BAD, ids=[f"{k}:{p}" for _, k, p in ZH_BAD])
def test_bad_inputs_are_said_in_chinese(params, kind, phrase):
    at = run_page("pretrained", {"lang": "zh"} | params)
    assert_clean(at)
    shown = {"error": errors(at), "warning": warnings(at), "info": [str(i.value) for i in at.info]}[
        kind
    ]
    assert any(phrase in s for s in shown), shown
    assert all(re.search(r"[\u4e00-\u9fff]", s) for s in shown)
    assert english_words(at) == {}


@pytest.mark.parametrize(
    "params",
    [
        {"pt_text": PARAGRAPH, "pt_glayer": "4"},  # one layer's 12 heads, tokens numbered
        {
            "pt_text": "word " * 600,
            "pt_layer": "5",
            "pt_head": "11",
        },  # pooled grid, pooled head, line window
        {"pt_hide": "1", "pt_merge": "1", "pt_lfoc": "1"},
    ],
)
def test_views_in_chinese_show_no_english(params):
    at = run_page("pretrained", {"lang": "zh"} | params)
    assert_clean(at)
    assert english_words(at) == {}
    assert "**L3·H1** 表示第 3 层的第 1 个头" in texts(at)


# ------------------------------------------------ the lesson's compute, against hand computations


def test_head_names_and_token_labels_count_from_one():
    assert (
        lesson.head_name(0, 0) == "L1·H1"
        and lesson.head_name(3, 1) == "L4·H2"
        and lesson.head_name(5, 11) == "L6·H12"
    )
    assert lesson.indexed(["a", "b"]) == ["1: a", "2: b"]
    many = [str(i) for i in range(lesson.TOKENS_SHOWN + 1)]
    assert (
        lesson.listed_tokens(many).endswith(f" · {lesson.TOKENS_SHOWN - 1} · …")
        and lesson.listed_tokens(["a", "b"]) == "a · b"
    )


def test_patterns_by_hand():
    T = 4
    a = np.full((2, 3, T, T), 1 / T)
    a[0, 0] = np.eye(T)[[0, 0, 0, 0]]  # everything on [CLS]
    a[0, 1] = np.eye(T)[[0, 0, 1, 2]]  # each token on the one before
    a[1, 2] = np.eye(T)[[1, 2, 3, 3]]  # each token on the one after
    p = lesson.patterns(a)
    # [CLS] column means: head (0,0) 1; head (0,1) (1+1+0+0)/4 = 0.5, not above one half
    assert p.n_cls == 1
    # previous: rows 1..3 of (0,1) put 1 on i-1; (0,0) puts 1/3 on average (row 1 only)
    assert p.prev == ("L1·H2",) and p.next == ("L2·H3",)
    with pytest.raises(ValueError):
        lesson.patterns(np.ones((2, 2)))


def test_default_pair_by_hand():
    assert lesson.default_pair(TOKENS) == (IT, ANIMAL)
    assert lesson.default_pair(["[CLS]", "a", "cat", "[SEP]"]) == (1, 2)
    assert lesson.default_pair(["[CLS]", "it", "[SEP]"]) == (1, 1)
    assert lesson.default_pair(["[CLS]", "[SEP]"]) == (0, 1)


def test_finder_by_hand():
    a = np.zeros((2, 2, 3, 3))
    a[:, :, 2, 0] = [[0.1, 0.7], [0.6, 0.2]]
    f = lesson.finder(a, 2, 0, (1, 0))
    assert f.names == ("L1·H2", "L2·H1", "L2·H2", "L1·H1") and f.opened == 1
    assert [hw.weight for hw in f.strong] == [0.7, 0.6] and (f.best.layer, f.best.head) == (0, 1)
    assert lesson.finder(a, 2, 0, (5, 5)).opened is None
    with pytest.raises(ValueError):
        lesson.finder(a, 3, 0, (0, 0))


def test_winograd_verdict_and_cells():
    hw = lambda l, h, w: HeadWeight(l, h, w)  # noqa: E731
    w = lesson.Winograd(hw(3, 1, 0.677), hw(5, 5, 0.22), hw(5, 11, 0.561), hw(5, 1, 0.244))
    assert not w.switch  # 0.244 < min(0.561, 0.5)
    assert w.cells() == dict(
        tired_a="L4·H2",
        tired_s="L6·H6",
        wide_a="L6·H12",
        wide_s="L6·H2",
        tired_aw="0.68",
        tired_sw="0.22",
        wide_aw="0.56",
        wide_sw="0.24",
    )
    assert lesson.Winograd(*w.__dict__.values()).switch is False
    assert dataclasses.replace(w, wide_street=hw(0, 0, 0.55)).switch  # a head favours street
    assert dataclasses.replace(w, wide_animal=hw(0, 0, 0.1), wide_street=hw(0, 0, 0.2)).switch


def test_winograd_measured(model):
    w = lesson.winograd(model)
    for text, a, s in (
        (SENTENCE, w.tired_animal, w.tired_street),
        (WIDE, w.wide_animal, w.wide_street),
    ):
        r = model.run(text)
        it, animal, street = (
            r.tokens.index("it"),
            r.tokens.index("animal"),
            r.tokens.index("street"),
        )
        for hw, target in ((a, animal), (s, street)):
            col = r.attentions[:, :, it, target]
            assert (hw.layer, hw.head) == np.unravel_index(
                np.argmax(col), col.shape
            ) and hw.weight == col.max()


def test_as_shown_unknown_and_kept_specials(model):
    r = model.run("I love 🍕 pizza")
    u = lesson.unknown(r)
    assert u == lesson.Unknown(n=1, chars="🍕", every=False)
    assert lesson.unknown(model.run(SENTENCE)) is None and lesson.unknown(model.run("😀")).every
    v = lesson.as_shown(r, hide=True, merge=False)
    assert v.tokens == r.tokens[1:-1] and not v.kept_specials
    np.testing.assert_allclose(v.attn.sum(-1), 1, atol=1e-5)
    only = model.run("[CLS]")
    assert set(only.tokens) == {"[CLS]", "[SEP]"}
    v = lesson.as_shown(only, hide=True, merge=True)
    assert v.kept_specials and v.tokens == only.tokens


def test_grid_one_head_and_lines_by_hand():
    T = 50
    rng = np.random.default_rng(1)
    a = rng.random((6, 12, T, T))
    a /= a.sum(-1, keepdims=True)
    tokens = [f"w{i}" for i in range(T)]
    g = lesson.grid(tokens, a, 2)  # 50 > GRID_ALL_MAX: one layer, not pooled
    assert g.w.shape == (3, 4, T, T) and g.layer == 2 and g.block == 1 and g.titles[0] == "L3·H1"
    np.testing.assert_array_equal(g.w[1, 2], a[2, 6])
    assert g.labels[0] == "1: w0"
    short = lesson.grid(tokens[:5], a[..., :5, :5], 2)
    assert short.layer is None and short.w.shape == (6, 12, 5, 5) and len(short.titles) == 72
    h = lesson.one_head(tokens, a, 4, 7)
    assert h.name == "L5·H8" and h.hover_only and h.block == 1
    np.testing.assert_array_equal(h.w, a[4, 7])
    ln = lesson.lines(tokens, h.w, 45, only_src=True)  # window of 50 ≤ 64: all tokens
    assert (ln.first, ln.last) == (0, 49) and np.count_nonzero(ln.w[0].sum(-1)) == 1
    np.testing.assert_array_equal(ln.w[0, 45], a[4, 7, 45])
    long = [f"w{i}" for i in range(200)]
    ln = lesson.lines(long, np.eye(200), 150, only_src=False)  # 150 − 32 = 118 … 181
    assert (
        (ln.first, ln.last) == (118, 181) and ln.w.shape == (1, 64, 64) and ln.tokens[0] == "w118"
    )
    ln = lesson.lines(long, np.eye(200), 199, only_src=False)  # clamped to the end
    assert (ln.first, ln.last) == (136, 199)


# ---------------------------------------------------------- a long paste is never tokenised whole


@pytest.mark.parametrize(
    "text",
    [
        "hello " * 5000,
        "unbelievably fluffy " * 3000,
        "小明喜欢吃苹果" * 3000,
        "a" * 150 + " b" * 20000,
        ("word, " * 2) + "x" * 40000,
    ],
)
def test_long_text_is_cut_before_tokenising_with_the_same_pieces(model, text):
    full = model.tokenizer.encode(text)  # what tokenising the whole text gives
    tokens, ids, _, n_in = model.tokenize(text)
    want = full.ids[:511] + [full.ids[-1]] if len(full.ids) > 512 else full.ids
    assert ids == want and len(tokens) == min(512, len(full.ids))
    assert n_in <= len(full.ids) and (n_in > 512) == (len(full.ids) > 512)


def test_a_huge_text_reads_at_most_max_read_characters(model):
    seen = []
    real = model.tokenizer

    class Spy:
        def encode(self, s):
            seen.append(len(s))
            return real.encode(s)

    with mock.patch.object(model, "tokenizer", Spy()):
        r = model.run("word " * 4_000_000)  # 20 MB
    assert r.truncated and r.n_tokens == 512 and not r.read_all
    assert max(seen) <= encoder.MAX_READ


def test_text_area_limits_characters_and_says_so():
    at = run_page("pretrained")
    (box,) = at.text_area
    assert (
        box.proto.max_chars == url_state.MAX_TEXT and f"{url_state.MAX_TEXT} characters" in box.help
    )
    zh = run_page("pretrained", {"lang": "zh"})
    assert f"最多 {url_state.MAX_TEXT} 个字符" in zh.text_area[0].help


def test_a_bar_click_opens_its_head_and_ignores_other_points():
    state = {
        cache_pretrained.BARS: {"selection": {"points": [{"customdata": [5, 11]}]}},
        "pt_layer": 3,
        "pt_head": 1,
    }
    with mock.patch.object(cache_pretrained.st, "session_state", state):
        cache_pretrained.open_clicked()
        assert (state["pt_layer"], state["pt_head"]) == (5, 11)
        state[cache_pretrained.BARS] = {
            "selection": {"points": [{"customdata": [9, 0]}]}
        }  # not a head
        cache_pretrained.open_clicked()
        state[cache_pretrained.BARS] = {"selection": {"points": []}}
        cache_pretrained.open_clicked()
    assert (state["pt_layer"], state["pt_head"]) == (5, 11)


# ---------------------------------------------------------------- memory stays bounded

MB = 1 << 20
# one session at work: the hidden/merged copies of a run (2 × 75 MB), figures, allocator slack
SESSION_MB = 350


def rss_mb() -> float:
    """This process's resident memory (AppTest runs the page in-process), after a full
    collection."""
    gc.collect()
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) * 1024 / MB


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc (Linux)")
def test_twenty_long_texts_and_twelve_head_clicks_keep_memory_bounded():
    """Budget: RSS grows by at most the replica's memory budget (the results it keeps,
    ui.room.budget) + SESSION_MB over the whole sequence, and not at all (≤ 100 MB of noise) over
    its second half. Before the fix each text and each head opened with pt_hide=1&pt_merge=1 kept
    its run alive through the finder chart's callback, so memory grew at every step."""
    budget.shared().clear()
    rng = np.random.default_rng(0)
    vocab = (
        "the animal street cross because tired wide road car driver water tree rain child light "
        "day walk"
    ).split()
    at = run_page("pretrained", {"pt_hide": "1", "pt_merge": "1"})
    start = rss_mb()
    seen = []
    for k in range(20):
        at.text_area(key="pt_text").input(f"Text {k}. " + " ".join(rng.choice(vocab, 600))).run()
        assert_clean(at)
        seen.append(rss_mb())
    assert "510 tokens:" in texts(at)  # 512 less [CLS] and [SEP], hidden
    for k in range(12):  # what a bar click does: open another head
        at.selectbox(key="pt_layer").set_value(k % 6)
        at.selectbox(key="pt_head").set_value((5 * k + 1) % 12).run()
        assert_clean(at)
        seen.append(rss_mb())
    assert title(head_fig(at)).startswith("L6·H")
    growth = max(seen) - start
    assert growth <= budget.shared().limit / MB + SESSION_MB, [round(s - start) for s in seen]
    assert seen[-1] - seen[9] <= 100, [round(s - start) for s in seen]
    bars_ids = [c.proto.id for c in at.get("plotly_chart") if "pt_bars" in c.proto.id]
    assert len(bars_ids) == 1 and bars_ids[0].endswith(
        "-" + cache_pretrained.BARS
    )  # one stable key, whatever opened


@pytest.mark.parametrize("reading", ["weights", "norm_weighted"])
def test_a_session_remembers_its_long_reading_by_name_not_by_its_arrays(reading):
    """A session's last good results live as long as the session: a 512-token reading is 75 MB,
    and twenty sessions kept 1.5 GB beside the budget (benchmarks/burst.py). They keep the text and
    the reading's name; the sections look the arrays up in the shared, byte-bounded store."""
    text = "Text. " + " ".join(["animal street"] * 300)
    at = run_page("pretrained", {"pt_text": text, "pt_view": reading}, timeout=180)
    assert_clean(at)
    kept = at.session_state["_last_good"]
    assert set(kept) >= {"pt_run", "pt_view"}
    assert budget.nbytes(kept) < MB, {k: budget.nbytes(v) for k, v in kept.items()}


# ── the one reading selector on this page ───────────────────────────────────────────────────────
READINGS = ("weights", "norm_weighted", "mean", "max", "rollout", "flow")


def reading_by_hand(reading: str) -> np.ndarray:
    """The reading of SENTENCE as (L', H', T, T), by plain NumPy over MiniLM's weights (flow:
    None)."""
    model = load_model()
    A = model.run(SENTENCE).attentions.astype(np.float64)

    def norm(m: np.ndarray) -> np.ndarray:
        return m / m.sum(axis=-1, keepdims=True)

    if reading == "weights":
        return A
    if (
        reading == "norm_weighted"
    ):  # value norms: checked against Hugging Face in tests/test_reading.py
        from visattn.reading import encoder_value_norms

        return norm(A * encoder_value_norms(model, SENTENCE)[:, :, None, :])
    if reading == "mean":
        return A.mean(axis=1, keepdims=True)
    if reading == "max":
        return norm(A.max(axis=1, keepdims=True))
    if reading == "rollout":
        T, R, out = A.shape[-1], np.eye(A.shape[-1]), []
        for layer in range(A.shape[0]):
            R = norm(0.5 * np.eye(T) + 0.5 * A[layer].mean(axis=0)) @ R
            out.append(R)
        return np.stack(out)[:, None]
    return None


def large_map(at) -> np.ndarray:
    """The one-head section's heatmap (the only single-trace heatmap with a title)."""
    (fig,) = [
        f
        for f in figures(at)
        if f["data"][0]["type"] == "heatmap" and len(f["data"]) == 1 and title(f)
    ]
    d = fig["data"][0]
    return array(d["z"]).reshape(len(d["y"]), len(d["x"]))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("reading", READINGS)
def test_each_reading_feeds_grid_finder_and_large_map(reading, lang):
    at = run_page("pretrained", {"lang": lang, "pt_view": reading})
    assert_clean(at)
    assert not errors(at)
    if lang == "zh":
        assert english_words(at) == {}, english_words(at)
    labels, w = bars(at)
    big = large_map(at)
    np.testing.assert_allclose(big.sum(axis=1), 1.0, atol=5e-3)
    want = reading_by_hand(reading)
    cells = {"weights": 72, "norm_weighted": 72, "flow": 1}.get(reading, 6)
    if cells > 1:  # flow's one map is checked below
        assert len(grid_fig(at)["data"]) == cells
    if want is None:  # flow: one map, one bar, its entry the bar
        assert labels == ["L1–L6"] and w[0] == pytest.approx(big[IT, ANIMAL], abs=1e-3)
        return
    ranked = np.sort(want[:, :, IT, ANIMAL].ravel())[::-1][
        : len(w)
    ]  # the finder ranks by the chosen reading
    np.testing.assert_allclose(w, ranked, atol=1e-4)
    L, H = want.shape[:2]
    np.testing.assert_allclose(
        big, want[min(3, L - 1), min(1, H - 1)], atol=1e-3
    )  # pt_layer 3, pt_head 1 by default
    if H == 1:  # one map per layer: the bars name layers
        assert labels[0] == f"L{np.argmax(want[:, 0, IT, ANIMAL]) + 1}"


def test_flow_beyond_its_cap_shows_a_message_not_a_hang():
    from visattn.reading import FLOW_MAX_TOKENS

    for lang in ("en", "zh"):
        at = run_page("pretrained", {"lang": lang, "pt_view": "flow", "pt_text": PARAGRAPH})
        assert_clean(at)
        (msg,) = errors(at)
        assert str(FLOW_MAX_TOKENS) in msg
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", msg) and english_words(at) == {}, english_words(at)


def test_colour_scale_reaches_grid_and_large_map():
    at = run_page("pretrained", {"pt_palette": "Greys", "pt_range": "max", "pt_view": "mean"})
    assert_clean(at)
    top = float(reading_by_hand("mean").max())
    assert grid_fig(at)["layout"]["coloraxis"]["cmax"] == pytest.approx(top, abs=1e-5)
    (fig,) = [
        f
        for f in figures(at)
        if f["data"][0]["type"] == "heatmap" and len(f["data"]) == 1 and title(f)
    ]
    assert fig["data"][0]["zmax"] == pytest.approx(top, abs=1e-5)


# ---- MiniLM is an English model; which characters of a Chinese text are [UNK] ---------


def unk_characters(model, text: str) -> list[str]:
    """The characters MiniLM reads as [UNK], each tokenised on its own (BERT's tokenizer splits CJK
    characters apart), in order of first appearance."""
    found = []
    for ch in text:
        if ch.isspace() or ch in found:
            continue
        if model.tokenizer.encode(ch, add_special_tokens=False).tokens == ["[UNK]"]:
            found.append(ch)
    return found


@pytest.mark.parametrize(
    "lang, text, before, after, checkpoint",
    [
        (
            "en",
            "动物没有穿过街道，因为它太累了。",
            "vocabulary: ",
            ". The model",
            "Chinese checkpoint",
        ),
        ("zh", "动物没有穿过街道，因为它太累了。", "词表里：", "。模型", "中文检查点"),
        ("zh", "小明喜欢吃苹果。", "词表里：", "。模型", "中文检查点"),
    ],
)
def test_a_chinese_text_lists_exactly_the_characters_minilm_reads_as_unk(
    model, lang, text, before, after, checkpoint
):
    expected = unk_characters(model, text)
    assert expected  # MiniLM lacks most of these characters
    at = run_page("pretrained", {"lang": lang, "pt_text": text})
    assert_clean(at)
    (notice,) = [str(i.value) for i in at.info if "[UNK]" in str(i.value)]
    listed = notice.split(before, 1)[1].split(after, 1)[0].split()
    assert listed == expected
    assert checkpoint in notice
    intro = {"en": "MiniLM is an English model", "zh": "MiniLM 是英文模型"}[lang]
    assert intro in texts(at)


def test_a_preset_that_is_mostly_unk_says_so_in_its_name(model):
    for name, text in lesson.PRESETS.items():
        tokens = model.run(text).tokens[1:-1]
        mostly_unk = tokens.count("[UNK]") > len(tokens) / 2
        for lang in ("en", "zh"):
            for page_name in ("pretrained", "reading"):
                locale = ROOT / "ui" / "locales" / lang / f"{page_name}.json"
                names = json.loads(locale.read_text("utf-8"))["presets"]
                assert ("[UNK]" in names[name]) == mostly_unk, (lang, page_name, name)


# ---- any checkpoint the server has (tests/fixtures/models), chosen by id in the URL ----


def grid_cells(at) -> dict:
    """The head grid: the figure whose heatmaps are titled L1·H1 …"""
    return next(f for f in figures(at) if len(f["data"]) > 1 and f["data"][0]["type"] == "heatmap")


@pytest.mark.parametrize(("id", "L", "H"), [("gpt2", 2, 4), ("qwen2", 2, 4), ("bert", 2, 4)])
def test_a_checkpoint_chosen_by_id_draws_its_own_heads(fixture_models, id, L, H):
    text = "the keys the values"  # few tokens: every head in the grid
    at = run_page("pretrained", {"pt_model": id, "pt_text": text})
    assert_clean(at)
    assert at.selectbox(key="pt_model").value == id
    assert at.selectbox(key="pt_layer").options == [f"L{i + 1}" for i in range(L)]
    assert at.selectbox(key="pt_head").options == [f"H{i + 1}" for i in range(H)]
    grid = grid_cells(at)
    assert len(grid["data"]) == L * H
    model = fixture_models.load_checkpoint(id)
    expected = model.run(text).attentions  # (L, H, T, T)
    np.testing.assert_allclose(array(grid["data"][L * H - 1]["z"]), expected[-1, -1], atol=1e-6)
    causal = "causal masking" in texts(at)
    assert causal == (id != "bert")
    # the default layer (L4) is beyond the model: its last layer is open, without a notice
    assert at.selectbox(key="pt_layer").value == L - 1 and not warnings(at)
    assert params(at) == {"pt_model": id, "pt_text": text, "pt_layer": str(L - 1)}


def test_a_decoders_run_reports_its_layers_while_it_runs(fixture_models, monkeypatch):
    """A long text's run shows a bar that moves a layer at a time (every decoder text counts as
    long here), gone once the page is drawn: the page is the same as without it."""
    seen = []
    real = cache_pretrained._run

    def spied(model, text, max_tokens, progress=None):
        seen.append(progress)
        return real(model, text, max_tokens, progress)

    monkeypatch.setattr(cache_pretrained, "PROGRESS_FROM", 1)
    monkeypatch.setattr(cache_pretrained, "_run", spied)
    text = "the keys the values and the queries"
    at = run_page("pretrained", {"pt_model": "gpt2", "pt_text": text})
    assert_clean(at)
    assert len(seen) == 1 and callable(seen[0])
    expected = fixture_models.load_checkpoint("gpt2").run(text).attentions
    np.testing.assert_allclose(array(grid_cells(at)["data"][-1]["z"]), expected[-1, -1], atol=1e-6)


def test_a_decoder_shows_chinese_characters_not_bytes(fixture_models):
    text = "小明喜欢吃苹果。"
    at = run_page("pretrained", {"pt_model": "gpt2", "pt_text": text})
    assert_clean(at)
    shown = grid_cells(at)["data"][0]["x"]
    assert "�" not in "".join(shown) and all(any(ch in tok for ch in text) for tok in shown)
    merged = run_page("pretrained", {"pt_model": "gpt2", "pt_text": text, "pt_merge": "1"})
    tokens = [tok.replace("\u200b", "") for tok in grid_cells(merged)["data"][0]["x"]]
    assert "".join(tokens) == text


def test_a_tokenizer_marker_in_the_finder_title_is_not_plotly_markup(fixture_models):
    at = run_page("pretrained", {"pt_model": "llama", "pt_text": "the keys the values"})
    assert_clean(at)
    (bars,) = [f for f in figures(at) if f["data"] and f["data"][0]["type"] == "bar"]
    title = bars["layout"]["title"]["text"]
    assert "&lt;s>" in title and "<s>" not in title  # the target: LLaMA's first token, "<s>"


def test_an_unknown_id_falls_back_to_minilm_with_a_notice(fixture_models):
    at = run_page("pretrained", {"pt_model": "no/such-model"})
    assert_clean(at)
    assert any("no model “no/such" in w for w in warnings(at)), warnings(at)
    assert at.selectbox(key="pt_model").value == "minilm"
    assert len(grid_cells(at)["data"]) == 72


def test_a_layer_beyond_the_model_is_reset_with_the_notice(fixture_models):
    at = run_page("pretrained", {"pt_model": "llama", "pt_layer": "5", "pt_head": "3"})
    assert any("pt\\_layer" in w for w in warnings(at))
    assert at.selectbox(key="pt_layer").value == 1 and at.selectbox(key="pt_head").value == 3


def test_models_above_the_budget_are_listed_greyed_with_the_reason(fixture_models, monkeypatch):
    # below the 71 kB that GPT-2's float16 fixture holds widened one layer at a time (Qwen2: 62 kB)
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", "70kB")
    at = run_page("pretrained")
    assert_clean(at)
    captions = [str(c.value) for c in at.caption]
    assert any("Not available: gpt2" in c and "70.0 kB" in c for c in captions), captions
    assert "gpt2" not in at.selectbox(key="pt_model").options


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_to_a_model_above_the_budget_gets_one_true_notice(fixture_models, monkeypatch, lang):
    """One notice naming the model, its size and the budget (not "no model …" above "Not
    available: …"); MiniLM shown instead, and the model not loaded."""
    from visattn.models import sources

    monkeypatch.setenv("VISATTN_MODEL_BUDGET", "70kB")  # below GPT-2's fixture, widened or not
    (gpt2,) = [s for s in sources.find((), os.environ) if s.id == "gpt2"]
    assert gpt2.over_budget and gpt2.float32_bytes > sources.budget_bytes()
    at = run_page("pretrained", {"pt_model": "gpt2", "lang": lang})
    assert_clean(at)
    (notice,) = warnings(at)
    size = fixture_models.size_text(gpt2.float32_bytes)
    assert "gpt2" in notice and size in notice and "70.0 kB" in notice, notice
    assert ("no model" in notice) is False and ("没有模型" in notice) is False
    assert not [c for c in at.caption if "gpt2" in str(c.value)]  # said once, above
    shown = next(s for s in fixture_models.available() if s.usable)  # MiniLM is over 70 kB too
    assert at.selectbox(key="pt_model").value == shown.id and shown.name in notice
    assert params(at)["pt_model"] == shown.id


@pytest.mark.parametrize(
    ("raw", "expected"), [("4GiB", 4 * 2**30), ("4e9", 4 * 10**9), ("90KiB", 90 * 2**10)]
)
def test_a_budget_in_binary_units_or_scientific_notation_is_read(
    fixture_models, monkeypatch, raw, expected
):
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", raw)
    fixture_models.available.clear()
    at = run_page("pretrained")
    assert_clean(at)
    over = [s for s in fixture_models.available() if s.over_budget]
    assert [s.id for s in over] == [
        s.id for s in fixture_models.available() if s.resident_bytes > expected
    ]
    budget = fixture_models.size_text(expected)
    greyed = [str(c.value) for c in at.caption if "Not available" in str(c.value)]
    assert len(greyed) == len(over) and all(budget in c for c in greyed), greyed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_budget_the_parser_does_not_take_is_one_message_not_a_silent_default(
    fixture_models, monkeypatch, lang
):
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", "4 gigs")
    at = run_page("pretrained", {"pt_model": "gpt2", "lang": lang})
    assert_clean(at)
    (message,) = errors(at)
    assert "4 gigs" in message and "4GiB" in message and "4e9" in message, message
    assert not warnings(at)  # no "no model gpt2" on top of it
    assert params(at).get("pt_model", "minilm") == "minilm"  # the model shown, not "None"
    assert len(grid_cells(at)["data"]) == 72  # MiniLM still usable
    assert fixture_models.refused() is not None  # nothing cached: asked again on each run


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_architecture_or_quantization_type_is_one_message_naming_the_file(
    fixture_models, monkeypatch, tmp_path, lang
):
    import gguf
    from test_gguf import write

    x = np.ones((4, 32), dtype=np.float32)
    falcon = write(tmp_path / "falcon.gguf", "falcon", {"token_embd.weight": x})
    q5_0 = gguf.GGMLQuantizationType.Q5_0
    q5 = write(tmp_path / "q5.gguf", "llama", {"w": gguf.quants.quantize(x, q5_0)}, raw_dtype=q5_0)
    t5 = tmp_path / "t5"
    t5.mkdir()
    (t5 / "config.json").write_text('{"model_type": "t5"}')
    monkeypatch.setenv("VISATTN_MODELS", f"{FIXTURE_MODELS}{os.pathsep}{tmp_path}")
    fixture_models.available.clear()
    models = (("falcon", falcon, "falcon"), ("q5", q5, "Q5_0"), ("t5", t5, "t5"))
    # each file as a page names it: under the model's name, never by the server's path
    names = {id: escape(f"{id}/config.json" if p.is_dir() else p.name) for id, p, _ in models}
    for id, _, what in models:
        at = run_page("pretrained", {"pt_model": id, "lang": lang})
        assert_clean(at)
        (notice,) = warnings(at)
        assert id in notice and escape(what) in notice, notice
        assert names[id] in notice, notice  # the file, and what to do about it
        assert escape(str(tmp_path)) not in notice
        assert ("download or convert" in notice) == (lang == "en" and id != "t5"), notice
        greyed = [str(c.value) for c in at.caption if names[id] in str(c.value)]
        assert greyed == []  # said once, in the notice
        others = [n for other, n in names.items() if other != id]
        listed = [str(c.value) for c in at.caption if any(n in str(c.value) for n in others)]
        assert len(listed) == 2  # the two other files, each once
        assert not any(escape(str(tmp_path)) in str(c.value) for c in at.caption)


def test_an_unreadable_folder_is_listed_with_its_translated_reason(
    fixture_models, monkeypatch, tmp_path
):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "t5"}')
    monkeypatch.setenv("VISATTN_MODELS", f"{FIXTURE_MODELS}:{tmp_path}")
    at = run_page("pretrained", {"lang": "zh"})
    assert_clean(at)
    captions = [str(c.value) for c in at.caption]
    assert any("不可用：broken" in c and "t5" in c for c in captions), captions


def test_a_listed_model_that_fails_to_load_says_so_once_and_the_page_goes_on(
    fixture_models, monkeypatch, tmp_path
):
    """A folder that describes well but cannot be loaded (its tokenizer.json is damaged): one
    translated error naming the file under the model's name, never the server's path; the page
    draws MiniLM (the picker's own error path once raised StreamlitWidgetAlreadyInstantiated)."""
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE_MODELS / "gpt2", broken)
    (broken / "tokenizer.json").write_text('{"model": 3}')
    monkeypatch.setenv("VISATTN_MODELS", f"{FIXTURE_MODELS}{os.pathsep}{tmp_path}")
    fixture_models.available.clear()
    at = run_page("pretrained", {"pt_model": "broken"})
    assert not at.exception
    (error,) = [str(e.value) for e in at.error]
    assert "broken" in error and escape("broken/tokenizer.json") in error, error
    assert escape(str(tmp_path)) not in error
    assert figures(at)  # MiniLM's maps drawn below


def test_a_decoder_in_chinese_speaks_chinese(fixture_models):
    at = run_page("pretrained", {"pt_model": "qwen2", "lang": "zh"})
    assert_clean(at)
    assert "因果掩码" in texts(at)
    # the model names (the fixtures' folders) are names, not prose
    assert not english_words(at, allowed={"qwen", "gpt", "mistral", "llama", "bert"})


def test_models_flag_names_folders():
    from ui.cache.models import model_dirs

    assert model_dirs(["--models", "/a", "--server.port", "1", "--models", "/b"]) == ["/a", "/b"]
    assert model_dirs([]) == []


# ── every family the loader reads (tests/fixtures/models/families), and what it adds ───────────


FAMILY_TEXT = "the keys the keys the values"  # short in every fixture's pieces: all heads drawn


@pytest.mark.parametrize("family", FAMILY_IDS)
def test_every_family_draws_every_head_and_names_what_it_adds_to_the_maps(every_model, family):
    model = every_model.load_checkpoint(family)
    at = run_page("pretrained", {"pt_model": family, "pt_text": FAMILY_TEXT})
    assert_clean(at)
    assert not errors(at) and not warnings(at), (errors(at), warnings(at))
    assert at.selectbox(key="pt_model").value == family
    L, H = model.config.n_layers, model.config.n_heads
    assert len(grid_cells(at)["data"]) == L * H
    assert len(bars(at)[0]) == min(lesson.TOP_BARS, L * H)
    captions = [str(c.value) for c in at.caption]
    for sentence in mechanism_sentences(model):
        assert captions.count(sentence) == 1, sentence
    without = [f"L{i + 1}" for i, r in enumerate(getattr(model.config, "rope_layers", ())) if not r]
    rotary_some = [c for c in captions if "in every layer but" in c]
    assert len(rotary_some) == (1 if without else 0)
    if without:  # SmolLM3: the layers without RoPE named, not "in every layer"
        assert ", ".join(without) in rotary_some[0]
        assert not any("RoPE rotates each query and key by angles" in c for c in captions[1:2])


@pytest.mark.parametrize(
    "family", [f for f in FAMILY_IDS if f in ("qwen3", "smollm3", "phi4_mini")]
)
def test_a_family_and_what_it_adds_in_chinese(every_model, family):
    model = every_model.load_checkpoint(family)
    at = run_page("pretrained", {"pt_model": family, "lang": "zh", "pt_text": FAMILY_TEXT})
    assert_clean(at)
    # "lt": a figure title's "&lt;s>", which Plotly draws as the token <s>
    assert english_words(at, allowed={"lt"}) == {}, english_words(at, allowed={"lt"})
    captions = [str(c.value) for c in at.caption]
    for sentence in mechanism_sentences(model, "zh"):
        assert sentence in captions, sentence


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_byte_pieces_are_said_to_be_pieces_until_merged_into_characters(fixture_models, lang):
    from visattn.models import pieces

    model = fixture_models.load_checkpoint("gpt2")
    result = model.run("小明喜欢吃苹果。")
    assert pieces.split_characters(result.pieces, model.byte_level, model.special)
    said = {"en": "“中 1/3” is the first of the three", "zh": "“中 1/3”是“中”的三个片段"}[lang]
    for merge, expected in (("false", True), ("true", False)):
        params = {"pt_model": "gpt2", "pt_text": "小明喜欢吃苹果。", "pt_merge": merge}
        at = run_page("pretrained", params | {"lang": lang})
        assert_clean(at)
        assert any(said in str(c.value) for c in at.caption) == expected, merge
    english = run_page("pretrained", {"pt_model": "gpt2", "pt_text": "the keys the values"})
    assert not any("1/3" in str(c.value) for c in english.caption)  # no piece, no note


def test_a_layer_without_rope_says_so_under_its_head(every_model):
    model = every_model.load_checkpoint("smollm3")
    bare = [i for i, rotated in enumerate(model.config.rope_layers) if not rotated]
    for layer, expected in ((bare[0], True), (bare[0] - 1, False)):
        params = {"pt_model": "smollm3", "pt_text": FAMILY_TEXT, "pt_layer": str(layer)}
        at = run_page("pretrained", params)
        assert_clean(at)
        said = f"L{layer + 1} rotates no query and no key"
        assert any(said in str(c.value) for c in at.caption) == expected, layer
