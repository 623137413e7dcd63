"""The newer LLaMA-style families against transformers: Qwen3 and OLMo 2 (QK-norm), SmolLM3 (layers
without RoPE), Phi-3 (fused projections, partial rotary), Llama with linear, dynamic-NTK and YaRN
RoPE scaling, a base checkpoint without an LM head, Gemma 2 (soft-caps, local and global layers,
sandwich norms, scaled embeddings) and Gemma 3 (QK-norm, a RoPE base per kind of layer).

tests/fixtures/models/families/ holds their tiny random checkpoints and transformers' eager
outputs, written by tests/make_family_fixtures.py with the reference environment; these tests need
no torch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from model_reference import TOL, assert_forward_matches, assert_generation_matches

from visattn import models
from visattn.errors import InputError
from visattn.models import generation, sources
from visattn.models.causal import Cache
from visattn.models.llama import Llama, inverse_frequencies

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "models" / "families"
FAMILIES = (
    "qwen3",
    "olmo2",
    "smollm3",
    "phi3",
    "phi4_mini",
    "llama_linear",
    "llama_dynamic",
    "llama_yarn",
    "llama_base",
    "gemma2",
    "gemma3",
)
WITH_HEAD = tuple(f for f in FAMILIES if f != "llama_base")
N_TEXTS = 3
# what each folder's config adds, as LlamaConfig.mechanisms names it
MECHANISMS = {
    "qwen3": {"qk_norm_head"},
    "olmo2": {"qk_norm_whole", "post_norm"},
    "smollm3": {"no_rope_layers"},
    "phi3": {"fused_qkv", "partial_rotary"},
    "phi4_mini": {"fused_qkv", "partial_rotary", "rope_longrope"},
    "llama_linear": {"rope_linear"},
    "llama_dynamic": {"rope_dynamic"},
    "llama_yarn": {"rope_yarn"},
    "llama_base": {"no_lm_head"},
    "gemma2": {
        "scaled_embedding",
        "sandwich_norm",
        "geglu",
        "sliding_window",
        "local_global",
        "softcap",
        "final_softcap",
    },
    "gemma3": {
        "scaled_embedding",
        "sandwich_norm",
        "geglu",
        "sliding_window",
        "local_global",
        "qk_norm_head",
        "rope_linear",
        "local_rope_base",
    },
}


@pytest.fixture(scope="module", params=FAMILIES)
def family(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def loaded(family):
    with np.load(FIXTURES / family / "reference.npz") as f:
        reference = {key: f[key] for key in f.files}
    return models.load(FIXTURES / family), reference


def test_read_by_the_llama_module_naming_its_mechanism(loaded, family):
    model, _ = loaded
    assert isinstance(model, Llama) and model.family == "llama"
    assert set(model.config.mechanisms) == MECHANISMS[family]


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_attentions_and_hidden_states_match_eager(loaded, i):
    model, ref = loaded
    np.testing.assert_array_equal(model.run(str(ref[f"text_{i}"])).token_ids, ref[f"ids_{i}"])
    assert_forward_matches(model, ref, i)


@pytest.mark.parametrize("family", WITH_HEAD, indirect=True)
@pytest.mark.parametrize("i", range(N_TEXTS))
def test_logits_and_greedy_generation(loaded, i):
    model, ref = loaded
    assert_generation_matches(model, ref, i)


# dynamic NTK and LongRoPE rotate a text by its length, so cached keys keep their step's rotation
# and a cached forward is not the one-pass forward (transformers' generate does the same, above)
@pytest.mark.parametrize(
    "family", [f for f in FAMILIES if f not in ("llama_dynamic", "phi4_mini")], indirect=True
)
def test_kv_cache_gives_the_full_forward_rows(loaded):
    model, ref = loaded
    ids = ref["ids_0"]
    full, hidden = model.forward(ids)
    cache = Cache()
    model.forward(ids[:5], cache)
    rest, rest_hidden = model.forward(ids[5:], cache)
    np.testing.assert_allclose(rest, full[:, :, 5:, :], atol=TOL)
    np.testing.assert_allclose(rest_hidden, hidden[5:], atol=TOL)


def test_queries_and_keys_give_the_maps(loaded):
    """Each head's softmax(q·kᵀ) from queries_keys (QK-norm, partial or no RoPE included), capped
    and windowed as the layer's attention_args say, is the map the forward drew."""
    model, ref = loaded
    result = model.run(str(ref["text_0"]))
    T = result.attentions.shape[-1]
    distance = np.arange(T)[:, None] - np.arange(T)[None, :]  # (T, T) query − key position
    for layer in range(model.config.n_layers):
        args = model.attention_args(layer)
        hidden = distance < 0
        if args["window"] is not None:
            hidden |= distance >= args["window"]
        for head in range(model.config.n_heads):
            q, k = models.queries_keys(model, result, layer, head)
            scores = q @ k.T  # (T, T)
            if args["softcap"] is not None:
                scores = args["softcap"] * np.tanh(scores / args["softcap"])
            scores = np.where(hidden, -np.inf, scores)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            np.testing.assert_allclose(weights, result.attentions[layer, head], atol=TOL)


def test_value_norms_have_every_head(loaded):
    model, ref = loaded
    result = model.run(str(ref["text_0"]))
    norms = models.value_norms(model, result)
    c = model.config
    assert norms.shape == (c.n_layers, c.n_heads, result.n_tokens)
    assert np.all(np.isfinite(norms)) and np.all(norms > 0)


def test_smollm3_fourth_layer_has_no_rope():
    c = models.load(FIXTURES / "smollm3").config
    assert c.rope_layers == tuple((i + 1) % 4 != 0 for i in range(c.n_layers))


def test_smollm3_layer_without_rope_scores_plain_projections():
    """A layer without RoPE scores q·k of the (QK-normed) projections themselves: no rotation by
    position, so its scores see position only through the causal mask."""
    model = models.load(FIXTURES / "smollm3")
    result = model.run("the the the the the")
    last = model.config.n_layers - 1
    q, k = models.queries_keys(model, result, last, 0)
    plain_q, plain_k, _ = model.project(last, result.layer_inputs[last].astype(np.float64))
    np.testing.assert_allclose(q, plain_q[0] * model.config.d_head**-0.5, atol=1e-12)
    np.testing.assert_allclose(k, plain_k[0], atol=1e-12)
    q_first, _ = models.queries_keys(model, result, 0, 0)  # a layer with RoPE: rotated
    first_q, _, _ = model.project(0, result.layer_inputs[0].astype(np.float64))
    assert not np.allclose(q_first[1:], first_q[0, 1:] * model.config.d_head**-0.5)


def test_dynamic_ntk_reads_beyond_the_trained_length():
    model = models.load(FIXTURES / "llama_dynamic")
    c = model.config
    trained = dict(c.rope_scaling)["max_position_embeddings"]
    assert c.max_positions == int(trained * dict(c.rope_scaling)["factor"])
    short, _ = inverse_frequencies(c, int(trained))
    longer, _ = inverse_frequencies(c, int(trained) + 9)
    np.testing.assert_array_equal(short, model.inv_freq)  # within the trained length: plain RoPE
    assert np.all(longer[1:] < short[1:])  # beyond it the base grows: slower rotation


def test_yarn_scales_cos_and_sin_by_its_attention_factor():
    model = models.load(FIXTURES / "llama_yarn")
    factor = dict(model.config.rope_scaling)["factor"]
    assert model.attention_factor == pytest.approx(0.1 * np.log(factor) + 1)
    cos, sin = model.rotation(0, 3)
    np.testing.assert_allclose(cos**2 + sin**2, model.attention_factor**2, rtol=1e-6)


def test_longrope_switches_factors_beyond_the_trained_length():
    model = models.load(FIXTURES / "phi4_mini")
    c = model.config
    trained = int(dict(c.rope_scaling)["original_max_position_embeddings"])
    short, short_factor = inverse_frequencies(c, trained)
    long, long_factor = inverse_frequencies(c, trained + 1)
    plain = 1 / c.rope_theta ** (np.arange(0, c.rotary_dim, 2) / c.rotary_dim)
    np.testing.assert_allclose(short, plain / np.array(c.rope_factors[0]), rtol=1e-6)
    np.testing.assert_allclose(long, plain / np.array(c.rope_factors[1]), rtol=1e-6)
    factor = c.max_positions / trained
    assert (
        short_factor == long_factor == pytest.approx(np.sqrt(1 + np.log(factor) / np.log(trained)))
    )


def test_phi3_fused_weights_are_views_of_row_blocks():
    model = models.load(FIXTURES / "phi3")
    c = model.config
    layer = model.layers[0]
    Dq, Dkv = c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    assert (layer.W_q.shape, layer.W_k.shape, layer.W_v.shape) == (
        (c.d_model, Dq),
        (c.d_model, Dkv),
        (c.d_model, Dkv),
    )
    assert layer.W_gate.shape == layer.W_up.shape == (c.d_model, c.d_ff)
    assert c.rotary_dim < c.d_head


# ---------------------------------------------------------------- a base checkpoint without a head


def test_base_checkpoint_shows_attention_and_refuses_generation():
    model = models.load(FIXTURES / "llama_base")
    assert not model.has_head and not model.config.has_head
    result = model.run("the keys the values")
    assert result.next_logits is None and result.attentions.shape[0] == model.config.n_layers
    with pytest.raises(InputError) as caught:
        model.generate(result.token_ids, 2)
    assert caught.value.code == "model_no_head"
    assert caught.value.params["file"].endswith("llama_base")
    with pytest.raises(InputError) as caught:
        generation.steps(model, result.token_ids, 2)
    assert caught.value.code == "model_no_head"


def test_missing_head_of_a_causal_lm_checkpoint_still_loads(tmp_path):
    """A …ForCausalLM folder whose lm_head.weight was dropped (as an embedding model's export)
    loads as a base checkpoint, tensor names under "model." and all."""
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "headless"
    shutil.copytree(FIXTURES / "llama_linear", folder)
    tensors = load_file(str(folder / "model.safetensors"))
    del tensors["lm_head.weight"]
    save_file(tensors, str(folder / "model.safetensors"))
    model = models.load(folder)
    assert not model.has_head
    with np.load(FIXTURES / "llama_linear" / "reference.npz") as ref:
        result = model.run(str(ref["text_0"]))
        np.testing.assert_allclose(result.attentions, ref["attentions_0"], rtol=0, atol=TOL)


def test_rope_parameters_missing_are_named(tmp_path):
    folder = tmp_path / "yarn"
    shutil.copytree(FIXTURES / "llama_yarn", folder)
    config = json.loads((folder / "config.json").read_text())
    del config["rope_parameters"]["factor"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(InputError) as caught:
        models.load(folder)
    assert caught.value.code == "model_config_field"
    assert caught.value.params["file"].endswith("config.json")


# ---------------------------------------------------------------- Gemma 2 and Gemma 3


def test_gemma_local_layer_sees_only_its_window():
    """Layer 0 is local (window 4, shorter than the text): no weight on a key 4 or more positions
    back; layer 1 is global and puts weight there."""
    model = models.load(FIXTURES / "gemma2")
    with np.load(FIXTURES / "gemma2" / "reference.npz") as ref:
        attentions = ref["attentions_0"]  # (L, H, T, T), transformers'
    window = model.config.window
    T = attentions.shape[-1]
    assert (
        model.attention_args(0)["window"] == window < T
        and model.attention_args(1)["window"] is None
    )
    far = (np.arange(T)[:, None] - np.arange(T)[None, :]) >= window  # (T, T)
    assert np.all(attentions[0][:, far] == 0)
    assert np.all(attentions[1][:, far].sum(-1) > 0)


def without(model, **fields):
    from dataclasses import replace

    model.config = replace(model.config, **fields)
    return model


def test_gemma2_soft_caps_bite():
    """The fixture's soft-caps change what the model computes: without them the maps and the
    logits differ from transformers' by far more than the tolerance."""
    with np.load(FIXTURES / "gemma2" / "reference.npz") as f:
        ref = {key: f[key] for key in f.files}
    model = models.load(FIXTURES / "gemma2")
    cap = model.config.softcap
    assert cap == model.config.final_softcap and model.attention_args(1)["softcap"] == cap
    result = model.run(str(ref["text_0"]))
    assert np.abs(result.next_logits).max() < cap  # c·tanh(s / c) stays inside ±c
    uncapped = without(models.load(FIXTURES / "gemma2"), softcap=None).run(str(ref["text_0"]))
    assert np.abs(uncapped.attentions - ref["attentions_0"]).max() > 100 * TOL
    plain = without(models.load(FIXTURES / "gemma2"), final_softcap=None)
    logits = plain.run(str(ref["text_0"])).next_logits
    assert np.abs(logits).max() > cap
    assert np.abs(logits - ref["next_logits_0"]).max() > 100 * TOL


def test_gemma3_ignores_the_attention_soft_cap_as_transformers_does():
    """Gemma 3's config may carry attn_logit_softcapping; its attention never applies it."""
    config = json.loads((FIXTURES / "gemma3" / "config.json").read_text())
    assert config["attn_logit_softcapping"]
    model = models.load(FIXTURES / "gemma3")
    assert model.config.softcap is None and model.attention_args(0)["softcap"] is None


def test_gemma3_local_and_global_layers_rotate_by_their_own_bases():
    """Local layers: plain RoPE of rope_local_base_freq; global layers: rope_theta with the
    linear scaling."""
    model = models.load(FIXTURES / "gemma3")
    c = model.config
    exponents = np.arange(0, c.rotary_dim, 2) / c.rotary_dim
    factor = dict(c.rope_scaling)["factor"]
    for layer, inv_freq in (
        (0, 1 / c.local_rope_theta**exponents),
        (1, 1 / c.rope_theta**exponents / factor),
    ):
        cos, _ = model.rotation(0, 5, layer)  # (5, rotary_dim)
        angles = np.arange(5)[:, None] * np.concatenate([inv_freq, inv_freq])[None, :]
        np.testing.assert_allclose(cos, np.cos(angles), atol=1e-6)
    assert c.local_rope_theta != c.rope_theta


def rewritten(tmp_path, name: str, change) -> Path:
    """A copy of fixture ``name`` whose config.json ``change`` rewrote."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(change(config)))
    return folder


def assert_same_maps(folder: Path, name: str) -> None:
    with np.load(FIXTURES / name / "reference.npz") as ref:
        result = models.load(folder).run(str(ref["text_0"]))
        np.testing.assert_allclose(result.attentions, ref["attentions_0"], rtol=0, atol=TOL)


def test_gemma3_older_config_fields_read_the_same(tmp_path):
    """transformers 4's Gemma 3 fields: sliding_window_pattern instead of layer_types, rope_theta,
    rope_scaling and rope_local_base_freq instead of rope_parameters by layer type."""

    def older(config: dict) -> dict:
        rope = config.pop("rope_parameters")
        del config["layer_types"]
        global_rope = rope["full_attention"]
        return config | {
            "sliding_window_pattern": 2,
            "rope_theta": global_rope.pop("rope_theta"),
            "rope_scaling": global_rope,
            "rope_local_base_freq": rope["sliding_attention"]["rope_theta"],
        }

    assert_same_maps(rewritten(tmp_path, "gemma3", older), "gemma3")


def test_multimodal_gemma3_reads_its_text_model(tmp_path):
    """A Gemma 3 image-text checkpoint (model_type "gemma3"): its text_config, fields left out
    filled with Gemma3TextConfig's defaults, and the tensors under model.language_model."""
    from safetensors.numpy import load_file, save_file

    from visattn.models.llama import GEMMA3_TEXT_DEFAULTS

    def multimodal(config: dict) -> dict:
        text = {
            k: v
            for k, v in config.items()
            if k not in GEMMA3_TEXT_DEFAULTS or GEMMA3_TEXT_DEFAULTS[k] != v
        }
        assert len(text) < len(config)  # some fields come from the defaults
        return {"model_type": "gemma3", "text_config": text, "vision_config": {}}

    folder = rewritten(tmp_path, "gemma3", multimodal)
    tensors = load_file(str(folder / "model.safetensors"))
    renamed = {f"model.language_model.{k.removeprefix('model.')}": v for k, v in tensors.items()}
    renamed["model.vision_tower.embeddings.patch_embedding.weight"] = np.zeros((2, 2), np.float16)
    save_file(renamed, str(folder / "model.safetensors"))
    assert_same_maps(folder, "gemma3")
    source = sources.describe(folder, "gemma3", "gemma3", "folder", sources.budget_bytes({}))
    c = models.load(FIXTURES / "gemma3").config
    assert source.usable and (source.n_layers, source.n_heads) == (c.n_layers, c.n_heads)
