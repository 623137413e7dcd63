"""A GPT-2 checkpoint with an induction head planted in it, written in milliseconds.

No real GPT-2 is reachable from the tests, so "a user with GPT-2 small on disk finds its induction
heads" is checked on a folder in GPT-2's own format (config.json with ``model_type: gpt2``,
model.safetensors under GPT-2's tensor names, tokenizer.json) whose weights are designed, as
:mod:`visattn.models.induction` designs its circuit, but through GPT-2's pre-LayerNorm blocks: two
layers of two heads, learned (one-hot) positions, the feed-forward weights zero.

The residual stream (D = 2 × DH columns)::

    tok:w   (V)  one-hot: the current token is w (the token embedding)
    pos:i   (P)  one-hot: the position is i (the position embedding)
    prev:w  (V)  the token before this one was w — written by layer 1's previous-token head
    spare        zero

Every row of a layer's input has the same mean and (up to the sharpness of layer 1's head) the
same variance, so each ``ln_1`` is set to undo its own normalisation (gain σ, bias μ): the heads
read the stream as it is. Layer 1, head 1: the query of position i is pos:i − 1, the key of
position j is pos:j, so it attends to the token before; its value moves tok → prev. Layer 1,
head 2: zero (even attention, writes nothing). Layer 2, head ``induction``: query tok, key prev —
a token of the second copy finds the token after its first occurrence, and its value writes that
token into tok, which the tied unembedding reads (greedy generation continues a repeat). Layer 2's
other head matches the same token (a duplicate-token head: it looks at the earlier copy itself,
not at the token after it). Scores are SHARPNESS where a query matches, 0 elsewhere. Position 0
has no token before it: its previous-token head attends to itself, so it reads as its own
predecessor; a begin token there (as in the finder's sequence) keeps that out of the way.

The vocabulary: the words WORDS (w0 … w23) and "<|endoftext|>", which is also the unknown token,
so :func:`visattn.models.generation.repeated_sequence` starts with it as GPT-2's begin token.

:func:`write_trained` writes a model trained by :mod:`visattn.training` in the same format, and
:func:`reference_scores` is the independent (torch) forward pass the tests compare with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = tuple(f"w{i}" for i in range(24))
END = "<|endoftext|>"
V = len(WORDS) + 1  # the words and <|endoftext|>
P = 48  # positions: a begin token and two copies of 23 words (the head finder's fitted length)
H, DH = 2, 64  # heads per layer, head width (≥ P: a position is one query/key dimension)
D = H * DH
TOK, POS, PREV = 0, V, V + P  # first column of each block of the stream
SHARPNESS = 12.0  # a matching key's score: e¹² ≈ 160 000 against ≤ 47 keys scoring 0
COPY = 4.0  # what the induction head writes into tok: the copied token's logit leads by ~4σ
EPS = 1e-5


def undo_layer_norm(ones: float) -> tuple[np.ndarray, np.ndarray]:
    """ln gain and bias that give back a row holding ``ones`` entries of 1 and zeros elsewhere:
    LN(x) = σ (x − μ) / σ + μ = x."""
    mu = ones / D
    sigma = np.sqrt(ones / D - mu**2 + EPS)
    return np.full(D, sigma, np.float32), np.full(D, mu, np.float32)


def weights(induction: int) -> dict[str, np.ndarray]:
    """Every tensor under GPT-2's names; layer 2's head ``induction`` (0 or 1) is the induction
    head, the other one matches the same token."""
    f32 = np.float32
    scale = SHARPNESS * np.sqrt(DH)  # the query is divided by √DH in the score
    wte = np.zeros((V, D), f32)
    wte[np.arange(V), TOK + np.arange(V)] = 1
    wpe = np.zeros((P, D), f32)
    wpe[np.arange(P), POS + np.arange(P)] = 1
    t = {"wte.weight": wte, "wpe.weight": wpe}
    t["ln_f.weight"], t["ln_f.bias"] = np.ones(D, f32), np.zeros(D, f32)
    for layer in range(2):
        qkv = np.zeros((D, 3, H, DH), f32)  # c_attn's columns: queries, keys, values, head by head
        proj = np.zeros((H, DH, D), f32)  # c_proj's rows: each head's outputs
        if layer == 0:  # head 1: the token before
            i = np.arange(1, P)
            qkv[POS + i, 0, 0, i - 1] = scale  # query of position i: "i − 1"
            qkv[POS + np.arange(P), 1, 0, np.arange(P)] = 1  # key of position j: "j"
            qkv[TOK + np.arange(V), 2, 0, np.arange(V)] = 1  # value: the token
            proj[0, np.arange(V), PREV + np.arange(V)] = 1  # … written as "the token before"
        else:
            other = 1 - induction
            words = np.arange(V)
            qkv[TOK + words, 0, induction, words] = scale  # query: "I am w"
            qkv[PREV + words, 1, induction, words] = 1  # key: "the token before me was w"
            qkv[TOK + words, 2, induction, words] = 1  # value: the token (the one after)
            proj[induction, words, TOK + words] = COPY  # … added to what the logits read
            qkv[TOK + words, 0, other, words] = scale  # the other head: "I am w" …
            qkv[TOK + words, 1, other, words] = 1  # … matches "I am w" (the same token)
        p = f"h.{layer}."
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = undo_layer_norm(2 + layer)  # + prev in layer 2
        t[p + "attn.c_attn.weight"] = qkv.reshape(D, 3 * D)  # (D, 3, H, DH) -> (D, 3D)
        t[p + "attn.c_attn.bias"] = np.zeros(3 * D, f32)
        t[p + "attn.c_proj.weight"] = proj.reshape(D, D)  # (H, DH, D) -> (D, D)
        t[p + "attn.c_proj.bias"] = np.zeros(D, f32)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = np.ones(D, f32), np.zeros(D, f32)
        t[p + "mlp.c_fc.weight"] = np.zeros((D, 1), f32)  # n_inner = 1: the MLP adds nothing
        t[p + "mlp.c_fc.bias"] = np.zeros(1, f32)
        t[p + "mlp.c_proj.weight"] = np.zeros((1, D), f32)
        t[p + "mlp.c_proj.bias"] = np.zeros(D, f32)
    return t


def tokenizer_json() -> str:
    """A word-level tokenizer whose pieces are the task's tokens; <|endoftext|> is special and
    stands for anything else."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(WORDS)} | {END: len(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=END))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([END])
    return tok.to_str()


def write(folder: Path, induction: int = 1) -> Path:
    """The checkpoint in ``folder`` (created): config.json, model.safetensors, tokenizer.json."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_layer": 2,
        "n_head": H,
        "n_embd": D,
        "n_inner": 1,
        "n_positions": P,
        "vocab_size": V,
        "layer_norm_epsilon": EPS,
        "activation_function": "gelu_new",
        "bos_token_id": len(WORDS),
        "eos_token_id": len(WORDS),
        "tie_word_embeddings": True,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2), "utf-8")
    save_file(weights(induction), str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_text(tokenizer_json(), "utf-8")
    return folder


def reference_scores(folder: Path, ids: np.ndarray, start: int, length: int) -> np.ndarray:
    """(L, H) prefix-matching scores of the checkpoint in ``folder`` on ``ids`` (a begin token or
    none, then a sequence of ``length`` twice from ``start``), by an independent forward pass in
    torch, float64: GPT-2's block as Hugging Face writes it, read from the safetensors file."""
    import torch
    from safetensors.torch import load_file

    t = {name: w.double() for name, w in load_file(str(folder / "model.safetensors")).items()}
    config = json.loads((folder / "config.json").read_text("utf-8"))
    n_heads, eps = config["n_head"], config["layer_norm_epsilon"]
    ids = torch.as_tensor(np.asarray(ids))
    T, width = len(ids), t["wte.weight"].shape[1]
    dh = width // n_heads
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    x = t["wte.weight"][ids] + t["wpe.weight"][:T]  # (T, D)
    maps = []
    for layer in range(config["n_layer"]):
        p = f"h.{layer}."
        a = torch.nn.functional.layer_norm(
            x, (width,), t[p + "ln_1.weight"], t[p + "ln_1.bias"], eps
        )
        qkv = a @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]  # (T, 3D)
        q, k, v = (m.reshape(T, n_heads, dh).transpose(0, 1) for m in qkv.split(width, -1))
        scores = (q @ k.transpose(1, 2)) / dh**0.5  # (H, T, T)
        weights = torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1)
        maps.append(weights)
        out = (weights @ v).transpose(0, 1).reshape(T, width)  # (T, H, Dh) -> (T, D)
        x = x + out @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        m = torch.nn.functional.layer_norm(
            x, (width,), t[p + "ln_2.weight"], t[p + "ln_2.bias"], eps
        )
        h = torch.nn.functional.gelu(
            m @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"], approximate="tanh"
        )
        x = x + h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    att = torch.stack(maps).numpy()  # (L, H, T, T)
    i = np.arange(length - 1)
    return att[:, :, start + length + i, start + 1 + i].mean(-1)  # (L, H)


def write_trained(folder: Path, params: dict[str, np.ndarray], config) -> Path:
    """A model of :mod:`visattn.training` (attention-only, pre-LayerNorm, learned positions, as
    GPT-2) in GPT-2's format: its tensors under GPT-2's names, the feed-forward weights zero, a
    word-level tokenizer whose pieces are the task's tokens ("a", "b", …). GPT-2 ties its output
    layer to the token embeddings, so the training's own unembedding is not kept: the attention is
    the training model's, the logits are not."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    D, f32 = config.d_model, np.float32
    t = {"wte.weight": params["embed"], "wpe.weight": params["pos"]}
    t["ln_f.weight"], t["ln_f.bias"] = params["ln_f_g"], params["ln_f_b"]
    for layer in range(config.n_layers):
        p, q = f"h.{layer}.", f"l{layer}."
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = params[q + "ln_g"], params[q + "ln_b"]
        t[p + "attn.c_attn.weight"] = params[q + "W_qkv"]  # the same column order: q, k, v
        t[p + "attn.c_attn.bias"] = np.zeros(3 * D, f32)
        t[p + "attn.c_proj.weight"] = params[q + "W_o"]
        t[p + "attn.c_proj.bias"] = np.zeros(D, f32)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = np.ones(D, f32), np.zeros(D, f32)
        t[p + "mlp.c_fc.weight"] = np.zeros((D, 1), f32)
        t[p + "mlp.c_fc.bias"] = np.zeros(1, f32)
        t[p + "mlp.c_proj.weight"] = np.zeros((1, D), f32)
        t[p + "mlp.c_proj.bias"] = np.zeros(D, f32)
    save_file(
        {name: np.ascontiguousarray(w, f32) for name, w in t.items()},
        str(folder / "model.safetensors"),
    )
    words = [chr(ord("a") + i) for i in range(config.vocab)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    (folder / "tokenizer.json").write_text(tok.to_str(), "utf-8")
    gpt2 = {
        "model_type": "gpt2",
        "n_layer": config.n_layers,
        "n_head": config.n_heads,
        "n_embd": D,
        "n_inner": 1,
        "n_positions": config.seq_len,
        "vocab_size": config.vocab,
        "layer_norm_epsilon": 1e-5,
    }
    (folder / "config.json").write_text(json.dumps(gpt2, indent=2), "utf-8")
    return folder
