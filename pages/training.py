"""A decoder learns: the induction circuit the decoder page builds by hand, found by gradient
descent while the class watches — the phase change, one layer against two, layer 1 feeding layer 2,
the ablations — and then a decoder read from a checkpoint.

The training section's controls rerun it alone. A training is a background job
(:mod:`ui.room.jobs`): this page starts it, stops it and draws the states it reports, nothing
threaded. The checkpoint the trained heads' maps show is the figure's own slider, moved in the
browser.

Figures: visattn.figures.training, their words in the page's language (:func:`words`)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st

from ui import url_state, widgets
from ui.cache import models as cache_models
from ui.cache import training as cache_training
from ui.charts import show, table
from ui.errors import compute, show_error
from ui.frame import explain, font_size, page, section
from ui.i18n import figure_words, label, lang, t
from ui.registry import BY_ID
from ui.room import jobs
from ui.text import escape
from visattn.display import byte_size, head_name, paper_name, percent
from visattn.figures import training as training_figures
from visattn.lessons import decoder as decoder_lesson
from visattn.lessons import training as lesson

CONTROLS = lesson.CONTROLS
CHECKPOINT = CONTROLS["dec_tcheck"]  # the trained heads' maps' own slider
DESIGNED = "_training_designed"  # session state: a redirected link's values of the decoder page


def words() -> training_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(training_figures.Words)


def guess_columns() -> list[str]:
    """The columns of a position-by-position table of a trained model's guesses."""
    return [
        t("common.position"),
        t("common.token"),
        t("training.col_next"),
        t("training.col_guess"),
        t("training.col_right"),
    ]


def designed_link() -> None:
    """A link of the decoder page from before this page existed, sent here for its training values
    (``pages/decoder.py``), may set the designed decoder's controls too: they are taken out of
    this page's URL (they are not this page's, and were not wrong) and linked back to, with the
    link's other settings (language, presenter mode, the lecture's)."""
    url = st.query_params.to_dict()
    if any(key in decoder_lesson.CONTROLS for key in url):
        st.session_state[DESIGNED] = {k: v for k, v in url.items() if k not in CONTROLS}
        for key in url:
            if key in decoder_lesson.CONTROLS:
                del st.query_params[key]
    back = st.session_state.get(DESIGNED)
    if back:
        st.page_link(
            BY_ID["decoder"].path,
            label=t("training.designed_link"),
            icon=":material/skip_previous:",
            query_params=back | {"lang": lang()},
        )


def right_mark(right: bool | None) -> str:
    """✓ or ✗ for a guess; nothing for the last token, which has no next token to guess."""
    if right is None:
        return ""
    return "✓" if right else "✗"


def head_label(role: str, position: str) -> str:
    """A learned head named by what its scores say it does, its place in brackets."""
    return t("training.head", role=label("training.roles", role), position=position)


@section
def training() -> None:
    """1. Train the page's decoder: the Train and Stop buttons, the live curves, then what the
    heads learned. The section's controls rerun it alone. The curves come first, the prose after
    them: the first screen shows the figure."""
    st.header(t("training.train_h"))
    layers_column, steps_column, seed_column, mlp_column = st.columns([2, 2, 1, 1])
    n_layers = widgets.slider(CONTROLS["dec_tlayers"], t("training.layers"), where=layers_column)
    steps = widgets.slider(CONTROLS["dec_tsteps"], t("training.steps"), where=steps_column)
    seed = widgets.number(CONTROLS["dec_tseed"], t("training.seed"), where=seed_column)
    mlp = widgets.toggle(
        CONTROLS["dec_tmlp"], t("training.mlp"), where=mlp_column, help=t("training.mlp_help")
    )
    config = compute("dec_tconfig", lesson.training_config, n_layers, steps, mlp)
    if config is None:
        return
    st.caption(
        t(
            "training.model",
            L=config.n_layers,
            H=config.n_heads,
            D=config.d_model,
            V=config.vocab,
            T=config.seq_len,
            lo=config.min_repeat,
            hi=config.max_repeat,
            batch=config.batch,
        )
        + (" " + t("training.model_mlp", D=config.d_model, F=4 * config.d_model) if mlp else "")
    )
    trained = train_and_watch(config, seed, "main")
    if trained is None:
        untrained_curves(config)
        explain(t("training.train_text"))
        return
    training_results(trained)
    own_sequence(trained)
    layer_comparison(trained, config, seed)
    composition(trained, names_of(trained))
    learned_and_designed(trained)


def loss_curves(so_far: lesson.TrainingSoFar, config):
    """The loss and accuracy curves of a training measured so far (none of it: before a step)."""
    return training_figures.training_curves(
        so_far.steps,
        so_far.loss,
        so_far.repeated,
        so_far.first,
        total_steps=config.steps,
        chance=so_far.chance,
        words=words(),
        font_size=font_size(),
    )


def untrained_curves(config) -> None:
    """The curves' axes before a step: what Train fills, live."""
    empty = lesson.untrained(config)
    show(loss_curves(empty, config), "decoder_training")
    st.caption(t("training.untrained"))


def train_and_watch(config, seed: int, where: str) -> lesson.TrainingSection | None:
    """The Train / Stop buttons of one run (``where`` names them), its live progress while this
    session watches it, and its result (kept by the room, or this session's stopped run)."""
    spec = cache_training.job(config, seed)
    jobs.watch_only(f"training_{where}", spec.key)  # a changed config lets the last one go
    result = jobs.kept(spec.key)
    train_column, stop_column = st.columns([1, 3])
    train = train_column.button(
        t("training.train") if where == "main" else t("training.train_other", L=config.n_layers),
        key=f"dec_train_{where}",
        type="primary",
        disabled=result is not None,
    )
    stop = stop_column.button(t("training.stop"), key=f"dec_stop_{where}")
    if stop:
        job = jobs.stop(spec.key)
    elif train and result is None:
        job = jobs.start(spec)
    else:
        job = jobs.state(spec.key)
    running = job is not None and job.running and not stop
    if running and job.watched_here:
        watch(spec.key, config)
        result = jobs.kept(spec.key)
        job = jobs.state(spec.key)
    if job is not None and job.error is not None:
        show_error(job.error)
    if result is None and job is not None and job.done:
        result = job.partial  # a stopped run: this session's to look at
    if result is None:
        if running:
            st.info(t("training.elsewhere"))
        return None
    if result.stopped:
        st.warning(t("training.stopped", step=result.run.steps_done, steps=config.steps))
    return result


def live_figures(history, config) -> tuple:
    """The loss and accuracy curves and the heads' scores, as measured so far."""
    so_far = lesson.so_far(history, config)
    curves = loss_curves(so_far, config)
    scores = training_figures.score_curves(
        so_far.steps,
        so_far.previous,
        so_far.prefix,
        so_far.positions,
        total_steps=config.steps,
        words=words(),
        font_size=font_size(),
    )
    return curves, scores


def watch(key, config) -> None:
    """Redraw the job's progress at each state :func:`ui.room.jobs.follow` gives, until it ends."""
    bar = st.empty()
    curves_slot = st.empty()
    scores_slot = st.empty()
    drawn = 0
    for job in jobs.follow(key):
        history = job.progress
        if job.ahead is not None:
            bar.progress(0.0, text=t("common.waiting", n=job.ahead))
        elif history is not None:
            step = int(history["step"].iloc[-1])
            progress = t("training.progress", step=step, steps=config.steps)
            bar.progress(step / config.steps, text=progress)
            if len(history) > drawn:
                drawn = len(history)
                curves, scores = live_figures(history, config)
                with curves_slot:
                    show(curves, "decoder_training", key=f"dec_tlive_curves_{drawn}")
                with scores_slot:
                    show(scores, "decoder_scores", key=f"dec_tlive_scores_{drawn}")
    bar.empty()
    curves_slot.empty()
    scores_slot.empty()


def training_results(trained: lesson.TrainingSection) -> None:
    """The finished run: its numbers, its curves, its heads named, every head's map over the
    checkpoints, and the ablations."""
    config = trained.run.config
    phase = trained.phase_step
    first, second, chance, change = st.columns(4)
    second.metric(t("training.repeated"), percent(trained.final_repeated))
    first.metric(t("training.first"), percent(trained.final_first))
    chance.metric(t("training.chance"), f"{100 * trained.chance:.2f} %")
    change.metric(t("training.phase"), "—" if phase is None else f"{phase}")
    curves = training_figures.training_curves(
        trained.steps,
        trained.loss,
        trained.repeated,
        trained.first,
        total_steps=config.steps,
        chance=trained.chance,
        phase_step=phase,
        words=words(),
        font_size=font_size(),
    )
    show(curves, "decoder_training")
    explain(t("training.train_text"))
    names = names_of(trained)
    st.subheader(t("training.scores_h"))
    explain(
        t(
            "training.scores_text",
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
        words=words(),
        font_size=font_size(),
    )
    show(scores, "decoder_scores")
    if phase is None:
        st.caption(t("training.no_phase", rise=lesson.training.PHASE_RISE))
    else:
        st.caption(t("training.phase_caption", step=phase))
    roles = pd.DataFrame(
        {
            t("training.col_head"): names,
            t("training.prev_score"): trained.final_previous.ravel(),
            t("training.induction_score"): trained.final_prefix.ravel(),
        }
    )
    scores = (t("training.prev_score"), t("training.induction_score"))
    table(roles, formats=dict.fromkeys(scores, "%.2f"), hide_index=True)
    st.subheader(t("training.maps_h"))
    explain(t("training.maps_text", k=trained.probe_span))
    checkpoint = widgets.in_figure(
        CHECKPOINT, shown=partial(lesson.shown_checkpoint, trained.slider_steps)
    )
    maps = cache_training.checkpoint_maps(
        trained, (config, trained.run.seed), checkpoint, tuple(names), words(), font_size()
    )
    show(maps, "decoder_checkpoints")
    st.caption(
        t(
            "training.memory",
            limit=lesson.training.MAX_CHECKPOINTS,
            n=len(trained.checkpoint_steps),
            held=byte_size(trained.held_bytes),
            most=byte_size(trained.checkpoint_bytes),
        )
    )
    ablation(trained, names)


def ablation(trained: lesson.TrainingSection, names: list[str]) -> None:
    """Zero the learned induction heads, then the previous-token heads feeding them."""
    st.subheader(t("training.ablate_h"))
    explain(t("training.ablate_text"))
    found = trained.ablation
    intact, no_induction, no_previous = st.columns(3)
    intact.metric(t("training.intact"), percent(found.intact))
    for column, heads, value, role in (
        (no_induction, trained.induction_at, found.without_induction, "induction"),
        (no_previous, trained.previous_at, found.without_previous, "previous"),
    ):
        title = t("training.without", heads=label("training.roles_plural", role))
        if not heads:
            column.metric(title, "—", help=t("training.no_head"))
            continue
        drop = t("common.percentage_points", n=f"{100 * (value - found.intact):+.0f}")
        column.metric(title, percent(value), delta=drop, help=", ".join(heads))
    chance = f"{100 * found.chance:.2f} %"
    st.caption(t("training.ablate_caption", chance=chance, n=lesson.training.ABLATION_BATCH))


def own_sequence(trained: lesson.TrainingSection) -> None:
    """The trained model on the reader's own token ids: its guesses, and where its induction heads
    look."""
    st.subheader(t("training.own_h"))
    text = widgets.text(
        CONTROLS["dec_tprobe"],
        t("training.own"),
        help=t("training.own_help", top=trained.run.config.vocab - 1),
        placeholder=lesson.PROBE_EXAMPLE,
    )
    own = compute("dec_tprobe", lesson.own_sequence, trained, text or lesson.PROBE_EXAMPLE)
    if own is None:
        return
    seen = "—" if own.n_seen == 0 else percent(own.accuracy_seen)
    st.metric(t("training.own_seen", n=own.n_seen), seen, help=t("training.own_seen_help"))
    heat = training_figures.own_induction_map(
        own.induction_map, own.labels, words=words(), font_size=font_size()
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
    table(pd.DataFrame(rows, columns=columns), hide_index=True)


def layers_of(trained: lesson.TrainingSection) -> int:
    return trained.run.config.n_layers


def layer_comparison(trained: lesson.TrainingSection, config, seed: int) -> None:
    """One layer against two, same seed and steps: only two layers can compose an induction head."""
    st.subheader(t("training.layers_h"))
    st.markdown(t("training.layers_reason"))  # the reason stays on a projector too
    explain(t("training.layers_text"))
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
        words=words(),
        font_size=font_size(),
    )
    show(figure, "decoder_layers")
    columns = st.columns(2)
    for column, s in zip(columns, pair, strict=True):
        column.metric(t("training.n_layers", L=layers_of(s)), percent(s.final_repeated))


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
    st.subheader(t("training.comp_h"))
    explain(t("training.comp_text"))
    H = trained.run.config.n_heads
    figure = training_figures.composition_map(
        trained.composition,
        names[:H],
        names[H : 2 * H],
        marked=trained.composed_pairs,
        words=words(),
        font_size=font_size(),
    )
    show(figure, "decoder_composition")
    reads = [
        t(
            "training.comp_read",
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
            "training.comp_caption",
            source=names[row],
            target=names[H + column],
            score=f"{trained.composition[row, column]:.2f}",
            lo=f"{trained.composition_start.min():.2f}",
            hi=f"{trained.composition_start.max():.2f}",
        )
    )


def learned_and_designed(trained: lesson.TrainingSection) -> None:
    """The designed circuit (the decoder page's) against the learned one: heads and scores."""
    st.subheader(t("training.designed_h"))
    designed = cache_training.designed_scores()
    rows = [
        (
            label("training.roles", "previous"),
            "L1H1",
            designed.previous,
            ", ".join(trained.previous_at) or "—",
            trained.previous_mean,
        ),
        (
            label("training.roles", "induction"),
            "L2H1",
            designed.induction,
            ", ".join(trained.induction_at) or "—",
            trained.induction_mean,
        ),
    ]
    columns = [
        t("training.col_role"),
        t("training.col_designed_at"),
        t("training.col_designed"),
        t("training.col_learned_at"),
        t("training.col_learned"),
    ]
    formats = {columns[2]: "%.2f", columns[4]: "%.2f"}
    table(pd.DataFrame(rows, columns=columns), formats=formats, hide_index=True)
    explain(t("training.designed_text", n=lesson.DESIGNED_N, seeds=len(lesson.DESIGNED_SEEDS)))


@section
def own_decoder() -> None:
    """2. A decoder read from a checkpoint generating (real next-token probabilities, the cache
    growing), and its heads ranked by prefix-matching score."""
    st.header(t("models.dec_header"))
    explain(t("models.dec_intro"))
    model, source = cache_models.choose_decoder(CONTROLS["dec_model"])
    if model is None:  # why: said by the picker
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
        table(pd.DataFrame(rows, columns=columns), formats={columns[2]: "%.3f"}, hide_index=True)
    st.subheader(t("models.dec_heads_header"))
    heads = compute("dec_own_heads", cache_models.induction_heads, source.id)
    if heads is not None:
        explain(t("models.dec_heads_intro", n=heads.length, top=len(heads.top)))
        head_rows = [
            [head_name(h.layer, h.head), h.weight, paper_name(h.layer, h.head)] for h in heads.top
        ]
        head_columns = [
            t("models.dec_heads_head"),
            t("models.dec_heads_score"),
            t("models.dec_heads_paper"),
        ]
        table(
            pd.DataFrame(head_rows, columns=head_columns),
            formats={head_columns[1]: "%.3f"},
            hide_index=True,
            width="content",
        )


with page("training"):
    url_state.bind_controls(CONTROLS)
    st.title(t("training.title"))
    designed_link()
    training()
    own_decoder()
