"""Write tests/fixtures/models/: tiny random checkpoints of every family visattn reads,
and what Hugging Face transformers computes on them.

The reference for ``tests/test_models.py``, made with torch and transformers, which the app never
installs. Run it with the reference environment (deterministic: fixed seeds, one thread):

    /work/main/.venv-bench/bin/python tests/make_model_fixtures.py

Each folder NAME holds config.json, its weights as safetensors and tokenizer.json (built here with
``tokenizers`` on a small English and Chinese corpus), as ``save_pretrained`` would write them, plus
reference.npz: for each text i, text_i, ids_i (T,) (transformers' tokenizer on tokenizer.json),
attentions_i (L, H, T, T) and layer_inputs_i (L, T, D) from the eager forward with
output_attentions / output_hidden_states, hidden_i (T, D) = last_hidden_state; decoders also
next_logits_i (Nv,) and greedy_i (N_NEW,) = greedy continuation (transformers' generate with its KV
cache, checked here against argmax of full forwards without one).

    bert     BertForMaskedLM (tensor names "bert.…"), a WordPiece vocabulary with CJK characters,
             float32
    gpt2     GPT2LMHeadModel ("transformer.…", lm_head tied), byte-level BPE, float16
    llama    LlamaForCausalLM, llama3 RoPE scaling, lm_head untied, a <s> prefix, float16
    qwen2    Qwen2ForCausalLM, QKV bias, grouped-query attention (4 query heads, 2 key/value
             heads), tied embeddings, bfloat16
    mistral  MistralForCausalLM, one key/value head, sliding window 4, two shards with
             model.safetensors.index.json, float32
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "models"
N_NEW = 8
WIDTH, FF, LAYERS, HEADS, POSITIONS = 32, 32, 2, 4, 64
# wider than transformers' 0.02, so that a random model's logits are far apart and greedy choices
# do not hang on rounding
INIT = 0.1
MIN_GAP = 1e-3  # the best logit leads the second by at least this at every greedy step
CORPUS = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "Attention lets every word look at every other word and decide how much each one matters.",
    "A query is compared with the keys, and the weights average the values.",
    "小明喜欢吃苹果。注意力机制让每个词元关注其他词元。",
    "查询与键比较，注意力权重对值加权平均。中文的字被拆成字节。",
] * 4
TEXTS = [
    "The animal didn't cross the street.",  # 25 byte-level pieces: RoPE beyond llama3's 16
    "小明喜欢吃苹果。",
    "the keys the keys the values",
]


def bert_tokenizer():
    """WordPiece over a vocabulary written out here (the trainer breaks ties in hash order, so it
    is not deterministic): the specials, the corpus's words of 3+ letters, every character alone and
    as a continuation "##c"."""
    import re

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    text = " ".join(CORPUS).lower()
    words = sorted(set(re.findall(r"[a-z]{3,}", text)))
    chars = sorted(set(text) - set(" "))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *chars]
    vocab += ["##" + c for c in chars if c.isascii() and c.isalpha()]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(vocab[:5])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.decoder = decoders.WordPiece()
    return tok


def bpe_tokenizer(specials: list[str], bos: str | None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from tokenizers.trainers import BpeTrainer

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(
        vocab_size=280,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    if bos is None:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    else:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", special_tokens=[(bos, tok.token_to_id(bos))]
        )
    return tok


def configs(vocab: int) -> dict:
    from transformers import BertConfig, GPT2Config, LlamaConfig, MistralConfig, Qwen2Config

    common = dict(
        vocab_size=vocab,
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=FF,
        max_position_embeddings=POSITIONS,
        initializer_range=INIT,
    )
    return {
        "bert": BertConfig(**common),
        "gpt2": GPT2Config(
            vocab_size=vocab,
            n_embd=WIDTH,
            n_layer=LAYERS,
            n_head=HEADS,
            n_inner=FF,  # not 4 × width: the loader reads n_inner
            n_positions=POSITIONS,
            initializer_range=INIT,
            bos_token_id=0,
            eos_token_id=0,
        ),
        "llama": LlamaConfig(
            **common,
            num_key_value_heads=HEADS,
            tie_word_embeddings=False,
            bos_token_id=0,
            eos_token_id=1,
            rope_parameters={
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 16,
            },
        ),
        "qwen2": Qwen2Config(
            **common, num_key_value_heads=2, tie_word_embeddings=True, use_sliding_window=False
        ),
        "mistral": MistralConfig(
            **common, num_key_value_heads=1, sliding_window=4, tie_word_embeddings=False
        ),
    }


DTYPES = {"bert": "float32", "gpt2": "float16", "llama": "float16", "qwen2": "bfloat16"}
DTYPES["mistral"] = "float32"


def save_weights(model, folder: Path, dtype, shards: int) -> None:
    """The parameters (tied ones once, as save_pretrained) in ``dtype`` as safetensors."""
    from safetensors.torch import save_file

    tensors = {
        name: p.detach().to(dtype).contiguous().clone() for name, p in model.named_parameters()
    }
    if shards == 1:
        save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
        return
    names = sorted(tensors)
    parts = np.array_split(np.arange(len(names)), shards)
    weight_map = {}
    for k, idx in enumerate(parts, start=1):
        file = f"model-{k:05d}-of-{shards:05d}.safetensors"
        part = {names[i]: tensors[names[i]] for i in idx}
        save_file(part, str(folder / file), metadata={"format": "pt"})
        weight_map |= {name: file for name in part}
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))


def main() -> None:
    import torch
    import transformers
    from transformers import (
        AutoModelForCausalLM,
        BertForMaskedLM,
        PreTrainedTokenizerFast,
    )

    torch.set_num_threads(1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    tokenizers = {
        "bert": bert_tokenizer(),
        "gpt2": bpe_tokenizer(["<|endoftext|>"], None),
        "llama": bpe_tokenizer(["<s>", "</s>"], "<s>"),
        "qwen2": bpe_tokenizer(["<|endoftext|>"], None),
        "mistral": bpe_tokenizer(["<s>", "</s>"], "<s>"),
    }
    shutil.rmtree(OUT, ignore_errors=True)
    for seed, (name, tok) in enumerate(tokenizers.items()):
        folder = OUT / name
        folder.mkdir(parents=True)
        config = configs(tok.get_vocab_size())[name]
        torch.manual_seed(seed)
        if name == "bert":
            model = BertForMaskedLM._from_config(config, attn_implementation="eager")
        else:
            model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
        model.eval()
        dtype = getattr(torch, DTYPES[name])
        with torch.no_grad():  # the reference runs in float32 on the weights as stored
            for p in model.parameters():
                p.copy_(p.to(dtype).float())
        config.save_pretrained(folder)
        tok.save(str(folder / "tokenizer.json"))
        save_weights(model, folder, dtype, shards=2 if name == "mistral" else 1)
        hf_tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
        body = (
            model.bert if name == "bert" else model.model if name != "gpt2" else model.transformer
        )
        arrays = {
            "versions": np.array(
                f"torch {torch.__version__}, transformers {transformers.__version__}"
            )
        }
        for i, text in enumerate(TEXTS):
            ids = hf_tok(text, return_tensors="pt")["input_ids"]
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
            if name == "bert":
                continue
            with torch.no_grad():
                logits = model(ids).logits[0, -1]
                greedy = model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=N_NEW,
                    min_new_tokens=N_NEW,
                    do_sample=False,
                    use_cache=True,
                    pad_token_id=0,
                )[0, ids.shape[1] :]
                plain = ids
                for _ in range(N_NEW):  # no cache: argmax of full forwards
                    step_logits = model(plain, use_cache=False).logits[0, -1]
                    top2 = step_logits.topk(2).values
                    assert top2[0] - top2[1] > MIN_GAP, (name, text, top2)
                    step = step_logits.argmax()
                    plain = torch.cat([plain, step.view(1, 1)], dim=1)
            assert torch.equal(greedy, plain[0, ids.shape[1] :]), (name, greedy, plain)
            arrays[f"next_logits_{i}"] = logits.numpy()
            arrays[f"greedy_{i}"] = greedy.numpy().astype(np.int64)
        np.savez_compressed(folder / "reference.npz", **arrays)
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{name}: {size / 1e3:.0f} kB, {DTYPES[name]}")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"wrote {OUT}: {total / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
