"""Decoder: causal attention token by token, the KV cache, and a designed induction circuit that
copies (issue 13).

The sections read the sequence chosen at the top, so the sequence's controls and the four sections
live in one section, :func:`sequence_and_sections`: moving the sequence reruns it and the sections
inside it, not the page around it. (The cost section reads no sequence; it is drawn there to keep
its place in the lesson, and the browser does not redraw what has not changed.) Each section's own
control (the model, the ablation) reruns that section alone. Two controls are figures' own sliders,
moved in the browser: the KV cache's step (the animation's slider and play button, with the
numbers under it following) and the checkpoint the trained heads' maps show.

Figures: visattn.figures.decoder and visattn.figures.training, their words in the page's language
(:func:`words`, :func:`training_words`)."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from ui import url_state, widgets
from ui.cache import decoder as cache_decoder
from ui.cache import models as cache_models
from ui.cache import training as cache_training
from ui.charts import download_csv, show
from ui.errors import compute, show_error
from ui.follow import Version, follow
from ui.frame import explain, font_size, page, section, when_open
from ui.i18n import figure_words, label, lang, t
from ui.text import escape
from visattn.display import percent
from visattn.figures import decoder as decoder_figures
from visattn.figures import training as training_figures
from visattn.lessons import decoder as lesson
from visattn.models import induction

CONTROLS = lesson.CONTROLS
STEP = CONTROLS["dec_step"]  # the KV-cache animation's own slider and play button
CHECKPOINT = CONTROLS["dec_tcheck"]  # the trained heads' maps' own slider


def words() -> decoder_figures.Words:
    """Sections 1–4's figures' words in the page's language."""
    return figure_words(decoder_figures.Words)


def training_words() -> training_figures.Words:
    """Section 5's figures' words in the page's language."""
    return figure_words(training_figures.Words)


def guess_columns() -> list[str]:
    """The columns of a position-by-position table of guesses (the designed circuit's, a trained
    model's on the user's own sequence)."""
    return [
        t("common.position"),
        t("common.token"),
        t("decoder.col_next"),
        t("decoder.col_guess"),
        t("decoder.col_right"),
    ]


def right_mark(right: bool | None) -> str:
    """✓ or ✗ for a guess; nothing for the last token, which has no next token to guess."""
    if right is None:
        return ""
    return "✓" if right else "✗"


def use_example(text: str) -> None:
    """An example button: its words become the sequence."""
    st.session_state.update(dec_text=text, dec_src="text")


@section
def sequence_and_sections() -> None:
    """The sequence every section reads (random words repeated, or the reader's own), then the
    sections."""
    source_column, n_column, seed_column = st.columns([2, 2, 1])
    source = widgets.radio(CONTROLS["dec_src"], t("decoder.source"), where=source_column)
    n = widgets.slider(
        CONTROLS["dec_n"],
        t("decoder.n"),
        where=n_column,
        disabled=source != "repeat",
        help=t("decoder.n_help"),
    )
    seed = widgets.number(
        CONTROLS["dec_seed"], t("decoder.seed"), where=seed_column, disabled=source != "repeat"
    )
    text = widgets.text(
        CONTROLS["dec_text"],
        t("decoder.text"),
        help=t("decoder.text_help"),
        disabled=source != "text",
    )
    st.caption(t("decoder.examples_caption"))
    # One column more than there are examples, left empty, so that the buttons keep their width.
    examples = lesson.examples_for(lang())
    columns = st.columns(len(examples) + 1)
    for column, (name, sentence) in zip(columns, examples.items(), strict=False):
        column.button(
            label("decoder.examples", name),
            on_click=use_example,
            args=(sentence,),
            key=f"dec_ex_{name}",
            help=f"“{sentence}”",
            width="stretch",
        )
    with st.expander(t("decoder.vocab", n=induction.N_VOCAB)):
        st.code(" ".join(lesson.vocabulary(lang())), language=None, wrap_lines=True)
    tokens = compute("dec_tokens", lesson.sequence, source, n, seed, text)
    if tokens is None:
        return
    causal_mask(tokens)
    generation(tokens)
    cache_cost()
    induction_circuit(tokens, lesson.second_copy_start(source, n))


def causal_mask(tokens: tuple[str, ...]) -> None:
    """1. The causal mask (no control of its own: it changes with the sequence only)."""
    st.header(t("decoder.mask_h"))
    explain(t("decoder.mask_text"))
    mask = cache_decoder.mask_section(tokens)
    numbers = len(tokens) <= lesson.MASK_NUMBERS  # beyond, each weight is in the hover only
    weights = decoder_figures.mask_map(
        mask.weights, tokens, mask.future, numbers=numbers, words=words(), font_size=font_size()
    )
    show(weights, "decoder_causal")
    st.caption(t("decoder.mask_caption", n=mask.n_future, largest=f"{mask.largest_future:g}"))
    if not numbers:
        st.caption(t("decoder.mask_hover", n=lesson.MASK_NUMBERS))


@section
def generation(tokens: tuple[str, ...]) -> None:
    """2. Generation with a KV cache: the step (1 … T) is the animation's own slider and play
    button, which the browser moves; the numbers under it follow."""
    st.header(t("decoder.cache_h"))
    explain(t("decoder.cache_text"))
    step = widgets.in_figure(STEP, shown=partial(lesson.shown_step, len(tokens)))
    kv_cache = cache_decoder.kv_cache_section(tokens)
    animation = cache_decoder.kv_cache_animation(kv_cache, step, words(), font_size())
    show(animation, "decoder_kv_cache")
    step_metrics(kv_cache)
    st.caption(t("decoder.cache_equal", diff=f"{kv_cache.max_difference:.1e}"))


def step_metrics(kv_cache: lesson.KVCacheSection) -> None:
    """What each step reads, holds and generates, one version per step: the numbers move with the
    animation's slider and its play button, never a frame behind."""
    T = len(kv_cache.tokens)
    left, middle, right = st.columns(3)
    with left:
        keys_read = {s.step: f"{s.keys_read}" for s in kv_cache.by_step}
        step_metric(t("decoder.keys_read"), keys_read, "decoder_keys_read")
    with middle:
        rows = {s.step: f"{s.cached_rows} / {T}" for s in kv_cache.by_step}
        step_metric(t("decoder.cache_rows"), rows, "decoder_cache_rows")
    with right:
        new_token = {s.step: f"“{s.new_token}”" for s in kv_cache.by_step}
        step_metric(t("decoder.new_token"), new_token, "decoder_new_token")


def step_metric(title: str, values: dict[int, str], name: str) -> None:
    """One metric following the step: ``values[s]`` at step s."""
    follow(STEP, {step: Version(metric=(title, value)) for step, value in values.items()}, name)


@section
def cache_cost() -> None:
    """3. What the cache saves, and what it costs: the model radio reruns this section alone."""
    st.header(t("decoder.cost_h"))
    explain(t("decoder.cost_text"))
    shape = widgets.radio(CONTROLS["dec_shape"], t("decoder.shape"))
    cost = cache_decoder.cost_section(shape)
    work = cost.cost  # multiply-adds of every step, with and without the cache
    first, second, third, fourth = st.columns(4)
    first.metric(t("decoder.keys_last"), f"{cost.keys_last:,}")
    second.metric(t("decoder.saving"), f"{cost.saving:,.0f} ×")
    third.metric(t("decoder.cache_memory"), cost.cache_text, help=t("decoder.units_help"))
    fourth.metric(t("decoder.per_token"), cost.per_token_text, help=t("decoder.units_help"))
    if cost.beyond_context:
        model_name = label("decoder.models", cost.model)
        context = f"{cost.context:,}"
        st.info(t("decoder.beyond_context", model=model_name, T=f"{cost.T:,}", context=context))
    numbers = t(
        "decoder.cost_numbers",
        d=f"{cost.d_model:,}",
        L=cost.n_layers,
        T=f"{cost.T:,}",
        cached=cost.total_cached_tex,
        uncached=cost.total_uncached_tex,
    )
    st.markdown(numbers)
    models = [label("decoder.models", model) for model in cost.memory_models]
    lengths = [t("decoder.n_tokens", n=f"{n:,}") for n in cost.memory_tokens]
    cells = [
        [f"{text} †" if beyond else text for text, beyond in zip(row, marks, strict=True)]
        for row, marks in zip(cost.memory_text, cost.memory_beyond, strict=True)
    ]
    memory = pd.DataFrame(cells, index=models, columns=lengths)
    column_config = {"_index": st.column_config.TextColumn(t("decoder.memory_table"))}
    st.dataframe(memory, width="content", column_config=column_config)
    contexts = t(
        "decoder.contexts",
        contexts="; ".join(
            f"{name} {context:,}"
            for name, context in zip(models, cost.memory_contexts, strict=True)
        ),
    )
    st.caption(t("decoder.memory_caption") + " " + contexts)
    show(cache_decoder.cost_curves(work, words(), font_size()), "decoder_cost")


@section
def induction_circuit(tokens: tuple[str, ...], second_start: int | None) -> None:
    """4. The induction circuit: the ablation switch reruns this section alone (both runs are
    computed together, so it only picks one)."""
    st.header(t("decoder.circuit_h"))
    explain(t("decoder.circuit_text"))
    ablate = widgets.toggle(
        CONTROLS["dec_ablate"], t("decoder.ablate"), help=t("decoder.ablate_help")
    )
    circuits = compute("dec_circuit", cache_decoder.circuits, tokens)
    if circuits is None:
        return
    intact, knocked_out = circuits
    circuit = knocked_out if ablate else intact
    circuit_numbers(circuit, tokens)
    circuit_heads(circuit, tokens)
    induction_lines(circuit, tokens)
    losses(circuit, second_start)


def circuit_numbers(circuit: lesson.CircuitSection, tokens: tuple[str, ...]) -> None:
    """How often the circuit guesses right in each copy, and what it would generate next."""
    first_copy, second_copy, chance, next_guess = st.columns(4)
    first_copy.metric(
        t("decoder.acc_first"), percent(circuit.acc_first), help=t("decoder.acc_first_help")
    )
    drop = None
    if circuit.ablated:
        drop = f"{100 * (circuit.knocked_second - circuit.intact_second):+.0f} %"
    second_copy.metric(
        t("decoder.acc_second"),
        percent(circuit.acc_second),
        help=t("decoder.acc_second_help"),
        delta=drop,
    )
    chance.metric(
        t("decoder.chance"), f"{100 * circuit.chance:.2f} %", help=t("decoder.chance_help")
    )
    next_guess.metric(t("decoder.last_guess"), f"“{circuit.last_guess}”")
    last_token = f"“{escape(tokens[-1])}”"
    st.markdown(
        t("decoder.guess_sentence", token=last_token, guess=f"“{escape(circuit.last_guess)}”")
    )
    if circuit.n_first:
        st.markdown(
            t(
                "decoder.first_copy",
                n=circuit.n_first,
                p=f"{100 * circuit.first_p:.2f} %",
                loss=f"{circuit.first_loss:.2f}",
                V=circuit.n_vocab,
                chance=f"{100 * circuit.chance:.2f} %",
                ln_v=f"{circuit.chance_loss:.2f}",
                expected=f"{circuit.first_expected:.2f}",
            )
        )
    if circuit.ablated:
        st.caption(t("decoder.ablated_note"))
    else:
        prev = f"{circuit.prev_weight:.2f}"
        st.caption(t("decoder.measured", prev=prev, target=f"{circuit.mean_target_weight:.2f}"))


def circuit_heads(circuit: lesson.CircuitSection, tokens: tuple[str, ...]) -> None:
    """The two heads' weights side by side, and the induction head's as CSV."""
    show(cache_decoder.circuit_heads(circuit.heads, tokens, words(), font_size()), "decoder_heads")
    download_csv(circuit.result.head("induction"), "decoder_induction_weights", tokens, tokens)


def induction_lines(circuit: lesson.CircuitSection, tokens: tuple[str, ...]) -> None:
    """From each repeated token to the key it copies from: the induction head's weights again, as
    lines (drawn while its expander is open)."""
    as_lines = when_open(t("decoder.lines_h"), key="dec_lines_open")
    if as_lines is None:
        return
    with as_lines:
        explain(t("decoder.lines_text"))
        lines = cache_decoder.induction_lines(circuit.line_weights, tokens, words(), font_size())
        show(lines, "decoder_induction_lines")


def losses(circuit: lesson.CircuitSection, second_start: int | None) -> None:
    """The loss at each position, intact and knocked out, and the guesses position by position."""
    st.subheader(t("decoder.loss_h"))
    curves = decoder_figures.loss_curves(
        circuit.loss_positions,
        circuit.intact.loss,
        circuit.knocked_out.loss,
        second_start=second_start,
        chance=circuit.chance_loss,
        words=words(),
        font_size=font_size(),
    )
    show(curves, "decoder_loss")
    columns = [*guess_columns(), t("decoder.col_p")]
    rows = [
        (position, token, next_token, guess, right_mark(right), p_next)
        for position, token, next_token, guess, right, p_next in circuit.rows
    ]
    st.dataframe(
        pd.DataFrame(rows, columns=columns),
        hide_index=True,
        width="stretch",
        column_config={columns[5]: st.column_config.NumberColumn(format="%.3f")},
    )


# ── 5. Learned, not designed: a decoder trained in NumPy while the class watches (issue 23) ──────
def session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def head_label(role: str, position: str) -> str:
    """A learned head named by what its scores say it does, its place in brackets."""
    return t("decoder.t_head", role=label("decoder.roles", role), position=position)


@section
def training() -> None:
    """5. Train the page's decoder: the Train and Stop buttons, the live curves, then what the
    heads learned. The section's controls rerun it alone."""
    st.header(t("decoder.t_h"))
    explain(t("decoder.t_text"))
    layers_column, steps_column, seed_column, mlp_column = st.columns([2, 2, 1, 1])
    n_layers = widgets.slider(CONTROLS["dec_tlayers"], t("decoder.t_layers"), where=layers_column)
    steps = widgets.slider(CONTROLS["dec_tsteps"], t("decoder.t_steps"), where=steps_column)
    seed = widgets.number(CONTROLS["dec_tseed"], t("decoder.t_seed"), where=seed_column)
    mlp = widgets.toggle(
        CONTROLS["dec_tmlp"], t("decoder.t_mlp"), where=mlp_column, help=t("decoder.t_mlp_help")
    )
    config = compute("dec_tconfig", lesson.training_config, n_layers, steps, mlp)
    if config is None:
        return
    st.caption(
        t(
            "decoder.t_model",
            L=config.n_layers,
            H=config.n_heads,
            D=config.d_model,
            V=config.vocab,
            T=config.seq_len,
            lo=config.min_repeat,
            hi=config.max_repeat,
            batch=config.batch,
        )
        + (" " + t("decoder.t_model_mlp", D=config.d_model, F=4 * config.d_model) if mlp else "")
    )
    trained = train_and_watch(config, seed, "main")
    if trained is None:
        return
    training_results(trained)
    own_sequence(trained)
    layer_comparison(trained, config, seed)
    composition(trained, names_of(trained))
    learned_and_designed(trained)


def train_and_watch(config, seed: int, where: str) -> lesson.TrainingSection | None:
    """The Train / Stop buttons of one run (``where`` names them), its live progress while this
    session watches it, and its result (kept by the room, or this session's stopped run)."""
    session = session_id()
    watched = st.session_state.setdefault("_dec_watching", {})
    previous = watched.get(where)
    if previous is not None and previous != (config, seed):
        cache_training.leave(*previous, session)  # the reader changed the config: let it go
    watched[where] = (config, seed)
    result = cache_training.result(config, seed)
    job = cache_training.find(config, seed)
    train_column, stop_column = st.columns([1, 3])
    train = train_column.button(
        t("decoder.t_train") if where == "main" else t("decoder.t_train_other", L=config.n_layers),
        key=f"dec_train_{where}",
        type="primary",
        disabled=result is not None,
    )
    stop = stop_column.button(t("decoder.t_stop"), key=f"dec_stop_{where}")
    if stop:
        cache_training.leave(config, seed, session)
        cache_training.wait_for_stop(job)
    elif train and result is None:
        job = cache_training.start(config, seed, session)
    running = job is not None and not job.done and not stop
    if running and session in job.watchers:
        watch(job, session, config.steps)
        result = cache_training.result(config, seed)
    if job is not None and job.error is not None:
        show_error(job.error)
    if result is None and job is not None and job.done:
        result = job.section  # a stopped run: this session's to look at
    if result is None:
        if running:
            st.info(t("decoder.t_elsewhere"))
        return None
    if result.stopped:
        st.warning(t("decoder.t_stopped", step=result.run.steps_done, steps=config.steps))
    return result


def live_figures(job: cache_training.Job) -> tuple:
    """The loss and accuracy curves and the heads' scores, as measured so far."""
    so_far = lesson.so_far(job.history, job.config)
    curves = training_figures.training_curves(
        so_far.steps,
        so_far.loss,
        so_far.repeated,
        so_far.first,
        total_steps=job.config.steps,
        chance=so_far.chance,
        words=training_words(),
        font_size=font_size(),
    )
    scores = training_figures.score_curves(
        so_far.steps,
        so_far.previous,
        so_far.prefix,
        so_far.positions,
        total_steps=job.config.steps,
        words=training_words(),
        font_size=font_size(),
    )
    return curves, scores


def watch(job: cache_training.Job, session: str, steps: int) -> None:
    """Redraw the job's progress every POLL_SECONDS until it ends. Each poll renews this session's
    heartbeat; a rerun (Stop, a changed control) or the session leaving ends the loop at its next
    element, and the training, watched by nobody, stops within HEARTBEAT_SECONDS."""
    bar = st.empty()
    curves_slot = st.empty()
    scores_slot = st.empty()
    drawn = 0
    while not job.done:
        job.seen(session)
        history = job.history
        if job.ahead is not None:
            bar.progress(0.0, text=t("common.waiting", n=job.ahead))
        elif history is not None:
            step = int(history["step"].iloc[-1])
            bar.progress(step / steps, text=t("decoder.t_progress", step=step, steps=steps))
            if len(history) > drawn:
                drawn = len(history)
                curves, scores = live_figures(job)
                with curves_slot:
                    show(curves, "decoder_training", key=f"dec_tlive_curves_{drawn}")
                with scores_slot:
                    show(scores, "decoder_scores", key=f"dec_tlive_scores_{drawn}")
        time.sleep(cache_training.POLL_SECONDS)
    bar.empty()
    curves_slot.empty()
    scores_slot.empty()


def training_results(trained: lesson.TrainingSection) -> None:
    """The finished run: its numbers, its curves, its heads named, every head's map over the
    checkpoints, and the ablations."""
    config = trained.run.config
    phase = trained.phase_step
    first, second, chance, change = st.columns(4)
    second.metric(t("decoder.t_repeated"), percent(trained.final_repeated))
    first.metric(t("decoder.t_first"), percent(trained.final_first))
    chance.metric(t("decoder.chance"), f"{100 * trained.chance:.2f} %")
    change.metric(t("decoder.t_phase"), "—" if phase is None else f"{phase}")
    curves = training_figures.training_curves(
        trained.steps,
        trained.loss,
        trained.repeated,
        trained.first,
        total_steps=config.steps,
        chance=trained.chance,
        phase_step=phase,
        words=training_words(),
        font_size=font_size(),
    )
    show(curves, "decoder_training")
    names = names_of(trained)
    st.subheader(t("decoder.t_scores_h"))
    explain(
        t(
            "decoder.t_scores_text",
            induction=lesson.training.INDUCTION_THRESHOLD,
            previous=lesson.training.PREVIOUS_THRESHOLD,
            even_previous=f"{trained.even_previous:.2f}",
            even_prefix=f"{trained.even_prefix:.2f}",
        )
    )
    scores = training_figures.score_curves(
        trained.steps,
        trained.previous,
        trained.prefix,
        names,
        total_steps=config.steps,
        phase_step=phase,
        words=training_words(),
        font_size=font_size(),
    )
    show(scores, "decoder_scores")
    if phase is None:
        st.caption(t("decoder.t_no_phase", rise=lesson.training.PHASE_RISE))
    else:
        st.caption(t("decoder.t_phase_caption", step=phase))
    roles = pd.DataFrame(
        {
            t("decoder.t_col_head"): names,
            t("decoder.t_prev_score"): trained.final_previous.ravel(),
            t("decoder.t_induction_score"): trained.final_prefix.ravel(),
        }
    )
    st.dataframe(
        roles,
        hide_index=True,
        width="stretch",
        column_config={
            t("decoder.t_prev_score"): st.column_config.NumberColumn(format="%.2f"),
            t("decoder.t_induction_score"): st.column_config.NumberColumn(format="%.2f"),
        },
    )
    st.subheader(t("decoder.t_maps_h"))
    explain(t("decoder.t_maps_text", k=trained.probe_span))
    checkpoint = widgets.in_figure(
        CHECKPOINT, shown=partial(lesson.shown_checkpoint, trained.slider_steps)
    )
    maps = cache_training.checkpoint_maps(
        trained, (config, trained.run.seed), checkpoint, tuple(names), training_words(), font_size()
    )
    show(maps, "decoder_checkpoints")
    st.caption(
        t(
            "decoder.t_memory",
            limit=lesson.training.MAX_CHECKPOINTS,
            n=len(trained.checkpoint_steps),
            held=lesson.byte_size(trained.held_bytes),
            most=lesson.byte_size(trained.checkpoint_bytes),
        )
    )
    ablation(trained, names)


def ablation(trained: lesson.TrainingSection, names: list[str]) -> None:
    """Zero the learned induction heads, then the previous-token heads feeding them."""
    st.subheader(t("decoder.t_ablate_h"))
    explain(t("decoder.t_ablate_text"))
    found = trained.ablation
    intact, no_induction, no_previous = st.columns(3)
    intact.metric(t("decoder.t_intact"), percent(found.intact))
    for column, heads, value, role in (
        (no_induction, trained.induction_at, found.without_induction, "induction"),
        (no_previous, trained.previous_at, found.without_previous, "previous"),
    ):
        title = t("decoder.t_without", heads=label("decoder.roles_plural", role))
        if not heads:
            column.metric(title, "—", help=t("decoder.t_no_head"))
            continue
        drop = f"{100 * (value - found.intact):+.0f} %"
        column.metric(title, percent(value), delta=drop, help=", ".join(heads))
    chance = f"{100 * found.chance:.2f} %"
    st.caption(t("decoder.t_ablate_caption", chance=chance, n=lesson.training.ABLATION_BATCH))


def own_sequence(trained: lesson.TrainingSection) -> None:
    """The trained model on the reader's own token ids: its guesses, and where its induction heads
    look."""
    st.subheader(t("decoder.t_own_h"))
    text = widgets.text(
        CONTROLS["dec_tprobe"],
        t("decoder.t_own"),
        help=t("decoder.t_own_help", top=trained.run.config.vocab - 1),
        placeholder=lesson.PROBE_EXAMPLE,
    )
    own = compute("dec_tprobe", lesson.own_sequence, trained, text or lesson.PROBE_EXAMPLE)
    if own is None:
        return
    seen = "—" if own.n_seen == 0 else percent(own.accuracy_seen)
    st.metric(t("decoder.t_own_seen", n=own.n_seen), seen, help=t("decoder.t_own_seen_help"))
    heat = training_figures.own_induction_map(
        own.induction_map, own.labels, words=training_words(), font_size=font_size()
    )
    show(heat, "decoder_own_induction")
    columns = guess_columns()
    rows = [
        (
            position,
            f"t{token}",
            "" if after is None else f"t{after}",
            f"t{guess}",
            right_mark(right),
        )
        for position, token, after, guess, right in own.rows
    ]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, width="stretch")


def layers_of(trained: lesson.TrainingSection) -> int:
    return trained.run.config.n_layers


def layer_comparison(trained: lesson.TrainingSection, config, seed: int) -> None:
    """One layer against two, same seed and steps: only two layers can compose an induction head."""
    st.subheader(t("decoder.t_layers_h"))
    st.markdown(t("decoder.t_layers_reason"))  # the reason stays on a projector too
    explain(t("decoder.t_layers_text"))
    other_layers = 1 if config.n_layers >= 2 else 2
    other = train_and_watch(replace(config, n_layers=other_layers), seed, "other")
    if other is None:
        return
    pair = sorted((trained, other), key=layers_of)
    runs = {layers_of(trained): (trained.steps, trained.repeated) for trained in pair}
    figure = training_figures.layer_comparison(
        runs,
        total_steps=config.steps,
        chance=trained.chance,
        words=training_words(),
        font_size=font_size(),
    )
    show(figure, "decoder_layers")
    columns = st.columns(2)
    for column, s in zip(columns, pair, strict=True):
        column.metric(t("decoder.t_n_layers", L=layers_of(s)), percent(s.final_repeated))


def names_of(trained: lesson.TrainingSection) -> list[str]:
    """Every head named by its role, its place in brackets."""
    return [
        head_label(role, position)
        for role, position in zip(trained.roles, trained.positions, strict=True)
    ]


def composition(trained: lesson.TrainingSection, names: list[str]) -> None:
    """Layer 1's heads feeding layer 2's keys, measured on the learned weights (K-composition)."""
    if trained.composition is None:
        return  # one layer: nothing to compose
    st.subheader(t("decoder.t_comp_h"))
    explain(t("decoder.t_comp_text"))
    H = trained.run.config.n_heads
    figure = training_figures.composition_map(
        trained.composition,
        names[:H],
        names[H : 2 * H],
        marked=trained.composed_pairs,
        words=training_words(),
        font_size=font_size(),
    )
    show(figure, "decoder_composition")
    reads = [
        t(
            "decoder.t_comp_read",
            target=names[H + target],
            source=names[source],
            score=f"{score:.2f}",
        )
        for target, source, score in trained.strongest_reads
    ]
    row, column = divmod(int(trained.composition.argmax()), H)
    st.caption(
        " ".join(reads)
        + " "
        + t(
            "decoder.t_comp_caption",
            source=names[row],
            target=names[H + column],
            score=f"{trained.composition[row, column]:.2f}",
            lo=f"{trained.composition_start.min():.2f}",
            hi=f"{trained.composition_start.max():.2f}",
        )
    )


def learned_and_designed(trained: lesson.TrainingSection) -> None:
    """The designed circuit of trained 4 against the learned one: which head, which scores."""
    st.subheader(t("decoder.t_designed_h"))
    designed = cache_decoder.designed_scores()
    rows = [
        (
            label("decoder.roles", "previous"),
            "L1H1",
            designed.previous,
            ", ".join(trained.previous_at) or "—",
            trained.previous_mean,
        ),
        (
            label("decoder.roles", "induction"),
            "L2H1",
            designed.induction,
            ", ".join(trained.induction_at) or "—",
            trained.induction_mean,
        ),
    ]
    columns = [
        t("decoder.t_col_role"),
        t("decoder.t_col_designed_at"),
        t("decoder.t_col_designed"),
        t("decoder.t_col_learned_at"),
        t("decoder.t_col_learned"),
    ]
    number = st.column_config.NumberColumn(format="%.2f")
    st.dataframe(
        pd.DataFrame(rows, columns=columns),
        hide_index=True,
        width="stretch",
        column_config={columns[2]: number, columns[4]: number},
    )
    explain(t("decoder.t_designed_text", n=lesson.DESIGNED_N, seeds=len(lesson.DESIGNED_SEEDS)))


@section
def own_decoder() -> None:
    """6. A decoder read from a checkpoint generating (real next-token probabilities, the cache
    growing), and its heads ranked by prefix-matching score."""
    st.header(t("models.dec_header"))
    explain(t("models.dec_intro"))
    model, source = cache_models.choose_decoder(CONTROLS["dec_model"])
    if model is None:
        st.caption(t("models.dec_none"))  # a note, not a problem: the section above shows it all
        return
    prompt = widgets.text(CONTROLS["dec_prompt"], t("models.dec_prompt"))
    n_new = widgets.slider(CONTROLS["dec_new"], t("models.dec_new"))
    found = compute("dec_own", cache_models.generate, source.id, prompt, n_new)
    if found is not None:
        st.markdown(t("models.dec_text", text=escape(found.text)))
        columns = [
            t("models.dec_step"),
            t("models.dec_token"),
            t("models.dec_p"),
            t("models.dec_cache"),
            t("models.dec_top"),
        ]
        rows = [
            [
                k + 1,
                step.token,
                step.top_probabilities[0],
                step.cache_length,
                " · ".join(
                    f"{tok} {p:.3f}"
                    for tok, p in zip(step.top_tokens[1:], step.top_probabilities[1:], strict=True)
                ),
            ]
            for k, step in enumerate(found.steps)
        ]
        st.dataframe(
            pd.DataFrame(rows, columns=columns),
            hide_index=True,
            width="stretch",
            column_config={columns[2]: st.column_config.NumberColumn(format="%.3f")},
        )
    st.subheader(t("models.dec_heads_header"))
    heads = compute("dec_own_heads", cache_models.induction_heads, source.id)
    if heads is not None:
        explain(t("models.dec_heads_intro", n=heads.length, top=len(heads.top)))
        head_rows = [[f"L{h.layer + 1}·H{h.head + 1}", h.weight] for h in heads.top]
        head_columns = [t("models.dec_heads_head"), t("models.dec_heads_score")]
        st.dataframe(
            pd.DataFrame(head_rows, columns=head_columns),
            hide_index=True,
            column_config={head_columns[1]: st.column_config.NumberColumn(format="%.3f")},
        )


with page("decoder"):
    url_state.follow_language("dec_text", lesson.text_for, lang())
    url_state.bind_controls(lesson.controls_for(lang()))  # the default text of the language
    st.title(t("decoder.title"))
    explain(t("decoder.intro"))
    sequence_and_sections()
    training()
    own_decoder()
