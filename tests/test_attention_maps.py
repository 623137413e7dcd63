"""A decoder's attention computed on demand (AttentionMaps) against the eager forward, which writes
every (H, T, S) map while it runs, and the page summaries read a block of rows at a time against
their whole-array formulas.

Every decoder checkpoint under tests/fixtures/models/ (and families/) takes part, Mistral's
sliding window included; the row blocks are made small so that a map spans many of them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from visattn import models, reading
from visattn.errors import InputError
from visattn.lessons import pretrained as pretrained_lesson
from visattn.models import causal, generation
from visattn.models.causal import AttentionMaps, Cache, Decoder
from visattn.shown_tokens import rank_heads

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "models"
FOLDERS = sorted(
    p
    for p in (*FIXTURES.glob("*"), *FIXTURES.glob("families/*"))
    if (p / "config.json").is_file() and '"bert"' not in (p / "config.json").read_text()
)
T = 37  # tokens: more than Mistral's window (4) and than a small block of rows
EXACT = 1e-6


@pytest.fixture(scope="module", params=FOLDERS, ids=[p.name for p in FOLDERS])
def model(request) -> Decoder:
    return models.load(request.param)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 3 rows, so that every read crosses block edges."""

    def three_rows(self, heads: int | None = None) -> int:
        return 3

    monkeypatch.setattr(AttentionMaps, "block_rows", three_rows)


def random_ids(model: Decoder, n: int = T, seed: int = 0) -> np.ndarray:
    n = min(n, model.config.max_positions)
    return np.random.default_rng(seed).integers(0, model.config.vocab_size, n)


def test_lazy_maps_equal_the_eager_forward(model, small_blocks):
    ids = random_ids(model)
    eager, eager_hidden = model.forward(ids, eager=True)  # (L, H, T, T) written while running
    maps, hidden = model.forward(ids)
    assert isinstance(maps, AttentionMaps) and maps.shape == eager.shape
    np.testing.assert_allclose(np.asarray(maps), eager, rtol=0, atol=EXACT)
    np.testing.assert_allclose(hidden, eager_hidden, rtol=0, atol=1e-5)
    L, H, n, _ = eager.shape
    last = (L - 1, H - 1)
    np.testing.assert_allclose(maps[last[0]], eager[last[0]], rtol=0, atol=EXACT)
    np.testing.assert_allclose(maps[last], eager[last], rtol=0, atol=EXACT)
    np.testing.assert_allclose(maps.rows(0, 1 % H, 5, 9), eager[0, 1 % H, 5:9], atol=EXACT)
    np.testing.assert_allclose(maps[0, 0, n - 3 :, 2:], eager[0, 0, n - 3 :, 2:], atol=EXACT)
    np.testing.assert_allclose(maps[0, 0, 7], eager[0, 0, 7], rtol=0, atol=EXACT)
    np.testing.assert_allclose(maps[:, :, 3, 1], eager[:, :, 3, 1], rtol=0, atol=EXACT)


def test_lazy_maps_after_a_cache_equal_the_eager_ones(model, small_blocks):
    """Queries after 5 cached tokens (start 5): the maps of the new rows on all the keys."""
    ids = random_ids(model)
    found = []
    for eager in (False, True):
        cache = Cache()
        model.forward(ids[:5], cache)
        found.append(model.forward(ids[5:], cache, eager=eager)[0])  # (L, H, T − 5, T)
    lazy, eager = found
    assert lazy.start == 5 and lazy.shape == eager.shape == (
        *eager.shape[:2],
        len(ids) - 5,
        len(ids),
    )
    np.testing.assert_allclose(np.asarray(lazy), eager, rtol=0, atol=EXACT)
    np.testing.assert_allclose(lazy[0, 0, 2:4], eager[0, 0, 2:4], rtol=0, atol=EXACT)


def test_a_cache_without_queries_keeps_no_maps(model):
    """As generation runs: the forward keeps no queries and gives no maps."""
    cache = Cache(queries=None)
    maps, hidden = model.forward(random_ids(model, 6), cache)
    assert maps is None and cache.queries is None and hidden.shape[0] == 6


def whole_entropy(w: np.ndarray) -> np.ndarray:
    """(L, H) mean row entropy of (L, H, T, T) weights, the whole array at once."""
    w = w.astype(np.float64)
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1).mean(axis=-1)


@pytest.mark.parametrize("name", ["gpt2", "mistral"])
def test_summaries_equal_the_whole_array_formulas(name, small_blocks):
    model = models.load(FIXTURES / name)
    result = model.run("The animal didn't cross the street because it was too tired. " * 2)
    maps = result.attentions
    dense = np.asarray(maps)  # (L, H, T, T)
    Tn = dense.shape[-1]
    np.testing.assert_allclose(
        reading.key_share(maps, [0]), reading.key_share(dense, [0]), rtol=0, atol=EXACT
    )
    np.testing.assert_allclose(
        reading.key_share(maps, [0, -1]), reading.key_share(dense, [0, -1]), atol=EXACT
    )
    np.testing.assert_allclose(maps.entropy(), whole_entropy(dense), rtol=0, atol=1e-5)
    rows, cols = np.arange(1, Tn), np.arange(Tn - 1)
    np.testing.assert_allclose(maps.pairs(rows, cols), dense[:, :, rows, cols], atol=EXACT)
    length = (Tn - 1) // 2
    np.testing.assert_allclose(
        generation.prefix_matching_scores(maps, 1, length),
        generation.prefix_matching_scores(dense, 1, length),
        rtol=0,
        atol=EXACT,
    )
    lazy_ranked = rank_heads(maps, Tn - 1, 2)
    dense_ranked = rank_heads(dense, Tn - 1, 2)
    np.testing.assert_allclose(
        [hw.weight for hw in lazy_ranked], [hw.weight for hw in dense_ranked], atol=EXACT
    )
    assert pretrained_lesson.patterns(maps) == pretrained_lesson.patterns(dense)
    on_first, before, after = pretrained_lesson._lazy_patterns(maps)
    i = np.arange(1, Tn)
    np.testing.assert_allclose(on_first, dense[..., :, 0].mean(axis=-1), atol=EXACT)
    np.testing.assert_allclose(before, dense[..., i, i - 1].mean(axis=-1), atol=EXACT)
    np.testing.assert_allclose(after, dense[..., i - 1, i].mean(axis=-1), atol=EXACT)


def test_a_block_of_rows_stays_within_its_bytes(monkeypatch):
    maps = models.load(FIXTURES / "gpt2").run("The animal didn't cross the street.").attentions
    L, H, n, S = maps.shape
    monkeypatch.setattr(causal, "ROW_BLOCK_BYTES", 5 * H * S * 4)  # 5 rows of every head
    assert maps.block_rows() == 5 and maps.block_rows(heads=1) == 5 * H
    spans = [(a, b) for a, b, w in maps.blocks(0) if w.shape == (H, b - a, S)]
    assert spans == [(a, min(a + 5, n)) for a in range(0, n, 5)]
    monkeypatch.setattr(causal, "ROW_BLOCK_BYTES", 1)  # less than a row: one row a block
    assert maps.block_rows() == 1


def test_the_whole_array_is_refused_above_its_limit():
    model = models.load(FIXTURES / "gpt2")
    maps = model.run("The animal didn't cross the street.").attentions
    small = dataclasses.replace(maps, limit=maps.dense_nbytes - 1)
    with pytest.raises(InputError) as caught:
        np.asarray(small)
    assert caught.value.code == "attention_too_large"
    np.testing.assert_array_equal(small[1, 2], np.asarray(maps)[1, 2])  # a head still reads


def test_the_cache_counts_the_queries_and_keys_kept():
    from ui.room import budget

    model = models.load(FIXTURES / "llama")
    result = model.run("The animal didn't cross the street because it was too tired. " * 3)
    maps = result.attentions
    kept = sum(a.nbytes for a in (*maps.queries, *maps.keys))
    assert maps.nbytes == kept
    assert kept <= budget.nbytes(maps) <= kept + 64 * 1024  # the arrays and small bookkeeping


def test_the_notebook_draws_one_layer_of_the_maps():
    from visattn.figures import notebook

    model = models.load(FIXTURES / "qwen2")
    result = model.run("The animal didn't cross the street because it was too tired.")
    dense = np.asarray(result.attentions)
    for draw in (notebook.heads, notebook.lines):
        lazy_figure = draw(result.attentions, result.tokens, layer=1)
        dense_figure = draw(dense, result.tokens, layer=1)
        assert lazy_figure.to_json() == dense_figure.to_json()


def test_a_run_reports_each_layer():
    model = models.load(FIXTURES / "mistral")
    calls = []

    def report(done: int, total: int) -> None:
        calls.append((done, total))

    model.run("The animal didn't cross the street.", progress=report)
    L = model.config.n_layers
    assert calls == [(i + 1, L) for i in range(L)]
