"""The decoder lesson: causal attention token by token, the KV cache, and an induction circuit that
copies.

One frozen dataclass per section of ``pages/decoder.py``, holding every number that section shows:
:class:`MaskSection` (the causal mask), :class:`KVCacheSection` (generation with a KV cache, step by
step), :class:`CostSection` (what the cache saves and what it costs, for GPT-2 small and GPT-3
175B), :class:`CircuitSection` (the designed induction circuit of :mod:`visattn.models.induction`,
intact and with a head knocked out). ``CONTROLS`` declares every URL parameter of the page.

The sequence is shared by all sections but the cost one: a repeated random sequence of nonsense
words (the circuit's test case) or the reader's own words. The cache sections run one attention head
with seeded random weights on seeded token vectors: caching is bookkeeping, and does not depend on
what the weights have learnt.

Steps and positions count from 1, as the lesson's prose, the page and its links do: step t
generates token t, reads t cached keys and leaves t rows in the cache. (:mod:`visattn.decode` counts
its steps from 0, as arrays do; :func:`kv_cache_section` is where the two meet.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import decode, decoder, training
from ..attention import self_attention
from ..controls import Control, table
from ..display import byte_size
from ..errors import InputError
from ..models import induction
from ..text import seeded_embedding

SOURCES = ("repeat", "text")  # a repeated random sequence, or the reader's own words
SHAPES = tuple(decode.SHAPES)  # the cost section's model-and-context choices
HARRY = "Harry Potter went to the shop and bought milk. Then Harry"
HARRY_ZH = "哈利·波特去商店买了牛奶。然后哈利"
EXAMPLES = {  # name → text for the example buttons
    "harry": HARRY,
    "owl": "The owl took the letter to Hogwarts . Ron saw the owl",
    "nonsense": "dax wug fep tiv dax wug fep",
}
EXAMPLES_ZH = {  # the same in Chinese (the words of induction.CHINESE)
    "harry": HARRY_ZH,
    "owl": "猫头鹰把信送到霍格沃茨。罗恩看见了猫头鹰",
    "nonsense": EXAMPLES["nonsense"],
}
TEXTS = {"en": HARRY, "zh": HARRY_ZH}  # the default text of each language
EXAMPLES_BY_LANG = {"en": EXAMPLES, "zh": EXAMPLES_ZH}
DEMO_D = 8  # the cache demo: token vectors of width 8 …
DEMO_DK = 4  # … and one head of width 4
DEMO_SEED = 0
DEFAULT_N = 10
DEFAULT_SEED = 0
MAX_SEED = 9999
DEFAULT_STEP = 5
DEFAULT_SHAPE = "gpt3_2k"
MEMORY_TOKENS = (1024, 2048, 8192)  # the columns of the cache-memory table
TRAIN_DEFAULT = training.DecoderConfig()  # 5. the trained decoder: the page's model and task
MAX_TRAIN_STEPS = 2000
ROLES = ("previous", "induction", "other")  # what a learned head is named for (its scores)
LAST_CHECKPOINT = -1  # the maps' checkpoint by default: the run's last, whatever its steps
SLIDER_CHECKPOINTS = 21  # checkpoints on the maps' slider: 21 × 8 maps of 48 × 48 float32 = 1.5 MB
TRAIN_CONTROLS = table(
    Control("dec_tlayers", TRAIN_DEFAULT.n_layers, lo=1, hi=3),
    Control("dec_tsteps", TRAIN_DEFAULT.steps, lo=100, hi=MAX_TRAIN_STEPS, step=100),
    Control("dec_tseed", 0, lo=0, hi=MAX_SEED),
    Control("dec_tmlp", TRAIN_DEFAULT.mlp),  # an MLP block after each attention layer
    # the checkpoint the heads' maps show (their own slider): a training step, or the last one
    # (:func:`shown_checkpoint`)
    Control("dec_tcheck", LAST_CHECKPOINT, lo=LAST_CHECKPOINT, hi=MAX_TRAIN_STEPS, in_figure=True),
    Control("dec_tprobe", "", max_chars=400),  # the reader's own token ids for the trained model
)

CONTROLS = table(
    # the sequence every section reads
    Control("dec_src", "repeat", options=SOURCES, labels="decoder.sources"),
    Control("dec_n", DEFAULT_N, lo=2, hi=induction.MAX_REPEAT),
    Control("dec_seed", DEFAULT_SEED, lo=0, hi=MAX_SEED),
    Control("dec_text", HARRY),
    # 2. the KV cache: the step shown, 1 … T, the animation's own slider (at most the sequence's
    # T: :func:`shown_step`)
    Control("dec_step", DEFAULT_STEP, lo=1, hi=induction.N_POSITIONS, in_figure=True),
    # 3. what the cache saves
    Control("dec_shape", DEFAULT_SHAPE, options=SHAPES, labels="decoder.shapes"),
    # 4. the induction circuit: knock out the previous-token head
    Control("dec_ablate", False),
    # 5. the trained decoder: its layers, steps and seed
    TRAIN_CONTROLS.values(),
    # 6. a decoder from a checkpoint
    decoder.CONTROLS.values(),
)
# Value sets that are not controls: the example buttons, the rows of the cache-memory table.
LABELS = {
    "decoder.examples": tuple(EXAMPLES),
    "decoder.models": tuple(decode.MODELS),
    "decoder.roles": ROLES,
    "decoder.roles_plural": ROLES,
}


def text_for(lang: str) -> str:
    """The default text of the page in ``lang`` (English for a language without its own)."""
    return TEXTS.get(lang, HARRY)


def examples_for(lang: str) -> dict[str, str]:
    """The example texts offered in ``lang``: {name: text}."""
    return EXAMPLES_BY_LANG.get(lang, EXAMPLES)


def controls_for(lang: str) -> Mapping[str, Control]:
    """``CONTROLS`` with ``lang``'s default text: a page in Chinese opens on “哈利·波特 … 哈利”, and
    a link leaves it out (a link that names dec_text keeps its text)."""
    return {**CONTROLS, "dec_text": replace(CONTROLS["dec_text"], default=text_for(lang))}


def vocabulary(lang: str) -> tuple[str, ...]:
    """The words the reader may type: in Chinese the Chinese spellings first (they share the ids of
    English words), then the nonsense and English words."""
    if lang == "zh":
        return tuple(induction.CHINESE) + induction.VOCAB
    return induction.VOCAB


def sequence(source: str, n: int, seed: int, text: str) -> tuple[str, ...]:
    """The tokens every section uses: ``repeated_sequence(n, seed)`` or the words of ``text`` (a
    tuple: what the page's caches are keyed by)."""
    if source == "repeat":
        return tuple(induction.repeated_sequence(n, seed))
    if source != "text":
        raise InputError(
            "decoder_source",
            f"source must be one of {SOURCES}, got {source!r}.",
            source=str(source)[:40],
        )
    tokens = induction.tokens_of(text)
    # the same checks as the model: 2 … 64 tokens, all in the vocabulary
    induction.token_ids(tokens)
    return tuple(tokens)


def second_copy_start(source: str, n: int) -> int | None:
    """The position (1-based) where a repeated sequence's second copy begins: n + 1; None for the
    reader's own words, which have no second copy to mark."""
    return n + 1 if source == "repeat" else None


def power_of_ten(x: float, digits: int = 3) -> str:
    """``x`` as LaTeX ``a \\times 10^{b}`` with ``digits`` significant digits (9.40 × 10¹³ for
    9.401e13)."""
    mantissa, exponent = f"{float(x):.{digits - 1}e}".split("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"


def demo_weights(seed: int = DEMO_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded W_q, W_k, W_v (DEMO_D, DEMO_DK), scaled so that the scores spread over a few units."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((DEMO_D, DEMO_DK)) / np.sqrt(DEMO_D) * 2.0 for _ in range(3))


# ── 1. the causal mask ────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class MaskSection:
    tokens: list[str]
    weights: np.ndarray  # (T, T) causal self-attention weights; exactly 0 above the diagonal
    future: np.ndarray  # (T, T) bool: key j comes after query i (masked)
    n_future: int  # how many weights the mask sets to 0: T(T − 1)/2
    largest_future: float  # the largest weight on a future key (0.0)


# Up to this many tokens the mask's heatmap prints every weight in its cell; a longer sequence (the
# default repeats 10 words: 20 tokens) shows the triangle, and each weight in the hover. Redrawing
# 400 numbers is most of what a new sequence length costs in the browser (benchmarks/README.md).
MASK_NUMBERS = 12


def mask_section(tokens: list[str]) -> MaskSection:
    X = seeded_embedding(tokens, DEMO_D, DEMO_SEED)  # (T, D)
    trace = self_attention(X, *demo_weights(), causal=True)
    future = ~trace.mask  # (T, T)
    return MaskSection(
        tokens=list(tokens),
        weights=trace.weights,
        future=future,
        n_future=int(future.sum()),
        largest_future=float(trace.weights[future].max()) if future.any() else 0.0,
    )


# ── 2. the KV cache, step by step ─────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CacheStep:
    """What the page prints beside the animation at one step."""

    step: int  # 1 … T: it generates token ``step``
    keys_read: int  # keys its query reads: step
    cached_rows: int  # rows of K (and of V) in the cache after it: step
    new_token: str  # the token it generates: tokens[step - 1]


@dataclass(frozen=True)
class KVCacheSection:
    tokens: list[str]
    steps: tuple[decode.DecodeStep, ...]  # (T,) steps[s - 1] is step s (decode counts from 0)
    by_step: tuple[CacheStep, ...]  # (T,) by_step[s - 1] is step s, as the page prints it
    K: np.ndarray  # (T, Dk) all keys, as the cache holds them at the end
    V: np.ndarray  # (T, Dv)
    weights: np.ndarray  # (T, T) step s's weights in row s − 1, 0 on keys not yet cached
    max_difference: float  # max |stacked steps − causal self_attention| over weights and outputs


def shown_step(T: int, step: int) -> int:
    """The step the animation of ``T`` tokens shows for the control's ``step``: 1 … T."""
    return min(max(int(step), 1), T)


def kv_cache_section(tokens: list[str]) -> KVCacheSection:
    """The KV cache at every step of generating ``tokens`` (steps count from 1, as the page
    does)."""
    X = seeded_embedding(tokens, DEMO_D, DEMO_SEED)  # (T, D)
    W_q, W_k, W_v = demo_weights()  # (D, Dk) each
    steps = decode.decode_steps(X, W_q, W_k, W_v)
    weights = decode.stack_weights(steps)  # (T, T)
    full = self_attention(X, W_q, W_k, W_v, causal=True)
    outputs = np.stack([s.output for s in steps])  # (T, Dv)
    difference = max(np.abs(weights - full.weights).max(), np.abs(outputs - full.output).max())
    by_step = tuple(
        # the one place a step becomes an index: step s is steps[s - 1]
        CacheStep(s, shown.keys_read, shown.K.shape[0], tokens[s - 1])
        for s, shown in enumerate(steps, start=1)
    )
    return KVCacheSection(
        tokens=list(tokens),
        steps=steps,
        by_step=by_step,
        K=steps[-1].K,
        V=steps[-1].V,
        weights=weights,
        max_difference=float(difference),
    )


# ── 3. what the cache saves ───────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CostSection:
    shape: str  # a key of visattn.decode.SHAPES
    d_model: int
    n_layers: int
    n_heads: int
    T: int
    cost: decode.DecodeCost
    keys_last: int  # keys the last step's query reads (per layer and head): T
    model: str  # a key of visattn.decode.MODELS
    context: int  # the model's own context length (GPT-2: 1,024; GPT-3: 2,048)
    beyond_context: bool  # T > context: what a longer-context model of the same shape would cache
    cache_gb: float  # the whole cache in GB (10⁹ bytes), fp16
    cache_text: str  # the same in decimal units: "9.66 GB"
    per_token_bytes: int  # cache bytes one token adds: 2 · L · D · 2
    per_token_text: str  # the same in decimal units: "4.72 MB"
    saving: float  # total work without the cache ÷ with it
    total_cached_tex: str  # LaTeX, e.g. 9.40 \times 10^{13}
    total_uncached_tex: str
    memory_models: tuple[str, ...]  # keys of visattn.decode.MODELS: the rows of the memory table
    memory_tokens: tuple[int, ...]  # its columns
    memory_gb: np.ndarray  # (models, tokens) KV cache of one sequence in GB, fp16
    memory_text: tuple[tuple[str, ...], ...]  # (models, tokens) the same in decimal units
    memory_contexts: tuple[int, ...]  # (models,) each model's own context
    memory_beyond: np.ndarray  # (models, tokens) bool: the length is beyond the model's context


def cost_section(shape: str) -> CostSection:
    c = decode.shape_cost(shape)
    model, T = decode.SHAPES[shape]
    name = next(key for key, m in decode.MODELS.items() if m is model)
    memory_bytes = [
        [decode.cache_bytes(n, m["d_model"], m["n_layers"]) for n in MEMORY_TOKENS]
        for m in decode.MODELS.values()
    ]
    contexts = tuple(m["context"] for m in decode.MODELS.values())
    per_token = c.cache_bytes // c.T
    return CostSection(
        shape=shape,
        d_model=c.d_model,
        n_layers=c.n_layers,
        n_heads=model["n_heads"],
        T=T,
        cost=c,
        keys_last=int(c.keys_read[-1]),
        model=name,
        context=model["context"],
        beyond_context=T > model["context"],
        cache_gb=c.cache_bytes / 1e9,
        cache_text=byte_size(c.cache_bytes),
        per_token_bytes=per_token,
        per_token_text=byte_size(per_token),
        saving=c.saving,
        total_cached_tex=power_of_ten(c.total_cached),
        total_uncached_tex=power_of_ten(c.total_uncached),
        memory_models=tuple(decode.MODELS),
        memory_tokens=MEMORY_TOKENS,
        memory_gb=np.array(memory_bytes) / 1e9,
        memory_text=tuple(tuple(byte_size(b) for b in row) for row in memory_bytes),
        memory_contexts=contexts,
        memory_beyond=np.array([[n > k for n in MEMORY_TOKENS] for k in contexts]),
    )


# ── 4. the induction circuit ──────────────────────────────────────────────────────────────────
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
    heads: np.ndarray  # (1, 2, T, T) layer 1's previous-token head and layer 2's induction head
    targets: np.ndarray  # (T,) where the induction head should look, −1 for first occurrences
    target_weight: np.ndarray  # (T,) the induction head's weight on its target (NaN where none)
    mean_target_weight: float  # over positions with a target (NaN if none)
    prev_weight: float  # the previous head's smallest weight on i − 1 (i ≥ 1)
    line_weights: np.ndarray  # (1, T, T) the induction head's rows of repeated tokens (others 0)
    # per position: (1-based position, token, next token or "", guess, right? or None, p(next) or
    # NaN); the last token has no next token
    rows: tuple[tuple, ...]
    loss_positions: tuple[int, ...]  # (T − 1,) 1 … T − 1: the positions that have a next token
    chance: float  # 1 / V
    chance_loss: float  # ln V: the loss of a uniform guess
    n_vocab: int  # V
    n_first: int  # positions with a next token whose token is new (the first copy)
    first_p: float  # mean p(next token) over them (NaN if none): ≈ 1 / V when nothing matches
    first_loss: float  # mean loss over them (NaN if none): ≈ ln V
    first_expected: float  # right guesses chance expects there: n_first / V
    last_guess: str  # the guess after the last token: what the model would generate next


def circuit_section(
    tokens: list[str],
    ablate: bool,
    runs: tuple[induction.InductionResult, induction.InductionResult] | None = None,
) -> CircuitSection:
    """The circuit on ``tokens``, showing the ablated run when ``ablate``; ``runs`` = (intact,
    knocked out) when already computed (each run of the 809-wide model is the costly part)."""
    if runs is None:
        runs = (induction.run(tokens), induction.run(tokens, ablate="previous"))
    intact, knocked = runs
    shown = knocked if ablate else intact
    first, second = induction.copy_accuracy(shown)
    targets = induction.induction_targets(shown)  # (T,)
    T = len(tokens)
    induction_head = shown.head("induction")  # (T, T)
    previous_head = shown.head("previous")  # (T, T)
    has_target = targets >= 0  # (T,)
    target_weight = np.where(
        has_target, induction_head[np.arange(T), np.maximum(targets, 0)], np.nan
    )  # (T,)
    p_next = shown.probs[np.arange(T - 1), shown.ids[1:]]  # (T − 1,)
    new = ~shown.seen_before  # (T − 1,) positions whose token has not occurred before
    rows = tuple(
        (
            i + 1,
            tokens[i],
            tokens[i + 1] if i + 1 < T else "",
            shown.predictions[i],
            bool(shown.correct[i]) if i + 1 < T else None,
            float(p_next[i]) if i + 1 < T else float("nan"),
        )
        for i in range(T)
    )
    return CircuitSection(
        result=shown,
        intact=intact,
        knocked_out=knocked,
        ablated=bool(ablate),
        acc_first=first,
        acc_second=second,
        intact_second=induction.copy_accuracy(intact)[1],
        knocked_second=induction.copy_accuracy(knocked)[1],
        heads=shown.weights.reshape(1, -1, T, T),  # (L, 1, T, T) -> (1, L, T, T): side by side
        targets=targets,
        target_weight=target_weight,
        mean_target_weight=float(np.nanmean(target_weight)) if has_target.any() else float("nan"),
        prev_weight=float(min(previous_head[i, i - 1] for i in range(1, T))),
        line_weights=np.where(has_target[:, None], induction_head, 0.0)[None],  # (1, T, T)
        rows=rows,
        loss_positions=tuple(range(1, T)),
        chance=1.0 / induction.N_VOCAB,
        chance_loss=float(np.log(induction.N_VOCAB)),
        n_vocab=induction.N_VOCAB,
        n_first=int(new.sum()),
        first_p=float(p_next[new].mean()) if new.any() else float("nan"),
        first_loss=float(shown.loss[new].mean()) if new.any() else float("nan"),
        first_expected=float(new.sum()) / induction.N_VOCAB,
        last_guess=shown.predictions[-1],
    )


def circuit_pair(tokens: list[str]) -> tuple[CircuitSection, CircuitSection]:
    """(intact circuit, ablated circuit) from one pair of runs: the ablation switch then only picks
    one."""
    runs = (induction.run(tokens), induction.run(tokens, ablate="previous"))
    return circuit_section(tokens, False, runs), circuit_section(tokens, True, runs)


# ── 5. learned, not designed: a decoder trained in NumPy (issue 23) ──────────────────────────
DESIGNED_N = 20  # the designed circuit's scores: a repeated sequence of 20 words …
DESIGNED_SEEDS = range(8)  # … on these seeds


def training_config(n_layers: int, steps: int, mlp: bool = False) -> training.DecoderConfig:
    """The page's model with the reader's layers, steps and MLP choice (bounds:
    :data:`TRAIN_CONTROLS`)."""
    for key, value in (("dec_tlayers", n_layers), ("dec_tsteps", steps)):
        control = TRAIN_CONTROLS[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or not control.lo <= value <= control.hi
        ):
            raise InputError(
                "training_bound",
                f"{key} must be a whole number in {control.lo:g} … {control.hi:g}, got {value!r}.",
                name=key,
                lo=f"{control.lo:g}",
                hi=f"{control.hi:g}",
                value=str(value)[:20],
            )
    return replace(TRAIN_DEFAULT, n_layers=int(n_layers), steps=int(steps), mlp=mlp is True)


@dataclass(frozen=True)
class DesignedScores:
    """The designed circuit's two heads measured with the learned heads' scores."""

    previous: float  # layer 1 "previous": previous-token score
    induction: float  # layer 2 "induction": prefix-matching score
    previous_of_induction: float  # the induction head's previous-token score (≈ 0)
    induction_of_previous: float  # the previous head's prefix-matching score (≈ 0)


def designed_scores() -> DesignedScores:
    """The scores of :mod:`visattn.models.induction`'s two heads over repeated sequences of
    DESIGNED_N nonsense words (k = DESIGNED_N), averaged over DESIGNED_SEEDS."""
    previous, prefix = [], []
    for seed in DESIGNED_SEEDS:
        result = induction.run(induction.repeated_sequence(DESIGNED_N, seed))
        weights = result.weights[None]  # (1, L, 1, T, T)
        p, s = training.head_scores(weights, np.array([DESIGNED_N]))
        previous.append(p[:, 0])
        prefix.append(s[:, 0])
    p, s = np.mean(previous, axis=0), np.mean(prefix, axis=0)  # (L,) each
    return DesignedScores(float(p[0]), float(s[1]), float(p[1]), float(s[0]))


@dataclass(frozen=True)
class TrainingSection:
    """Everything the training section shows of one finished (or stopped) run."""

    run: training.TrainingRun
    steps: np.ndarray  # (M,) the measured steps
    loss: np.ndarray  # (M,) the batch loss at each (NaN at step 0)
    repeated: np.ndarray  # (M,) accuracy on repeated tokens, probe batch
    first: np.ndarray  # (M,) … on first-seen tokens
    previous: np.ndarray  # (M, L·H) each head's previous-token score
    prefix: np.ndarray  # (M, L·H) each head's prefix-matching (induction) score
    positions: tuple[str, ...]  # (L·H,) L1H1 …
    roles: tuple[str, ...]  # (L·H,) a key of ROLES per head, from its final scores
    final_previous: np.ndarray  # (L, H)
    final_prefix: np.ndarray  # (L, H)
    phase_step: int | None  # where the best induction score passes halfway
    checkpoint_steps: tuple[int, ...]  # (C,)
    maps: np.ndarray  # (C, L, H, T, T) every head on the probe sequence at each checkpoint
    slider_steps: tuple[int, ...]  # the checkpoints the maps' slider offers (slider_checkpoints)
    probe_labels: tuple[str, ...]  # (T,) the probe's tokens as "t12"
    probe_span: int  # its k
    ablation: training.Ablation
    previous_at: tuple[str, ...]  # the heads named previous-token heads: L1H1 …
    induction_at: tuple[str, ...]  # … and induction heads
    previous_mean: float  # their mean previous-token score (NaN when none)
    induction_mean: float  # their mean prefix-matching score (NaN when none)
    chance: float  # 1 / V
    even_previous: (
        float  # the scores of a head spreading its weight evenly (training.uniform_scores)
    )
    even_prefix: float
    checkpoint_bytes: int  # the most the checkpoints may hold
    held_bytes: int  # what they hold
    final_repeated: float
    final_first: float
    stopped: bool
    # K-composition of layer 1's heads (rows) with layer 2's (columns), (H, H); None with 1 layer
    composition: np.ndarray | None
    composition_start: np.ndarray | None  # the same at step 0: random weights' level
    composed_pairs: tuple[tuple[int, int], ...]  # (row, column): a previous head → an induction one
    # per layer-2 induction head (column): the layer-1 head (row) its keys read most, and the score
    strongest_reads: tuple[tuple[int, int, float], ...]


def slider_checkpoints(checkpoints: Sequence, most: int = SLIDER_CHECKPOINTS) -> tuple[int, ...]:
    """The indices of the checkpoints the maps' slider offers: at most ``most``, evenly spaced, the
    first and the last kept."""
    picked = np.linspace(0, len(checkpoints) - 1, min(len(checkpoints), most)).round()
    return tuple(int(i) for i in np.unique(picked))


def shown_checkpoint(steps: Sequence[int], value: int) -> int:
    """The checkpoint the maps show for the control's ``value``, given the ``steps`` their slider
    offers: LAST_CHECKPOINT (the default) stays, the last whatever the run's steps; a step the
    slider offers is itself; any other step (a link's, or one of another run) the nearest one the
    slider offers, the later of two as near — past the run's end, its last."""
    if value == LAST_CHECKPOINT:
        return LAST_CHECKPOINT
    return min(reversed(steps), key=lambda step: abs(step - value))


def training_section(run: training.TrainingRun) -> TrainingSection:
    history = run.history
    names = training.head_names(run.config)
    previous, prefix = training.final_scores(run)
    roles = training.head_roles(previous, prefix)
    maps = np.stack([c.maps for c in run.checkpoints])  # (C, L, H, T, T)
    held = sum(c.maps.nbytes + sum(p.nbytes for p in c.params.values()) for c in run.checkpoints)
    ablation = training.ablations(run)
    even = training.uniform_scores(run.config)
    H = run.config.n_heads

    def at(heads) -> tuple[str, ...]:
        return tuple(names[layer * H + head] for layer, head in heads)

    def mean(scores, heads) -> float:
        return float(np.mean([scores[h] for h in heads])) if heads else float("nan")

    composition = start = None
    if run.config.n_layers >= 2:
        composition = training.k_composition(run.params, run.config)
        start = training.k_composition(run.checkpoints[0].params, run.config)
    pairs = tuple(
        (source, target)
        for layer, source in ablation.previous_heads
        for later, target in ablation.induction_heads
        if (layer, later) == (0, 1)
    )
    reads = ()
    if composition is not None:
        reads = tuple(
            (target, int(composition[:, target].argmax()), float(composition[:, target].max()))
            for layer, target in ablation.induction_heads
            if layer == 1
        )

    return TrainingSection(
        run=run,
        steps=history["step"].to_numpy(),
        loss=history["loss"].to_numpy(),
        repeated=history["repeat_accuracy"].to_numpy(),
        first=history["first_accuracy"].to_numpy(),
        previous=history[[f"prev_{n}" for n in names]].to_numpy(),
        prefix=history[[f"induction_{n}" for n in names]].to_numpy(),
        positions=tuple(names),
        roles=tuple(str(r) for r in roles.ravel()),
        final_previous=previous,
        final_prefix=prefix,
        phase_step=training.phase_change_step(history),
        checkpoint_steps=tuple(c.step for c in run.checkpoints),
        maps=maps,
        slider_steps=tuple(run.checkpoints[i].step for i in slider_checkpoints(run.checkpoints)),
        probe_labels=tuple(f"t{int(i)}" for i in run.probe),
        probe_span=run.probe_span,
        ablation=ablation,
        previous_at=at(ablation.previous_heads),
        induction_at=at(ablation.induction_heads),
        previous_mean=mean(previous, ablation.previous_heads),
        induction_mean=mean(prefix, ablation.induction_heads),
        chance=1 / run.config.vocab,
        even_previous=even[0],
        even_prefix=even[1],
        checkpoint_bytes=training.checkpoint_bytes(run.config),
        held_bytes=int(held),
        final_repeated=float(history["repeat_accuracy"].iloc[-1]),
        final_first=float(history["first_accuracy"].iloc[-1]),
        stopped=run.stopped,
        composition=composition,
        composition_start=start,
        composed_pairs=pairs,
        strongest_reads=reads,
    )


@dataclass(frozen=True)
class TrainingSoFar:
    """A running training's measurements so far, for the live figures."""

    steps: np.ndarray  # (M,)
    loss: np.ndarray  # (M,)
    repeated: np.ndarray  # (M,)
    first: np.ndarray  # (M,)
    previous: np.ndarray  # (M, L·H)
    prefix: np.ndarray  # (M, L·H)
    positions: tuple[str, ...]  # (L·H,) L1H1 …: nothing is named before the scores are in
    chance: float


def so_far(history: pd.DataFrame, config: training.DecoderConfig) -> TrainingSoFar:
    """What a running training has measured so far (its ``history``), as arrays."""
    names = training.head_names(config)
    return TrainingSoFar(
        steps=history["step"].to_numpy(),
        loss=history["loss"].to_numpy(),
        repeated=history["repeat_accuracy"].to_numpy(),
        first=history["first_accuracy"].to_numpy(),
        previous=history[[f"prev_{n}" for n in names]].to_numpy(),
        prefix=history[[f"induction_{n}" for n in names]].to_numpy(),
        positions=tuple(names),
        chance=1 / config.vocab,
    )


PROBE_EXAMPLE = "3 14 15 9 26 5 3 14 15 9 26"  # the placeholder: a span of five, then its copy


@dataclass(frozen=True)
class OwnSequence:
    """The trained model on the reader's own token ids."""

    tokens: tuple[int, ...]  # (T,)
    labels: tuple[str, ...]  # (T,) "t3" …
    guesses: tuple[int, ...]  # (T,) the argmax next token after each position
    rows: tuple[tuple, ...]  # (1-based position, token, next token or None, guess, right or None)
    induction_map: np.ndarray  # (T, T) the mean weights of the heads named induction heads
    accuracy_seen: float  # share right where the next token continues an earlier copy (NaN if none)
    n_seen: int


def own_sequence(section: TrainingSection, text: str) -> OwnSequence:
    """Parse ``text`` (whole numbers 0 … V − 1, separated by spaces or commas; 2 … T of them) and
    run the trained model on it."""
    config, params = section.run.config, section.run.params
    parts = str(text).replace(",", " ").split()
    if not 2 <= len(parts) <= config.seq_len or not all(p.isdigit() for p in parts):
        raise InputError(
            "training_probe",
            f"Give 2 to {config.seq_len} whole numbers from 0 to {config.vocab - 1}, separated by "
            "spaces.",
            most=config.seq_len,
            top=config.vocab - 1,
        )
    ids = np.array([int(p) for p in parts])
    if ids.max() >= config.vocab:
        raise InputError(
            "training_probe",
            f"Give 2 to {config.seq_len} whole numbers from 0 to {config.vocab - 1}, separated by "
            "spaces.",
            most=config.seq_len,
            top=config.vocab - 1,
        )
    with training.one_blas_thread():
        guesses = training.predictions(params, config, ids[None])[0]  # (T,)
        maps = training.attention_maps(params, config, ids[None])[0]  # (L, H, T, T)
    heads = section.ablation.induction_heads
    T = len(ids)
    induction_map = (
        np.mean([maps[layer, head] for layer, head in heads], axis=0) if heads else np.zeros((T, T))
    )
    # a next token the model could copy: the current token occurred before, followed by it
    seen = [
        any(ids[j] == ids[i] and ids[j + 1] == ids[i + 1] for j in range(i)) for i in range(T - 1)
    ]
    right = guesses[:-1] == ids[1:]  # (T − 1,)
    rows = tuple(
        (
            i + 1,
            int(ids[i]),
            int(ids[i + 1]) if i + 1 < T else None,
            int(guesses[i]),
            bool(right[i]) if i + 1 < T else None,
        )
        for i in range(T)
    )
    n_seen = int(np.sum(seen))
    return OwnSequence(
        tokens=tuple(int(i) for i in ids),
        labels=tuple(f"t{int(i)}" for i in ids),
        guesses=tuple(int(g) for g in guesses),
        rows=rows,
        induction_map=induction_map,
        accuracy_seen=float(right[np.array(seen)].mean()) if n_seen else float("nan"),
        n_seen=n_seen,
    )
