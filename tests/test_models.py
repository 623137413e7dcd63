"""Checkpoints from a folder in NumPy (visattn.models.load) against Hugging Face transformers.

tests/fixtures/models/ holds tiny random checkpoints of every family (BERT, GPT-2, LLaMA, Qwen2,
Mistral; fp32, fp16, bf16; one sharded) and transformers' eager outputs on them, written by
tests/make_model_fixtures.py with the reference environment; these tests need no torch. Bad folders
are made from the fixtures in tmp_path."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_reference import TOL, assert_forward_matches, assert_generation_matches

from visattn import models
from visattn.errors import InputError
from visattn.models import loading, pieces
from visattn.models.causal import Cache, Decoder
from visattn.models.encoder import BertEncoder

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "models"
FAMILIES = ("bert", "gpt2", "llama", "qwen2", "mistral")
DECODERS = FAMILIES[1:]
N_TEXTS = 3


@pytest.fixture(scope="module", params=FAMILIES)
def family(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def loaded(family):
    with np.load(FIXTURES / family / "reference.npz") as f:
        reference = {key: f[key] for key in f.files}
    return models.load(FIXTURES / family), reference


# ---------------------------------------------------------------- against transformers


def test_family_and_kind(loaded, family):
    model, _ = loaded
    if family == "bert":
        assert isinstance(model, BertEncoder)
    else:
        assert isinstance(model, Decoder) and model.family == {"gpt2": "gpt2"}.get(family, "llama")


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_token_ids_match_transformers_tokenizer(loaded, i):
    model, ref = loaded
    result = model.run(str(ref[f"text_{i}"]))
    np.testing.assert_array_equal(result.token_ids, ref[f"ids_{i}"])
    assert len(result.tokens) == result.attentions.shape[-1] == len(ref[f"ids_{i}"])


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_attentions_and_hidden_states_match_eager(loaded, i):
    model, ref = loaded
    assert_forward_matches(model, ref, i)


@pytest.mark.parametrize("family", DECODERS, indirect=True)
@pytest.mark.parametrize("i", range(N_TEXTS))
def test_decoder_logits_and_greedy_generation(loaded, i):
    model, ref = loaded
    assert_generation_matches(model, ref, i)


@pytest.mark.parametrize("family", DECODERS, indirect=True)
def test_kv_cache_gives_the_full_forward_rows(loaded):
    """Feeding the tokens in two parts through the cache gives the last rows of the one-pass
    attention, key columns and all."""
    model, ref = loaded
    ids = ref["ids_0"]
    full, hidden = model.forward(ids)
    cache = Cache()
    model.forward(ids[:5], cache)
    rest, rest_hidden = model.forward(ids[5:], cache)
    assert cache.length == len(ids)
    np.testing.assert_allclose(rest, full[:, :, 5:, :], atol=TOL)
    np.testing.assert_allclose(rest_hidden, hidden[5:], atol=TOL)


@pytest.mark.parametrize("family", DECODERS, indirect=True)
def test_causal_maps_are_causal(loaded):
    model, ref = loaded
    att = model.run(str(ref["text_0"])).attentions
    T = att.shape[-1]
    assert np.all(att[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
    np.testing.assert_allclose(np.asarray(att).sum(-1), 1.0, atol=1e-6)


def test_mistral_window_masks_old_keys():
    model = models.load(FIXTURES / "mistral")
    assert model.config.window == 4
    att = model.forward(np.arange(10))[0]
    assert np.all(att[:, :, 9, :6] == 0) and np.all(att[:, :, 9, 6:] > 0)


def test_qwen2_grouped_query_attention_and_bias():
    c = models.load(FIXTURES / "qwen2").config
    assert (c.n_heads, c.n_kv_heads, c.qkv_bias, c.o_bias, c.tied) == (4, 2, True, False, True)


def test_no_torch_and_no_streamlit_imported():
    code = (
        "import sys; from visattn import models; "
        f"[models.load(f).run('hello') for f in {[str(FIXTURES / f) for f in FAMILIES]!r}]; "
        "bad = [m for m in ('torch', 'streamlit', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- weights


def test_fixture_dtypes_are_the_ones_named():
    seen = {}
    for family in FAMILIES:
        weights = loading.Weights.open(FIXTURES / family)
        seen[family] = {info.dtype for info in weights.tensors.values()}
    assert seen == {
        "bert": {"F32"},
        "gpt2": {"F16"},
        "llama": {"F16"},
        "qwen2": {"BF16"},
        "mistral": {"F32"},
    }
    assert len(loading.weight_files(FIXTURES / "mistral")) == 2


@given(st.floats(width=32, allow_nan=False))
def test_bf16_bits_widen_to_the_same_value(x):
    """A float32 cut to its top 16 bits is a bfloat16; widening those bits gives the float32 whose
    low 16 bits are zero (computed here by masking, independently of the shift)."""
    bits32 = np.array([x], dtype=np.float32).view(np.uint32)
    top = (bits32 >> 16).astype(np.uint16)
    expected = (bits32 & np.uint32(0xFFFF0000)).view(np.float32)
    np.testing.assert_array_equal(loading.bf16_to_float32(top), expected)


def test_bf16_known_values():
    # 0x3F80 = 1.0, 0xC000 = −2.0, 0x3EAA ≈ 0.33203125, 0x7F80 = +inf
    bits = np.array([0x3F80, 0xC000, 0x3EAA, 0x7F80], dtype=np.uint16)
    np.testing.assert_array_equal(
        loading.bf16_to_float32(bits), np.array([1.0, -2.0, 0.33203125, np.inf], dtype=np.float32)
    )


def test_fp32_weights_are_memory_mapped():
    weights = loading.Weights.open(FIXTURES / "bert")
    tensor = weights["bert.embeddings.word_embeddings.weight"]
    assert isinstance(tensor.base, np.memmap) or isinstance(tensor, np.memmap)
    assert not tensor.flags.writeable


# ---------------------------------------------------------------- bad folders (point 7)


def copy(family: str, tmp_path: Path) -> Path:
    folder = tmp_path / family
    shutil.copytree(FIXTURES / family, folder)
    return folder


def bad(folder: Path, code: str, file: str) -> InputError:
    with pytest.raises(InputError) as caught:
        models.load(folder)
    assert caught.value.code == code, caught.value
    assert caught.value.params["file"].endswith(file), caught.value.params
    assert file in str(caught.value)
    return caught.value


def test_no_config(tmp_path):
    folder = copy("gpt2", tmp_path)
    (folder / "config.json").unlink()
    bad(folder, "model_no_config", "config.json")


def test_not_a_folder(tmp_path):
    bad(tmp_path / "nowhere", "model_folder", "nowhere")


def test_config_not_json(tmp_path):
    folder = copy("gpt2", tmp_path)
    (folder / "config.json").write_text("{not json")
    bad(folder, "model_config", "config.json")


def test_unknown_model_type(tmp_path):
    folder = copy("gpt2", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"model_type": "t5"}))
    error = bad(folder, "model_type", "config.json")
    assert error.params["type"] == "t5"


def test_missing_tokenizer(tmp_path):
    folder = copy("llama", tmp_path)
    (folder / "tokenizer.json").unlink()
    bad(folder, "model_no_tokenizer", "tokenizer.json")


def test_broken_tokenizer(tmp_path):
    folder = copy("llama", tmp_path)
    (folder / "tokenizer.json").write_text('{"model": 3}')
    bad(folder, "model_tokenizer", "tokenizer.json")


@pytest.mark.parametrize(
    ("family", "field", "value"),
    [("gpt2", "n_embd", 48), ("llama", "intermediate_size", 96), ("bert", "vocab_size", 10)],
)
def test_shapes_that_disagree_with_the_config(tmp_path, family, field, value):
    folder = copy(family, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {field: value}))
    error = bad(folder, "model_shape", "model.safetensors")
    assert error.params["shape"] != error.params["expected"]


def test_a_missing_tensor(tmp_path):
    folder = copy("qwen2", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"num_hidden_layers": 3}))
    error = bad(folder, "model_tensor_missing", "model.safetensors")
    assert error.params["name"].startswith("model.layers.2.")


@pytest.mark.parametrize("keep", [4, 20, 2000])
def test_truncated_safetensors(tmp_path, keep):
    folder = copy("bert", tmp_path)
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:keep])
    bad(folder, "model_truncated", "model.safetensors")


def test_a_header_that_lies_about_a_size(tmp_path):
    folder = copy("gpt2", tmp_path)
    path = folder / "model.safetensors"
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    name = next(k for k in header if k != "__metadata__")
    header[name]["shape"] = [*header[name]["shape"], 2]
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data[8 + n :])
    bad(folder, "model_truncated", "model.safetensors")


def test_a_missing_shard(tmp_path):
    folder = copy("mistral", tmp_path)
    (folder / "model-00002-of-00002.safetensors").unlink()
    bad(folder, "model_shard_missing", "model-00002-of-00002.safetensors")


def test_pytorch_model_bin_alone_gets_a_message(tmp_path):
    folder = copy("gpt2", tmp_path)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"PK\x03\x04 a torch pickle")
    error = bad(folder, "model_torch_bin", "pytorch_model.bin")
    assert "torch" in str(error)


def test_no_weights(tmp_path):
    folder = copy("gpt2", tmp_path)
    (folder / "model.safetensors").unlink()
    bad(folder, "model_no_weights", "model.safetensors")


def test_unsupported_settings_are_named(tmp_path):
    folder = copy("llama", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"] = {"rope_type": "mrope", "rope_theta": 1e4, "factor": 2.0}
    (folder / "config.json").write_text(json.dumps(config))
    error = bad(folder, "model_unsupported", "config.json")
    assert "mrope" in error.params["what"]


# ---------------------------------------------------------------- pieces shown as characters


def test_gpt2_chinese_pieces_become_characters():
    model = models.load(FIXTURES / "gpt2")
    result = model.run("小明喜欢吃苹果。")
    assert "�" not in "".join(result.tokens)
    assert all(any(ch in token for ch in "小明喜欢吃苹果。") for token in result.tokens)
    merged = pieces.merge_groups(result.pieces, result.attentions, model.byte_level, model.special)
    assert "".join(merged.tokens) == "小明喜欢吃苹果。"
    np.testing.assert_allclose(merged.attn.sum(-1), 1.0, atol=1e-5)


def test_split_character_labels_count_their_pieces():
    table = {b: c for c, b in pieces.byte_decoder().items()}
    zhong = "中".encode()  # 3 bytes: as two pieces, b"\xe4\xb8" and b"\xad"
    tokens = ["".join(table[b] for b in zhong[:2]), table[zhong[2]], "Ġ" + "a"]
    assert pieces.display(tokens, byte_level=True) == ["中 1/2", "中 2/2", "a"]
    assert pieces.groups(tokens, byte_level=True) == [(0, 1), (2,)]


def test_byte_fallback_pieces():
    tokens = ["▁the", "<0xE4>", "<0xB8>", "<0xAD>", "</s>"]
    assert pieces.display(tokens, byte_level=False, special={"</s>"}) == [
        "the",
        "中 1/3",
        "中 2/3",
        "中 3/3",
        "</s>",
    ]


def test_byte_decoder_is_a_bijection():
    table = pieces.byte_decoder()
    assert sorted(table.values()) == list(range(256)) and table["Ġ"] == 32


# ---------------------------------------------------------------- sources (point 3)


def hub_with(tmp_path: Path, repo: str, family: str) -> Path:
    """A Hugging Face hub cache holding ``repo`` as a snapshot copied from a fixture."""
    hub = tmp_path / "hub"
    entry = hub / f"models--{repo.replace('/', '--')}"
    shutil.copytree(FIXTURES / family, entry / "snapshots" / "abc123")
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text("abc123")
    return hub


def test_sources_from_env_dirs_and_the_hub_cache(tmp_path):
    from visattn.models import sources

    hub = hub_with(tmp_path, "tiny-org/tiny-llama", "llama")
    env = {"VISATTN_MODELS": str(FIXTURES), "HF_HUB_CACHE": str(hub)}
    found = sources.find([FIXTURES / "gpt2"], env=env)
    ids = [s.id for s in found]
    assert ids == ["bert", "gpt2", "llama", "mistral", "qwen2", "tiny-org/tiny-llama"]
    by_id = {s.id: s for s in found}
    assert by_id["tiny-org/tiny-llama"].origin == "hf_cache"
    gpt2 = by_id["gpt2"]
    assert (gpt2.family, gpt2.n_layers, gpt2.n_heads, gpt2.usable) == ("gpt2", 2, 4, True)
    expected = sum(int(np.prod(t.shape)) for t in loading.Weights.open(gpt2.path).tensors.values())
    assert gpt2.n_params == expected and gpt2.disk_bytes == 2 * expected  # float16
    assert by_id["qwen2"].causal and not by_id["bert"].causal


def test_sources_over_the_budget_and_unreadable_are_listed_with_the_reason(tmp_path):
    from visattn.models import sources

    broken = copy("llama", tmp_path)
    (broken / "tokenizer.json").unlink()
    env = {"VISATTN_MODEL_BUDGET": "90kB", "HF_HUB_CACHE": str(tmp_path / "none")}
    found = {s.id: s for s in sources.find([FIXTURES / "qwen2", FIXTURES / "gpt2", broken], env)}
    assert found["qwen2"].usable and found["qwen2"].float32_bytes < 90_000
    # GPT-2's float16 weights do not fit in float32, but widened one layer at a time they do
    gpt2 = found["gpt2"]
    assert gpt2.usable and gpt2.resident_bytes < 90_000 < gpt2.float32_bytes
    assert found["llama"].problem.code == "model_no_tokenizer" and not found["llama"].usable
    env["VISATTN_MODEL_BUDGET"] = str(gpt2.resident_bytes - 1)
    (gpt2,) = sources.find([FIXTURES / "gpt2"], env)
    assert gpt2.over_budget and not gpt2.usable


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", 2_000_000_000),
        ("4GB", 4 * 10**9),
        ("500 MB", 5 * 10**8),
        ("123", 123),
        ("4e9", 4 * 10**9),
        ("2.5E3", 2500),
        ("4GiB", 4 * 2**30),
        ("512 MiB", 512 * 2**20),
        ("1.5kib", 1536),
        ("2TiB", 2 * 2**40),
        ("4G", 4 * 10**9),
    ],
)
def test_budget_from_the_environment(raw, expected):
    from visattn.models import sources

    assert sources.budget_bytes({"VISATTN_MODEL_BUDGET": raw}) == expected


@pytest.mark.parametrize("raw", ["x", "4 XB", "-1", "0", "4GBB", "four GB", "1e30"])
def test_a_budget_the_parser_does_not_take_is_refused_not_replaced(raw, tmp_path):
    from visattn.models import sources

    env = {"VISATTN_MODEL_BUDGET": raw, "HF_HUB_CACHE": str(tmp_path / "none")}
    with pytest.raises(InputError) as refused:
        sources.budget_bytes(env)
    assert refused.value.code == "model_budget" and refused.value.params["value"] == raw.strip()
    with pytest.raises(InputError):
        sources.find([FIXTURES / "gpt2"], env)  # no list made with a budget it made up


def test_equal_folder_names_get_distinct_ids(tmp_path):
    from visattn.models import sources

    for parent in ("a", "b"):
        shutil.copytree(FIXTURES / "gpt2", tmp_path / parent / "gpt2")
    env = {"HF_HUB_CACHE": str(tmp_path / "none")}
    found = sources.find([tmp_path / "a", tmp_path / "b"], env)
    assert [s.id for s in found] == ["gpt2", "gpt2-2"]


# ------------------------------------------------------------- value norms (norm-weighted reading)


@pytest.mark.parametrize("family", ["gpt2", "qwen2", "mistral"], indirect=True)
def test_head_values_add_up_to_the_attention_block(loaded, family):
    """Σ_h A_h · (v_j W_O^h) (+ b_O) is what attention adds to the residual stream: with the
    feed-forward output zeroed, the next layer's input is x + that sum. head_values is checked
    against the forward pass, and the norms are its row norms."""
    import copy
    import dataclasses

    model, ref = loaded
    ids = ref["ids_0"]
    zeroed = copy.copy(model)
    if family == "gpt2":
        zeroed.layers = tuple(
            dataclasses.replace(layer, W_2=np.zeros_like(layer.W_2), b_2=np.zeros_like(layer.b_2))
            for layer in model.layers
        )
    else:
        zeroed.layers = tuple(
            dataclasses.replace(layer, W_down=np.zeros_like(layer.W_down)) for layer in model.layers
        )
    inputs = np.empty((model.config.n_layers, len(ids), model.config.d_model), np.float32)
    att, _ = zeroed.forward(ids, layer_inputs=inputs)
    values = zeroed.head_values(0, inputs[0])  # (H, T, D)
    added = np.einsum("hts,hsd->td", att[0], values)  # (T, D)
    bias = getattr(model.layers[0], "b_o", None)
    if bias is not None:
        added += bias
    np.testing.assert_allclose(inputs[0] + added, inputs[1], atol=1e-5)
    result = model.run(str(ref["text_0"]))
    norms = model.value_norms(result)  # (L, H, T)
    assert norms.shape == result.attentions.shape[:3]
    np.testing.assert_allclose(
        norms[1], np.linalg.norm(model.head_values(1, result.layer_inputs[1]), axis=-1), rtol=1e-6
    )


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_queries_and_keys_give_transformers_attention(loaded, i):
    """The reading page's query/key plane: softmax(q·kᵀ), masked as the model masks (causal;
    Mistral's window of 4), is transformers' eager attention for every head, with the transformers
    layer inputs (a RoPE model's queries and keys rotated, a grouped-query head's shared key)."""
    model, ref = loaded
    result = model.run(str(ref[f"text_{i}"]))
    expected = ref[f"attentions_{i}"]  # (L, H, T, T) from transformers
    L, H, T, _ = expected.shape
    window = getattr(model.config, "window", None) if isinstance(model, Decoder) else None
    rows, cols = np.arange(T)[:, None], np.arange(T)[None, :]
    hidden = cols > rows if isinstance(model, Decoder) else np.zeros((T, T), bool)
    if window is not None:
        hidden |= rows - cols >= window
    for layer in range(L):
        for head in range(H):
            q, k = models.queries_keys(model, result, layer, head)  # (T, Dh) each
            assert q.shape == k.shape == (T, model.config.d_head)
            scores = np.where(hidden, -np.inf, q @ k.T)  # (T, T)
            w = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w /= w.sum(axis=-1, keepdims=True)
            np.testing.assert_allclose(w, expected[layer, head], rtol=0, atol=TOL)


def test_queries_keys_refuse_a_head_the_model_lacks():
    model = models.load(FIXTURES / "gpt2")
    result = model.run("the keys")
    with pytest.raises(InputError) as info:
        models.queries_keys(model, result, 0, model.config.n_heads)
    assert info.value.code == "reading_index"


def test_position_kinds():
    kinds = {family: models.load(FIXTURES / family).positions for family in FAMILIES}
    assert kinds == {
        "bert": "learned",
        "gpt2": "learned",
        "llama": "rotary",
        "qwen2": "rotary",
        "mistral": "rotary",
    }


# ---------------------------------------------------------------- generation and induction heads


@pytest.mark.parametrize("planted", [0, 1])
def test_the_head_finder_ranks_a_planted_gpt2_induction_head_first(tmp_path, planted):
    """A user with GPT-2 small on disk finds its induction heads: a checkpoint in
    GPT-2's format with an induction head planted in layer 2, head ``planted``
    (tests/induction_checkpoint.py), loaded through visattn.models.load; the decoder page's
    finder ranks that head first, with the scores of an independent forward pass in torch."""
    import induction_checkpoint

    from visattn.lessons import training as training_lesson
    from visattn.models import generation
    from visattn.models.gpt2 import GPT2

    folder = induction_checkpoint.write(tmp_path / "gpt2-planted", planted)
    model = models.load(folder)
    assert isinstance(model, GPT2)
    found = training_lesson.induction_heads(model)
    length = generation.fitted_length(model)
    assert found.length == length == (induction_checkpoint.P - 1) // 2
    ids, start = generation.repeated_sequence(model, length)
    assert start == 1 and ids[0] == model.tokenizer.token_to_id(induction_checkpoint.END)
    expected = induction_checkpoint.reference_scores(folder, ids, start, length)  # (L, H)
    assert (found.top[0].layer, found.top[0].head) == (1, planted)
    assert expected[1, planted] > 0.99 and np.delete(expected.ravel(), 2 + planted).max() < 0.1
    for head in found.top:
        assert head.weight == pytest.approx(expected[head.layer, head.head], abs=1e-5)
    assert [h.weight for h in found.top] == sorted((h.weight for h in found.top), reverse=True)


def test_a_model_trained_by_visattn_loads_as_gpt2_with_its_own_attention(tmp_path):
    """visattn.training's decoder is GPT-2's block without the feed-forward part: written in
    GPT-2's format it loads through visattn.models.load with the attention the training's own
    forward pass computes, and the finder ranks its heads as the training's maps score them."""
    import induction_checkpoint

    from visattn import training
    from visattn.lessons import training as training_lesson
    from visattn.models import generation

    config = training.DecoderConfig(
        vocab=16, seq_len=24, d_model=16, n_heads=2, min_repeat=2, max_repeat=12
    )
    run = training.train(config, seed=0, steps=30)
    folder = induction_checkpoint.write_trained(tmp_path / "trained", run.params, config)
    model = models.load(folder)
    length = generation.fitted_length(model)
    ids, start = generation.repeated_sequence(model, length)
    assert start == 0 and len(ids) == 2 * length <= config.seq_len
    maps = training.attention_maps(run.params, config, ids[None])[0]  # (L, H, T, T)
    np.testing.assert_allclose(model.forward(ids)[0], maps, rtol=0, atol=TOL)
    scores = generation.prefix_matching_scores(maps, start, length)  # (L, H)
    found = training_lesson.induction_heads(model)
    order = np.argsort(scores, axis=None)[::-1]
    assert [(h.layer, h.head) for h in found.top] == [divmod(int(k), 2) for k in order]
    np.testing.assert_allclose([h.weight for h in found.top], scores.flat[order], atol=TOL)


def test_the_planted_induction_head_makes_greedy_generation_continue_a_repeat(tmp_path):
    import induction_checkpoint

    from visattn.models import generation

    model = models.load(induction_checkpoint.write(tmp_path / "gpt2-planted"))
    prompt = "w5 w3 w7 w1 w9 w3 w7"  # w5 first: position 0 reads as its own previous token
    ids = model.tokenize(prompt)[1]
    steps = generation.steps(model, ids, 4)
    assert [s.token for s in steps] == ["w1", "w9", "w3", "w7"]  # what followed w7, w1, w9, w3
    assert [s.cache_length for s in steps] == [7, 8, 9, 10]


@pytest.mark.parametrize("family", ["gpt2", "llama"], indirect=True)
def test_steps_are_greedy_generation_with_real_probabilities(loaded):
    from visattn.models import generation

    model, ref = loaded
    result = model.run(str(ref["text_0"]))
    found = generation.steps(model, result.token_ids, 6)
    assert [s.token_id for s in found] == ref["greedy_0"][:6].tolist()
    first = generation.probabilities(result.next_logits)
    assert found[0].top_probabilities[0] == pytest.approx(first.max(), rel=1e-6)
    for s in found:
        assert list(s.top_probabilities) == sorted(s.top_probabilities, reverse=True)
        assert 0 < sum(s.top_probabilities) <= 1 + 1e-9 and s.top_ids[0] == s.token_id
    T = len(result.token_ids)
    assert [s.cache_length for s in found] == list(range(T, T + 6))  # the cache grows one a step


def padded_embedding(folder: Path, multiple: int = 64) -> Path:
    """A copy of the GPT-2 fixture in ``folder`` whose embedding (tied to the output) has rows
    past its tokenizer's vocabulary, up to the next multiple of ``multiple`` plus one more, as
    checkpoints pad theirs: rows no text ever reaches, never trained."""
    from safetensors.numpy import load_file, save_file

    shutil.copytree(FIXTURES / "gpt2", folder)
    weights = load_file(folder / "model.safetensors")
    wte = weights["transformer.wte.weight"]  # (V, D)
    rows = (wte.shape[0] // multiple + 2) * multiple
    rng = np.random.default_rng(0)
    extra = rng.normal(0, 1, (rows - wte.shape[0], wte.shape[1])).astype(wte.dtype)
    weights["transformer.wte.weight"] = np.concatenate([wte, extra])  # (rows, D)
    save_file(weights, folder / "model.safetensors")
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = rows
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_prefix_matching_draws_ids_the_tokenizer_produces_not_padding_rows(tmp_path):
    from visattn.models import generation

    model = models.load(padded_embedding(tmp_path / "gpt2-padded"))
    vocabulary = model.tokenizer.get_vocab_size(with_added_tokens=False)
    special = {model.tokenizer.token_to_id(t) for t in model.special}
    assert model.config.vocab_size > vocabulary  # the fixture has rows beyond the vocabulary
    expected = sorted(set(range(vocabulary)) - special)
    assert generation.ordinary_ids(model).tolist() == expected
    for seed in range(5):
        ids, start = generation.repeated_sequence(model, 30, seed)
        drawn = ids[start:]
        assert drawn.max() < vocabulary and not set(drawn.tolist()) & special
        np.testing.assert_array_equal(drawn[:30], drawn[30:])


def test_prefix_matching_score_by_hand():
    """Two layers of one head on start = 1, length = 3 (T = 7): head (0, 0) attends from each
    second-copy token to the token after its first occurrence (score 1); head (1, 0) is uniform over
    the causal prefix, so query q puts 1 / (q + 1) on any key: (1/5 + 1/6) / 2."""
    from visattn.models.generation import prefix_matching_scores

    T, start, length = 7, 1, 3
    att = np.zeros((2, 1, T, T))
    for q in range(T):
        att[1, 0, q, : q + 1] = 1 / (q + 1)
        att[0, 0, q, 0] = 1.0
    for i in range(length - 1):
        att[0, 0, start + length + i] = 0
        att[0, 0, start + length + i, start + i + 1] = 1.0
    scores = prefix_matching_scores(att, start, length)
    np.testing.assert_allclose(scores, [[1.0], [(1 / 5 + 1 / 6) / 2]])


def test_repeated_sequence_and_ranking():
    from visattn.models import generation

    llama = models.load(FIXTURES / "llama")
    ids, start = generation.repeated_sequence(llama, length=10)
    assert start == 1 and ids[0] == llama.tokenizer.token_to_id("<s>")
    np.testing.assert_array_equal(ids[1:11], ids[11:])
    assert not set(ids[1:].tolist()) & {llama.tokenizer.token_to_id(t) for t in llama.special}
    ranked = generation.prefix_matching(llama, length=10)
    assert len(ranked) == 2 * 4 and ranked[0].weight >= ranked[-1].weight
    with pytest.raises(InputError) as caught:
        generation.steps(models.load(FIXTURES / "bert"), [1, 2], 2)
    assert caught.value.code == "model_not_decoder"


def test_stray_bytes_are_shown_as_bytes_not_replacement_characters():
    zhong = "中".encode()
    assert pieces.readable(zhong[:2] + b"a") == "‹e4›‹b8›a"
    assert pieces.readable(b"a \\x41 " + zhong) == "a \\x41 中"
    table = {b: c for c, b in pieces.byte_decoder().items()}
    assert pieces.display([table[zhong[0]]], byte_level=True) == ["‹e4›"]


def test_float32_weights_are_not_copied_at_load():
    """Mistral's fixture is float32: its weights stay read-only views into the mapped shards;
    GPT-2's is float16, widened into arrays of its own."""
    mistral = models.load(FIXTURES / "mistral")
    W_q = mistral.layers[0].W_q  # (D, H·Dh): the transposed view of q_proj.weight
    assert not W_q.flags.writeable and not W_q.flags.owndata and W_q.flags.f_contiguous
    gpt2 = models.load(FIXTURES / "gpt2")
    assert gpt2.layers[0].W_qkv.flags.writeable and gpt2.layers[0].W_qkv.dtype == np.float32
