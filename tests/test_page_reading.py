"""Reading page through AppTest: each reading in English and Chinese, flow beyond its cap, the
tired/wide comparison, the [CLS]+[SEP] shares, bad inputs in Chinese, a tampered URL.

Expected values come from MiniLM's own attention weights and value norms with plain NumPy here, not
from the page's lesson module."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from apptest_util import (
    FAMILY_IDS,
    FIXTURE_MODELS,
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    mechanism_sentences,
    run_page,
    texts,
    warnings,
)

from visattn import reading
from visattn.lessons import reading as lesson
from visattn.models.causal import AttentionMaps
from visattn.models.encoder import BertEncoder

TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
CJK = re.compile(r"[\u4e00-\u9fff]")
ROOT = Path(__file__).resolve().parents[1]
LONG = " ".join(["word"] * 50)  # 52 tokens with [CLS] and [SEP]: above flow's cap


@pytest.fixture(scope="module")
def model() -> BertEncoder:
    return BertEncoder.load()


def heatmaps(at) -> list[dict]:
    return [f for f in figures(at) if f["data"] and f["data"][0]["type"] == "heatmap"]


def plane(at) -> dict:
    """The query/key plane: the figure whose keys are diamonds."""
    (fig,) = [
        f
        for f in figures(at)
        if any(d.get("marker", {}).get("symbol") == "diamond" for d in f["data"])
    ]
    return fig


def comparison_fig(at) -> dict:
    (fig,) = [
        f for f in figures(at) if any(d.get("name") in ("Sentence A", "句子 A") for d in f["data"])
    ]
    return fig


@pytest.mark.parametrize("name", lesson.READINGS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_reading(name, lang):
    at = run_page("reading", {"lang": lang, "rd_view": name})
    assert_clean(at)
    assert not errors(at)
    assert len(figures(at)) == 5  # grid, heatmap, lines, comparison, query/key plane
    if lang == "zh":
        assert english_words(at) == {}, english_words(at)


@pytest.mark.parametrize(
    "scale,palette,vrange", [("log", "Viridis", "max"), ("power", "Greys", "unit")]
)
def test_colour_scales_and_line_filters(scale, palette, vrange):
    at = run_page(
        "reading",
        {
            "lang": "zh",
            "rd_scale": scale,
            "rd_palette": palette,
            "rd_range": vrange,
            "rd_thr": "0.2",
            "rd_topk": "1",
            "rd_qkpos": "1",
            "rd_gamma": "0.3",
        },
    )
    assert_clean(at)
    assert english_words(at) == {}, english_words(at)
    lines = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    (fig,) = lines
    drawn = [d for d in fig["data"] if d.get("mode") == "lines"]
    assert (
        sum(len([x for x in d["x"] if x is not None]) // 2 for d in drawn) <= 16
    )  # top-1: one edge per token


def test_flow_beyond_its_cap_shows_a_message():
    for lang in ("en", "zh"):
        at = run_page("reading", {"lang": lang, "rd_view": "flow", "rd_text": LONG})
        assert_clean(at)
        (msg,) = errors(at)
        assert str(reading.FLOW_MAX_TOKENS) in msg and "52" in msg
        if lang == "zh":
            assert CJK.search(msg) and english_words(at) == {}


def test_tired_wide_comparison_shows_the_difference(model):
    at = run_page("reading", {"rd_layer": "3", "rd_head": "1"})
    assert_clean(at)
    fig = comparison_fig(at)
    z = [d for d in fig["data"] if d["type"] == "heatmap"]
    assert len(z) == 3 and z[2]["coloraxis"] == "coloraxis2"
    a, b = (model.run(s).attentions[3, 1].astype(np.float64) for s in (TIRED, WIDE))
    T = a.shape[0]
    np.testing.assert_allclose(array(z[2]["z"]).reshape(T, T), b - a, atol=2e-3)
    assert "tired / wide" in " ".join(map(str, z[2]["x"]))
    assert "14: tired / wide" in texts(at)


def test_unaligned_sentences_get_a_note():
    at = run_page(
        "reading",
        {"lang": "zh", "rd_b": "The animal didn't cross the street because it was far too tired."},
    )
    assert_clean(at)
    assert "词元数不同" in texts(at)
    assert (
        len([d for d in comparison_fig(at)["data"] if d["type"] == "heatmap"]) == 2
    )  # A and B, no difference
    assert english_words(at) == {}, english_words(at)


def test_special_token_shares(model):
    r = model.run(TIRED)
    A = r.attentions.astype(np.float64)  # (L, H, T, T)
    by_weight = (A[..., 0] + A[..., -1]).mean()
    N = reading.encoder_value_norms(model, TIRED)  # checked against Hugging Face in test_reading
    W = A * N[:, :, None, :]
    W = W / W.sum(axis=-1, keepdims=True)
    by_norm = (W[..., 0] + W[..., -1]).mean()
    at = run_page("reading", {})
    assert_clean(at)
    text = texts(at)
    assert f"**{100 * by_weight:.0f} %**" in text and f"**{100 * by_norm:.0f} %**" in text
    assert by_norm < by_weight  # the parked heads move little


@pytest.mark.parametrize(
    "params", [{"rd_text": ""}, {"rd_text": "   "}, {"rd_b": ""}, {"rd_view": "flow", "rd_b": LONG}]
)
def test_bad_inputs_in_chinese(params):
    at = run_page("reading", {"lang": "zh", **params})
    assert_clean(at)
    msgs = errors(at)
    assert msgs and all(CJK.search(m) for m in msgs), msgs
    assert english_words(at) == {}, english_words(at)


def test_tampered_url_falls_back_with_a_warning():
    at = run_page(
        "reading",
        {
            "rd_view": "bogus",
            "rd_layer": "9",
            "rd_head": "-1",
            "rd_scale": "x",
            "rd_gamma": "abc",
            "rd_thr": "7",
            "rd_topk": "4",
            "rd_qkpos": "maybe",
            "rd_text": "a" * 6000,
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    for name in (
        "rd_view",
        "rd_layer",
        "rd_head",
        "rd_scale",
        "rd_gamma",
        "rd_thr",
        "rd_topk",
        "rd_qkpos",
        "rd_text",
    ):
        assert name.replace("_", "\\_") in w
    assert not errors(at)
    assert at.text_area(key="rd_text").value == TIRED and at.radio(key="rd_view").value == "weights"


# ── any text the boxes accept opens both MiniLM pages without an exception ───────────────────────
LONG_TEXT = (lesson.PRESETS["paragraph"] + " ") * 20  # cut to the text box's 5 000 characters
TEXTS = {
    **lesson.PRESETS,
    "5000 characters": LONG_TEXT[: lesson.CONTROLS["rd_text"].max_chars],
    "5000 Chinese characters": ("小明喜欢吃苹果。" * 700)[: lesson.CONTROLS["rd_text"].max_chars],
}
TEXT_KEYS = {"pretrained": ("pt_text",), "reading": ("rd_text", "rd_a", "rd_b")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("page", ["pretrained", "reading"])
def test_every_preset_and_a_5000_character_text_open_without_an_exception(page, name, lang):
    text = TEXTS[name]
    assert len(text) <= 5000
    at = run_page(page, {"lang": lang} | {key: text for key in TEXT_KEYS[page]})
    assert_clean(at)
    assert not errors(at), errors(at)
    assert figures(at)
    if lang == "zh":
        assert english_words(at) == {}, english_words(at)
    if page == "reading" and len(text) == 5000:  # cut to 64 word pieces, the plane too, said so
        assert any("前 64 个" in w or "first 64" in w for w in warnings(at))
        assert [len(array(d["x"])) for d in plane(at)["data"]] == [lesson.MAX_READ_TOKENS] * 2
        capped = "平面上只画出本页读取的前 64 个词元" if lang == "zh" else "shows the first 64 of"
        assert capped in texts(at)


def test_the_query_key_plane_follows_the_text_it_reads_after_an_error():
    """A text the model cannot read keeps the last good view, the plane included, under one
    error (in English: AppTest cannot drive a Chinese page's widgets, see CONTRIBUTING)."""
    at = run_page("reading", {"rd_text": LONG_TEXT[:5000]})
    at.text_area(key="rd_text").input("   ").run()
    assert_clean(at)
    (msg,) = errors(at)
    assert "empty" in msg and "Showing the last view that worked" in texts(at)
    assert [len(array(d["x"])) for d in plane(at)["data"]] == [lesson.MAX_READ_TOKENS] * 2


# ---- axis words, the plane's labels, the unnormalised reading, citations, wording ----


def locale(lang: str, name: str = "reading") -> dict:
    return json.loads((ROOT / "ui" / "locales" / lang / f"{name}.json").read_text("utf-8"))


def axis_title(fig: dict, axis: str) -> str:
    title = fig["layout"].get(axis, {}).get("title", {})
    return title.get("text", "") if isinstance(title, dict) else str(title)


@pytest.mark.parametrize("name", lesson.READINGS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_axis_titles_and_hovers_name_what_each_reading_has_in_rows_and_columns(name, lang):
    """Rollout and flow: rows are output tokens after a layer (flow: the last), columns input
    tokens; every other reading: queries and keys."""
    words = locale(lang, "figures_reading")
    if name == "rollout":
        rows, columns = words["output_token"].format(layer="L4"), words["input_token"]
        grid_rows = words["output_token_grid"]
    elif name == "flow":
        rows, columns = words["output_token"].format(layer="L6"), words["input_token"]
        grid_rows = rows
    else:
        rows = grid_rows = words["query"]
        columns = words["key"]
    at = run_page("reading", {"lang": lang, "rd_view": name, "rd_layer": "3"})
    assert_clean(at)
    cell = [f for f in heatmaps(at) if axis_title(f, "xaxis")]
    (fig,) = cell  # the one cell, large (the grid and the comparison have no axis titles)
    assert (axis_title(fig, "yaxis"), axis_title(fig, "xaxis")) == (rows, columns)
    assert f"{rows}: %{{y}}" in fig["data"][0]["hovertemplate"]
    grid = heatmaps(at)[0]
    hover = grid["data"][0]["hovertemplate"]
    assert f"{grid_rows}: %{{y}}" in hover and f"{columns}: %{{x}}" in hover
    pair = comparison_fig(at)["data"][0]["hovertemplate"]
    assert f"{columns}: %{{x}}" in pair
    if name in ("rollout", "flow"):
        for h in (hover, pair, fig["data"][0]["hovertemplate"]):
            assert f"{words['query']}:" not in h and f"{words['key']}:" not in h


@pytest.mark.parametrize("params,focus_token", [({}, "it"), ({"rd_qkfocus": "2"}, None)])
def test_the_plane_labels_only_the_focus_query_and_its_strongest_keys(model, params, focus_token):
    r = model.run(TIRED)
    focus = r.tokens.index(focus_token) if focus_token else int(params["rd_qkfocus"])
    row = r.attentions[3, 1, focus].astype(np.float64)  # the default head, L4·H2
    top = set(np.argsort(-row, kind="stable")[: lesson.QK_TOP_KEYS].tolist())
    at = run_page("reading", {"rd_layer": "3", "rd_head": "1", **params})
    assert_clean(at)
    queries, keys = plane(at)["data"]
    labelled_q = [i for i, s in enumerate(queries["text"]) if s]
    labelled_k = {j for j, s in enumerate(keys["text"]) if s}
    assert labelled_q == [focus] and labelled_k == top
    assert queries["text"][focus].strip("\u200b") == r.tokens[focus]
    assert len(queries["customdata"]) == len(keys["customdata"]) == len(r.tokens)  # every hover


def test_the_unnormalised_norm_weighted_reading_is_alpha_times_the_value_norm(model):
    r = model.run(TIRED)
    A = r.attentions.astype(np.float64)  # (L, H, T, T)
    N = reading.encoder_value_norms(model, TIRED)  # (L, H, T): checked against Hugging Face
    raw = A[3, 1] * N[3, 1][None, :]  # α_ij ‖f(x_j)‖, no rescaling
    for lang in ("en", "zh"):
        at = run_page(
            "reading", {"lang": lang, "rd_view": "norm_weighted", "rd_raw": "1", "rd_layer": "3"}
        )
        assert_clean(at)
        (fig,) = [f for f in heatmaps(at) if axis_title(f, "xaxis")]
        np.testing.assert_allclose(array(fig["data"][0]["z"]), raw, rtol=1e-4, atol=1e-5)
        assert locale(lang, "figures_reading")["raw_value"] in fig["data"][0]["hovertemplate"]
        assert fig["data"][0]["zmax"] == pytest.approx(raw.max(), rel=1e-3)  # 0 … largest
        if lang == "zh":
            assert english_words(at) == {}, english_words(at)
    normalised = run_page("reading", {"rd_view": "norm_weighted", "rd_layer": "3"})
    (fig,) = [f for f in heatmaps(normalised) if axis_title(f, "xaxis")]
    np.testing.assert_allclose(
        array(fig["data"][0]["z"]), raw / raw.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-5
    )


CITATION = re.compile(r"([A-Z][a-z]+)(?: & ([A-Z][a-z]+)| (et al\.))? ((?:19|20)\d\d)")


def test_every_about_text_that_cites_in_english_cites_the_same_names_and_years_in_chinese():
    en, zh = locale("en")["view_about"], locale("zh")["view_about"]
    cited = 0
    for name, text in en.items():
        for match in CITATION.finditer(text):
            cited += 1
            for part in filter(None, match.groups()):
                assert part in zh[name], (name, part, zh[name])
    assert cited == 3  # norm-weighted (Kobayashi et al.), rollout and flow (Abnar & Zuidema)


def test_the_app_says_which_rescalings_are_its_own_choice():
    for lang, phrase in (("en", "this app's choice"), ("zh", "本应用的选择")):
        about = locale(lang)["view_about"]
        assert phrase in about["norm_weighted"] and phrase in about["flow"]


def test_chinese_wording_is_one_wording_across_pages():
    zh = locale("zh")
    assert zh["palettes"]["Viridis"] == "Viridis" and "绿黄" not in json.dumps(zh)
    positional = locale("zh", "positional_encoding")
    assert "甲" not in json.dumps(zh, ensure_ascii=False)
    assert zh["sentence_a"] == positional["text_a"] == "句子 A" and zh["sentence_b"] == "句子 B"
    assert zh["presets"] == locale("zh", "pretrained")["presets"]
    assert locale("en")["presets"] == locale("en", "pretrained")["presets"]


# ---- the reading page on every checkpoint family (tests/fixtures/models) -------------
# Expected maps from transformers' own eager attention (reference.npz, written by
# tests/make_model_fixtures.py), combined here with plain NumPy.

FAMILIES = ("bert", "gpt2", "llama", "mistral", "qwen2")
DECODERS = FAMILIES[1:]
ROTARY = ("llama", "mistral", "qwen2")
PAIR_B = "the values the keys the keys"  # sentence B, short enough for flow in every fixture


def transformers_run(family: str, i: int = 2) -> tuple[str, np.ndarray]:
    """Text i of the fixture and transformers' (L, H, T, T) attention on it (text 2: "the keys the
    keys the values", short enough for flow)."""
    with np.load(FIXTURE_MODELS / family / "reference.npz") as ref:
        return str(ref[f"text_{i}"]), ref[f"attentions_{i}"].astype(np.float64)


def large_cell(at) -> np.ndarray:
    (fig,) = [f for f in heatmaps(at) if axis_title(f, "xaxis")]  # the one cell, large
    return array(fig["data"][0]["z"])


def rows_normalised(w: np.ndarray) -> np.ndarray:
    return w / w.sum(axis=-1, keepdims=True)


def expected_map(name: str, A: np.ndarray, norms: np.ndarray, layer: int, head: int):
    """The reading's large map of layer ``layer`` (head ``head``) by its definition; None for flow
    (a max-flow: checked by its properties)."""
    if name == "weights":
        return A[layer, head]
    if name == "norm_weighted":
        return rows_normalised(A[layer, head] * norms[layer, head][None, :])
    if name == "mean":
        return A[layer].mean(axis=0)
    if name == "max":
        return rows_normalised(A[layer].max(axis=0))
    if name == "rollout":  # Ã = ½ I + ½ mean_h A, rows renormalised; R_l = Ã_l ⋯ Ã_0
        eye = np.eye(A.shape[-1])
        rolled = eye
        for a in A[: layer + 1]:
            rolled = rows_normalised(0.5 * eye + 0.5 * a.mean(axis=0)) @ rolled
        return rolled
    return None


@pytest.mark.parametrize("name", lesson.READINGS)
@pytest.mark.parametrize("family", FAMILIES)
def test_every_reading_of_every_family(fixture_models, family, name):
    from visattn.models import value_norms

    text, A = transformers_run(family)
    L, H, T, _ = A.shape
    model = fixture_models.load_checkpoint(family)
    norms = value_norms(model, model.run(text))  # checked in test_models (the attention block)
    params = {"rd_model": family, "rd_view": name, "rd_layer": "1", "rd_head": "2"}
    short = {"rd_text": text, "rd_a": text, "rd_b": PAIR_B}  # the fixtures' pieces are short
    at = run_page("reading", params | short)
    assert_clean(at)
    assert not errors(at), errors(at)
    assert len(figures(at)) == 5  # grid, heatmap, lines, comparison, query/key plane
    assert at.selectbox(key="rd_model").value == family
    named = (
        "**L2·H3** counts layers and heads from 1; papers, counting from 0, call this head **1.2**"
    )
    assert (named in texts(at)) == (name in lesson.PER_HEAD)
    assert at.selectbox(key="rd_layer").options == [f"L{i + 1}" for i in range(L)]
    assert at.selectbox(key="rd_head").options == [f"H{i + 1}" for i in range(H)]
    cells = {"flow": 1, "mean": L, "max": L, "rollout": L}.get(name, H)
    assert len(heatmaps(at)[0]["data"]) == cells
    z = large_cell(at)
    assert z.shape == (T, T)
    expected = expected_map(name, A, norms, 1, 2)
    if expected is not None:
        np.testing.assert_allclose(z, expected, atol=1e-4)
    np.testing.assert_allclose(z.sum(axis=-1), 1.0, atol=1e-4)
    if family in DECODERS:  # causal: no row reaches a later token, the first row is all on itself
        assert np.all(np.triu(z, 1) == 0), name
        assert z[0, 0] == pytest.approx(1.0)
        assert "causal masking" in texts(at)
    through = "rollout and flow are made of causal maps" in texts(at)
    assert through == (family in DECODERS and name in ("rollout", "flow"))
    points = [len(array(d["x"])) for d in plane(at)["data"]]
    assert points == [T, T]  # every query and every key of the text


@pytest.mark.parametrize("family", DECODERS)
def test_a_decoder_reads_its_first_token_as_the_sink(fixture_models, family):
    from visattn.models import value_norms

    text, A = transformers_run(family)
    T = A.shape[-1]
    model = fixture_models.load_checkpoint(family)
    N = value_norms(model, model.run(text))  # (L, H, T)
    by_weight = A[..., 0].mean()
    by_norm = rows_normalised(A * N[:, :, None, :])[..., 0].mean()
    even = np.mean([1 / (i + 1) for i in range(T)])  # query i sees i + 1 tokens
    at = run_page("reading", {"rd_model": family, "rd_text": text})
    assert_clean(at)
    shown = texts(at)
    assert "What the first token really takes" in shown and "[CLS]" not in shown
    assert f"**{100 * by_weight:.0f} %**" in shown and f"**{100 * by_norm:.0f} %**" in shown
    assert f"would give it {100 * even:.0f} %" in shown
    rotary = "No position embeddings" in shown and "RoPE rotates each query" in shown
    assert rotary == (family in ROTARY)


def test_an_encoder_checkpoint_keeps_cls_and_sep(fixture_models):
    text, A = transformers_run("bert")
    at = run_page("reading", {"rd_model": "bert", "rd_text": text})
    assert_clean(at)
    shown = texts(at)
    assert "What [CLS] and [SEP] really take" in shown
    assert f"**{100 * (A[..., 0] + A[..., -1]).mean():.0f} %**" in shown
    assert "causal masking" not in shown and "No position embeddings" not in shown


def test_an_unknown_model_falls_back_to_minilm_and_a_layer_beyond_it_is_reset(fixture_models):
    at = run_page("reading", {"rd_model": "no/such-model"})
    assert_clean(at)
    assert any("no model “no/such" in w for w in warnings(at)), warnings(at)
    assert at.selectbox(key="rd_model").value == "minilm"
    assert len(at.selectbox(key="rd_layer").options) == lesson.N_LAYERS
    small = run_page("reading", {"rd_model": "llama", "rd_layer": "5", "rd_head": "3"})
    assert_clean(small)
    assert any("rd\\_layer" in w for w in warnings(small))
    assert small.selectbox(key="rd_layer").value == 1 and small.selectbox(key="rd_head").value == 3
    default = run_page("reading", {"rd_model": "gpt2"})  # L4 by default: beyond 2 layers, no notice
    assert_clean(default)
    assert default.selectbox(key="rd_layer").value == 1 and not warnings(default)


@pytest.mark.parametrize("family", ["gpt2", "qwen2"])
def test_a_decoder_in_chinese_speaks_chinese(fixture_models, family):
    at = run_page("reading", {"rd_model": family, "lang": "zh", "rd_view": "rollout"})
    assert_clean(at)
    shown = texts(at)
    assert "因果掩码" in shown and "第一个词元真正拿到了多少" in shown
    assert ("没有位置嵌入" in shown) == (family == "qwen2")
    assert not english_words(at, allowed={"qwen", "gpt", "mistral", "llama", "bert"})


@pytest.mark.parametrize("family", FAMILIES)
def test_the_page_drawing_reserves_the_budget_for_the_models_size(
    fixture_models, monkeypatch, family
):
    """The page's drawing holds a reservation of DRAW_FACTOR × the model's own (L, H, T, T) float32
    attention (T: the tokens the page reads), whatever the model."""
    from ui.cache import pretrained as cache_pretrained
    from ui.room import budget

    text, A = transformers_run(family)
    L, H, T, _ = A.shape
    asked: list[int] = []
    reserve = budget.reserve

    def recording(cost, on_wait=None):
        asked.append(cost)
        return reserve(cost, on_wait)

    monkeypatch.setattr(budget, "reserve", recording)
    at = run_page("reading", {"rd_model": family, "rd_text": text})
    assert_clean(at)
    expected = int(cache_pretrained.DRAW_FACTOR * L * H * T * T * 4) + cache_pretrained.RUN_FLOOR
    assert asked and set(asked) == {expected}
    assert budget.shared().held()[1] == 0  # nothing reserved any more


def test_a_tokenizer_marker_is_drawn_as_itself_not_as_plotly_markup(fixture_models):
    """LLaMA's "<s>" is Plotly's strike-through tag: every label, hover and lines' word reaches
    the browser as "&lt;s>", which Plotly shows as <s>."""
    at = run_page("reading", {"rd_model": "llama", "rd_text": "the keys the values"})
    assert_clean(at)
    grid = heatmaps(at)[0]
    assert grid["data"][0]["x"][0] == "&lt;s>" and grid["data"][0]["y"][0] == "&lt;s>"
    (lines,) = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    words = [d["text"] for d in lines["data"] if d.get("mode") == "text"]
    assert words and all(w[0] == "&lt;s>" for w in words)
    hovers = [h for d in lines["data"] if d.get("mode") == "lines" for h in d.get("text") or []]
    assert not any("<s>" in h for h in hovers if h)
    queries, keys = plane(at)["data"]
    assert "<s>" not in " ".join(queries["customdata"] + keys["customdata"])


def test_a_decoders_unnormalised_norm_weighted_reading_is_alpha_times_its_value_norms(
    fixture_models,
):
    from visattn.models import value_norms

    text, A = transformers_run("qwen2")  # grouped-query attention: two query heads per value head
    model = fixture_models.load_checkpoint("qwen2")
    N = value_norms(model, model.run(text))  # (L, H, T)
    at = run_page(
        "reading",
        {"rd_model": "qwen2", "rd_view": "norm_weighted", "rd_raw": "1", "rd_text": text},
    )
    assert_clean(at)
    layer, head = 1, 1  # the defaults L4·H2 cut to the model's last layer
    raw = A[layer, head] * N[layer, head][None, :]
    np.testing.assert_allclose(large_cell(at), raw, rtol=1e-4, atol=1e-5)
    assert np.all(np.triu(large_cell(at), 1) == 0)


@pytest.mark.parametrize(("family", "unk"), [("minilm", True), ("bert", False), ("gpt2", False)])
def test_the_chinese_preset_says_mostly_unk_only_for_a_model_that_reads_it_so(
    fixture_models, family, unk
):
    """MiniLM reads most of 小明喜欢吃苹果。 as [UNK]; the BERT fixture's vocabulary has the
    characters, and a byte-level decoder reads every byte."""
    model = (
        fixture_models.load_model()
        if family == "minilm"
        else fixture_models.load_checkpoint(family)
    )
    tokens = [
        tok for tok in model.run(lesson.PRESETS["chinese"]).tokens if tok not in lesson.SPECIALS
    ]
    assert (tokens.count("[UNK]") > len(tokens) / 2) == unk
    for lang in ("en", "zh"):
        at = run_page("reading", {"rd_model": family, "lang": lang})
        assert_clean(at)
        button = at.button(key="rd_text__preset_chinese")
        assert ("[UNK]" in button.label) == unk
        assert button.label == locale(lang)["presets" if unk else "presets_read"]["chinese"]


def test_a_tampered_model_id_is_dropped_with_the_url_notice(fixture_models):
    at = run_page("reading", {"rd_model": "x" * 500, "rd_layer": "1"})
    assert_clean(at)
    assert any("rd\\_model" in w for w in warnings(at)), warnings(at)
    assert at.selectbox(key="rd_model").value == "minilm"
    assert len(at.selectbox(key="rd_head").options) == lesson.N_HEADS and not errors(at)


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_run_is_kept_read_only_in_the_budget_not_in_a_streamlit_cache(fixture_models, family):
    """A larger checkpoint makes a larger run: the page's runs are the budget's, by bytes."""
    from ui.cache.pretrained import model_key
    from ui.room import budget

    text, _ = transformers_run(family)
    at = run_page("reading", {"rd_model": family, "rd_text": text})
    assert_clean(at)
    model = fixture_models.load_checkpoint(family)
    kept = budget.shared().peek(("reading_run", model_key(model), text))
    assert kept is not None and kept.tokens == model.run(text).tokens
    attn = kept.attn  # a decoder's maps: the queries and keys they are computed from
    arrays = (*attn.queries, *attn.keys) if isinstance(attn, AttentionMaps) else (attn,)
    assert not any(a.flags.writeable for a in arrays) and not kept.norms.flags.writeable
    assert not kept.result.layer_inputs.flags.writeable


FAMILY_TEXT = "the keys the keys the values"  # short in every fixture's pieces


@pytest.mark.parametrize("family", FAMILY_IDS)
def test_every_newer_family_reads_every_section_and_names_what_it_adds(every_model, family):
    model = every_model.load_checkpoint(family)
    text = {"rd_text": FAMILY_TEXT, "rd_a": FAMILY_TEXT, "rd_b": PAIR_B}
    at = run_page("reading", {"rd_model": family, "rd_view": "rollout"} | text)
    assert_clean(at)
    assert not errors(at) and not warnings(at), (errors(at), warnings(at))
    assert at.selectbox(key="rd_model").value == family
    assert len(figures(at)) == 5  # grid, heatmap, lines, comparison, query/key plane
    assert at.selectbox(key="rd_layer").options == [
        f"L{i + 1}" for i in range(model.config.n_layers)
    ]
    captions = [str(c.value) for c in at.caption]
    for sentence in mechanism_sentences(model):
        assert captions.count(sentence) == 1, sentence


CHINESE = "小明喜欢吃苹果。"  # three UTF-8 bytes a character: cut into byte pieces by the fixtures


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("family", DECODERS)
def test_a_decoders_maps_show_characters_not_their_byte_pieces(fixture_models, family, lang):
    """The maps merge a character's pieces as the pretrained page does (pieces.merge_groups);
    the query/key plane, whose points are pieces, says what "小 1/3" is."""
    from visattn.models import pieces

    model = fixture_models.load_checkpoint(family)
    result = model.run(CHINESE)
    merged = pieces.merge_groups(result.pieces, result.attentions, model.byte_level, model.special)
    assert len(merged.tokens) < len(result.tokens)  # the fixture cuts characters into pieces
    params = {
        "rd_model": family,
        "rd_text": CHINESE,
        "rd_a": CHINESE,
        "rd_layer": "1",
        "lang": lang,
    }
    at = run_page("reading", params | {"rd_head": "2"})
    assert_clean(at)
    assert not errors(at)
    cell = large_cell(at)
    np.testing.assert_allclose(cell, merged.attn[1, 2], atol=1e-5)
    (big,) = [f for f in heatmaps(at) if axis_title(f, "xaxis")]
    labels = [str(x).split(": ", 1)[-1] for x in big["data"][0]["x"]]
    shown = [label.replace("\u200b", "").replace("&lt;", "<") for label in labels]  # Plotly's <
    assert shown == merged.tokens
    assert not any("1/3" in label for label in labels)
    n, m = len(result.tokens), len(merged.tokens)
    merged_caption = {"en": f"as {n} pieces", "zh": f"读成 {n} 个片段"}[lang]
    assert any(merged_caption in str(c.value) and f"{m}" in str(c.value) for c in at.caption)
    said = {"en": "“中 1/3” being the first", "zh": "“中 1/3”是“中”的三个片段"}[lang]
    assert any(said in str(c.value) for c in at.caption)
    if lang == "zh":
        assert english_words(at, allowed={"lt"}) == {}, english_words(at, allowed={"lt"})


def test_sentencepiece_byte_pieces_are_drawn_as_characters(monkeypatch, tmp_path):
    """A SentencePiece tokenizer with byte fallback (a GGUF file's) writes 小 as <0xE5> <0xB0>
    <0x8F>: the maps draw 小."""
    from ui.cache import models as cache_models
    from visattn.models import load, pieces

    gguf_file = FIXTURE_MODELS.parent / "gguf" / "llama-spm-F16.gguf"
    (tmp_path / gguf_file.name).symlink_to(gguf_file)
    monkeypatch.setenv("VISATTN_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub-here"))
    model = load(gguf_file)
    result = model.run(CHINESE)
    assert any(p.startswith("<0x") for p in result.pieces) and not model.byte_level
    merged = pieces.merge_groups(result.pieces, result.attentions, False, model.special)
    cache_models.available.clear()
    try:
        id = gguf_file.stem
        at = run_page("reading", {"rd_model": id, "rd_text": CHINESE, "rd_b": CHINESE})
    finally:
        cache_models.available.clear()
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    (big,) = [f for f in heatmaps(at) if axis_title(f, "xaxis")]
    labels = [str(x).split(": ", 1)[-1] for x in big["data"][0]["x"]]
    shown = [label.replace("\u200b", "").replace("&lt;", "<") for label in labels]
    assert shown == merged.tokens and "小" in shown


def test_a_layers_own_mechanisms_are_named_under_its_map(every_model):
    """SmolLM3's layer without RoPE says so under its map, its other layers do not; a layer whose
    attention_args(i) passes a window, a soft-cap or sinks (Gemma 2's windowed and capped layers,
    gpt-oss's sinks) has each named there, and only such a layer."""
    model = every_model.load_checkpoint("smollm3")
    bare = [i for i, rotated in enumerate(model.config.rope_layers) if not rotated]
    assert bare and len(bare) < model.config.n_layers
    said = "rotates no query and no key"
    for layer in range(model.config.n_layers):
        params = {"rd_model": "smollm3", "rd_text": FAMILY_TEXT, "rd_layer": str(layer)}
        at = run_page("reading", params | {"rd_b": PAIR_B})
        assert_clean(at)
        captions = [str(c.value) for c in at.caption]
        assert any(f"L{layer + 1} {said}" in c for c in captions) == (layer in bare), layer

    own = "the values of the keys"  # a text of its own: no other test reads its shared runs
    for family in ("gemma2", "gpt_oss"):  # windows on some layers; a soft-cap; learned sinks
        model = every_model.load_checkpoint(family)
        for layer in range(model.config.n_layers):
            args = model.attention_args(layer)
            params = {"rd_model": family, "rd_text": own, "rd_layer": str(layer)}
            at = run_page("reading", params)
            assert_clean(at)
            captions = [str(c.value) for c in at.caption]
            name = f"L{layer + 1}"
            window = args.get("window")
            windowed = f"{name} is a sliding-window layer"
            said = any(windowed in c and f"the {window} most" in c for c in captions)
            assert said == (window is not None), (family, layer)
            cap = args.get("softcap")
            capped = [c for c in captions if f"{name} soft-caps its scores" in c]
            assert bool(capped) == (cap is not None), (family, layer)
            assert cap is None or f"±{cap:g}" in capped[0]
            sinks = any(f"{name}'s heads each have a learned sink" in c for c in captions)
            assert sinks == (args.get("sinks") is not None), (family, layer)
