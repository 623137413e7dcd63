"""Write tests/fixtures/models/families/: tiny random checkpoints of what
visattn.models.llama reads beyond LLaMA, Mistral and Qwen2, and what transformers computes on them.

As tests/make_model_fixtures.py (whose tokenizers, texts and saving this reuses; each folder holds
config.json, model.safetensors, tokenizer.json and reference.npz with the same arrays), for
``tests/test_families.py``. Run it with the reference environment:

    /work/main/.venv-bench/bin/python tests/make_family_fixtures.py

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


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
