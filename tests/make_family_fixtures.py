"""Write tests/fixtures/models/families/: tiny random checkpoints of what
visattn.models.llama reads beyond LLaMA, Mistral and Qwen2, and what transformers computes on them.

As tests/make_model_fixtures.py (whose tokenizers, texts and saving this reuses; each folder holds
config.json, model.safetensors, tokenizer.json and reference.npz with the same arrays), for
``tests/test_families.py``. Run it with the reference environment:

    /work/main/.venv-bench/bin/python tests/make_family_fixtures.py [gpt_oss]

    qwen3          Qwen3ForCausalLM: QK-norm on each head (q_norm, k_norm of Dh), head_dim 16 ≠
                   hidden_size / heads, 2 key/value heads, tied, bfloat16
    olmo2          Olmo2ForCausalLM: QK-norm over the whole projection, post-norm blocks, float32
    smollm3        SmolLM3ForCausalLM, 4 layers: no RoPE on the fourth (no_rope_layers), float16
    phi3           Phi3ForCausalLM: fused qkv_proj and gate_up_proj, partial rotary 0.5 (as
                   Phi-4-mini's 0.75), float16
    phi4_mini      Phi3ForCausalLM as Phi-4-mini: partial rotary 0.75 and LongRoPE (short and
                   long factors per frequency over 16 trained positions; the first text is
                   longer), float16
    llama_linear   LlamaForCausalLM, linear RoPE scaling (factor 2), float16
    llama_dynamic  dynamic NTK RoPE scaling, max_position_embeddings 16 (the texts are longer, so
                   the base grows), float16
    llama_yarn     YaRN RoPE scaling (factor 4 over 16 positions: attention factor ≠ 1), float16
    llama_base     LlamaModel: a base checkpoint without lm_head (no logits, no generation),
                   float16
    gemma2         Gemma2ForCausalLM: √D embeddings, sandwich norms of 1 + w (random gains),
                   GeGLU, query_pre_attn_scalar 32 ≠ Dh, a local layer (window 4, shorter than
                   the texts) then a global one, attention and final logit soft-caps of 1.0
                   (the scores and logits of these weights reach beyond it), bfloat16
    gemma3         Gemma3ForCausalLM (text): Gemma 2's without the attention soft-cap (its
                   config sets one: transformers ignores it, so must visattn), QK-norm per head,
                   a local layer of RoPE base 10⁴ then a global one of base 10⁶ with linear
                   scaling (factor 2), float16

They sit one folder down so that the app's list of checkpoints (VISATTN_MODELS=tests/fixtures/models
in the browser tests) stays the five families the pages are tested with.

Dynamic NTK keeps state in transformers' rotary module (the frequencies of the longest text seen
until a shorter one resets them), so it is reset before every call here: each reference is what a
freshly loaded model computes.
"""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
from make_model_fixtures import (
    FF,
    HEADS,
    INIT,
    MIN_GAP,
    N_NEW,
    OUT,
    POSITIONS,
    TEXTS,
    WIDTH,
    bpe_tokenizer,
    save_weights,
)

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
DTYPES = {"qwen3": "bfloat16", "olmo2": "float32", "gemma2": "bfloat16"}  # the others float16
GEMMA_WINDOW = 4  # the local layers' window: each text is longer
GEMMA_CAP = 1.0  # Gemma 2's soft-caps: below the largest scores and logits of these weights


def configs(vocab: int) -> dict:
    from transformers import (
        Gemma2Config,
        Gemma3TextConfig,
        LlamaConfig,
        Olmo2Config,
        Phi3Config,
        Qwen3Config,
        SmolLM3Config,
    )

    common = dict(
        vocab_size=vocab,
        hidden_size=WIDTH,
        num_hidden_layers=2,
        num_attention_heads=HEADS,
        intermediate_size=FF,
        max_position_embeddings=POSITIONS,
        initializer_range=INIT,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
    )

    def llama(rope: dict, **extra) -> LlamaConfig:
        return LlamaConfig(
            **(common | extra),
            tie_word_embeddings=False,
            rope_parameters={"rope_theta": 10000.0} | rope,
        )

    return {
        "qwen3": Qwen3Config(
            **common, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True
        ),
        "olmo2": Olmo2Config(**common, num_key_value_heads=HEADS, tie_word_embeddings=False),
        "smollm3": SmolLM3Config(
            **(common | {"num_hidden_layers": 4}), num_key_value_heads=2, tie_word_embeddings=True
        ),
        "phi3": Phi3Config(
            **common,
            num_key_value_heads=2,
            tie_word_embeddings=False,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
            },
        ),
        "phi4_mini": Phi3Config(
            **common,
            num_key_value_heads=2,
            tie_word_embeddings=True,
            original_max_position_embeddings=16,
            rope_parameters={
                "rope_type": "longrope",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.75,
                "short_factor": [1.0, 1.25, 1.5],
                "long_factor": [1.0, 2.0, 4.0],
                "original_max_position_embeddings": 16,
            },
        ),
        "llama_linear": llama({"rope_type": "linear", "factor": 2.0}),
        "llama_dynamic": llama({"rope_type": "dynamic", "factor": 4.0}, max_position_embeddings=16),
        "llama_yarn": llama(
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
        ),
        "llama_base": llama({"rope_type": "default"}),
        "gemma2": Gemma2Config(
            **common,
            num_key_value_heads=2,
            head_dim=16,
            query_pre_attn_scalar=32,
            sliding_window=GEMMA_WINDOW,
            layer_types=["sliding_attention", "full_attention"],
            attn_logit_softcapping=GEMMA_CAP,
            final_logit_softcapping=GEMMA_CAP,
            tie_word_embeddings=True,
        ),
        "gemma3": Gemma3TextConfig(
            **common,
            num_key_value_heads=2,
            head_dim=16,
            query_pre_attn_scalar=24,
            sliding_window=GEMMA_WINDOW,
            layer_types=["sliding_attention", "full_attention"],
            attn_logit_softcapping=GEMMA_CAP,
            tie_word_embeddings=True,
            rope_parameters={
                "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            },
        ),
    }


def reset_rope(model) -> None:
    """Dynamic NTK's rotary module as freshly loaded (transformers keeps the longest text's
    frequencies until a text shorter than the trained length resets them)."""
    for module in model.modules():
        if hasattr(module, "original_inv_freq") and hasattr(module, "max_seq_len_cached"):
            module.register_buffer("inv_freq", module.original_inv_freq.clone(), persistent=False)
            module.max_seq_len_cached = module.original_max_seq_len


def main(names: list[str]) -> None:
    """Write the folders ``names`` (all of FAMILIES when none is given)."""
    import torch

    torch.set_num_threads(1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    tok = bpe_tokenizer(["<s>", "</s>"], "<s>")
    for name in names or FAMILIES:
        for seed in range(100):  # the first seed whose greedy choices are clear (MIN_GAP)
            if write(name, tok, seed):
                break
        else:
            raise AssertionError(f"{name}: no seed gives greedy choices MIN_GAP apart")


def write(name: str, tok, seed: int) -> bool:
    """Write folder ``name`` from random weights of ``seed``; False when a greedy step's best
    logits are closer than MIN_GAP (then rounding could decide the reference)."""
    import torch
    import transformers
    from transformers import AutoModel, AutoModelForCausalLM, PreTrainedTokenizerFast

    folder = OUT / "families" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    config = configs(tok.get_vocab_size())[name]
    torch.manual_seed(seed)
    head = name != "llama_base"
    auto = AutoModelForCausalLM if head else AutoModel
    model = auto.from_config(config, attn_implementation="eager")
    model.eval()
    dtype = getattr(torch, DTYPES.get(name, "float16"))
    with torch.no_grad():  # the reference runs in float32 on the weights as stored
        for p_name, p in model.named_parameters():
            if name.startswith("gemma") and p_name.endswith("norm.weight"):
                p.normal_(0.0, 0.5)  # Gemma's gains, 1 + w, start at w = 0: make them differ
            p.copy_(p.to(dtype).float())
    config.save_pretrained(folder)
    tok.save(str(folder / "tokenizer.json"))
    save_weights(model, folder, dtype, shards=1)
    hf_tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    body = model.model if head else model
    arrays = {
        "versions": np.array(f"torch {torch.__version__}, transformers {transformers.__version__}")
    }
    for i, text in enumerate(TEXTS):
        ids = hf_tok(text, return_tensors="pt")["input_ids"]
        reset_rope(model)
        with torch.no_grad():
            out = body(ids, output_attentions=True, output_hidden_states=True)
        L = len(out.attentions)
        hidden_states = torch.stack(out.hidden_states)[:, 0]  # (L + 1, T, D)
        assert torch.equal(hidden_states[L], out.last_hidden_state[0]), name
        arrays[f"text_{i}"] = np.array(text)
        arrays[f"ids_{i}"] = ids[0].numpy().astype(np.int64)
        # (L, 1, H, T, T) -> (L, H, T, T)
        arrays[f"attentions_{i}"] = torch.stack(out.attentions)[:, 0].numpy()
        arrays[f"layer_inputs_{i}"] = hidden_states[:L].numpy()  # (L, T, D)
        arrays[f"hidden_{i}"] = out.last_hidden_state[0].numpy()  # (T, D)
        if not head:
            continue
        with torch.no_grad():
            reset_rope(model)
            logits = model(ids).logits[0, -1]
            reset_rope(model)
            greedy = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=N_NEW,
                min_new_tokens=N_NEW,
                do_sample=False,
                use_cache=True,
                pad_token_id=1,
            )[0, ids.shape[1] :]
            plain = ids
            reset_rope(model)
            for _ in range(N_NEW):  # no cache: argmax of full forwards
                step_logits = model(plain, use_cache=False).logits[0, -1]
                top2 = step_logits.topk(2).values
                if top2[0] - top2[1] <= MIN_GAP:
                    return False
                step = step_logits.argmax()
                plain = torch.cat([plain, step.view(1, 1)], dim=1)
        # dynamic NTK: the cached keys keep the rotation of their step, so a cached
        # continuation may differ from full forwards; the reference is generate's
        if name != "llama_dynamic":
            assert torch.equal(greedy, plain[0, ids.shape[1] :]), (name, greedy, plain)
        arrays[f"next_logits_{i}"] = logits.numpy()
        arrays[f"greedy_{i}"] = greedy.numpy().astype(np.int64)
    np.savez_compressed(folder / "reference.npz", **arrays)
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(f"{name}: {size / 1e3:.0f} kB, {DTYPES.get(name, 'float16')}, seed {seed}")
    return True


# ---------------------------------------------------------------- gpt-oss (issue 54, point 1)
#
#     gpt_oss        GptOssForCausalLM: learned sinks (non-zero), sliding window 4 on the first
#                    layer (layer_types), q/k/v/o biases, YaRN RoPE (truncate false, as the real
#                    model's), 4 experts with top-2 routing, bfloat16; expert weights on the MXFP4
#                    grid so that gpt_oss_mxfp4 holds the same numbers
#    gpt_oss_mxfp4   the same checkpoint with its experts as MXFP4 (*_blocks uint8, *_scales
#                    E8M0) and quantization_config mxfp4; its reference is computed by transformers
#                    loading that folder (on CPU it dequantizes the experts itself), after checking
#                    that its dequantized experts equal gpt_oss's
#
# transformers cannot save MXFP4 on CPU (its quantizer needs Triton), so the blocks are packed here
# from the OCP Microscaling spec: 32 values share a power-of-two scale 2^(s − 127) (one byte s),
# each value a 4-bit E2M1 code (sign bit, then an index into FP4_GRID), two codes a byte, low nibble
# first.

GPT_OSS = ("gpt_oss", "gpt_oss_mxfp4")
FP4_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)
MX_BLOCK = 32  # values per shared scale


def gpt_oss_config(vocab: int):
    from transformers import GptOssConfig

    return GptOssConfig(
        vocab_size=vocab,
        hidden_size=WIDTH,
        num_hidden_layers=2,
        num_attention_heads=HEADS,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=2 * MX_BLOCK,  # two MXFP4 blocks across down_proj's input
        num_local_experts=4,
        num_experts_per_tok=2,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=POSITIONS,
        initializer_range=INIT,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 4.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 16,
        },
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
    )


def mxfp4_pack(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E, In, Out) float weights (as GptOssExperts holds them) → blocks (E, Out, In / 32, 16) uint8
    and scales (E, Out, In / 32) uint8 (E8M0), the layout of gpt-oss's checkpoints: each output
    row's inputs in groups of 32, scale 2^(floor(log2 max|w|) − 2), values rounded to the nearest
    E2M1 number."""
    E, n_in, n_out = w.shape
    rows = w.transpose(0, 2, 1).reshape(E, n_out, n_in // MX_BLOCK, MX_BLOCK)  # (E, Out, G, 32)
    top = np.abs(rows).max(axis=-1)  # (E, Out, G)
    exponent = np.floor(np.log2(np.where(top > 0, top, 1.0))).astype(np.int32) - 2
    scaled = rows / np.exp2(exponent)[..., None].astype(np.float32)  # |scaled| < 8
    nearest = np.abs(np.abs(scaled)[..., None] - FP4_GRID).argmin(axis=-1)  # (E, Out, G, 32)
    codes = (nearest | np.where(scaled < 0, 8, 0)).astype(np.uint8)
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)  # (E, Out, G, 16)
    return np.ascontiguousarray(blocks, np.uint8), np.ascontiguousarray(exponent + 127, np.uint8)


def mxfp4_unpack(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The inverse of mxfp4_pack: (E, In, Out) float32."""
    codes = np.stack([blocks & 0x0F, blocks >> 4], axis=-1)  # (E, Out, G, 16, 2)
    E, n_out, G = scales.shape
    codes = codes.reshape(E, n_out, G, MX_BLOCK)
    values = FP4_GRID[codes & 7] * np.where(codes & 8, -1.0, 1.0).astype(np.float32)
    values = values * np.exp2(scales.astype(np.int32) - 127)[..., None].astype(np.float32)
    return values.reshape(E, n_out, G * MX_BLOCK).transpose(0, 2, 1)  # (E, In, Out)


def gpt_oss_main() -> None:
    import torch

    torch.set_num_threads(1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    tok = bpe_tokenizer(["<s>", "</s>"], "<s>")
    for seed in range(100):  # the first seed whose greedy choices are clear (MIN_GAP)
        if write_gpt_oss(tok, seed):
            return
    raise AssertionError("gpt_oss: no seed gives greedy choices MIN_GAP apart")


def write_gpt_oss(tok, seed: int) -> bool:
    """Write gpt_oss and gpt_oss_mxfp4 from random weights of ``seed``; False when a greedy step's
    best logits are closer than MIN_GAP."""
    import json

    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM

    config = gpt_oss_config(tok.get_vocab_size())
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        for layer in model.model.layers:  # sinks large enough to take a visible share
            layer.self_attn.sinks.normal_(0.0, 1.0)
        for p in model.parameters():  # stored as bfloat16, the reference in float32 on them
            p.copy_(p.to(torch.bfloat16).float())
        for layer in model.model.layers:  # experts on the MXFP4 grid
            for proj in ("gate_up_proj", "down_proj"):
                p = getattr(layer.mlp.experts, proj)
                p.copy_(torch.from_numpy(mxfp4_unpack(*mxfp4_pack(p.numpy()))))
    folders = {name: OUT / "families" / name for name in GPT_OSS}
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        config.save_pretrained(folder)
        tok.save(str(folder / "tokenizer.json"))
    save_weights(model, folders["gpt_oss"], torch.bfloat16, shards=1)
    tensors = {}
    for name, p in model.named_parameters():
        if name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            blocks, scales = mxfp4_pack(p.detach().numpy())
            tensors[name + "_blocks"] = torch.from_numpy(blocks)
            tensors[name + "_scales"] = torch.from_numpy(scales)
        else:
            tensors[name] = p.detach().to(torch.bfloat16).contiguous().clone()
    save_file(tensors, str(folders["gpt_oss_mxfp4"] / "model.safetensors"), {"format": "pt"})
    config_file = folders["gpt_oss_mxfp4"] / "config.json"
    saved = json.loads(config_file.read_text())
    saved["quantization_config"] = {
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router"]
        + ["model.embed_tokens", "lm_head"],
    }
    config_file.write_text(json.dumps(saved, indent=2))
    loaded = AutoModelForCausalLM.from_pretrained(
        folders["gpt_oss_mxfp4"], attn_implementation="eager", dtype=torch.float32
    )
    loaded.eval()
    for (name, p), (other, q) in zip(
        model.named_parameters(), loaded.named_parameters(), strict=True
    ):  # transformers' dequantizer reads the blocks packed here as the weights they came from
        assert name == other and torch.equal(p, q.float()), name
    for name, source in (("gpt_oss", model), ("gpt_oss_mxfp4", loaded)):
        arrays = gpt_oss_reference(source, folders[name])
        if arrays is None:
            return False
        np.savez_compressed(folders[name] / "reference.npz", **arrays)
        size = sum(f.stat().st_size for f in folders[name].iterdir())
        print(f"{name}: {size / 1e3:.0f} kB, seed {seed}")
    return True


def gpt_oss_reference(model, folder) -> dict | None:
    """As write()'s reference.npz, and sinks_{layer} (H,) for the test's own reading; None when a
    greedy step's best logits are closer than MIN_GAP."""
    import torch
    import transformers
    from transformers import PreTrainedTokenizerFast

    hf_tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    arrays = {
        "versions": np.array(f"torch {torch.__version__}, transformers {transformers.__version__}")
    }
    for i, text in enumerate(TEXTS):
        ids = hf_tok(text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out = model.model(ids, output_attentions=True, output_hidden_states=True)
            L = len(out.attentions)
            hidden_states = torch.stack(out.hidden_states)[:, 0]  # (L + 1, T, D)
            arrays[f"text_{i}"] = np.array(text)
            arrays[f"ids_{i}"] = ids[0].numpy().astype(np.int64)
            # (L, 1, H, T, T) -> (L, H, T, T)
            arrays[f"attentions_{i}"] = torch.stack(out.attentions)[:, 0].numpy()
            arrays[f"layer_inputs_{i}"] = hidden_states[:L].numpy()  # (L, T, D)
            arrays[f"hidden_{i}"] = out.last_hidden_state[0].numpy()  # (T, D)
            arrays[f"next_logits_{i}"] = model(ids).logits[0, -1].numpy()
            greedy = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=N_NEW,
                min_new_tokens=N_NEW,
                do_sample=False,
                use_cache=True,
                pad_token_id=1,
            )[0, ids.shape[1] :]
            plain = ids
            for _ in range(N_NEW):  # no cache: argmax of full forwards
                step_logits = model(plain, use_cache=False).logits[0, -1]
                top2 = step_logits.topk(2).values
                if top2[0] - top2[1] <= MIN_GAP:
                    return None
                plain = torch.cat([plain, step_logits.argmax().view(1, 1)], dim=1)
        assert torch.equal(greedy, plain[0, ids.shape[1] :]), (greedy, plain)
        arrays[f"greedy_{i}"] = greedy.numpy().astype(np.int64)
    return arrays


if __name__ == "__main__":
    only = sys.argv[1:]  # folder names ("gemma2", "gpt_oss") to write those alone
    families = [name for name in only if name != "gpt_oss"]
    if families or not only:
        main(families)
    if not only or "gpt_oss" in only:
        gpt_oss_main()
