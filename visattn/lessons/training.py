"""The training lesson: a decoder learns the induction circuit the decoder page builds by hand.

One frozen dataclass per section of ``pages/training.py``: :class:`TrainingSection` (a run of
:func:`visattn.training.train`, finished or stopped: its curves, the phase change, each head's
scores and role, its checkpoints' maps, the ablations, layer 1 feeding layer 2),
:class:`TrainingSoFar` (a running training's measurements, for the live figures),
:class:`OwnSequence` (the trained model on the reader's own token ids) and :class:`DesignedScores`
(the designed circuit measured with the same scores), and for the last section, a decoder read from
a checkpoint (GPT-2, LLaMA, Mistral, Qwen2) generating with its KV cache, :class:`Generation` and
:class:`InductionHeads` (its heads found by measurement: what the designed circuit shows by
construction). ``CONTROLS`` declares every URL parameter of the page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import training
from ..controls import Control, table
from ..errors import InputError
from ..models import generation, induction, pieces
from ..models.causal import Decoder
from ..models.sources import MAX_ID
from ..shown_tokens import HeadWeight

MAX_SEED = 9999
TRAIN_DEFAULT = training.DecoderConfig()  # the page's model and task
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
# the last section: a decoder from a checkpoint
PROMPT = "The animal didn't cross the street because"
MAX_NEW = 32  # tokens the section generates at most
TOP_HEADS = 10  # heads listed by prefix-matching score
DECODER_CONTROLS = table(
    Control("dec_model", "", max_chars=MAX_ID),  # a decoder's id; "": the server's first
    Control("dec_prompt", PROMPT, max_chars=500),
    Control("dec_new", 8, lo=1, hi=MAX_NEW, step=1),
)
# Every URL parameter of the page. Their keys keep the ``dec_`` prefix of the decoder page they were
# born on, so that links made there keep their values (the decoder page sends such links here).
CONTROLS = table(TRAIN_CONTROLS.values(), DECODER_CONTROLS.values())
# Value sets that are not controls: what a learned head is named for.
LABELS = {"training.roles": ROLES, "training.roles_plural": ROLES}

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


def untrained(config: training.DecoderConfig) -> TrainingSoFar:
    """Nothing measured yet: the live figures' axes before the first step."""
    names = training.head_names(config)
    none = np.zeros(0)  # (0,)
    return TrainingSoFar(
        steps=none,
        loss=none,
        repeated=none,
        first=none,
        previous=np.zeros((0, len(names))),  # (0, L·H)
        prefix=np.zeros((0, len(names))),
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


# ── a decoder from a checkpoint ──────────────────────────────────────────────────────────────
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
