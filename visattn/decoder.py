"""The decoder page's last section: a decoder read from a checkpoint (GPT-2, LLaMA, Mistral, Qwen2)
generating with its KV cache, and its induction heads found by measurement.

What the designed circuit above shows by construction, a trained model shows by measurement: each
step's next-token probabilities (the real softmax over the whole vocabulary), the cache holding one
more position per step, and every head ranked by its prefix-matching score on a random sequence
repeated twice (:mod:`visattn.models.generation`). ``CONTROLS`` declares the section's URL
parameters; the decoder lesson's table includes them."""

from __future__ import annotations

from dataclasses import dataclass

from .controls import Control, table
from .models import generation, pieces
from .models.causal import Decoder
from .models.sources import MAX_ID
from .shown_tokens import HeadWeight

PROMPT = "The animal didn't cross the street because"
MAX_NEW = 32  # tokens the section generates at most
TOP_HEADS = 10  # heads listed by prefix-matching score
CONTROLS = table(
    Control("dec_model", "", max_chars=MAX_ID),  # a decoder's id; "": the server's first
    Control("dec_prompt", PROMPT, max_chars=500),
    Control("dec_new", 8, lo=1, hi=MAX_NEW, step=1),
)


@dataclass(frozen=True)
class Generation:
    prompt_tokens: tuple[str, ...]
    steps: tuple[generation.Step, ...]
    text: str  # the prompt and its continuation, decoded


def generate(model: Decoder, prompt: str, n_new: int) -> Generation:
    """Greedy continuation of ``prompt`` by ``n_new`` tokens (InputError for an empty prompt)."""
    tokens, ids, _, _ = model.tokenize(prompt)
    found = generation.steps(model, ids, n_new)
    every = [model.tokenizer.id_to_token(i) or "" for i in [*ids, *(s.token_id for s in found)]]
    text = pieces.text_of(every, model.byte_level, model.special)  # no "�" for a cut character
    return Generation(tuple(tokens), tuple(found), text)


@dataclass(frozen=True)
class InductionHeads:
    length: int  # tokens of the random sequence (repeated twice)
    top: tuple[HeadWeight, ...]  # the heads with the highest prefix-matching score, highest first


def induction_heads(model: Decoder, top: int = TOP_HEADS) -> InductionHeads:
    """The ``top`` heads with the highest prefix-matching score."""
    length = generation.fitted_length(model)
    return InductionHeads(length, tuple(generation.prefix_matching(model, length)[:top]))
