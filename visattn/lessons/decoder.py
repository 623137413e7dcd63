"""The decoder lesson: causal attention token by token, the KV cache, and an induction circuit that
copies.

One frozen dataclass per section of ``pages/decoder.py``, holding every number that section shows:
:class:`MaskSection` (the causal mask), :class:`CacheSection` (generation with a KV cache, step by
step), :class:`CostSection` (what the cache saves and what it costs, for GPT-2 small and GPT-3
175B), :class:`CircuitSection` (the designed induction circuit of :mod:`visattn.models.induction`,
intact and with a head knocked out).

The sequence is shared by all sections: a repeated random sequence of nonsense words (the circuit's
test case) or the reader's own words. The cache sections run one attention head with seeded random
weights on seeded token vectors: caching is bookkeeping, and does not depend on what the weights
have learnt."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import decode
from ..attention import self_attention
from ..errors import InputError
from ..models import induction
from ..text import seeded_embedding

SOURCES = ("repeat", "text")
HARRY = "Harry Potter went to the shop and bought milk. Then Harry"
EXAMPLES = {  # name → text for the example buttons
    "harry": HARRY,
    "owl": "The owl took the letter to Hogwarts . Ron saw the owl",
    "nonsense": "dax wug fep tiv dax wug fep",
}
DEMO_D, DEMO_DK, DEMO_SEED = (
    8,
    4,
    0,
)  # the cache demo: token vectors of width 8, one head of width 4
DEFAULT_N, DEFAULT_SEED = 10, 0
MEMORY_TOKENS = (1024, 2048, 8192)  # the columns of the cache-memory table


def sequence(source: str, n: int, seed: int, text: str) -> list[str]:
    """The tokens every section uses: ``repeated_sequence(n, seed)`` or the words of ``text``."""
    if source == "repeat":
        return induction.repeated_sequence(n, seed)
    if source != "text":
        raise InputError(
            "decoder_source",
            f"source must be one of {SOURCES}, got {source!r}.",
            source=str(source)[:40],
        )
    tokens = induction.tokens_of(text)
    induction.token_ids(
        tokens
    )  # the same checks as the model: 2 … 64 tokens, all in the vocabulary
    return tokens


def power_of_ten(x: float, digits: int = 3) -> str:
    """``x`` as LaTeX ``a \\times 10^{b}`` with ``digits`` significant digits (9.40 × 10¹³ for
    9.401e13)."""
    mantissa, exponent = f"{float(x):.{digits - 1}e}".split("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"


def demo_weights(seed: int = DEMO_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded W_q, W_k, W_v (DEMO_D, DEMO_DK), scaled so that the scores spread over a few units."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((DEMO_D, DEMO_DK)) / np.sqrt(DEMO_D) * 2.0 for _ in range(3))


# ── 1. the causal mask
# ──────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class MaskSection:
    tokens: list[str]
    weights: np.ndarray  # (T, T) causal self-attention weights; exactly 0 above the diagonal
    future: np.ndarray  # (T, T) bool: key j comes after query i (masked)
    n_future: int  # how many weights the mask sets to 0: T(T − 1)/2
    largest_future: float  # the largest weight on a future key (0.0)


def mask_section(tokens: list[str]) -> MaskSection:
    X = seeded_embedding(tokens, DEMO_D, DEMO_SEED)  # (T, D)
    tr = self_attention(X, *demo_weights(), causal=True)
    future = ~tr.mask
    return MaskSection(
        tokens=list(tokens),
        weights=tr.weights,
        future=future,
        n_future=int(future.sum()),
        largest_future=float(tr.weights[future].max()) if future.any() else 0.0,
    )


# ── 2. the KV cache, step by step
# ───────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CacheSection:
    tokens: list[str]
    steps: tuple[decode.DecodeStep, ...]  # (T,)
    step: int  # the step shown, 0-based
    K: np.ndarray  # (T, Dk) all keys, as the cache holds them at the end
    V: np.ndarray  # (T, Dv)
    weights: np.ndarray  # (T, T) step t's weights in row t, 0 on keys not yet cached
    keys_read: int  # at the step shown: t + 1
    cached_rows: int  # rows of K (and of V) in the cache after the step shown
    max_difference: float  # max |stacked steps − causal self_attention| over weights and outputs


def cache_section(tokens: list[str], step: int) -> CacheSection:
    """``step`` is 1-based as the page counts (clamped to 1 … T)."""
    X = seeded_embedding(tokens, DEMO_D, DEMO_SEED)
    W_q, W_k, W_v = demo_weights()
    steps = decode.decode_steps(X, W_q, W_k, W_v)
    t = min(max(int(step), 1), len(steps)) - 1
    W = decode.stack_weights(steps)
    full = self_attention(X, W_q, W_k, W_v, causal=True)
    out = np.stack([s.output for s in steps])
    diff = float(max(np.abs(W - full.weights).max(), np.abs(out - full.output).max()))
    return CacheSection(
        tokens=list(tokens),
        steps=steps,
        step=t,
        K=steps[-1].K,
        V=steps[-1].V,
        weights=W,
        keys_read=steps[t].keys_read,
        cached_rows=t + 1,
        max_difference=diff,
    )


# ── 3. what the cache saves
# ─────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CostSection:
    shape: str  # a key of visattn.decode.SHAPES
    d_model: int
    n_layers: int
    n_heads: int
    T: int
    cost: decode.DecodeCost
    keys_last: int  # keys the last step's query reads (per layer and head): T
    cache_gb: float  # the whole cache in GB (10⁹ bytes), fp16
    per_token_kb: float  # cache bytes one token adds, in KB (10³ bytes): 2 · L · D · 2
    saving: float  # total work without the cache ÷ with it
    total_cached_tex: str  # LaTeX, e.g. 9.40 \times 10^{13}
    total_uncached_tex: str
    memory_models: tuple[str, ...]  # keys of visattn.decode.MODELS: the rows of the memory table
    memory_tokens: tuple[int, ...]  # its columns
    memory_gb: np.ndarray  # (models, tokens) KV cache of one sequence in GB, fp16


def cost_section(shape: str) -> CostSection:
    c = decode.shape_cost(shape)
    model, T = decode.SHAPES[shape]
    return CostSection(
        shape=shape,
        d_model=c.d_model,
        n_layers=c.n_layers,
        n_heads=model["n_heads"],
        T=T,
        cost=c,
        keys_last=int(c.keys_read[-1]),
        cache_gb=c.cache_bytes / 1e9,
        per_token_kb=c.cache_bytes / c.T / 1e3,
        saving=c.saving,
        total_cached_tex=power_of_ten(c.total_cached),
        total_uncached_tex=power_of_ten(c.total_uncached),
        memory_models=tuple(decode.MODELS),
        memory_tokens=MEMORY_TOKENS,
        memory_gb=np.array(
            [
                [decode.cache_bytes(n, m["d_model"], m["n_layers"]) / 1e9 for n in MEMORY_TOKENS]
                for m in decode.MODELS.values()
            ]
        ),
    )


# ── 4. the induction circuit
# ────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CircuitSection:
    result: induction.InductionResult  # as shown (ablated when the reader asked)
    intact: induction.InductionResult
    knocked_out: induction.InductionResult  # "previous" ablated
    ablated: bool
    acc_first: float  # shown result: accuracy over first occurrences (the first copy)
    acc_second: float  # … over tokens seen before (the second copy)
    intact_second: float
    knocked_second: float
    targets: np.ndarray  # (T,) where the induction head should look, −1 for first occurrences
    target_weight: np.ndarray  # (T,) the induction head's weight on its target (NaN where none)
    mean_target_weight: float  # over positions with a target (NaN if none)
    prev_weight: float  # the previous head's smallest weight on i − 1 (i ≥ 1)
    line_weights: (
        np.ndarray
    )  # (1, T, T) the induction head's rows of repeated tokens only (others 0)
    rows: tuple[
        tuple, ...
    ]  # per position: (1-based position, token, next token or "", guess, right?, p(next) or NaN)
    chance: float  # 1 / V
    chance_loss: float  # ln V: the loss of a uniform guess
    last_guess: str  # the guess after the last token: what the model would generate next


def circuit_section(
    tokens: list[str],
    ablate: bool,
    runs: tuple[induction.InductionResult, induction.InductionResult] | None = None,
) -> CircuitSection:
    """The circuit on ``tokens``, showing the ablated run when ``ablate``; ``runs`` = (intact,
    knocked out) when already computed (each run of the 809-wide model is the costly part)."""
    intact, knocked = (
        runs
        if runs is not None
        else (induction.run(tokens), induction.run(tokens, ablate="previous"))
    )
    r = knocked if ablate else intact
    first, second = induction.copy_accuracy(r)
    targets = induction.induction_targets(r)
    T = len(tokens)
    ind = r.head("induction")
    has = targets >= 0
    tw = np.where(has, ind[np.arange(T), np.maximum(targets, 0)], np.nan)
    lines = np.where(has[:, None], ind, 0.0)[None]
    p_next = r.probs[np.arange(T - 1), r.ids[1:]]
    rows = tuple(
        (
            i + 1,
            tokens[i],
            tokens[i + 1] if i + 1 < T else "",
            r.predictions[i],
            bool(r.correct[i]) if i + 1 < T else None,
            float(p_next[i]) if i + 1 < T else float("nan"),
        )
        for i in range(T)
    )
    prev = r.head("previous")
    return CircuitSection(
        result=r,
        intact=intact,
        knocked_out=knocked,
        ablated=bool(ablate),
        acc_first=first,
        acc_second=second,
        intact_second=induction.copy_accuracy(intact)[1],
        knocked_second=induction.copy_accuracy(knocked)[1],
        targets=targets,
        target_weight=tw,
        mean_target_weight=float(np.nanmean(tw)) if has.any() else float("nan"),
        prev_weight=float(min(prev[i, i - 1] for i in range(1, T))),
        line_weights=lines,
        rows=rows,
        chance=1.0 / induction.N_VOCAB,
        chance_loss=float(np.log(induction.N_VOCAB)),
        last_guess=r.predictions[-1],
    )


def circuit_pair(tokens: list[str]) -> tuple[CircuitSection, CircuitSection]:
    """(intact view, ablated view) from one pair of runs: the ablation switch then only picks
    one."""
    runs = (induction.run(tokens), induction.run(tokens, ablate="previous"))
    return circuit_section(tokens, False, runs), circuit_section(tokens, True, runs)
