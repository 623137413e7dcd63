"""The designed transformer: its heads do what the docstring says, for the reasons it gives."""

from __future__ import annotations

import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from visattn.models import designed

TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
LAST = designed.N_LAYERS - 1


def weight(result, layer: int, head: str, query: str, key: str) -> float:
    """Weight from the first ``query`` token to the first ``key`` token in one head."""
    tokens = [t.lower() for t in result.tokens]
    return float(result.head(layer, head)[tokens.index(query), tokens.index(key)])


# ── shapes and the public face ────────────────────────────────────────────────────────────────────
def test_result_shapes_and_names():
    r = designed.run(TIRED)
    T, D, H, L = len(r.tokens), designed.D_MODEL, designed.N_HEADS, designed.N_LAYERS
    assert r.tokens == "The animal didn't cross the street because it was too tired .".split()
    assert r.head_names == ("coreference", "state", "previous", "broad")
    assert r.weights.shape == (L, H, T, T)
    assert r.features.shape == (T, len(r.feature_names)) == (T, designed.N_FEATURES)
    assert r.positions.shape == (T, designed.N_POSITIONS)
    assert r.X.shape == (T, D) and len(r.dim_names) == D
    assert len(r.layers) == L
    for trace in r.layers:
        assert trace.X_in.shape == trace.residual.shape == trace.Z.shape == (T, D)
        assert trace.mha.weights.shape == (H, T, T)
        assert trace.mha.Q.shape == (H, T, designed.D_HEAD)
    assert D % H == 0 and designed.D_HEAD == D // H
    np.testing.assert_array_equal(r.layers[0].X_in, r.X)
    np.testing.assert_array_equal(r.layers[1].X_in, r.layers[0].Z)


def test_config_exposes_read_only_parameters():
    cfg = designed.designed_config()
    assert cfg is designed.DESIGNED_CONFIG and len(cfg.layers) == designed.N_LAYERS
    for p in cfg.layers:
        for W in (p.W_q, p.W_k, p.W_v, p.W_o):
            assert W.shape == (cfg.d_model, cfg.d_model)
            with pytest.raises(ValueError):
                W[0, 0] = 1.0
        for W in (p.W_q, p.W_k, p.W_v):  # read relative to "zero": LayerNorm's mean shift drops out
            np.testing.assert_allclose(W.sum(axis=0), 0.0, atol=1e-12)


# ── (1) the article's sentence ────────────────────────────────────────────────────────────────────
def test_tired_sentence_coreference_and_state():
    r = designed.run(TIRED)
    assert weight(r, LAST, "coreference", "it", "animal") >= 0.5
    assert weight(r, LAST, "state", "it", "tired") >= 0.5
    assert weight(r, 0, "coreference", "it", "animal") >= 0.5
    assert weight(r, 0, "state", "it", "tired") >= 0.5


def test_weights_are_clear_but_not_one_hot():
    r = designed.run(TIRED)
    i = r.tokens.index("it")
    for layer in range(designed.N_LAYERS):
        for h in ("coreference", "state"):
            assert 0.5 <= r.head(layer, h)[i].max() < 0.99


def test_previous_head_looks_one_token_back():
    r = designed.run(TIRED)
    for layer in range(designed.N_LAYERS):
        w = r.head(layer, "previous")
        T = w.shape[0]
        assert all(w[i, i - 1] >= 0.5 for i in range(1, T))
        assert all(w[i].argmax() == i - 1 for i in range(1, T))


def test_broad_head_is_near_uniform():
    r = designed.run(TIRED)
    T = len(r.tokens)
    for layer in range(designed.N_LAYERS):
        w = r.head(layer, "broad")
        assert w.max() < 2.0 / T and w.min() > 0.4 / T


# ── (2) the choice follows the features, not the spelling ─────────────────────────────────────────
def test_swapping_features_moves_coreference():
    swap = {"street": {"animate": 1, "spatial": 0}, "animal": {"animate": 0, "spatial": 1}}
    r = designed.run(TIRED, overrides=swap)
    assert r.tokens == designed.run(TIRED).tokens  # same spelling
    for layer in range(designed.N_LAYERS):
        assert weight(r, layer, "coreference", "it", "street") >= 0.5
        assert weight(r, layer, "coreference", "it", "animal") < 0.2


def test_turning_tired_into_an_extent_adjective_moves_coreference():
    r = designed.run(TIRED, overrides={"tired": {"state": 0, "extent": 1}})
    assert weight(r, LAST, "coreference", "it", "street") >= 0.5


def test_same_features_same_weights_whatever_the_words():
    a = designed.run("The cat didn't cross the road because it was too hungry.")
    b = designed.run(TIRED)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-12)


def test_an_unknown_word_given_features_by_index_takes_part():
    r = designed.run(
        "The blorp didn't cross the street because it was too tired.",
        overrides={1: {"noun": 1, "animate": 1}},
    )
    assert weight(r, LAST, "coreference", "it", "blorp") >= 0.5


def test_featurize_is_case_insensitive_and_reports_bad_overrides():
    F = designed.featurize(["IT", "Animal", "."])
    names = designed.FEATURE_NAMES
    assert F[0, names.index("pronoun")] == 1
    assert F[1, names.index("animate")] == 1 and F[1, names.index("noun")] == 1
    assert F[2, names.index("punctuation")] == 1
    with pytest.raises(ValueError, match="features are"):
        designed.featurize(["it"], {"it": {"alive": 1}})
    with pytest.raises(ValueError, match="not among the tokens"):
        designed.featurize(["it"], {"street": {"animate": 1}})
    with pytest.raises(ValueError, match="index"):
        designed.featurize(["it"], {5: {"animate": 1}})


# ── (3) the stretch: two layers resolve "wide" ────────────────────────────────────────────────────
def test_wide_sentence_second_layer_coreference_goes_to_street():
    r = designed.run(WIDE)
    assert weight(r, 0, "coreference", "it", "animal") >= 0.5  # layer 1: only the animate prior
    assert weight(r, 0, "state", "it", "wide") >= 0.5  # … while state carries "wide" into "it"
    i = r.tokens.index("it")
    assert r.layers[0].residual[i, r.dim_names.index("wants_spatial")] > 0.5
    assert (
        weight(r, LAST, "coreference", "it", "street") >= 0.5
    )  # layer 2: matched against the nouns


@pytest.mark.parametrize(
    "text, referent",
    [
        ("The cat didn't cross the road because it was too tired.", "cat"),
        ("The dog didn't cross the river because it was too wide.", "river"),
        ("The child didn't cross the bridge because it was too narrow.", "bridge"),
        ("The horse did not jump over the fence because it was too high.", "fence"),
        ("The cat did not cross the wide road because it was tired.", "cat"),
        ("the ANIMAL didn’t cross the STREET because IT was too sleepy", "animal"),
    ],
)
def test_variants(text, referent):
    r = designed.run(text)
    assert weight(r, LAST, "coreference", "it", referent) >= 0.5


# ── (4) unknown words and bad input ───────────────────────────────────────────────────────────────
def test_unknown_words_are_neutral_and_rows_sum_to_one():
    r = designed.run("Zorblax quumfed the vrizzle because it was glorpy!")
    assert not r.features[0].any() and not r.features[1].any()
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0)
    assert np.isfinite(r.weights).all()


def test_bad_text_raises():
    with pytest.raises(ValueError, match="empty"):
        designed.run("   ")
    with pytest.raises(ValueError, match="64"):
        designed.run("word " * 65)
    with pytest.raises(ValueError, match="64"):
        designed.run_tokens(["word"] * 65)
    with pytest.raises(ValueError):
        designed.run_tokens([])


# ── (5) properties over random sentences ──────────────────────────────────────────────────────────
WORDS = sorted(designed.LEXICON) + ["it", ".", ","]
UNKNOWN = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(WORDS), UNKNOWN), min_size=1, max_size=64))
def test_rows_sum_to_one_and_are_finite(words):
    r = designed.run(" ".join(words))
    T = len(r.tokens)
    assert r.weights.shape == (designed.N_LAYERS, designed.N_HEADS, T, T)
    assert np.isfinite(r.weights).all() and (r.weights >= 0).all()
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0, atol=1e-9)
    zero = r.dim_names.index("zero")
    np.testing.assert_array_equal(r.X[:, zero], 0.0)
    for trace in r.layers:  # nothing writes into "zero": it carries only LayerNorm's shift
        assert np.isfinite(trace.Z).all()
        np.testing.assert_allclose(trace.residual[:, zero], trace.X_in[:, zero], atol=1e-12)


# ── (6) the same numbers from a plain loop ────────────────────────────────────────────────────────
def reference_layer(X, W_q, W_k, W_v, W_o, n_heads):
    """One post-LN attention layer, head by head, with nothing shared with visattn."""
    T, D = X.shape
    Dh = D // n_heads
    heads, weights = [], []
    for h in range(n_heads):
        cols = slice(h * Dh, (h + 1) * Dh)
        Q, K, V = X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols]
        A = np.empty((T, T))
        for i in range(T):
            s = np.array([Q[i] @ K[j] for j in range(T)]) / np.sqrt(Dh)
            e = np.exp(s - s.max())
            A[i] = e / e.sum()
        weights.append(A)
        heads.append(A @ V)
    out = np.concatenate(heads, axis=1) @ W_o
    res = X + out
    Z = (res - res.mean(axis=1, keepdims=True)) / np.sqrt(res.var(axis=1, keepdims=True) + 1e-5)
    return np.array(weights), out, res, Z


@pytest.mark.parametrize("text", [TIRED, WIDE])
def test_matches_a_plain_per_head_loop(text):
    r = designed.run(text)
    for layer, (trace, p) in enumerate(zip(r.layers, designed.DESIGNED_CONFIG.layers, strict=True)):
        weights, out, res, Z = reference_layer(
            trace.X_in, p.W_q, p.W_k, p.W_v, p.W_o, designed.N_HEADS
        )
        np.testing.assert_allclose(r.weights[layer], weights, atol=1e-12)
        np.testing.assert_allclose(trace.mha.output, out, atol=1e-12)
        np.testing.assert_allclose(trace.residual, res, atol=1e-12)
        np.testing.assert_allclose(trace.Z, Z, atol=1e-10)


# ── the Chinese Winograd pair: segmentation by the lexicon, the same heads ────────────
TIRED_ZH = "动物没有穿过街道，因为它太累了。"
WIDE_ZH = "动物没有穿过街道，因为它太宽了。"


def test_chinese_is_cut_into_the_lexicon_s_longest_words():
    words = "动物 没有 穿过 街道 ， 因为 它 太 累 了 。".split()
    assert designed.segment(TIRED_ZH) == words
    assert designed.segment("動物沒有穿過街道") == ["動物", "沒有", "穿過", "街道"]  # traditional
    assert designed.segment("它很累, because it was") == [
        "它",
        "很",
        "累",
        ",",
        "because",
        "it",
        "was",
    ]
    assert designed.segment("鑫它") == ["鑫", "它"]  # an unknown character stands alone


@given(st.lists(st.sampled_from([*designed.LEXICON_ZH, "鑫", "了", "的"]), min_size=1, max_size=30))
def test_segmentation_loses_no_character(words):
    text = "".join(words)
    assert "".join(designed.segment(text)) == text


def test_chinese_features_match_the_english_ones():
    pairs = {"动物": "animal", "街道": "street", "它": "it", "累": "tired", "宽": "wide"}
    pairs |= {"没有": "didn't", "因为": "because", "太": "too"}
    for zh, en in pairs.items():
        assert designed.word_features(zh) == designed.word_features(en), zh
    assert designed.word_features("了") == frozenset()  # a particle: no feature


@pytest.mark.parametrize(("text", "target"), [(TIRED_ZH, "动物"), (WIDE_ZH, "街道")])
def test_the_chinese_pair_links_it_the_way_english_does(text, target):
    r = designed.run(text)
    it, coref = r.tokens.index("它"), r.head_names.index("coreference")
    last = r.weights[-1, coref, it]  # (T,) the last layer's coreference row of 它
    assert last[r.tokens.index(target)] >= 0.5
    assert r.tokens[int(np.argmax(last))] == target
    state = r.weights[-1, r.head_names.index("state"), it]
    assert r.tokens[int(np.argmax(state))] in ("累", "宽")


def test_swapping_the_chinese_features_moves_the_link():
    swapped = {"街道": {"animate": 1, "spatial": 0}, "动物": {"animate": 0, "spatial": 1}}
    r = designed.run(TIRED_ZH, swapped)
    row = r.weights[-1, r.head_names.index("coreference"), r.tokens.index("它")]
    assert r.tokens[int(np.argmax(row))] == "街道"


def test_article_001_s_it_finds_the_apple():
    """Article 001: reading 它, attention goes to the noun named before it (苹果)."""
    r = designed.run("我买了一个苹果，它很甜。")
    row = r.weights[0, r.head_names.index("coreference"), r.tokens.index("它")]
    assert r.tokens[int(np.argmax(row))] == "苹果" and row.max() >= 0.5
