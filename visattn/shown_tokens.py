"""A real model's tokens and attention shown so that they are easier to read: without
[CLS]/[SEP], word pieces merged into words, long texts pooled; and heads ranked by how strongly one
token attends to another.

Shapes: T tokens (word pieces), T' tokens left once shown, W words, L layers, H heads. Attention
arrays are ``(..., T, T)`` with query rows and key columns, so one call handles a single head (T,
T), a layer (H, T, T) or the whole model (L, H, T, T). Every :class:`ShownTokens` keeps the rows of
the result summing to 1."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .checks import positive_int
from .errors import InputError

SPECIAL_TOKENS = ("[CLS]", "[SEP]")
CONTINUATION = "##"  # BERT's WordPiece marks a piece that continues the previous one


@dataclass(frozen=True)
class ShownTokens:
    """Tokens and their attention as shown: each of the T' labels stands for a group of the
    original tokens."""

    tokens: list[str]  # T' labels
    attn: np.ndarray  # (..., T', T') rows sum to 1
    groups: list[tuple[int, ...]]  # T' tuples: the original token positions behind each label


class HeadWeight(NamedTuple):
    layer: int
    head: int
    weight: float  # attention of the source (query) token on the target (key) token in this head


def _check(tokens, attn) -> tuple[list[str], np.ndarray]:
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise InputError(
            "tokens_type", "tokens must be a list of strings (one per token), e.g. result.tokens."
        )
    tokens = list(tokens)
    attn = np.asarray(attn)
    if not np.issubdtype(attn.dtype, np.floating):
        attn = attn.astype(np.float64)
    T = len(tokens)
    if attn.ndim < 2 or attn.shape[-2:] != (T, T):
        raise InputError(
            "attn_shape",
            f"attn has shape {attn.shape} but there are {T} tokens; it must be (…, {T}, {T}), "
            "query rows by key columns.",
            shape=" × ".join(map(str, attn.shape)),
            n=T,
        )
    if T == 0:
        raise InputError("text_no_tokens", "tokens is empty; run the model on some text first.")
    return tokens, attn


def _renormalise(attn: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; a row with nothing left (sum 0) becomes uniform."""
    sums = attn.sum(axis=-1, keepdims=True)
    uniform = np.asarray(1.0 / attn.shape[-1], dtype=attn.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums > 0, attn / sums, uniform).astype(attn.dtype, copy=False)


def drop_special(
    tokens: Sequence[str], attn: ArrayLike, special: Collection[str] = SPECIAL_TOKENS
) -> ShownTokens:
    """Remove the special tokens (default [CLS] and [SEP]) from both axes and renormalise every row
    to sum 1.

    BERT heads park much of their weight on [CLS] and [SEP]; without them the rest of the pattern
    shows."""
    tokens, attn = _check(tokens, attn)
    keep = [i for i, t in enumerate(tokens) if t not in special]
    if not keep:
        raise InputError(
            "only_special",
            f"every token is one of {tuple(special)}; there is nothing left to show.",
        )
    idx = np.asarray(keep)
    sub = attn[..., idx, :][..., :, idx]  # (…, T, T) -> (…, T', T')
    return ShownTokens(
        tokens=[tokens[i] for i in keep], attn=_renormalise(sub), groups=[(i,) for i in keep]
    )


def merge_word_pieces(tokens: Sequence[str], attn: ArrayLike) -> ShownTokens:
    """Join WordPiece pieces into words: a piece starting with '##' belongs to the token before it.

    Key axis: a word receives the sum of the weights on its pieces. Query axis: a word's row is the
    mean of its pieces' rows. Rows that summed to 1 still do."""
    tokens, attn = _check(tokens, attn)
    groups: list[list[int]] = []
    words: list[str] = []
    for i, t in enumerate(tokens):
        if t.startswith(CONTINUATION) and groups:
            groups[-1].append(i)
            words[-1] += t[len(CONTINUATION) :]
        else:
            groups.append([i])
            words.append(t)
    starts = np.asarray([g[0] for g in groups])
    counts = np.asarray([len(g) for g in groups], dtype=attn.dtype)
    keys = np.add.reduceat(attn, starts, axis=-1)  # (…, T, T) -> (…, T, W) sum over a word's pieces
    merged = np.add.reduceat(
        keys, starts, axis=-2
    )  # (…, T, W) -> (…, W, W) sum over a word's query rows
    merged /= counts[:, None]  # … and the mean of them
    return ShownTokens(tokens=words, attn=merged, groups=[tuple(g) for g in groups])


def rank_heads(
    attentions: ArrayLike, source_index: int, target_index: int, top: int | None = None
) -> list[HeadWeight]:
    """Every (layer, head) ranked by the weight that token ``source_index`` (query) puts on
    ``target_index`` (key).

    ``attentions`` is (L, H, T, T). Returns HeadWeight(layer, head, weight) tuples, largest weight
    first (ties by layer, then head); ``top`` keeps only the first ``top``. A decoder's
    :class:`~visattn.models.causal.AttentionMaps` computes only the source's row."""
    from .models.causal import AttentionMaps  # here: visattn.models imports this module

    lazy = isinstance(attentions, AttentionMaps)
    a = attentions if lazy else np.asarray(attentions)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise InputError(
            "attn_shape",
            f"attentions has shape {a.shape}; it must be (layers, heads, T, T), e.g. "
            "result.attentions.",
            shape=" × ".join(map(str, a.shape)),
            n=a.shape[-1] if a.ndim else 0,
        )
    T = a.shape[-1]
    for name, i in (("source_index", source_index), ("target_index", target_index)):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < T:
            raise InputError(
                "token_position",
                f"{name}={i!r} is not a token position; use a whole number from 0 to {T - 1}.",
                name=name,
                value=str(i)[:20],
                n=T,
            )
    if lazy:
        w = a.pairs([source_index], [target_index])[..., 0]  # (L, H)
    else:
        w = a[:, :, source_index, target_index]  # (L, H)
    order = sorted(np.ndindex(w.shape), key=lambda lh: (-w[lh], lh))
    ranked = [HeadWeight(int(layer), int(head), float(w[layer, head])) for layer, head in order]
    return ranked if top is None else ranked[:top]


def token_index(tokens: Sequence[str], token: str, occurrence: int = 0) -> int:
    """Position of the ``occurrence``-th (from 0) ``token`` in ``tokens``, or a ValueError listing
    the tokens."""
    if (
        isinstance(occurrence, bool)
        or not isinstance(occurrence, (int, np.integer))
        or occurrence < 0
    ):
        raise InputError(
            "not_whole",
            f"occurrence={occurrence!r} must be a whole number ≥ 0 (0 = the first {token!r}).",
            name="occurrence",
            value=str(occurrence)[:20],
        )
    hits = [i for i, t in enumerate(tokens) if t == token]
    if occurrence >= len(hits):
        raise InputError(
            "token_missing",
            f"{token!r} occurs {len(hits)} time(s) in the tokens, so "
            f"occurrence={occurrence} does not exist; pick one of {list(tokens)}.",
            token=str(token)[:40],
            n=len(hits),
        )
    return hits[occurrence]


def pool(tokens: Sequence[str], attn: ArrayLike, max_tokens: int) -> ShownTokens:
    """At most ``max_tokens`` blocks of consecutive tokens, for matrices too large to draw cell by
    cell.

    Blocks of ceil(T / max_tokens) tokens, combined as word pieces are (key axis: sum, query axis:
    mean), so rows still sum to 1. Labels are "i–j" (positions of the first and last token of the
    block) or the token itself for a block of one; positions count from 1 there, as the app shows
    them. Returns the input unchanged when T ≤ max_tokens."""
    tokens, attn = _check(tokens, attn)
    max_tokens = positive_int(max_tokens, "max_tokens")
    T = len(tokens)
    if T <= max_tokens:
        return ShownTokens(tokens=tokens, attn=attn, groups=[(i,) for i in range(T)])
    size = -(-T // max_tokens)
    starts = np.arange(0, T, size)
    groups = [tuple(range(s, min(s + size, T))) for s in starts]
    counts = np.asarray([len(g) for g in groups], dtype=attn.dtype)
    keys = np.add.reduceat(attn, starts, axis=-1)  # (…, T, T) -> (…, T, B) sum over a block's keys
    pooled = np.add.reduceat(
        keys, starts, axis=-2
    )  # (…, T, B) -> (…, B, B) sum over a block's queries
    pooled /= counts[:, None]  # … and the mean of them
    labels = [
        tokens[g[0]] if len(g) == 1 else f"{g[0] + 1}–{g[-1] + 1}" for g in groups
    ]  # 1-based, as shown
    return ShownTokens(tokens=labels, attn=pooled, groups=groups)
