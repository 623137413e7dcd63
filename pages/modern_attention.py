"""Attention as today's LLMs run it: grouped-query heads, the KV cache of real models,
sliding windows with attention sinks, and FlashAttention's online softmax.

Compute, controls and model configurations: visattn.lessons.modern_attention (on
visattn.modern_attention); figures: visattn.figures.modern_attention, built once per input in
ui.cache.modern_attention. Each section is a tab (the open tab is a control, in the URL); every one
is drawn, and opening another shows it (ui.frame.tabs). What a section's controls change is a
ui.frame.section, so they rerun it alone (the tables and notes they do not change are drawn around
it)."""

from functools import partial

import pandas as pd
import streamlit as st

from ui import url_state, widgets
from ui.cache import modern_attention as cache_modern_attention
from ui.charts import download_csv, show
from ui.errors import compute
from ui.formulas import formula
from ui.frame import controls_row, explain, fold, font_size, page, section, tabs
from ui.i18n import figure_words, label, t
from visattn.figures import modern_attention as modern_attention_figures
from visattn.lessons import modern_attention as lesson

CONTROLS = lesson.CONTROLS


def words() -> modern_attention_figures.Words:
    """The figures' words in the page's language (the kinds of attention's names among them)."""
    return figure_words(modern_attention_figures.Words)


def heading(title: str, intro: str) -> None:
    """A heading and its prose (hidden in presenter mode)."""
    st.subheader(title)
    explain(intro)


def count(n: int) -> str:
    """A whole number with thousands separators."""
    return f"{n:,}"


def latex_count(n: int) -> str:
    """A whole number with thousands separators inside TeX (4,095 → 4{,}095)."""
    return count(n).replace(",", "{,}")


def millions(n: int) -> str:
    """A parameter count in millions, three significant digits (16,777,216 → 16.8)."""
    return f"{n / 1e6:.3g}"


# ---------------------------------------------------------------- grouped-query attention


def section_gqa() -> None:
    """H query heads sharing G key/value heads: the grouping and the maps (rerun by their own
    controls), then the cost of every choice at a real model's shape (which none of them
    changes)."""
    explain(t("modern_attention.gqa_intro"), fold="common.about_section")
    gqa_example()
    gqa_costs()


@section
def gqa_example() -> None:
    """The example's controls, which query heads read which K/V head (the figure's slider moves G)
    and every head's map."""
    row = controls_row()
    T = widgets.slider(CONTROLS["mo_gt"], t("modern_attention.tokens"), where=row)
    H = widgets.slider(CONTROLS["mo_h"], t("modern_attention.query_heads"), where=row)
    causal = widgets.toggle(CONTROLS["mo_causal"], t("modern_attention.causal"), where=row)
    G = widgets.in_figure(CONTROLS["mo_g"], shown=partial(lesson.shown_kv_heads, H))
    show(cache_modern_attention.grouping(H, G, font_size(), words()), "gqa_grouping")
    show(cache_modern_attention.head_maps(T, H, G, causal, font_size(), words()), "gqa_maps")
    st.caption(t("modern_attention.g_slider_caption"))
    err = cache_modern_attention.gqa_steps(T, H, G, causal).repeat_difference
    st.caption(t("modern_attention.gqa_check", err=f"{err:.1e}", H=H))


def gqa_costs() -> None:
    """Parameters and cache of every choice of G at a real model's shape."""
    model = lesson.MODELS[lesson.COST_MODEL]
    name = label("modern_attention.models", lesson.COST_MODEL)
    heading(
        t("modern_attention.cost_heading"),
        t("modern_attention.cost_intro", model=name, G=model.n_kv_heads),
    )
    columns = [
        t("modern_attention.col_g"),
        t("modern_attention.col_kind"),
        t("modern_attention.col_kv_params"),
        t("modern_attention.col_attn_params"),
        t("modern_attention.col_per_token", L=model.n_layers),
        t("modern_attention.col_per_sequence", n=count(model.context), L=model.n_layers),
    ]
    rows = [
        (
            row.G,
            words().kind(row.kind),
            millions(row.kv_params),
            millions(row.attention_params),
            row.per_token,
            row.per_sequence,
        )
        for row in cache_modern_attention.cost_rows(lesson.COST_MODEL)
    ]
    st.table(pd.DataFrame(rows, columns=columns), hide_index=True)
    shape = t(
        "modern_attention.cost_caption",
        model=name,
        D=count(model.d_model),
        H=model.n_heads,
        Dh=model.head_dim,
        L=model.n_layers,
        G=model.n_kv_heads,
    )
    st.caption(shape + " " + t("modern_attention.units"))


# ---------------------------------------------------------------- the KV cache of real models


def section_cache() -> None:
    """One model's sum and the chart (rerun by their own controls), then every model's table and
    the sources (which neither control changes)."""
    explain(t("modern_attention.cache_intro"))
    cache_of_a_model()
    rows = cache_modern_attention.model_rows()
    st.caption(t("modern_attention.cache_chart_caption"))
    coinciding(rows)
    cache_table(rows)
    sources(rows)


@section
def cache_of_a_model() -> None:
    """The number format and the model written out: its sum, its metrics, the chart."""
    row = controls_row()
    dtype = widgets.radio(CONTROLS["mo_dtype"], t("modern_attention.dtype"), where=row)
    model = widgets.select(CONTROLS["mo_model"], t("modern_attention.model"), where=row)
    cache = cache_modern_attention.cache_section(model, dtype)
    chosen = cache.chosen
    formula(cache.formula, "modern_cache")
    explain(label("modern_attention.kind_notes", chosen.model.kind))
    first, second, third = st.columns(3)
    first.metric(
        t("modern_attention.per_token_metric"), lesson.byte_size(chosen.bytes_token[dtype])
    )
    context = count(chosen.model.context)
    if chosen.cached_tokens < chosen.model.context:  # a rolling cache holds the window only
        sequence = t(
            "modern_attention.per_sequence_window", n=context, w=count(chosen.cached_tokens)
        )
    else:
        sequence = t("modern_attention.per_sequence_metric", n=context)
    second.metric(sequence, lesson.byte_size(chosen.bytes_sequence[dtype]))
    third.metric(t("modern_attention.as_mha_metric"), lesson.byte_size(chosen.mha_bytes_token))
    names = tuple((row.id, label("modern_attention.models", row.id)) for row in cache.rows)
    dtype_name = label("modern_attention.dtypes", dtype)
    curves = cache_modern_attention.cache_curves(
        model, dtype, font_size(), words(), names, dtype_name
    )
    show(curves, "kv_cache_vs_context")


def coinciding(rows: tuple[lesson.ModelRow, ...]) -> None:
    """Which lines lie on one another on the chart, over which contexts (their dashes differ)."""
    per_token = {row.id: lesson.byte_size(row.bytes_token["bf16"]) for row in rows}
    pairs = []
    for pair in cache_modern_attention.coinciding_lines():
        a, b = pair.ids
        first, last = pair.contexts
        sizes = per_token[a], per_token[b]
        pairs.append(
            t(
                "modern_attention.coinciding_same"
                if sizes[0] == sizes[1]
                else "modern_attention.coinciding_pair",
                a=label("modern_attention.models", a),
                b=label("modern_attention.models", b),
                first=count(first),
                last=count(last),
                size_a=sizes[0],
                size_b=sizes[1],
            )
        )
    if pairs:
        percent = round((lesson.COINCIDE - 1) * 100)
        st.caption(
            t(
                "modern_attention.coinciding",
                percent=percent,
                pairs=t("common.list_sep").join(pairs),
            )
        )


def cache_table(rows: tuple[lesson.ModelRow, ...]) -> None:
    """Two tables, each narrow enough for a projector: what each model caches, then how many bytes
    per token and per sequence at its own context."""
    shapes, sizes = [], []
    for row in rows:
        model = row.model
        name = label("modern_attention.models", row.id)
        if model.kind == "mla":
            cached = t("modern_attention.cached_mla", c=model.latent, r=model.rope_key)
        else:
            cached = t(
                "modern_attention.cached_kv", G=model.n_kv_heads, H=model.n_heads, Dh=model.head_dim
            )
        shapes.append((name, words().kind(model.kind), model.n_layers, cached))
        context = count(model.context)
        if row.cached_tokens < model.context:
            context = t("modern_attention.context_window", n=context, w=count(row.cached_tokens))
        per_token = [lesson.byte_size(row.bytes_token[dtype]) for dtype in lesson.DTYPES]
        per_sequence = [lesson.byte_size(row.bytes_sequence[dtype]) for dtype in lesson.DTYPES]
        sizes.append((name, " / ".join(per_token), context, " / ".join(per_sequence)))
    shape_columns = [
        t("modern_attention.col_model"),
        t("modern_attention.col_kind"),
        t("modern_attention.col_layers"),
        t("modern_attention.col_cached"),
    ]
    size_columns = [
        t("modern_attention.col_model"),
        t("modern_attention.col_token"),
        t("modern_attention.col_context"),
        t("modern_attention.col_sequence"),
    ]
    st.table(pd.DataFrame(shapes, columns=shape_columns), hide_index=True)
    st.table(pd.DataFrame(sizes, columns=size_columns), hide_index=True)
    st.caption(t("modern_attention.units") + " " + t("modern_attention.cache_notes"))


def sources(rows: tuple[lesson.ModelRow, ...]) -> None:
    """Where each model's numbers come from."""
    with fold(t("modern_attention.sources")):
        for row in rows:
            paper, config = row.model.source
            name = label("modern_attention.models", row.id)
            st.markdown(t("modern_attention.source_line", model=name, paper=paper, config=config))


# ---------------------------------------------------------------- sliding windows


def section_window() -> None:
    """The banded causal mask, its receptive field over layers, and attention sinks (rerun by
    their own controls)."""
    explain(t("modern_attention.window_intro"))
    window_example()
    span = lesson.mistral_span()  # of the model, not of the example: drawn once
    st.markdown(
        t(
            "modern_attention.mistral_span",
            W=count(span.window),
            L=span.layers,
            W1=latex_count(span.window - 1),
            span=count(span.positions),
            back=count(span.back),
            paper=count(span.paper_back),
            paper_positions=count(span.paper_positions),
            W_plus=count(span.window + 1),
        )
    )


@section
def window_example() -> None:
    """The example's controls, its mask with the sinks (the figure's slider keeps them), its reach
    over layers (the figure's slider writes one layer out)."""
    row = controls_row()
    T = widgets.slider(CONTROLS["mo_wt"], t("modern_attention.tokens"), where=row)
    window = widgets.number(
        CONTROLS["mo_w"],
        t("modern_attention.window"),
        where=row,
        help=t("modern_attention.window_help"),
    )
    windowed = compute("mo_window", cache_modern_attention.window_section, T, window)
    if windowed is None:
        return
    sinks = widgets.in_figure(CONTROLS["mo_sinks"])
    mask = cache_modern_attention.window_mask(
        windowed.T, windowed.window, sinks, font_size(), words()
    )
    show(mask, "sliding_window_mask")
    st.markdown(t("modern_attention.window_numbers", keys=windowed.keys_per_query, T=windowed.T))
    layer = widgets.in_figure(CONTROLS["mo_wl"])
    show(
        cache_modern_attention.reach(windowed.T, windowed.window, layer, font_size(), words()),
        "sliding_window_reach",
    )
    st.caption(t("modern_attention.window_check", err=f"{windowed.reference_difference:.1e}"))
    positions = list(range(1, windowed.T + 1))
    download_csv(windowed.mask.astype(int), "sliding_window_mask", positions, positions)


# ---------------------------------------------------------------- FlashAttention


def section_flash() -> None:
    """The online softmax, block by block (rerun by its own controls); then memory traffic (rerun
    by its own)."""
    explain(t("modern_attention.flash_intro"))
    formula(lesson.FLASH_LATEX, "modern_flash")
    flash_example()
    flash_traffic()


@section
def flash_example() -> None:
    """The example's controls and the online softmax, every step in the figure's own slider."""
    row = controls_row()
    T = widgets.slider(CONTROLS["mo_ft"], t("modern_attention.flash_tokens"), where=row)
    block_q = widgets.number(CONTROLS["mo_fbq"], t("modern_attention.block_q"), where=row)
    block_k = widgets.number(CONTROLS["mo_fbk"], t("modern_attention.block_k"), where=row)
    causal = widgets.toggle(CONTROLS["mo_fcausal"], t("modern_attention.causal"), where=row)
    flash = compute("mo_flash", cache_modern_attention.flash_section, T, block_q, block_k, causal)
    if flash is not None:
        flash_steps(flash)


def flash_steps(flash: lesson.FlashSection) -> None:
    step = widgets.in_figure(CONTROLS["mo_fstep"], shown=partial(lesson.flash_step_shown, flash))
    figure = cache_modern_attention.flash_live(
        flash.T, flash.block_q, flash.block_k, flash.causal, step, font_size(), words()
    )
    show(figure, "flash_online_softmax")
    st.caption(t("modern_attention.flash_caption"))
    result = flash.result
    # one paragraph, not three metrics: each element costs every rerun of this section's controls
    tiles = t(
        "modern_attention.flash_result",
        nq=result.n_q_blocks,
        nk=result.n_k_blocks,
        err=f"{flash.difference:.1e}",
    )
    memory = t(
        "modern_attention.memory_text",
        T=flash.T,
        full=count(flash.full_numbers),
        Bq=flash.block_q,
        Bk=flash.block_k,
        d=lesson.FLASH_D,
        tile=count(flash.tile_numbers),
    )
    st.markdown(f"{tiles} {memory}")
    explain(
        t("modern_attention.not_fast")
    )  # of the figure above: drawn with it, not beside an error


@section
def flash_traffic() -> None:
    """Dao et al. 2022's memory-traffic arithmetic for a chosen N, d and on-chip memory: its own
    controls rerun only this."""
    heading(t("modern_attention.traffic_heading"), t("modern_attention.traffic_intro"))
    row = controls_row()
    N = widgets.select(CONTROLS["mo_fn"], t("modern_attention.traffic_n"), where=row)
    d = widgets.select(CONTROLS["mo_fd"], t("modern_attention.traffic_d"), where=row)
    sram = widgets.select(CONTROLS["mo_fm"], t("modern_attention.traffic_m"), where=row)
    traffic = compute("mo_traffic", cache_modern_attention.traffic_section, N, d, sram)
    if traffic is None:
        return
    counts = traffic.traffic
    formula(
        lesson.traffic_latex(traffic, t("modern_attention.alg0"), t("modern_attention.alg1")),
        "modern_traffic",
    )
    first, second, third = st.columns(3)
    first.metric(t("modern_attention.standard_metric"), traffic.standard_bytes)
    second.metric(t("modern_attention.flash_metric"), traffic.flash_bytes)
    third.metric(t("modern_attention.ratio_metric"), f"{traffic.ratio:.1f} ×")
    st.markdown(
        t(
            "modern_attention.traffic_text",
            M=count(traffic.sram_numbers),
            size=traffic.sram,
            bytes=count(traffic.sram_bytes),
            Bc=counts.block_k,
            Br=counts.block_q,
            Tc=counts.n_k_blocks,
            N=count(counts.N),
            scores=traffic.scores_bytes,
        )
    )
    if traffic.ratio < lesson.NEAR_RATIO:  # d² not many times smaller than M: the paper's need
        traffic_near(traffic)
    show(cache_modern_attention.traffic_curves(d, sram, font_size(), words()), "flash_hbm_traffic")
    st.caption(t("modern_attention.traffic_caption"))


def traffic_near(traffic: lesson.TrafficSection) -> None:
    """Why FlashAttention's count is above, at or barely below the standard one here."""
    counts = traffic.traffic
    paper = lesson.paper_m_over_d2()
    small, large = lesson.FLASH_DH[0], lesson.FLASH_DH[1]
    st.markdown(
        t(
            "modern_attention.traffic_worse"
            if traffic.ratio < 1
            else "modern_attention.traffic_near",
            ratio=f"{traffic.ratio:.2f}",
            limit=f"{traffic.limit:.2f}",
            times=f"{traffic.m_over_d2:.2f}",
            d2=count(counts.d**2),
            M=count(traffic.sram_numbers),
            d_small=small,
            d_large=large,
            paper_small=f"{paper[small]:.1f}",
            paper_large=f"{paper[large]:.2f}",
        )
    )


SECTIONS = {
    "gqa": section_gqa,
    "cache": section_cache,
    "window": section_window,
    "flash": section_flash,
}


def sections() -> None:
    """Each section in its tab's panel (ui.frame.tabs: opening a tab shows it, drawing nothing)."""
    for name, panel in tabs(CONTROLS["mo_sec"]).items():
        with panel:
            SECTIONS[name]()


with page("modern_attention"):
    url_state.bind_controls(CONTROLS)  # every section's controls
    st.title(t("modern_attention.title"))
    full, n_models = lesson.full_attention_models()
    explain(t("modern_attention.intro", full=full, n=n_models), fold="common.about_page")
    sections()
