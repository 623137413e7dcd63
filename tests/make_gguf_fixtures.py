"""Write tests/fixtures/gguf/: the tiny checkpoints of tests/fixtures/models as GGUF files, the way
llama.cpp's convert_hf_to_gguf.py writes them, with the ``gguf`` package's GGUFWriter.

The reference for ``tests/test_gguf.py``. Run it with the reference environment (it needs gguf,
torch, transformers and accelerate; deterministic: fixed seeds, one thread):

    /work/main/.venv-bench/bin/python tests/make_gguf_fixtures.py

    {llama,qwen2,gpt2}-{F32,F16,BF16,Q8_0,Q4_0,Q4_1}.gguf
        the safetensors fixture's weights, 2-D weights in that type (quantized by
        ``gguf.quants.quantize``), 1-D norms and biases in F32 as llama.cpp keeps them; LLaMA's
        q and k rows permuted to llama.cpp's interleaved RoPE pairs, GPT-2's Conv1D weights
        transposed to (out, in), llama3's RoPE scaling as a ``rope_freqs.weight`` tensor of
        divisors; the tokenizer.json's byte-level BPE vocabulary and merges as tokenizer.ggml.*.
    llama-spm-F16.gguf
        the llama fixture's weights with a small SentencePiece vocabulary (tokenizer model
        "llama": byte tokens, scores, no merges).
    {qwen3,gemma2,gemma3,phi3}-F16.gguf
        a seeded random tiny transformers model of each (Qwen3's QK-norm, Gemma's four norms
        stored as 1 + w, Phi-3's fused QKV and gate-up), written as convert_hf_to_gguf.py writes
        them; reference.npz holds ``F/tensor/NAME`` (the model's state dict) and ``F/config``
        (its config as JSON), checked here to be what transformers' GGUF loading reads back,
        and ``F/ids_i``, ``F/attentions_i`` of its forward on the file. transformers 5.23's GGUF
        config misses what the file does not say as it reads it (qwen3's key_length, so its
        head_dim; phi3's pad id, outside this vocabulary; Gemma's query_pre_attn_scalar, which
        llama.cpp derives from the size and transformers leaves at 256), so it is given the
        model's config: the weights and the tokenizer are the GGUF's.
    tok-{llama-bpe,qwen2,smollm}.gguf
        the qwen2 fixture's vocabulary with those pre-tokenizers, no tensors (tokenizer only).
    kquant-{Q4_K,Q5_K,Q6_K}.gguf
        a random one-layer LLaMA 256 wide (the K-quants' blocks hold 256 values, wider than the
        32 of the tiny fixtures); ``gguf`` 0.19 quantizes none of these types, so the blocks are
        random bytes with small float16 scales (read back by the test against
        ``gguf.quants.dequantize``).
    reference.npz
        transformers' own GGUF loading (``from_pretrained(folder, gguf_file=…)``, eager attention,
        float32) on every file: for each file F and text i, ``F/ids_i`` (T,) (its GGUF tokenizer)
        and ``F/attentions_i`` (L, H, T, T); for a tok-* file ``F/ids_i`` and ``F/pieces_i``
        (its pre-tokenizer's pieces) of TOKEN_TEXTS[i].
        transformers 5.23 does not read llama.cpp's ``rope_freqs`` (llama3's RoPE scaling) nor
        GPT-2's ``feed_forward_length`` and ``context_length``, so for llama-* and gpt2-* it is
        given the safetensors checkpoint's config.json (weights and tokenizer still from the
        GGUF); qwen2-* and kquant-* are read from the GGUF alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gguf
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from visattn.models import loading  # noqa: E402 (the repository, not an installed copy)
from visattn.models.gguf import permute  # noqa: E402

MODELS = HERE / "fixtures" / "models"
OUT = HERE / "fixtures" / "gguf"
FAMILIES = ("llama", "qwen2", "gpt2")
TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1")
K_TYPES = ("Q4_K", "Q5_K", "Q6_K")
Q = gguf.GGMLQuantizationType
# Hugging Face names (after "model.layers.N." / "h.N.") → GGUF names (after "blk.N.")
LLAMA_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
GPT2_LAYER = {
    "ln_1.weight": "attn_norm.weight",
    "ln_1.bias": "attn_norm.bias",
    "attn.c_attn.weight": "attn_qkv.weight",
    "attn.c_attn.bias": "attn_qkv.bias",
    "attn.c_proj.weight": "attn_output.weight",
    "attn.c_proj.bias": "attn_output.bias",
    "ln_2.weight": "ffn_norm.weight",
    "ln_2.bias": "ffn_norm.bias",
    "mlp.c_fc.weight": "ffn_up.weight",
    "mlp.c_fc.bias": "ffn_up.bias",
    "mlp.c_proj.weight": "ffn_down.weight",
    "mlp.c_proj.bias": "ffn_down.bias",
}
TOP = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "transformer.wte.weight": "token_embd.weight",
    "transformer.wpe.weight": "position_embd.weight",
    "transformer.ln_f.weight": "output_norm.weight",
    "transformer.ln_f.bias": "output_norm.bias",
}


def gguf_tensors(family: str, config: dict, weights: loading.Weights) -> dict[str, np.ndarray]:
    """The checkpoint's tensors under GGUF names, as convert_hf_to_gguf.py reshapes them."""
    out = {}
    for name in weights:
        x = np.array(weights[name], dtype=np.float32)
        if name in TOP:
            out[TOP[name]] = x
            continue
        parts = name.split(".")
        if family == "gpt2":  # transformer.h.N.rest
            index, rest, table = parts[2], ".".join(parts[3:]), GPT2_LAYER
        else:  # model.layers.N.rest
            index, rest, table = parts[2], ".".join(parts[3:]), LLAMA_LAYER
        if rest not in table:
            continue
        if family == "llama" and rest == "self_attn.q_proj.weight":
            x = permute(x, config["num_attention_heads"])
        if family == "llama" and rest == "self_attn.k_proj.weight":
            x = permute(x, config["num_key_value_heads"])
        if family == "gpt2" and rest.endswith("weight") and x.ndim == 2:
            x = x.T.copy()  # Conv1D (in, out) → (out, in)
        out[f"blk.{index}.{table[rest]}"] = x
    if family == "llama" and config.get("rope_parameters", {}).get("rope_type") == "llama3":
        out["rope_freqs.weight"] = llama3_divisors(config)
    return out


def llama3_divisors(config: dict) -> np.ndarray:
    """(Dh / 2,) float32 divisors of RoPE's frequencies, as LlamaModel.generate_extra_tensors."""
    rope = config["rope_parameters"]
    dim = config["head_dim"]
    base = rope["rope_theta"]
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    old = rope["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    divisors = []
    for freq in freqs:
        wavelen = 2 * np.pi / freq
        if wavelen < high_wavelen:
            divisors.append(1.0)
        elif wavelen > low_wavelen:
            divisors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            divisors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(divisors, dtype=np.float32)


def add_tokenizer(writer: gguf.GGUFWriter, folder: Path, n_vocab: int, pre: str = "gpt-2") -> None:
    """tokenizer.json's byte-level BPE as tokenizer.ggml.* (padded to the embedding's rows with
    [PADi] entries of type UNUSED, as convert_hf_to_gguf.py does)."""
    spec = json.loads((folder / loading.TOKENIZER).read_text(encoding="utf-8"))
    assert spec["model"]["type"] == "BPE" and spec["pre_tokenizer"]["type"] == "ByteLevel"
    vocab = spec["model"]["vocab"]
    added = {t["id"]: t["content"] for t in spec["added_tokens"]}
    by_id = {i: tok for tok, i in vocab.items()} | added
    tokens, types = [], []
    for i in range(n_vocab):
        tokens.append(by_id.get(i, f"[PAD{i}]"))
        kind = gguf.TokenType.CONTROL if i in added else gguf.TokenType.NORMAL
        types.append(kind if i in by_id else gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    post = spec.get("post_processor") or {}
    if post.get("type") == "TemplateProcessing":
        first = post["single"][0]
        if "SpecialToken" in first:
            piece = first["SpecialToken"]["id"]
            writer.add_bos_token_id(post["special_tokens"][piece]["ids"][0])
            writer.add_add_bos_token(True)
            return
    writer.add_add_bos_token(False)


def add_hparams(writer: gguf.GGUFWriter, family: str, config: dict) -> None:
    if family == "gpt2":
        writer.add_context_length(config["n_positions"])
        writer.add_embedding_length(config["n_embd"])
        writer.add_feed_forward_length(config["n_inner"])
        writer.add_block_count(config["n_layer"])
        writer.add_head_count(config["n_head"])
        writer.add_layer_norm_eps(config["layer_norm_epsilon"])
        return
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(config["rope_parameters"]["rope_theta"])
    if "head_dim" in config:
        writer.add_key_length(config["head_dim"])
        writer.add_value_length(config["head_dim"])
    writer.add_rope_dimension_count(
        config.get("head_dim", 0) or (config["hidden_size"] // config["num_attention_heads"])
    )


def add_tensor(writer: gguf.GGUFWriter, name: str, x: np.ndarray, qtype: str) -> None:
    """A 2-D weight in ``qtype``; 1-D tensors (norms, biases, rope_freqs) in F32."""
    if x.ndim == 1 or qtype == "F32":
        writer.add_tensor(name, x.astype(np.float32))
    elif qtype == "F16":
        writer.add_tensor(name, x.astype(np.float16))
    else:
        kind = Q[qtype]
        writer.add_tensor(name, gguf.quants.quantize(x, kind), raw_dtype=kind)


def write(path: Path, family: str, config: dict, tensors: dict, qtype: str, tok: Path) -> None:
    writer = gguf.GGUFWriter(str(path), family)
    add_hparams(writer, family, config)
    add_tokenizer(writer, tok, tensors["token_embd.weight"].shape[0])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for name in sorted(tensors):
        add_tensor(writer, name, tensors[name], qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# the random K-quant LLaMA: width, feed-forward, heads, key/value heads, layers
K_WIDTH, K_FF, K_HEADS, K_KV, K_LAYERS = 256, 256, 4, 2, 1
K_SCALE = 5e-5  # the float16 super-block scale: weights of at most about 0.1, a tame random model


def random_blocks(rng: np.random.Generator, shape: tuple[int, int], qtype: str) -> np.ndarray:
    """(rows, bytes) uint8: random K-quant blocks with small float16 scales."""
    block = gguf.GGML_QUANT_SIZES[Q[qtype]][1]
    n = shape[0] * shape[1] // 256
    raw = rng.integers(0, 256, size=(n, block), dtype=np.uint8)
    d = (K_SCALE * rng.uniform(0.5, 1.0, size=(n, 2))).astype(np.float16)
    if qtype == "Q6_K":  # d last; scales are int8 (any byte), values 6-bit
        raw[:, -2:] = (d[:, :1] / 4).view(np.uint8)
    else:  # d, dmin first
        raw[:, :4] = d.view(np.uint8)
    return raw.reshape(shape[0], -1)  # (n blocks, bytes) -> (rows, bytes per row)


def write_kquant(path: Path, qtype: str, tok: Path) -> None:
    rng = np.random.default_rng(54)
    spec = json.loads((tok / loading.TOKENIZER).read_text(encoding="utf-8"))
    n_vocab = len(spec["model"]["vocab"])
    dh = K_WIDTH // K_HEADS
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(64)
    writer.add_embedding_length(K_WIDTH)
    writer.add_feed_forward_length(K_FF)
    writer.add_block_count(K_LAYERS)
    writer.add_head_count(K_HEADS)
    writer.add_head_count_kv(K_KV)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(dh)
    add_tokenizer(writer, tok, n_vocab)
    shapes = {"token_embd.weight": (n_vocab, K_WIDTH)}
    for i in range(K_LAYERS):
        p = f"blk.{i}."
        shapes |= {
            p + "attn_q.weight": (K_HEADS * dh, K_WIDTH),
            p + "attn_k.weight": (K_KV * dh, K_WIDTH),
            p + "attn_v.weight": (K_KV * dh, K_WIDTH),
            p + "attn_output.weight": (K_WIDTH, K_HEADS * dh),
            p + "ffn_gate.weight": (K_FF, K_WIDTH),
            p + "ffn_up.weight": (K_FF, K_WIDTH),
            p + "ffn_down.weight": (K_WIDTH, K_FF),
        }
    for name, shape in shapes.items():
        writer.add_tensor(name, random_blocks(rng, shape, qtype), raw_dtype=Q[qtype])
    norms = ["output_norm.weight"] + [
        f"blk.{i}.{n}" for i in range(K_LAYERS) for n in ("attn_norm.weight", "ffn_norm.weight")
    ]
    for name in norms:
        writer.add_tensor(name, rng.uniform(0.5, 1.5, size=K_WIDTH).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


TEXTS = ("The animal didn't cross the street because it was too tired.", "小明喜欢吃苹果。")
# texts on which the pre-tokenizers differ: digits, contractions, newlines, runs of spaces
TOKEN_TEXTS = (
    "I'LL pay 12345 dollars, don't you?\n\n  Then   the keys\t(42)!",
    "  the values,the street's 2024年3月 小明  ",
)
PRES = ("llama-bpe", "qwen2", "smollm")  # tokenizer-only files tok-PRE.gguf
# a SentencePiece vocabulary of 280 (the llama fixture's embedding rows): <unk> <s> </s>, the 256
# bytes <0xNN>, then characters and merged pieces with scores (better pieces score higher)
SPM_CHARS = ["\u2581", "t", "h", "e", "a", "n", "i", "m", "l", "s", "r", "c", "o"]
SPM_PIECES = ["th", "he", "\u2581t", "\u2581the", "an", "\u2581a", "al", "im"]


def write_sentencepiece(path: Path, config: dict, tensors: dict) -> None:
    """The llama fixture's weights (F16) with a SentencePiece vocabulary (tokenizer model
    "llama": scores, byte tokens, no merges: a reader derives them from the scores)."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    scores = [0.0] * len(tokens)
    tokens += SPM_CHARS + SPM_PIECES
    types += [gguf.TokenType.NORMAL] * (len(SPM_CHARS) + len(SPM_PIECES))
    scores += [-100.0 - i for i in range(len(SPM_CHARS))]
    scores += [-1.0 - len(SPM_PIECES) + len(p) + i / 10 for i, p in enumerate(SPM_PIECES)]
    assert len(tokens) == tensors["token_embd.weight"].shape[0]
    writer = gguf.GGUFWriter(str(path), "llama")
    add_hparams(writer, "llama", config)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    for name in sorted(tensors):
        add_tensor(writer, name, tensors[name], "F16")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_tokenizer_only(path: Path, pre: str) -> None:
    """The qwen2 fixture's byte-level vocabulary with pre-tokenizer ``pre`` and no tensors."""
    folder = MODELS / "qwen2"
    config = loading.read_config(folder)
    writer = gguf.GGUFWriter(str(path), "qwen2")
    add_hparams(writer, "qwen2", config)
    add_tokenizer(writer, folder, config["vocab_size"], pre)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def transformers_reference() -> None:
    """reference.npz: transformers' forward on each GGUF file, read by its GGUF loader."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    out = {}
    for path in sorted(OUT.glob("tok-*.gguf")):
        tokenizer = AutoTokenizer.from_pretrained(OUT, gguf_file=path.name)
        for i, text in enumerate(TOKEN_TEXTS):
            out[f"{path.name}/ids_{i}"] = np.array(tokenizer(text).input_ids, dtype=np.int64)
            split = tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text)
            out[f"{path.name}/pieces_{i}"] = np.array([piece for piece, _ in split])
    for path in sorted(OUT.glob("*.gguf")):
        family = path.name.split("-")[0]
        if family == "tok" or family in NEW_ARCHS:
            continue
        extra = {}
        if family in ("llama", "gpt2"):
            extra["config"] = AutoConfig.from_pretrained(MODELS / family)
        tokenizer = AutoTokenizer.from_pretrained(OUT, gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(
            OUT, gguf_file=path.name, attn_implementation="eager", dtype=torch.float32, **extra
        )
        model.eval()
        for i, text in enumerate(TEXTS):
            ids = tokenizer(text, return_tensors="pt").input_ids
            with torch.no_grad():
                result = model(ids, output_attentions=True)
            out[f"{path.name}/ids_{i}"] = ids[0].numpy()
            attentions = np.stack([a[0].numpy() for a in result.attentions])  # (L, H, T, T)
            out[f"{path.name}/attentions_{i}"] = attentions.astype(np.float32)
    new_arch_reference(out)
    np.savez_compressed(OUT / "reference.npz", **out)


# families only mapped here (the family modules are another part of issue 54): a random tiny
# transformers model each, written as llama.cpp's converter writes it
NEW_ARCHS = ("qwen3", "gemma2", "gemma3", "phi3")
NEW_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "self_attn.qkv_proj.weight": "attn_qkv.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.gate_up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
GEMMA_NORMS = {
    "post_attention_layernorm.weight": "post_attention_norm.weight",
    "pre_feedforward_layernorm.weight": "ffn_norm.weight",
    "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
}


def new_arch_model(arch: str):
    """A seeded random tiny transformers model of ``arch`` (weights float16-exact)."""
    import torch
    from transformers import (
        Gemma2Config,
        Gemma2ForCausalLM,
        Gemma3ForCausalLM,
        Gemma3TextConfig,
        Phi3Config,
        Phi3ForCausalLM,
        Qwen3Config,
        Qwen3ForCausalLM,
    )

    torch.manual_seed(54)
    common = dict(
        vocab_size=280,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.1,
    )
    if arch == "qwen3":
        model = Qwen3ForCausalLM(Qwen3Config(head_dim=8, tie_word_embeddings=True, **common))
    elif arch == "gemma2":
        config = Gemma2Config(head_dim=8, query_pre_attn_scalar=8, sliding_window=4, **common)
        model = Gemma2ForCausalLM(config)
    elif arch == "gemma3":
        config = Gemma3TextConfig(head_dim=8, query_pre_attn_scalar=8, sliding_window=4, **common)
        model = Gemma3ForCausalLM(config)
    else:
        ids = dict(pad_token_id=None, bos_token_id=None, eos_token_id=None)
        model = Phi3ForCausalLM(Phi3Config(**common, **ids, tie_word_embeddings=False))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.1)
            if p.ndim == 1:
                p.add_(1.0)  # norms near 1 (Gemma's near 2: it scales by 1 + w)
            p.copy_(p.half().float())
    return model.eval()


def write_new_arch(arch: str, model, path: Path) -> None:
    """``model`` as convert_hf_to_gguf.py writes it: no permutation (these use NeoX RoPE), Gemma's
    norms stored as 1 + w, F16 2-D weights, the qwen2 fixture's vocabulary."""
    c = model.config
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_context_length(c.max_position_embeddings)
    writer.add_embedding_length(c.hidden_size)
    writer.add_feed_forward_length(c.intermediate_size)
    writer.add_block_count(c.num_hidden_layers)
    writer.add_head_count(c.num_attention_heads)
    writer.add_head_count_kv(c.num_key_value_heads)
    writer.add_layer_norm_rms_eps(c.rms_norm_eps)
    rope = c.rope_parameters.get("full_attention", c.rope_parameters)
    writer.add_rope_freq_base(rope["rope_theta"])
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_rope_dimension_count(head_dim)
    if arch.startswith("gemma"):
        writer.add_sliding_window(c.sliding_window)
        if arch == "gemma2":
            writer.add_attn_logit_softcapping(c.attn_logit_softcapping)
            writer.add_final_logit_softcapping(c.final_logit_softcapping)
    add_tokenizer(writer, MODELS / "qwen2", c.vocab_size)
    layer = NEW_LAYER | (GEMMA_NORMS if arch.startswith("gemma") else {})
    if not arch.startswith("gemma"):
        layer = layer | {"post_attention_layernorm.weight": "ffn_norm.weight"}
    for name, p in model.state_dict().items():
        x = p.numpy().astype(np.float32)
        if name == "lm_head.weight" and c.tie_word_embeddings:
            continue
        if name.startswith("model.layers."):
            _, _, index, rest = name.split(".", 3)
            gguf_name = f"blk.{index}.{layer[rest]}"
        else:
            gguf_name = {v: k for k, v in TOP_NEW.items()}[name]
        if arch.startswith("gemma") and name.endswith("norm.weight"):
            x = x + 1  # Gemma2Model / Gemma3Model: data_torch + 1 (llama.cpp's norm is plain w)
        add_tensor(writer, gguf_name, x, "F16")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


TOP_NEW = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def new_arch_reference(out: dict) -> None:
    """For each new architecture: its GGUF, and in ``out`` the original state dict and config
    fields, after checking that transformers' GGUF loading reads the file back to them."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for arch in NEW_ARCHS:
        model = new_arch_model(arch)
        name = f"{arch}-F16.gguf"
        write_new_arch(arch, model, OUT / name)
        # transformers' GGUF config ignores qwen3's key_length (head_dim 128 by default), gives
        # phi3 Phi-3's pad id 32000, outside this vocabulary, and Gemma query_pre_attn_scalar 256
        # (llama.cpp: head_dim): give it the model's config
        back = AutoModelForCausalLM.from_pretrained(
            OUT,
            gguf_file=name,
            dtype=torch.float32,
            config=model.config,
            attn_implementation="eager",
        )
        original = model.state_dict()
        for key, value in back.state_dict().items():
            if key in original:
                assert torch.equal(value, original[key]), (arch, key)
        for key, value in original.items():
            if key == "lm_head.weight" and model.config.tie_word_embeddings:
                continue
            out[f"{name}/tensor/{key}"] = value.numpy()
        config = model.config.to_dict()
        out[f"{name}/config"] = np.array(json.dumps(config, default=str))
        tokenizer = AutoTokenizer.from_pretrained(OUT, gguf_file=name)
        back.eval()
        for i, text in enumerate(TEXTS):
            ids = tokenizer(text, return_tensors="pt").input_ids
            with torch.no_grad():
                result = back(ids, output_attentions=True)
            out[f"{name}/ids_{i}"] = ids[0].numpy()
            attentions = np.stack([a[0].numpy() for a in result.attentions])  # (L, H, T, T)
            out[f"{name}/attentions_{i}"] = attentions.astype(np.float32)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for family in FAMILIES:
        folder = MODELS / family
        config = loading.read_config(folder)
        tensors = gguf_tensors(family, config, loading.Weights.open(folder))
        for qtype in TYPES:
            write(OUT / f"{family}-{qtype}.gguf", family, config, tensors, qtype, folder)
    for qtype in K_TYPES:
        write_kquant(OUT / f"kquant-{qtype}.gguf", qtype, MODELS / "llama")
    config = loading.read_config(MODELS / "llama")
    tensors = gguf_tensors("llama", config, loading.Weights.open(MODELS / "llama"))
    write_sentencepiece(OUT / "llama-spm-F16.gguf", config, tensors)
    for pre in PRES:
        write_tokenizer_only(OUT / f"tok-{pre}.gguf", pre)
    transformers_reference()
    for path in sorted(OUT.glob("*")):
        print(f"{path.name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
