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
from typing import ClassVar

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import pieces
from .encoder import MAX_MODEL_TOKENS
from .layers import GELU_ROWS, SINGLE_THREAD_PRODUCT, share

DENSE_BYTES = 1 << 30  # np.asarray(AttentionMaps) builds the whole (L, H, T, S) up to this size
ROW_BLOCK_BYTES = 16 << 20  # a block of rows a summary reads at once (AttentionMaps.blocks)


@dataclass(frozen=True)
class DecoderResult:
    text: str
    tokens: list[str]  # T readable labels (pieces.display)
    pieces: list[str]  # T pieces as the tokenizer writes them ("Ġthe", "ä¸")
    token_ids: np.ndarray  # (T,) int64
    offsets: list[tuple[int, int]]  # T (start, end) character spans in text
    attentions: AttentionMaps  # (L, H, T, T) float32 on demand, zero above the diagonal (causal)
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
    # the last forward's queries (H, T, Dh) of each layer, as the scores use them, for its maps;
    # None: not kept (generation)
    queries: dict[int, np.ndarray] | None = field(default_factory=dict)

    @property
    def length(self) -> int:
        return self.keys[0].shape[1] if self.keys else 0

    def extend(
        self, i: int, k: np.ndarray, v: np.ndarray, q: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Append the new (Hkv, T, Dh) keys and values of layer i; return all of them (Hkv, S,
        Dh). ``q``: the layer's queries (H, T, Dh), kept for :class:`AttentionMaps`."""
        if q is not None and self.queries is not None:
            self.queries[i] = np.ascontiguousarray(q)
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
    scratch: bool = False,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Masked attention of T new queries (H, T, Dh) at positions start … start + T − 1 on S keys and
    values (Hkv, S, Dh). Returns (weights (H, T, S), outputs (T, H·Dh)); ``weights``: an (H, T, S)
    float32 array to write them into. ``scratch``: keep no weights (returns None for them): each
    block of rows has its own (H, rows, ≤ S) scratch, and reads only the keys its rows may see, so
    a long text needs no (H, T, S) array. ``v`` None: the weights only (outputs None), as
    :class:`AttentionMaps` recomputes them.

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
        k = np.repeat(k, H // Hkv, axis=0)
        v = None if v is None else np.repeat(v, H // Hkv, axis=0)
    q = np.ascontiguousarray(q * np.float32(scale))  # (H, T, Dh), the scale applied once
    k_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # (H, Dh, S)
    v = None if v is None else np.ascontiguousarray(v)
    mask = _mask(start, T, S, window)  # (T, S)
    if weights is None and not scratch:
        weights = np.empty((H, T, S), dtype=np.float32)
    out = None if v is None else np.empty((T, H * Dh), dtype=np.float32)

    def attend(a: int, b: int) -> None:  # query rows a … b − 1
        seen = S  # the keys rows a … b − 1 may see: all, or (scratch) up to the last row's
        if scratch:
            seen = min(S, start + b)
            block = np.empty((H, b - a, seen), dtype=np.float32)  # (H, n, seen) scratch
        else:
            block = weights[:, a:b]  # (H, n, S) view
        np.matmul(q[:, a:b], k_t[:, :, :seen], out=block)  # (H, n, Dh) x (H, Dh, S) -> (H, n, S)
        if softcap is not None:
            block /= np.float32(softcap)
            np.tanh(block, out=block)
            block *= np.float32(softcap)
        block += mask[a:b, :seen]
        if sinks is None:
            softmax_(block)
        else:
            _softmax_with_sinks_(block, sinks)
        if out is not None:
            heads_out = out[a:b].reshape(b - a, H, Dh).transpose(1, 0, 2)  # (H, n, Dh) view
            np.matmul(block, v[:, :seen], out=heads_out)  # (H, n, S) x (H, S, Dh) -> (H, n, Dh)

    share(attend, T, max(1, SINGLE_THREAD_PRODUCT // (S * Dh)))
    return weights, out


@dataclass(eq=False)
class AttentionMaps:
    """Every layer's causal attention weights, shape (L, H, T, S), computed when they are read from
    the queries and keys the forward kept: layer i's queries (H, T, Dh) and keys (Hkv, S, Dh) as
    its scores use them (rotated under RoPE, not yet scaled) and ``args[i]``, the model's
    :meth:`Decoder.attention_args` (scale, window, …), through :func:`causal_attention` itself, so
    a map is the one the forward used. Kept: O(L·H·T·Dh), not O(L·H·T·S).

    Read ``maps[l]`` (H, T, S), ``maps[l, h]`` (T, S), ``maps[l, h, a:b]``, ``maps.rows(l, h, a,
    b)`` (b − a, S) or ``maps.blocks(l)`` (a layer by blocks of rows); ``np.asarray(maps)`` gives
    the whole array when it fits ``limit`` bytes (else InputError "attention_too_large").
    ``nbytes`` counts what is kept, ``dense_nbytes`` what the whole array would take."""

    queries: tuple[np.ndarray, ...]  # L × (H, T, Dh) float32
    keys: tuple[np.ndarray, ...]  # L × (Hkv, S, Dh) float32
    args: tuple[dict, ...]  # L × keyword arguments of causal_attention
    start: int = 0  # position of the first query (S = start + T)
    limit: int = DENSE_BYTES  # bytes np.asarray(maps) may build at once

    dtype: ClassVar[np.dtype] = np.dtype(np.float32)
    ndim: ClassVar[int] = 4

    def __post_init__(self):
        self.queries, self.keys, self.args = tuple(self.queries), tuple(self.keys), tuple(self.args)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        H, T, _ = self.queries[0].shape
        return (len(self.queries), H, T, self.keys[0].shape[1])

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        return (self.layer(i) for i in range(self.shape[0]))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def dense_nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return sum(q.nbytes for q in self.queries) + sum(k.nbytes for k in self.keys)

    def block_rows(self, heads: int | None = None) -> int:
        """Rows per block so that a block of ``heads`` heads (all by default) stays within
        ROW_BLOCK_BYTES."""
        heads = self.shape[1] if heads is None else heads
        return max(1, ROW_BLOCK_BYTES // (heads * self.shape[3] * self.dtype.itemsize))

    def _heads(self, layer: int, heads: slice, a: int, b: int) -> np.ndarray:
        """(n_heads, b − a, S) float32: rows a … b − 1 of the heads ``heads`` of layer ``layer``."""
        L, H, T, S = self.shape
        q = self.queries[layer][heads, a:b]  # (nh, n, Dh)
        k = self.keys[layer]  # (Hkv, S, Dh)
        args = self.args[layer]
        chosen = range(H)[heads]
        if len(chosen) != H:  # the key/value head of each chosen query head, and its own args
            k = k[np.asarray(chosen, dtype=np.intp) // (H // k.shape[0])]  # (nh, S, Dh)
            args = {
                name: value[heads]
                if isinstance(value, np.ndarray) and value.shape[:1] == (H,)
                else value
                for name, value in args.items()
            }
        seen = min(S, self.start + b)  # rows a … b − 1 see no key after the last one's position
        w, _ = causal_attention(q, k[:, :seen], None, self.start + a, **args)  # (nh, n, seen)
        if seen == S:
            return w
        out = np.zeros((len(chosen), b - a, S), dtype=np.float32)
        out[..., :seen] = w
        return out

    def _check(self, nbytes: int, what: str) -> None:
        if nbytes > self.limit:
            raise InputError(
                "attention_too_large",
                f"{what} of {nbytes / 2**20:.0f} MB is above the {self.limit / 2**20:.0f} MB this "
                "allows at once; read a layer, a head or rows of it (maps[l, h, a:b]).",
                mb=f"{nbytes / 2**20:.0f}",
                limit=f"{self.limit / 2**20:.0f}",
            )

    def layer(self, layer: int) -> np.ndarray:
        """(H, T, S) float32: every head of layer ``layer``."""
        L, H, T, S = self.shape
        self._check(H * T * S * self.dtype.itemsize, "a layer's attention")
        return self._heads(range(L)[layer], slice(None), 0, T)

    def rows(self, layer: int, head: int, a: int = 0, b: int | None = None) -> np.ndarray:
        """(b − a, S) float32: rows a … b − 1 of head ``head`` of layer ``layer``."""
        L, H, T, S = self.shape
        a, b, _ = slice(a, b).indices(T)
        h = range(H)[head]
        return self._heads(range(L)[layer], slice(h, h + 1), a, max(a, b))[0]

    def blocks(self, layer: int, heads: slice = slice(None)):
        """(a, b, (n_heads, b − a, S) weights) for the blocks of rows of layer ``layer``, each
        within ROW_BLOCK_BYTES: what a summary reads a row block at a time."""
        T = self.shape[2]
        step = self.block_rows(len(range(self.shape[1])[heads]))
        for a in range(0, T, step):
            b = min(T, a + step)
            yield a, b, self._heads(layer, heads, a, b)

    def pairs(self, rows, cols) -> np.ndarray:
        """(L, H, n) float32: every head's weight of query rows[k] on key cols[k], computing only
        spans of at most :meth:`block_rows` rows that hold a requested row."""
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        cols = np.asarray(cols, dtype=np.intp).reshape(-1)
        L, H, T, S = self.shape
        if rows.size and not (
            0 <= rows.min() and rows.max() < T and 0 <= cols.min() and cols.max() < S
        ):
            raise IndexError(f"rows must lie in 0 … {T - 1} and cols in 0 … {S - 1}")
        out = np.empty((L, H, rows.size), dtype=np.float32)
        step, wanted = self.block_rows(), np.unique(rows)
        i = 0
        while i < wanted.size:
            a = int(wanted[i])
            i = int(np.searchsorted(wanted, a + step))  # the requested rows in a … a + step − 1
            b = int(wanted[i - 1]) + 1
            hit = np.nonzero((rows >= a) & (rows < b))[0]
            for layer in range(L):
                w = self._heads(layer, slice(None), a, b)  # (H, b − a, S)
                out[layer][:, hit] = w[:, rows[hit] - a, cols[hit]]  # (H, len(hit))
        return out

    def row_means(self, reduce: Callable[[np.ndarray, int, int], np.ndarray]) -> np.ndarray:
        """(L, H) float64: the mean over the T queries of ``reduce(w, a, b)`` (H, b − a), w the
        (H, b − a, S) weights of rows a … b − 1, a block at a time (memory O(block · S))."""
        L, H, T, S = self.shape
        total = np.zeros((L, H))
        for layer in range(L):
            for a, b, w in self.blocks(layer):
                total[layer] += reduce(w, a, b).sum(axis=-1, dtype=np.float64)
        return total / T

    def key_share(self, keys) -> np.ndarray:
        """(L, H) the mean share of each query's weight on ``keys`` (the sink share for [0]); the
        rows sum to 1, as :func:`visattn.reading.key_share` makes them."""
        idx = sorted({int(k) for k in keys})

        def on_keys(w: np.ndarray, a: int, b: int) -> np.ndarray:
            w64 = w.astype(np.float64)
            return w64[..., idx].sum(axis=-1) / w64.sum(axis=-1)

        return self.row_means(on_keys)

    def entropy(self) -> np.ndarray:
        """(L, H) the mean over queries of each row's entropy −Σ w log w in nats (0 log 0 = 0)."""

        def row_entropy(w: np.ndarray, a: int, b: int) -> np.ndarray:
            w64 = w.astype(np.float64)
            logs = np.log(w64, out=np.zeros_like(w64), where=w64 > 0)
            return -(w64 * logs).sum(axis=-1)

        return self.row_means(row_entropy)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if key and _is_int(key[0]):
            if len(key) >= 2 and _is_int(key[1]):
                rows = key[2] if len(key) > 2 else slice(None)
                if _is_int(rows):
                    return self.rows(key[0], key[1], int(rows), int(rows) + 1)[(0, *key[3:])]
                if isinstance(rows, slice) and rows.step in (None, 1):
                    a, b, _ = rows.indices(self.shape[2])
                    return self.rows(key[0], key[1], a, b)[(slice(None), *key[3:])]
                return self.rows(key[0], key[1])[key[2:]]
            return self.layer(key[0])[key[1:]]
        return np.asarray(self)[key]

    def whole(self) -> np.ndarray:
        """(L, H, T, S) float32, whatever its size: for a caller that has admitted its bytes (a
        page under the server's budget); ``np.asarray(maps)`` checks ``limit`` first."""
        L, H, T, S = self.shape
        out = np.empty(self.shape, dtype=self.dtype)
        for i in range(L):
            out[i] = self._heads(i, slice(None), 0, T)
        return out

    def __array__(self, dtype=None, copy=None):
        self._check(self.dense_nbytes, "the whole attention")
        whole = self.whole()
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def astype(self, dtype) -> np.ndarray:
        return np.asarray(self, dtype=dtype)


def _is_int(key) -> bool:
    return isinstance(key, (int, np.integer))


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

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray | None):
        """Layer i on x (T, D) → the next x; its attention weights written into ``weights`` (H,
        T, S), or (None) kept nowhere: its queries go to ``cache.extend(i, k, v, q)``."""
        raise NotImplementedError

    def attention_args(self, i: int) -> dict:
        """Layer i's keyword arguments for :func:`causal_attention` (scale, window, …): what the
        forward and :class:`AttentionMaps` both use."""
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
        eager: bool = False,
        progress: Callable[[int, int], object] | None = None,
    ) -> tuple[AttentionMaps | np.ndarray | None, np.ndarray]:
        """Layers on ``token_ids`` (T,) after the ``cache``'s tokens (which grows by T) →
        (attentions (L, H, T, S), hidden (T, D) after the final norm).

        The attentions are :class:`AttentionMaps`, computed when read from the queries and keys
        kept (None when the cache keeps no queries, as in generation); ``eager``: the whole
        (L, H, T, S) float32 array written during the forward instead. ``progress(i, L)``: called
        after each layer."""
        cache = Cache() if cache is None else cache
        start = cache.length
        ids = self.check_ids(token_ids, start)
        c = self.config
        T = ids.size
        attentions = None
        if eager:
            attentions = np.empty((c.n_layers, c.n_heads, T, start + T), dtype=np.float32)
        x = self.embed(ids, start)  # (T, D)
        for i in range(c.n_layers):
            if layer_inputs is not None:
                layer_inputs[i] = x
            x = self.layer(i, x, start, cache, None if attentions is None else attentions[i])
            if progress is not None:
                progress(i + 1, c.n_layers)
        if attentions is None and cache.queries is not None:
            attentions = AttentionMaps(
                [cache.queries.pop(i) for i in range(c.n_layers)],
                cache.keys,
                [self.attention_args(i) for i in range(c.n_layers)],
                start,
            )
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

    def run(
        self,
        text: str,
        max_tokens: int = MAX_MODEL_TOKENS,
        progress: Callable[[int, int], object] | None = None,
    ) -> DecoderResult:
        """Tokenise ``text`` and run the model: every layer's (causal) attention (computed when
        read, :class:`AttentionMaps`), the hidden states and the logits of the next token.
        ``progress(i, L)``: called after each layer."""
        raw, ids, offsets, n_in = self.encode(text, max_tokens)
        token_ids = np.asarray(ids, dtype=np.int64)
        c = self.config
        layer_inputs = np.empty((c.n_layers, len(ids), c.d_model), dtype=np.float32)
        attentions, hidden = self.forward(token_ids, layer_inputs=layer_inputs, progress=progress)
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
        cache = Cache(queries=None)
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
