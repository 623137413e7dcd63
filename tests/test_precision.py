"""Weights in their own precision (issue 54, point 3): a decoder whose float32 copy does not fit the
memory budget keeps its float16 / bfloat16 / quantized matrices as the file stores them and widens
them one layer at a time; the budget counts the float32 weights it then holds at once.

The fixtures are the tiny checkpoints of tests/fixtures (LLaMA and GPT-2 in float16, Qwen2 in
bfloat16, the GGUF files in every quantization type); their float32 widening is written here into
tmp_path as a float32 safetensors file."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from visattn import models
from visattn.models import loading, sources

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "models"
GGUF = Path(__file__).resolve().parent / "fixtures" / "gguf"
STORED = {"llama": "F16", "gpt2": "F16", "qwen2": "BF16"}
GGUF_FILES = ("llama-BF16", "qwen2-F16", "gpt2-Q8_0", "llama-Q4_1", "qwen2-Q4_0", "kquant-Q6_K")
TEXT = "The cat sat on the mat. The cat sat on"


def over_budget(monkeypatch) -> None:
    """A budget of 1 byte: no float32 model fits, so every decoder widens layer by layer."""
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", "1")


def write_float32(src: Path, dst: Path) -> Path:
    """A copy of checkpoint ``src`` with every tensor widened to float32 (safetensors by hand)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", "*.npz"))
    weights = loading.Weights.open(src)
    header, chunks, offset = {}, [], 0
    for name in weights.tensors:
        data = np.ascontiguousarray(weights[name], dtype="<f4").tobytes()
        shape = list(weights.tensors[name].shape)
        header[name] = {
            "dtype": "F32",
            "shape": shape,
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    with open(dst / loading.SINGLE, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(chunks))
    return dst


@pytest.mark.parametrize("family", sorted(STORED))
def test_stored_weights_give_the_maps_of_their_float32_widening(family, tmp_path, monkeypatch):
    dtypes = {t.dtype for t in loading.Weights.open(FIXTURES / family).tensors.values()}
    assert dtypes == {STORED[family]}
    wide = models.load(write_float32(FIXTURES / family, tmp_path / family))
    over_budget(monkeypatch)
    stored = models.load(FIXTURES / family)
    assert isinstance(stored.layers[0].W_o, loading.Stored)
    assert not isinstance(wide.layers[0].W_o, loading.Stored)
    a, b = wide.run(TEXT), stored.run(TEXT)
    np.testing.assert_allclose(b.attentions, a.attentions, rtol=0, atol=1e-6)
    np.testing.assert_allclose(b.hidden, a.hidden, rtol=0, atol=1e-5)
    np.testing.assert_allclose(b.next_logits, a.next_logits, rtol=0, atol=1e-5)
    np.testing.assert_allclose(wide.value_norms(a), stored.value_norms(b), rtol=1e-5, atol=1e-6)
    assert wide.generate(a.token_ids, 4)[0] == stored.generate(b.token_ids, 4)[0]


@pytest.mark.parametrize("name", GGUF_FILES)
def test_gguf_widened_by_layer_equals_widened_at_load(name, monkeypatch):
    path = GGUF / f"{name}.gguf"
    at_load = models.load(path)
    over_budget(monkeypatch)
    by_layer = models.load(path)
    assert isinstance(by_layer.layers[0].W_o, loading.Stored)
    a, b = at_load.run(TEXT), by_layer.run(TEXT)
    np.testing.assert_array_equal(b.attentions, a.attentions)
    np.testing.assert_array_equal(b.next_logits, a.next_logits)
    for layer in range(at_load.config.n_layers):
        qk_a = models.queries_keys(at_load, a, layer, 1)
        qk_b = models.queries_keys(by_layer, b, layer, 1)
        np.testing.assert_array_equal(qk_b, qk_a)


def test_stored_matrices_are_views_of_the_mapped_file_and_one_layer_is_widened(monkeypatch):
    over_budget(monkeypatch)
    model = models.load(FIXTURES / "llama")
    for layer in model.layers:
        for name in ("W_q", "W_o", "W_gate", "W_down"):
            raw = getattr(layer, name).raw
            assert not raw.flags.owndata and not raw.flags.writeable  # the file's pages
    model.forward(np.arange(5))
    widened, last = model._in_flight[1], model.layers[-1]
    assert model._in_flight[0] is last  # only the last layer's widened copy is left
    np.testing.assert_array_equal(widened.W_down, np.asarray(last.W_down))
    assert widened.W_down.dtype == np.float32 and widened.W_down.shape == last.W_down.shape


def test_rows_of_a_stored_table_are_gathered_and_the_head_taken_by_blocks(monkeypatch):
    """The embedding's rows are widened alone, and the LM head block by block (a block of 7 rows
    here), both equal to the widened table's."""
    for path in (FIXTURES / "qwen2", GGUF / "qwen2-Q8_0.gguf", GGUF / "kquant-Q4_K.gguf"):
        table = model_table(path)
        assert isinstance(table, loading.Stored)
        wide = table.widen()
        ids = np.array([5, 0, 5, wide.shape[0] - 1])
        np.testing.assert_array_equal(loading.gather(table, ids), wide[ids])
        hidden = np.random.default_rng(0).standard_normal((3, wide.shape[1]), dtype=np.float32)
        monkeypatch.setattr(loading, "ROW_BLOCK", 7)
        blocks = loading.times_transposed(hidden, table)
        np.testing.assert_allclose(blocks, hidden @ wide.T, rtol=1e-5, atol=1e-5)


def model_table(path: Path):
    """The embedding table of a decoder loaded layer by layer (a Stored view)."""
    with pytest.MonkeyPatch.context() as patch:
        over_budget(patch)
        return models.load(path).embed_tokens


def test_numpy_gets_a_stored_matrix_widened():
    weights = loading.Weights.open(FIXTURES / "qwen2")
    name = "model.layers.0.self_attn.q_proj.weight"
    stored = weights.stored(name)
    assert isinstance(stored, loading.Stored) and stored.shape == weights[name].shape
    np.testing.assert_array_equal(np.asarray(stored), weights[name])
    np.testing.assert_array_equal(np.asarray(stored.T[1:3]), weights[name].T[1:3])
    x = np.ones((2, stored.shape[0]), np.float32)
    np.testing.assert_array_equal(x @ stored, x @ weights[name])
    vector = weights.stored("model.layers.0.input_layernorm.weight")
    assert isinstance(vector, np.ndarray) and vector.dtype == np.float32  # small: widened now


def expected_resident(config: dict, budget: int, row_block: int) -> int:
    """Bytes the budget counts for the LLaMA fixture (float16, untied head), from config.json: the
    float32 model when it fits, else the vectors (norms), one layer's matrices and a block of
    rows of the embedding and of the head, all in float32."""
    D, F, V = (config[k] for k in ("hidden_size", "intermediate_size", "vocab_size"))
    L = config["num_hidden_layers"]
    H, Hkv, Dh = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    layer = D * H * Dh * 2 + D * Hkv * Dh * 2 + 3 * D * F  # q, o; k, v; gate, up, down
    vectors = 2 * D * L + D  # two norms a layer, the final norm
    tables = 2 * V * D  # the embedding and the head
    whole = 4 * (L * layer + vectors + tables)
    if whole <= budget:
        return whole
    return 4 * (vectors + layer + 2 * min(V, row_block) * D)


@pytest.mark.parametrize("row_block", [8192, 100])
def test_the_budget_counts_what_is_held_at_once(monkeypatch, row_block):
    monkeypatch.setattr(loading, "ROW_BLOCK", row_block)
    config = json.loads((FIXTURES / "llama" / "config.json").read_text())
    tensors = loading.Weights.open(FIXTURES / "llama").tensors
    whole = expected_resident(config, 10**12, row_block)
    assert loading.float32_bytes(tensors) == whole
    for budget in (whole, whole - 1, 1):
        assert loading.resident_bytes(tensors, budget) == expected_resident(
            config, budget, row_block
        )
    per_layer = expected_resident(config, 1, row_block)
    assert per_layer < whole
    env = {"HF_HUB_CACHE": "/nonexistent", "VISATTN_MODEL_BUDGET": str(per_layer)}
    (fits,) = sources.find([FIXTURES / "llama"], env)
    assert fits.usable and fits.resident_bytes == per_layer
    env["VISATTN_MODEL_BUDGET"] = str(per_layer - 1)
    (over,) = sources.find([FIXTURES / "llama"], env)
    assert over.over_budget and over.resident_bytes == per_layer


def test_float32_models_count_every_weight():
    """A float32 checkpoint has nothing to widen: its mapped weights are read whole by every
    forward, so they count, under any budget, as today."""
    tensors = loading.Weights.open(FIXTURES / "mistral").tensors
    assert {t.dtype for t in tensors.values()} == {"F32"}
    whole = loading.float32_bytes(tensors)
    assert loading.resident_bytes(tensors, 1) == whole == loading.resident_bytes(tensors, whole)
