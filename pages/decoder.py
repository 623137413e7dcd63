"""Decoder: causal attention token by token, the KV cache, and a designed induction circuit that
copies. A decoder that learns that circuit is the next page's (pages/training.py).

The sections read the sequence chosen at the top, so the sequence's controls and the four sections
live in one section, :func:`sequence_and_sections`: moving the sequence reruns it and the sections
inside it, not the page around it. (The cost section reads no sequence; it is drawn there to keep
its place in the lesson, and the browser does not redraw what has not changed.) Each section's own
control (the model, the ablation) reruns that section alone. The KV cache's step is the figure's own
slider, moved in the browser (the animation's slider and play button, with the numbers under it
following).

A link made before the training had a page of its own sets training controls here: it opens the
training page with the same values (:func:`send_training_links`).

Figures: visattn.figures.decoder, their words in the page's language (:func:`words`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from ui import url_state, widgets
from ui.cache import decoder as cache_decoder
from ui.charts import download_csv, show, table
from ui.errors import compute
from ui.follow import Version, follow
from ui.frame import explain, font_size, page, section, when_open
from ui.i18n import figure_words, label, lang, t
from ui.registry import BY_ID
from ui.text import escape
from visattn.display import percent
from visattn.figures import decoder as decoder_figures
from visattn.lessons import decoder as lesson
from visattn.lessons import training as training_lesson
from visattn.models import induction

CONTROLS = lesson.CONTROLS
STEP = CONTROLS["dec_step"]  # the KV-cache animation's own slider and play button


def words() -> decoder_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(decoder_figures.Words)


def guess_columns() -> list[str]:
    """The columns of the designed circuit's position-by-position table of guesses."""
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
    with st.expander(t("decoder.own_words"), expanded=source == "text"):
        text = own_words(source)
    tokens = compute("dec_tokens", lesson.sequence, source, n, seed, text)
    if tokens is None:
        return
    causal_mask(tokens)
    generation(tokens)
    cache_cost()
    induction_circuit(tokens, lesson.second_copy_start(source, n))


def own_words(source: str) -> str:
    """The reader's own sequence, the example buttons and the vocabulary (folded while the source
    is the repeated random words, so that the first screen reaches the first figure)."""
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
    st.caption(t("decoder.vocab", n=induction.N_VOCAB))
    st.code(" ".join(lesson.vocabulary(lang())), language=None, wrap_lines=True)
    return text


def causal_mask(tokens: tuple[str, ...]) -> None:
    """1. The causal mask (no control of its own: it changes with the sequence only); the figure
    first, its explanation after it."""
    st.header(t("decoder.mask_h"))
    mask = cache_decoder.mask_section(tokens)
    numbers = len(tokens) <= lesson.MASK_NUMBERS  # beyond, each weight is in the hover only
    weights = decoder_figures.mask_map(
        mask.weights, tokens, mask.future, numbers=numbers, words=words(), font_size=font_size()
    )
    show(weights, "decoder_causal")
    st.caption(t("decoder.mask_caption", n=mask.n_future, largest=f"{mask.largest_future:g}"))
    if not numbers:
        st.caption(t("decoder.mask_hover", n=lesson.MASK_NUMBERS))
    explain(t("decoder.mask_text"))


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
    table(memory, index_title=t("decoder.memory_table"), width="content")
    contexts = t(
        "decoder.contexts",
        contexts=t("common.list_sep").join(
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
        change = 100 * (circuit.knocked_second - circuit.intact_second)
        drop = t("common.percentage_points", n=f"{change:+.0f}")  # a difference of percentages
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
    table(pd.DataFrame(rows, columns=columns), formats={columns[5]: "%.3f"}, hide_index=True)


def send_training_links() -> None:
    """A link of this page from before the training had its own page sets training controls (their
    keys kept their names): it opens the training page with every value it holds."""
    if any(key in training_lesson.CONTROLS for key in st.query_params):
        st.switch_page(BY_ID["training"].path, query_params=st.query_params.to_dict())


send_training_links()
with page("decoder"):
    url_state.follow_language("dec_text", lesson.text_for, lang())
    url_state.bind_controls(lesson.controls_for(lang()))  # the default text of the language
    st.title(t("decoder.title"))
    explain(t("decoder.intro"), fold="decoder.intro_h")  # the first screen reaches the first figure
    sequence_and_sections()
