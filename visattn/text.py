"""Sentences to tokens and to seeded embedding vectors, for the toy (untrained) models.

English and other Latin text splits into words and punctuation; Chinese, Japanese and Korean
characters become one token each (article 003 reads 小明喜欢吃苹果 character by character).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from .checks import positive_int
from .errors import InputError

MAX_SENTENCE_TOKENS = 64
_TOKEN = re.compile(
    r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]|[A-Za-z0-9]+(?:'[A-Za-z]+)?|[^\sA-Za-z0-9]"
)


def tokenize(text: str, max_tokens: int = MAX_SENTENCE_TOKENS) -> list[str]:
    """Word / CJK-character tokens of ``text``; an InputError when it is empty or longer than
    ``max_tokens``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            "text_empty",
            "The text is empty; type a sentence (for example: The animal didn't cross the street).",
        )
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise InputError("text_no_tokens", "The text has no tokens; type some words.")
    if len(tokens) > max_tokens:
        raise InputError(
            "too_many_tokens",
            f"The text has {len(tokens)} tokens; the limit here is {max_tokens}. Shorten it.",
            n=len(tokens),
            limit=max_tokens,
        )
    return tokens


def seeded_embedding(tokens: list[str], d_model: int, seed: int = 0) -> np.ndarray:
    """(T, d_model) unit-variance vectors, one per token, the same token always getting the same
    vector.

    Each token's vector is drawn from a generator seeded by a hash of (seed, token), so it does not
    depend on the rest of the sentence — "it" is the same vector in every sentence.
    """
    d_model = positive_int(d_model, "d_model", maximum=4096)
    rows = []
    for tok in tokens:
        h = int.from_bytes(
            hashlib.blake2b(f"{seed}\x00{tok.lower()}".encode(), digest_size=8).digest(), "little"
        )
        rows.append(np.random.default_rng(h).standard_normal(d_model))
    return np.array(rows).reshape(len(tokens), d_model)


# --- the texts the pretrained and reading pages read with a trained model (article 004's pair) ----
SENTENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
PARAGRAPH = (
    "The animal didn't cross the street because it was too tired. It had walked all day through "
    "the rain, and the road was wide and busy. A driver stopped her car and waited, but the animal "
    "only looked at the lights. Later a child brought it some water, and it drank slowly before it "
    "lay down under a tree. When the traffic finally stopped, the animal stood up, looked both "
    "ways, and crossed the street without any trouble."
)
PRESETS = {"tired": SENTENCE, "wide": WIDE, "chinese": "小明喜欢吃苹果。", "paragraph": PARAGRAPH}
