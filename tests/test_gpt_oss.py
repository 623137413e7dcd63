"""gpt-oss against transformers: learned attention sinks, the banded window on alternate layers, the
mixture of experts and MXFP4 expert weights.

tests/fixtures/models/families/gpt_oss (bfloat16) and gpt_oss_mxfp4 (the same weights with the
experts as MXFP4 blocks and scales) hold tiny random checkpoints and transformers' eager outputs,
written by ``tests/make_family_fixtures.py gpt_oss`` with the reference environment (which checked
that transformers' own dequantizer reads gpt_oss_mxfp4's experts as gpt_oss's weights); these
tests need no torch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from model_reference import TOL, assert_forward_matches, assert_generation_matches

from visattn import models
from visattn.models import loading
from visattn.models.causal import Cache, causal_attention
from visattn.models.gpt_oss import GptOss, dequantize_mxfp4

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "models" / "families"
FOLDERS = ("gpt_oss", "gpt_oss_mxfp4")
N_TEXTS = 3
# the fixture's config: windowed layers alternating with full ones (layer_types), as the real model
MECHANISMS = {"rope_yarn", "sinks", "sliding_window", "local_global", "moe"}


@pytest.fixture(scope="module", params=FOLDERS)
def folder(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def loaded(folder):
    with np.load(FIXTURES / folder / "reference.npz") as f:
        reference = {key: f[key] for key in f.files}
    return models.load(FIXTURES / folder), reference


def test_read_by_the_gpt_oss_module_naming_its_mechanisms(loaded, folder):
    model, _ = loaded
    assert isinstance(model, GptOss) and model.family == "gpt_oss"
    expected = MECHANISMS | ({"mxfp4"} if folder == "gpt_oss_mxfp4" else set())
    assert set(model.config.mechanisms) == expected


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_attentions_and_hidden_states_match_eager(loaded, i):
    model, ref = loaded
    np.testing.assert_array_equal(model.run(str(ref[f"text_{i}"])).token_ids, ref[f"ids_{i}"])
    assert_forward_matches(model, ref, i)


@pytest.mark.parametrize("i", range(N_TEXTS))
def test_logits_and_greedy_generation(loaded, i):
    model, ref = loaded
    assert_generation_matches(model, ref, i)


def test_kv_cache_gives_the_full_forward_rows(loaded):
    """Cached keys beyond the window are masked as in the one-pass forward."""
    model, ref = loaded
    ids = ref["ids_0"]
    split = max(w or 0 for w in model.config.layer_windows) + 2  # the window already crossed
    full, hidden = model.forward(ids)
    cache = Cache()
    model.forward(ids[:split], cache)
    rest, rest_hidden = model.forward(ids[split:], cache)
    np.testing.assert_allclose(rest, full[:, :, split:, :], atol=TOL)
    np.testing.assert_allclose(rest_hidden, hidden[split:], atol=TOL)


def test_maps_are_softmax_with_the_sink_column_dropped(loaded):
    """Each head's map is softmax([q·kᵀ masked, sink]) without its last column, from queries_keys,
    the layer's window and sinks (attention_args): rows sum to 1 − the sink's share."""
    model, ref = loaded
    result = model.run(str(ref["text_0"]))
    T = result.n_tokens
    i, j = np.indices((T, T))
    shares = model.sink_shares(result.attentions)  # (L, H, T)
    for layer in range(model.config.n_layers):
        args = model.attention_args(layer)
        window = args["window"]
        hidden = (j > i) | ((i - j >= window) if window else False)
        for head in range(model.config.n_heads):
            q, k = models.queries_keys(model, result, layer, head)
            scores = np.where(hidden, -np.inf, q @ k.T)  # (T, T)
            sink = np.full((T, 1), float(args["sinks"][head]))
            both = np.concatenate([scores, sink], axis=1)  # (T, T + 1)
            both = np.exp(both - both.max(-1, keepdims=True))
            both /= both.sum(-1, keepdims=True)
            np.testing.assert_allclose(result.attentions[layer, head], both[:, :-1], atol=TOL)
            np.testing.assert_allclose(shares[layer, head], both[:, -1], atol=TOL)
    assert np.all(shares > 0) and np.all(np.asarray(result.attentions).sum(-1) < 1)


def test_window_on_alternate_layers(loaded):
    """A sliding layer gives no weight to keys a window or more back; a full layer does."""
    model, ref = loaded
    windows = model.config.layer_windows
    assert windows[0] is not None and windows[1] is None  # sliding first, as layer_types says
    attentions = model.run(str(ref["text_0"])).attentions
    T = attentions.shape[-1]
    i, j = np.indices((T, T))
    far = (i - j >= windows[0]) & (j <= i)
    assert far.any()  # the text crosses the window
    assert np.all(attentions[0][:, far] == 0)
    assert np.all(attentions[1][:, far] > 0)


def test_sinks_of_minus_infinity_give_plain_softmax():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2, 6, 4)).astype(np.float32)
    plain, out = causal_attention(q, k, v, 0, 0.5)
    sunk, sunk_out = causal_attention(q, k, v, 0, 0.5, sinks=np.full(2, -np.inf, np.float32))
    np.testing.assert_allclose(sunk, plain, atol=1e-7)
    np.testing.assert_allclose(sunk_out, out, atol=1e-7)


def test_experts_are_each_tokens_top_k_weighted():
    """moe (grouped by expert, as transformers) equals every expert run on every token, the top-k
    kept and weighted by the softmax of their router logits."""
    model = models.load(FIXTURES / "gpt_oss")
    c = model.config
    m = np.random.default_rng(1).normal(size=(7, c.d_model)).astype(np.float32)
    for layer, e in enumerate(model.experts):
        logits = m @ e.router + e.router_bias  # (T, E)
        expected = np.zeros((len(m), c.d_model))
        for t, row in enumerate(logits):
            best = np.argsort(row)[::-1][: c.top_k]
            weights = np.exp(row[best] - row[best].max())
            weights /= weights.sum()
            for expert, weight in zip(best, weights, strict=True):
                h = m[t] @ e.gate_up[expert] + e.gate_up_bias[expert]  # (2·Dff,)
                gate = np.minimum(h[0::2], c.swiglu_limit)
                up = np.clip(h[1::2], -c.swiglu_limit, c.swiglu_limit)
                glu = gate / (1 + np.exp(-c.swiglu_alpha * gate))
                y = ((up + 1) * glu) @ e.down[expert] + e.down_bias[expert]
                expected[t] += weight * y
        np.testing.assert_allclose(model.moe(layer, m), expected, atol=TOL)


# ---------------------------------------------------------------- MXFP4


def e2m1(code: int) -> float:
    """An FP4 E2M1 code as the OCP Microscaling spec defines it: sign bit, 2 exponent bits (bias
    1), 1 mantissa bit; exponent 0 is subnormal (0 or 0.5)."""
    sign = -1.0 if code & 8 else 1.0
    exponent, mantissa = (code >> 1) & 3, code & 1
    if exponent == 0:
        return sign * mantissa * 0.5
    return sign * 2.0 ** (exponent - 1) * (1 + mantissa / 2)


def decode_mxfp4(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Element by element, independent of the module: blocks (E, Out, G, 16) and scales (E, Out,
    G) → (E, In, Out)."""
    E, n_out, G, n_bytes = blocks.shape
    out = np.zeros((E, G * 2 * n_bytes, n_out))
    for e, r, g in np.ndindex(E, n_out, G):
        scale = 2.0 ** (int(scales[e, r, g]) - 127)
        for b in range(n_bytes):
            byte = int(blocks[e, r, g, b])
            col = g * 2 * n_bytes + 2 * b
            out[e, col, r] = e2m1(byte & 0x0F) * scale
            out[e, col + 1, r] = e2m1(byte >> 4) * scale
    return out


def test_e2m1_codes_are_the_spec_values():
    assert [e2m1(c) for c in range(8)] == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert [e2m1(c + 8) for c in range(8)] == [-0.0, -0.5, -1, -1.5, -2, -3, -4, -6]


def test_mxfp4_unpacks_as_the_spec_and_as_the_float_checkpoint():
    """The MXFP4 fixture's experts decode, element by element from the spec, to what
    dequantize_mxfp4 gives and to the bfloat16 checkpoint's experts."""
    packed = loading.Weights.open(FIXTURES / "gpt_oss_mxfp4")
    plain = loading.Weights.open(FIXTURES / "gpt_oss")
    for layer in range(2):
        for proj in ("gate_up_proj", "down_proj"):
            name = f"model.layers.{layer}.mlp.experts.{proj}"
            blocks = packed[name + "_blocks"].astype(np.uint8)
            scales = packed[name + "_scales"].astype(np.uint8)
            unpacked = dequantize_mxfp4(blocks, scales)
            assert unpacked.dtype == np.float32
            np.testing.assert_array_equal(unpacked, decode_mxfp4(blocks, scales))
            np.testing.assert_array_equal(unpacked, plain[name])


def test_mxfp4_covers_every_code_and_scale():
    """Every byte (both nibbles: all 16 codes, both signs) and scales from 2^−127 up to 2^123 (6 ×
    2^123 is near float32's largest; E8M0's 255 means NaN and no checkpoint uses it)."""
    rng = np.random.default_rng(2)
    blocks = np.arange(256, dtype=np.uint8).reshape(1, 2, 8, 16)  # (E, Out, G, 16)
    scales = rng.integers(0, 251, size=(1, 2, 8)).astype(np.uint8)
    scales[0, 0, :2] = (0, 250)
    np.testing.assert_array_equal(
        dequantize_mxfp4(blocks, scales), decode_mxfp4(blocks, scales).astype(np.float32)
    )


# ---------------------------------------------------------------- in the app's list of models


@pytest.mark.parametrize("folder", FOLDERS)
def test_listed_as_a_decoder_with_a_label_in_both_languages(folder):
    from ui.i18n import tables
    from visattn.models.sources import DEFAULT_BUDGET, describe

    source = describe(FIXTURES / folder, folder, folder, "folder", DEFAULT_BUDGET)
    assert source.usable and source.causal and source.family == "gpt_oss"
    for lang in ("en", "zh"):
        assert tables(lang)["models.families"]["gpt_oss"]


def test_layer_types_of_the_wrong_length_are_named(tmp_path):
    import json
    import shutil

    from visattn.errors import InputError

    folder = tmp_path / "gpt_oss"
    shutil.copytree(FIXTURES / "gpt_oss", folder)
    config = json.loads((folder / "config.json").read_text())
    config["layer_types"] = config["layer_types"][:1]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(InputError) as caught:
        models.load(folder)
    assert caught.value.code == "model_config_field"
    assert caught.value.params["name"] == "layer_types"
    assert caught.value.params["file"].endswith("config.json")
