"""A loaded decoder generating, step by step, and its induction heads found by measurement.

:func:`steps` continues a prompt greedily with the KV cache and records, per step, the next-token
probabilities (the top few, from the real softmax over the whole vocabulary) and how many positions
each layer's cache holds. :func:`prefix_matching` runs the model on a random token sequence repeated
twice and scores every head by the attention a token of the second copy puts on the token that
followed its first occurrence (Olsson et al. 2022's prefix-matching score): the induction heads of
a trained model (GPT-2 small has several in layers 5–7) score near 1, other heads near 1 / T.

Axis letters: L layers, H heads, R the repeated sequence's length, T tokens, Nv vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..checks import positive_int
from ..errors import InputError
from ..shown_tokens import HeadWeight
from .causal import AttentionMaps, Cache, Decoder

TOP = 5  # probabilities listed per step
MAX_NEW = 64  # tokens a page may generate at once
REPEAT = 50  # length of the random sequence that prefix matching repeats


@dataclass(frozen=True)
class Generated:
    token_id: int  # the chosen (most probable) next token
    token: str  # as shown (byte pieces decoded)
    top_ids: tuple[int, ...]  # the TOP most probable next tokens, most probable first
    top_tokens: tuple[str, ...]
    top_probabilities: tuple[float, ...]
    cache_length: int  # positions each layer's key/value cache holds when this token is chosen


def _check_decoder(model) -> Decoder:
    if not isinstance(model, Decoder):
        raise InputError(
            "model_not_decoder",
            f"{type(model).__name__} is an encoder; generation needs a decoder (GPT-2, LLaMA, "
            "Mistral, Qwen2).",
        )
    return model


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax of (Nv,) logits in float64."""
    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()


def steps(model: Decoder, token_ids: ArrayLike, n_new: int, top: int = TOP) -> list[Generated]:
    """Greedy continuation of ``token_ids`` by ``n_new`` tokens (at most MAX_NEW, within the
    model's positions) with the KV cache: the prompt in one pass, then one position per step."""
    model = _check_decoder(model)
    n_new = positive_int(n_new, "n_new", maximum=MAX_NEW)
    ids = model.check_ids(token_ids)
    cache = Cache()
    _, hidden = model.forward(ids, cache)
    found: list[Generated] = []
    for _ in range(n_new):
        p = probabilities(model.unembed(hidden[-1:])[0])
        best = np.argsort(p)[::-1][:top]
        labels = [model.display([model.tokenizer.id_to_token(int(i)) or ""])[0] for i in best]
        found.append(
            Generated(
                token_id=int(best[0]),
                token=labels[0],
                top_ids=tuple(int(i) for i in best),
                top_tokens=tuple(labels),
                top_probabilities=tuple(float(p[i]) for i in best),
                cache_length=cache.length,
            )
        )
        if cache.length >= model.config.max_positions or len(found) == n_new:
            break
        _, hidden = model.forward(np.asarray([best[0]]), cache)
    return found


def prefix_matching_scores(attentions: np.ndarray, start: int, length: int) -> np.ndarray:
    """(L, H) mean attention of the second copy's tokens on the token after their first occurrence.

    ``attentions`` (L, H, T, T) of a sequence whose positions start … start + length − 1 are
    repeated at start + length … start + 2·length − 1: the score averages, over i = 0 … length − 2,
    the weight query start + length + i puts on key start + i + 1."""
    lazy = isinstance(attentions, AttentionMaps)  # a decoder's run: only the rows read
    a = attentions if lazy else np.asarray(attentions)
    queries = start + length + np.arange(length - 1)  # second copy, all but its last token
    keys = start + 1 + np.arange(length - 1)  # the token after each one's first occurrence
    if a.ndim != 4 or a.shape[-1] < start + 2 * length:
        raise InputError(
            "attn_shape",
            f"attentions has shape {a.shape}; it must be (L, H, T, T) with T ≥ "
            f"{start + 2 * length}.",
            shape=" × ".join(map(str, a.shape)),
            n=start + 2 * length,
        )
    if lazy:
        return a.pairs(queries, keys).mean(axis=-1)  # (L, H, length − 1) -> (L, H)
    return a[:, :, queries, keys].mean(axis=-1)  # (L, H, length − 1) -> (L, H)


def repeated_sequence(
    model: Decoder, length: int = REPEAT, seed: int = 0
) -> tuple[np.ndarray, int]:
    """A random sequence of ``length`` ordinary tokens (no special ones) twice, after the
    tokenizer's beginning-of-sequence token when it adds one; returns (ids, start)."""
    model = _check_decoder(model)
    bos = [i for i in model.tokenizer.encode("a").ids[:1] if i in _special_ids(model)]
    allowed = ordinary_ids(model)
    rng = np.random.default_rng(seed)
    half = rng.choice(allowed, size=length, replace=len(allowed) < length)
    ids = np.concatenate([bos, half, half]).astype(np.int64)
    if ids.size > model.config.max_positions:
        raise InputError(
            "too_many_tokens",
            f"{ids.size} tokens; this model reads at most {model.config.max_positions}.",
            n=ids.size,
            limit=model.config.max_positions,
        )
    return ids, len(bos)


def ordinary_ids(model: Decoder) -> np.ndarray:
    """The ids the tokenizer produces for text, sorted: its vocabulary without its added and
    special tokens and without ids beyond the embedding. Not ``range(config.vocab_size)``: an
    embedding is often padded past the vocabulary (to a multiple of 64 or 128), and those rows were
    never trained."""
    vocabulary = model.tokenizer.get_vocab(with_added_tokens=False).values()
    ids = np.fromiter(vocabulary, dtype=np.int64)
    ids = ids[(ids >= 0) & (ids < model.config.vocab_size)]
    return np.setdiff1d(ids, sorted(_special_ids(model)))


def _special_ids(model) -> set[int]:
    found = {model.tokenizer.token_to_id(t) for t in model.special}
    return {i for i in found if i is not None}


def fitted_length(model: Decoder, length: int = REPEAT) -> int:
    """``length``, or less for a model with fewer positions than a beginning token and two
    copies."""
    return max(2, min(length, (model.config.max_positions - 1) // 2))


def prefix_matching(model: Decoder, length: int = REPEAT, seed: int = 0) -> list[HeadWeight]:
    """Every head ranked by its prefix-matching score on a random sequence repeated twice (of
    :func:`fitted_length` tokens)."""
    length = fitted_length(model, length)
    ids, start = repeated_sequence(model, length, seed)
    attentions, _ = model.forward(ids)
    scores = prefix_matching_scores(attentions, start, length)  # (L, H)
    order = np.argsort(scores, axis=None)[::-1]
    L, H = scores.shape
    return [HeadWeight(int(k // H), int(k % H), float(scores.flat[k])) for k in order]
