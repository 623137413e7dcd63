"""What GPT-2 and the LLaMA family share: a causal decoder in NumPy with a KV cache.

A family module (:mod:`.gpt2`, :mod:`.llama`) supplies the embedding, the layer and the final norm;
this module tokenises, runs the layers, masks the future, keeps each layer's keys and values for
the next step, and generates greedily.

Axis letters: L layers, H query heads, Hkv key/value heads (H for GPT-2; fewer under grouped-query
attention, each shared by G = H / Hkv query heads), T new tokens, S = P + T keys (P of them cached),
D model width, Dh head width, Nv vocabulary size."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import pieces
from .encoder import MAX_MODEL_TOKENS
from .layers import GELU_ROWS, SINGLE_THREAD_PRODUCT, share


@dataclass(frozen=True)
class DecoderResult:
    text: str
    tokens: list[str]  # T readable labels (pieces.display)
    pieces: list[str]  # T pieces as the tokenizer writes them ("Ġthe", "ä¸")
    token_ids: np.ndarray  # (T,) int64
    offsets: list[tuple[int, int]]  # T (start, end) character spans in text
    attentions: np.ndarray  # (L, H, T, T) float32, zero above the diagonal (causal)
    hidden: np.ndarray  # (T, D) float32 after the final norm
    layer_inputs: np.ndarray  # (L, T, D) float32 each layer's input (layer 0: the embeddings)
    next_logits: np.ndarray | None  # (Nv,) float32 logits of the next token; None: no LM head
    truncated: bool
    n_tokens_in: int
    byte_level: bool = True  # pieces are byte-level BPE (GPT-2, LLaMA 3, Qwen2)
    special: frozenset[str] = frozenset()  # the tokenizer's special tokens ("<s>", "<|endoftext|>")
    read_all: bool = True
    causal: bool = True

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@dataclass
class Cache:
    """Each layer's keys and values so far: keys[i], values[i] (Hkv, P, Dh)."""

    keys: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    @property
    def length(self) -> int:
        return self.keys[0].shape[1] if self.keys else 0

    def extend(self, i: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Append the new (Hkv, T, Dh) keys and values of layer i; return all of them (Hkv, S,
        Dh)."""
        if i == len(self.keys):
            self.keys.append(k)
            self.values.append(v)
        else:
            self.keys[i] = np.concatenate([self.keys[i], k], axis=1)
            self.values[i] = np.concatenate([self.values[i], v], axis=1)
        return self.keys[i], self.values[i]


def softmax_(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place (−inf entries become exactly 0)."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores *= 1.0 / scores.sum(axis=-1, keepdims=True)
    return scores


def _softmax_with_sinks_(scores: np.ndarray, sinks: np.ndarray) -> np.ndarray:
    """Softmax of each row of scores (H, n, S) with head h's sink logit as one more column, in
    place, the sink's column dropped: rows sum to 1 − the sink's share."""
    sink = np.asarray(sinks, dtype=np.float32)[:, None, None]  # (H, 1, 1)
    top = np.maximum(scores.max(axis=-1, keepdims=True), sink)  # (H, n, 1)
    scores -= top
    np.exp(scores, out=scores)
    scores *= 1.0 / (scores.sum(axis=-1, keepdims=True) + np.exp(sink - top))
    return scores


def _mask(start: int, T: int, S: int, window: int | None) -> np.ndarray:
    """(T, S) float32: 0 where query start + t may see key s (s ≤ start + t, and within the
    window), −inf elsewhere."""
    rows = np.arange(start, start + T)[:, None]  # (T, 1) absolute query positions
    cols = np.arange(S)[None, :]  # (1, S)
    hidden = cols > rows
    if window is not None:
        hidden |= rows - cols >= window
    return np.where(hidden, np.float32(-np.inf), np.float32(0.0))


def causal_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    start: int,
    scale: float,
    window: int | None = None,
    weights: np.ndarray | None = None,
    softcap: float | None = None,
    sinks: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Masked attention of T new queries (H, T, Dh) at positions start … start + T − 1 on S keys and
    values (Hkv, S, Dh). Returns (weights (H, T, S), outputs (T, H·Dh)); ``weights``: an (H, T, S)
    float32 array to write them into.

    Query head h reads key/value head h // G (G = H / Hkv, grouped-query attention). ``window``: a
    key more than window − 1 positions before its query is masked too (Mistral's sliding window).
    ``softcap`` c (Gemma 2): each score s becomes c·tanh(s / c) before the mask, so none exceeds ±c.
    As in the BERT encoder (:func:`visattn.models.layers.share`), the rows are computed by blocks
    small enough for BLAS to keep on one thread, on this thread and the one shared helper thread,
    each block's scores staying in cache from the product through the softmax to the values.

    ``sinks`` (H,): gpt-oss's learned logits, one per head, that join each softmax row as one
    extra column and are then dropped, so a row's weights sum to less than 1 (the rest went to the
    sink)."""
    H, T, Dh = q.shape
    Hkv, S, _ = k.shape
    if Hkv != H:  # (Hkv, S, Dh) -> (H, S, Dh): each key/value head for its G query heads
        k, v = np.repeat(k, H // Hkv, axis=0), np.repeat(v, H // Hkv, axis=0)
    q = np.ascontiguousarray(q * np.float32(scale))  # (H, T, Dh), the scale applied once
    k_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # (H, Dh, S)
    v = np.ascontiguousarray(v)
    mask = _mask(start, T, S, window)  # (T, S)
    if weights is None:
        weights = np.empty((H, T, S), dtype=np.float32)
    out = np.empty((T, H * Dh), dtype=np.float32)

    def attend(a: int, b: int) -> None:  # query rows a … b − 1
        block = weights[:, a:b]  # (H, n, S) view
        np.matmul(q[:, a:b], k_t, out=block)  # (H, n, Dh) x (H, Dh, S) -> (H, n, S)
        if softcap is not None:
            block /= np.float32(softcap)
            np.tanh(block, out=block)
            block *= np.float32(softcap)
        block += mask[a:b]
        if sinks is None:
            softmax_(block)
        else:
            _softmax_with_sinks_(block, sinks)
        heads_out = out[a:b].reshape(b - a, H, Dh).transpose(1, 0, 2)  # (H, n, Dh) view
        np.matmul(block, v, out=heads_out)  # (H, n, S) x (H, S, Dh) -> (H, n, Dh)

    share(attend, T, max(1, SINGLE_THREAD_PRODUCT // (S * Dh)))
    return weights, out


def by_rows(activation: Callable[[np.ndarray], np.ndarray], h: np.ndarray) -> np.ndarray:
    """``activation(h[a:b])`` in place over blocks of rows of h (T, Dff), on two threads as the
    attention blocks."""

    def rows(a: int, b: int) -> None:
        activation(h[a:b])

    share(rows, h.shape[0], GELU_ROWS)
    return h


class Decoder:
    """A causal language model in NumPy. Subclasses set ``config`` (a dataclass with n_layers,
    n_heads, n_kv_heads, d_model, d_head, vocab_size, max_positions) and implement ``embed``,
    ``layer``, ``final_norm`` and ``unembed``."""

    family = "decoder"
    causal = True
    positions = "learned"  # "learned": position embeddings added to the input; "rotary": RoPE
    has_head = True  # False: a base checkpoint without an LM head (attention only, no generation)

    def __init__(self, config, tokenizer, path: Path, byte_level: bool, special: Collection[str]):
        self.config = config
        self.tokenizer = tokenizer
        self.path = Path(path)
        self.byte_level = byte_level
        self.special = frozenset(special)

    # ---------------------------------------------------------------- to implement per family

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        raise NotImplementedError

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray):
        """Layer i on x (T, D) → the next x; its attention weights written into ``weights`` (H,
        T, S)."""
        raise NotImplementedError

    def attention_args(self, i: int) -> dict:
        """Layer i's keyword arguments of :func:`causal_attention` (at least ``scale`` and
        ``window``): what a head's map is recomputed with from its queries and keys."""
        raise NotImplementedError

    def final_norm(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def head_values(self, i: int, x: np.ndarray) -> np.ndarray:
        """Layer i's value vectors of every head moved to the residual stream, (H, T, D): head h's
        v_j W_O^h for the layer input x (T, D)."""
        raise NotImplementedError

    def value_norms(self, result: DecoderResult) -> np.ndarray:
        """(L, H, T) float64 ‖v_j W_O^h‖: how much token j's value adds when head h attends to it
        (the norm-weighted reading's factor)."""
        return np.stack(
            [
                np.linalg.norm(self.head_values(i, x).astype(np.float64), axis=-1)
                for i, x in enumerate(result.layer_inputs)
            ]
        )

    def head_queries_keys(self, i: int, x: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
        """Head ``head`` of layer i's queries and keys for the layer input x (T, D), each (T, Dh)
        float64 as the scores use them (queries scaled by 1/√Dh; a RoPE model's rotated)."""
        raise NotImplementedError

    def unembed(self, hidden: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ---------------------------------------------------------------- shared

    def check_ids(self, ids, start: int = 0) -> np.ndarray:
        c = self.config
        ids = np.asarray(ids)
        if (
            ids.ndim != 1
            or ids.size == 0
            or not np.issubdtype(ids.dtype, np.integer)
            or ids.min() < 0
            or ids.max() >= c.vocab_size
        ):
            raise InputError(
                "token_ids",
                f"token_ids must be a 1-D array of integers in 0 … {c.vocab_size - 1}.",
                last=c.vocab_size - 1,
            )
        if start + ids.size > c.max_positions:
            raise InputError(
                "too_many_tokens",
                f"{start + ids.size} tokens; this model reads at most {c.max_positions}.",
                n=start + ids.size,
                limit=c.max_positions,
            )
        return ids.astype(np.int64)

    def forward(
        self,
        token_ids,
        cache: Cache | None = None,
        layer_inputs: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Layers on ``token_ids`` (T,) after the ``cache``'s tokens (which grows by T) →
        (attentions (L, H, T, S), hidden (T, D) after the final norm)."""
        cache = Cache() if cache is None else cache
        start = cache.length
        ids = self.check_ids(token_ids, start)
        c = self.config
        T = ids.size
        attentions = np.empty((c.n_layers, c.n_heads, T, start + T), dtype=np.float32)
        x = self.embed(ids, start)  # (T, D)
        for i in range(c.n_layers):
            if layer_inputs is not None:
                layer_inputs[i] = x
            x = self.layer(i, x, start, cache, attentions[i])
        return attentions, self.final_norm(x)

    def encode(self, text: str, max_tokens: int = MAX_MODEL_TOKENS):
        """(pieces, ids, offsets, n_tokens_in) of ``text``, cut to its first ``max_tokens``."""
        if not isinstance(text, str):
            raise InputError(
                "text_type",
                f"text must be a string, got {type(text).__name__}; pass the sentence as str.",
            )
        if not text.strip():
            raise InputError("text_empty", "text is empty; type a sentence.")
        limit = min(max_tokens, self.config.max_positions)
        enc = self.tokenizer.encode(text[: limit * 16])  # a 20 MB paste is never tokenised whole
        n_in = len(enc.ids)
        return (
            list(enc.tokens[:limit]),
            list(enc.ids[:limit]),
            [tuple(o) for o in enc.offsets[:limit]],
            n_in,
        )

    def tokenize(self, text: str, max_tokens: int = MAX_MODEL_TOKENS):
        """(readable tokens, ids, offsets, n_tokens_in), as MiniLM.tokenize."""
        raw, ids, offsets, n_in = self.encode(text, max_tokens)
        return self.display(raw), ids, offsets, n_in

    def display(self, raw: list[str]) -> list[str]:
        return pieces.display(raw, self.byte_level, self.special)

    def run(self, text: str, max_tokens: int = MAX_MODEL_TOKENS) -> DecoderResult:
        """Tokenise ``text`` and run the model: every layer's (causal) attention, the hidden states
        and the logits of the next token."""
        raw, ids, offsets, n_in = self.encode(text, max_tokens)
        token_ids = np.asarray(ids, dtype=np.int64)
        c = self.config
        layer_inputs = np.empty((c.n_layers, len(ids), c.d_model), dtype=np.float32)
        attentions, hidden = self.forward(token_ids, layer_inputs=layer_inputs)
        return DecoderResult(
            text=text,
            tokens=self.display(raw),
            pieces=raw,
            token_ids=token_ids,
            offsets=offsets,
            attentions=attentions,
            hidden=hidden,
            layer_inputs=layer_inputs,
            next_logits=self.unembed(hidden[-1:])[0] if self.has_head else None,
            truncated=n_in > len(ids),
            n_tokens_in=n_in,
            byte_level=self.byte_level,
            special=self.special,
        )

    def generate(self, token_ids, n_new: int) -> tuple[list[int], Cache]:
        """Greedy continuation of ``token_ids`` by ``n_new`` tokens with the KV cache: the prompt
        once, then one token a step (the cache grows by one position per layer)."""
        cache = Cache()
        _, hidden = self.forward(token_ids, cache)
        out: list[int] = []
        for step in range(n_new):
            nxt = int(np.argmax(self.unembed(hidden[-1:])[0]))
            out.append(nxt)
            if step == n_new - 1 or cache.length >= self.config.max_positions:
                break
            _, hidden = self.forward(np.asarray([nxt]), cache)
        return out, cache


def tokenizer_flavour(tokenizer: Tokenizer) -> tuple[bool, frozenset[str]]:
    """(byte-level BPE?, the special tokens' strings) of a ``tokenizers.Tokenizer``."""
    import json

    spec = json.loads(tokenizer.to_str())

    def has_byte_level(part) -> bool:
        if not isinstance(part, dict):
            return False
        if part.get("type") == "ByteLevel":
            return True
        inner = part.get("pretokenizers") or part.get("decoders") or []
        return any(has_byte_level(p) for p in inner)

    byte_level = has_byte_level(spec.get("pre_tokenizer")) or has_byte_level(spec.get("decoder"))
    special = frozenset(t["content"] for t in spec.get("added_tokens", []) if t.get("special"))
    return byte_level, special
