"""Decoder: causal attention token by token, the KV cache, and a designed induction circuit that
copies (issue 13).

The sections read the sequence chosen at the top, so the sequence's controls and the four sections
live in one section, :func:`sequence_and_sections`: moving the sequence reruns it and the sections
inside it, not the page around it. (The cost section reads no sequence; it is drawn there to keep
its place in the lesson, and the browser does not redraw what has not changed.) Each section's own
control (the step, the model, the ablation) reruns that section alone."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ui import cache_decoder, cache_models, url_state
from ui import controls as widgets
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, section
from ui.i18n import label, lang, t
from ui.text import escape
from visattn import figures
from visattn.figures import decoder as decoder_figures
from visattn.lessons import decoder as lesson
from visattn.models import induction

CONTROLS = lesson.CONTROLS


def percent(share: float) -> str:
    """A share as a whole percentage; a dash where no position of that kind exists (NaN)."""
    return "—" if math.isnan(share) else f"{100 * share:.0f} %"


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
    mask_view(tokens)
    kv_cache_view(tokens)
    cost_view()
    circuit_view(tokens, lesson.second_copy_start(source, n))


def mask_view(tokens: tuple[str, ...]) -> None:
    """1. The causal mask (no control of its own: it changes with the sequence only)."""
    st.header(t("decoder.mask_h"))
    explain(t("decoder.mask_text"))
    mask = cache_decoder.mask_section(tokens)
    weights = figures.heatmap(
        mask.weights,
        list(tokens),
        list(tokens),
        masked=mask.future,
        title=t("decoder.mask_title"),
        x_title=t("common.key"),
        y_title=t("common.query"),
        value_name=t("common.weight"),
        font_size=font_size(),
    )
    show(weights, "decoder_causal")
    st.caption(t("decoder.mask_caption", n=mask.n_future, largest=f"{mask.largest_future:g}"))


@section
def kv_cache_view(tokens: tuple[str, ...]) -> None:
    """2. Generation with a KV cache: the step slider (1 … T) reruns this section alone."""
    st.header(t("decoder.cache_h"))
    explain(t("decoder.cache_text"))
    widgets.clamp(CONTROLS["dec_step"], hi=len(tokens))
    step = widgets.slider(
        CONTROLS["dec_step"], t("decoder.step"), hi=len(tokens), help=t("decoder.step_help")
    )
    kv_cache = cache_decoder.kv_cache_section(tokens, step)
    animation = cache_decoder.kv_cache_animation(
        kv_cache.K,
        kv_cache.V,
        kv_cache.weights,
        tokens,
        kv_cache.step,
        font_size(),
        key_title=t("decoder.k_cache"),
        value_title=t("decoder.v_cache"),
        weight_title=t("decoder.new_weights"),
        token_name=t("common.token"),
        dim_name=t("common.dimension"),
        value_name=t("common.value"),
        weight_name=t("common.weight"),
        step_prefix=t("decoder.step_prefix"),
        play=t("decoder.play"),
        pause=t("decoder.pause"),
    )
    show(animation, "decoder_kv_cache")
    left, middle, right = st.columns(3)
    left.metric(t("decoder.keys_read"), kv_cache.keys_read)
    middle.metric(t("decoder.cache_rows"), f"{kv_cache.cached_rows} / {len(tokens)}")
    right.metric(t("decoder.new_token"), f"“{kv_cache.new_token}”")
    st.caption(t("decoder.cache_equal", diff=f"{kv_cache.max_difference:.1e}"))


@section
def cost_view() -> None:
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
    curves = cache_decoder.cost_curves(
        work.work_cached,
        work.work_uncached,
        font_size(),
        cached_name=t("decoder.with_cache"),
        uncached_name=t("decoder.without_cache"),
        x_title=t("decoder.cost_x"),
        y_title=t("decoder.cost_y"),
        units=t("decoder.axis_units"),
    )
    show(curves, "decoder_cost")


@section
def circuit_view(tokens: tuple[str, ...], second_start: int | None) -> None:
    """4. The induction circuit: the ablation switch reruns this section alone (both runs are
    computed together, so it only picks one)."""
    st.header(t("decoder.circuit_h"))
    explain(t("decoder.circuit_text"))
    ablate = widgets.toggle(
        CONTROLS["dec_ablate"], t("decoder.ablate"), help=t("decoder.ablate_help")
    )
    views = compute("dec_circuit", cache_decoder.circuits, tokens)
    if views is None:
        return
    intact, knocked_out = views
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
    heads = cache_decoder.head_grid(
        circuit.heads,
        tokens,
        font_size(),
        cell_titles=(t("decoder.head_previous"), t("decoder.head_induction")),
        value_name=t("common.weight"),
        query_name=t("common.query"),
        key_name=t("common.key"),
    )
    show(heads, "decoder_heads")
    download_csv(circuit.result.head("induction"), "decoder_induction_weights", tokens, tokens)


def induction_lines(circuit: lesson.CircuitSection, tokens: tuple[str, ...]) -> None:
    """From each repeated token to the key it copies from."""
    st.subheader(t("decoder.lines_h"))
    explain(t("decoder.lines_text"))
    lines = cache_decoder.induction_lines(
        circuit.line_weights,
        tokens,
        font_size(),
        head_names=(t("decoder.head_induction"),),
        value_name=t("common.weight"),
    )
    show(lines, "decoder_induction_lines")


def losses(circuit: lesson.CircuitSection, second_start: int | None) -> None:
    """The loss at each position, intact and knocked out, and the guesses position by position."""
    st.subheader(t("decoder.loss_h"))
    runs = {
        t("decoder.intact"): circuit.intact.loss,
        t("decoder.knocked_out"): circuit.knocked_out.loss,
    }
    curves = decoder_figures.loss_curves(
        circuit.loss_positions,
        runs,
        second_start=second_start,
        second_label=t("decoder.second_copy"),
        x_title=t("common.position"),
        y_title=t("decoder.loss_y"),
        chance=circuit.chance_loss,
        chance_label=t("decoder.uniform"),
        font_size=font_size(),
    )
    show(curves, "decoder_loss")
    columns = [
        t("common.position"),
        t("common.token"),
        t("decoder.col_next"),
        t("decoder.col_guess"),
        t("decoder.col_right"),
        t("decoder.col_p"),
    ]
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


@section
def own_decoder_view() -> None:
    """5. A decoder read from a checkpoint generating (real next-token probabilities, the cache
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
    own_decoder_view()
