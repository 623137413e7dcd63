"""Single head (articles 001, 004): ① the worked example, ② every matrix editable, ③ your own
sentence, ④ why √d_k.

The part and its options are one section: each of them changes only what that section draws, so
moving one reruns it alone; one query's row is a section of its own inside it. τ is the weights'
own slider and d_k the histogram's: the browser moves them, and what they change follows
(ui.follow). The lesson, its controls and its numbers: visattn.lessons.single_head; the figures,
cached: ui.cache.single_head."""

import streamlit as st

from ui import url_state, widgets
from ui.cache import pretrained as cache_pretrained
from ui.cache import single_head as cache_single_head
from ui.charts import show
from ui.errors import compute
from ui.follow import Version, chart_csv, follow
from ui.formulas import formula
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import figure_words, label, lang, t
from ui.text import escape
from ui.widgets import bind_token, matrix_editor, set_matrix, token_select
from visattn.figures import single_head as single_head_figures
from visattn.lessons import single_head as lesson


def grid(named_figures: list, per_row: int, prefix: str = "", widths=None) -> None:
    """Figures ``per_row`` to a row (2 on a projector), wrapping, so that every figure is drawn;
    ``widths``: the columns' relative widths, when a row holds that many."""
    per_row = min(per_row, 2) if presenter() else per_row
    spec = widths if widths and len(widths) == per_row else per_row
    for start in range(0, len(named_figures), per_row):
        row = named_figures[start : start + per_row]
        # the last row may hold fewer figures than there are columns
        for column, (name, figure) in zip(st.columns(spec), row, strict=False):
            with column:
                show(figure, f"{prefix}{name}")


def words() -> single_head_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(single_head_figures.Words)


def pipeline(tr, tokens: list, prefix: str, scale: bool, temperature: float, inputs=None) -> None:
    """One head step by step, (X, W) → Q, K, V → QKᵀ → softmax → Z, then one query's row."""
    steps = cache_single_head.pipeline(
        tr, tuple(tokens), words(), scale, inputs, temperature, font_size()
    )
    ranges = lesson.colour_ranges(tr, inputs)
    for step, per_row, named_figures in steps:
        st.markdown(label("single_head.steps", step))
        grid(named_figures, per_row, f"{prefix}_", widths=[1.15, 1, 1, 1])
        st.caption(colour_note(step, ranges[step]))
        if step == "scores" and tr.mask is not None:
            st.caption(t("single_head.mask_caption"))
        if step == "scores":  # τ is the weights' own slider: said under them
            st.caption(t("single_head.temp_note"))
    weights_column, output_column = st.columns(2)
    with weights_column:  # what the figures show now, at the τ of their slider
        chart_csv(f"chart_{prefix}_weights", tokens, tokens, f"{prefix}_weights")
        st.caption(t("single_head.csv_weights"))
    with output_column:
        chart_csv(f"chart_{prefix}_z", tokens, lesson.dims(tr.V.shape[1]), f"{prefix}_output")
        st.caption(t("single_head.csv_output"))
    st.subheader(t("single_head.follow_title"))
    query_row(tr, tokens, scale, temperature)


def colour_note(step: str, colour: lesson.ColourRange) -> str:
    """Which matrices of ``step`` share its colour scale, and the scale's range."""
    what = label("single_head.colour_groups", step)
    if colour.diverging:
        note = t(
            "single_head.colour_diverging", what=what, bound=lesson.short_number(colour.zmax, 2)
        )
    else:
        note = t(
            "single_head.colour_sequential", what=what, top=lesson.short_number(colour.zmax, 2)
        )
    return note + " " + t("single_head.colour_weights") if step == "scores" else note


@section
def query_row(tr, tokens: list, scale: bool, temperature: float) -> None:
    """One query's row written out with its numbers, from x_i to z_i, at every τ of the weights'
    slider: a line that τ changes follows it."""
    key = bind_token(lesson.QUERY, tokens)
    i = token_select(t("single_head.query_token"), key, tokens, help=t("single_head.query_help"))
    tg = cache_single_head.temperature_grid(tr, temperature)
    at_tau = [
        lesson.follow_latex(lesson.at_temperature(tr, tg, g), i, scale=scale, temperature=tau)
        for g, tau in enumerate(tg.grid)
    ]  # (G, lines)
    for n, versions in enumerate(zip(*at_tau, strict=True)):
        name = f"single_head_follow_{n}"
        if len(set(versions)) == 1:  # a line before the softmax: the same at every τ
            formula(versions[0], name)
        else:
            texts = {tau: Version(tex=line) for tau, line in zip(tg.grid, versions, strict=True)}
            follow(lesson.TEMPERATURE, texts, name)
    if tr.mask is not None:
        st.caption(t("single_head.minus_inf"))


# --- ① the worked example -------------------------------------------------------------------------
def worked_part(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.worked_intro"), fold="common.about_section")
    tr = compute("sh_worked", lesson.worked, scale, causal, temperature)
    if tr is None:
        return
    inputs = (lesson.W_Q, lesson.W_K, lesson.W_V)
    pipeline(tr, list(lesson.TOKENS), "worked", scale, temperature, inputs=inputs)
    article_note()


def article_note() -> None:
    """Article 001's printed numbers beside what its own matrices give, and where it goes wrong."""
    columns = [
        t("single_head.note_col_what"),
        t("single_head.note_col_printed"),
        t("single_head.note_col_computed"),
        t("single_head.note_col_agree"),
    ]
    note = lesson.article_note()
    rows = {what: label("single_head.note_rows", what) for what in lesson.NOTE_ROWS}
    picked = t("single_head.list_sep").join(str(row) for row in note.picked_rows)
    with st.container(border=True):
        st.markdown(t("single_head.note_title", printed=columns[1], computed=columns[2]))
        st.table(lesson.note_table(note, columns, rows))
        st.markdown(t("single_head.note_body", rows=picked, **note.values))


# --- ② every matrix editable ----------------------------------------------------------------------
def refill_editors(article: bool = False, keys: tuple = tuple(lesson.ARTICLE)) -> None:
    """The editors under ``keys`` get article 001's matrices (and its sizes back), or seeded random
    ones of the chosen sizes (a size's or the seed's on_change, the two buttons)."""
    if article:
        for control in lesson.EDIT_SIZES:
            st.session_state[control.key] = control.default
    sizes = [int(st.session_state[c.key]) for c in (*lesson.EDIT_SIZES, lesson.EDIT_SEED)]
    matrices = lesson.refill(article, *sizes)
    for key in keys:
        if key in matrices:
            set_matrix(key, matrices[key])


def matrix_editors(D: int, d_k: int) -> dict:
    """The four editors, two to a row while they are narrow: {key: matrix, or None while one of its
    cells is not a number (its message shows, and the matrix as it last was)}."""
    columns = st.columns(2 if max(D, d_k) <= 6 else 1)  # wide matrices one to a row, not cut off
    matrices = {}
    for i, control in enumerate(lesson.MATRICES):
        name = lesson.NAMES[control.key]
        with columns[i % len(columns)]:
            st.markdown(f"**{name}** ({lesson.FORMULA[control.key]})")
            matrices[control.key] = compute(
                control.key, matrix_editor, control, name=name, height="auto"
            )
    return matrices


def edit_part(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.edit_intro"))
    size_columns = st.columns(4)
    T = widgets.number(
        lesson.EDIT_T, t("single_head.T"), where=size_columns[0], on_change=refill_editors
    )
    D = widgets.number(
        lesson.EDIT_D, t("single_head.d_model"), where=size_columns[1], on_change=refill_editors
    )
    d_k = widgets.number(
        lesson.EDIT_DK,
        t("single_head.d_k"),
        where=size_columns[2],
        on_change=refill_editors,
        help=t("single_head.d_k_help"),
    )
    widgets.number(
        lesson.EDIT_SEED, t("single_head.seed"), where=size_columns[3], on_change=refill_editors
    )
    missing = [key for key in lesson.ARTICLE if key not in st.query_params]
    article_sizes = tuple(control.default for control in lesson.EDIT_SIZES)
    if missing and (T, D, d_k) != article_sizes:
        refill_editors(keys=tuple(missing))  # a link with sizes but without (all) its matrices
    fill_column, reset_column, _ = st.columns([1, 1, 2])
    fill_column.button(t("single_head.fill"), on_click=refill_editors, width="stretch")
    reset_column.button(
        t("single_head.reset"), on_click=refill_editors, args=(True,), width="stretch"
    )
    matrices = matrix_editors(D, d_k)
    if any(m is None for m in matrices.values()):
        return
    tr = compute(
        "sh_edit",
        lesson.edit_trace,
        matrices,
        T,
        D,
        d_k,
        scale=scale,
        causal=causal,
        temperature=temperature,
    )
    if tr is not None:
        pipeline(tr, lesson.edit_tokens(tr.X.shape[0]), "edit", scale, temperature)


# --- ③ your own sentence --------------------------------------------------------------------------
def sentence_part(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.sentence_intro", limit=lesson.MAX_SENTENCE_TOKENS))
    text = widgets.text(
        lesson.TEXT,
        t("single_head.sentence"),
        help=t(
            "single_head.sentence_help",
            chars=lesson.TEXT.max_chars,
            limit=lesson.MAX_SENTENCE_TOKENS,
        ),
    )
    source = widgets.radio(lesson.EMBEDDING, t("single_head.emb"))
    if source == "pretrained":
        st.caption(t("single_head.emb_pretrained_note"))
    columns = st.columns([1, 1, 1, 1.6])
    d_model = widgets.number(lesson.SENTENCE_D, t("single_head.d_model"), where=columns[0])
    d_k = widgets.number(lesson.SENTENCE_DK, t("single_head.d_k"), where=columns[1])
    seed = widgets.number(lesson.SENTENCE_SEED, t("single_head.seed"), where=columns[2])
    side = widgets.toggle(lesson.SIDE_BY_SIDE, t("single_head.side"), where=columns[3])
    model = cache_pretrained.model_or_error()[0] if source == "pretrained" else None
    result = compute(
        "sh_sentence",
        lesson.sentence,
        text,
        source,
        d_model,
        d_k,
        seed,
        scale=scale,
        causal=causal,
        temperature=temperature,
        model=model,
    )
    if result is None:
        return
    tokens, tr = result.tokens, result.trace
    st.caption(t("single_head.tokens", n=len(tokens), tokens=escape(" · ".join(tokens))))
    if result.n_unknown:
        chars = escape(t("single_head.list_sep").join(result.unknown))
        st.info(t("single_head.emb_unknown", n=result.n_unknown, total=len(tokens), chars=chars))
    numbers_shown = lesson.numbers_fit(len(tokens), side)
    maps = cache_single_head.sentence(
        tr, tuple(tokens), words(), side, numbers_shown, temperature, font_size()
    )
    grid(maps, len(maps))  # a lone map takes the full width
    if not numbers_shown:
        st.caption(t("single_head.hover_numbers"))
    if tr.mask is not None:
        st.caption(t("single_head.mask_caption"))
    chart_csv("chart_sentence_weights", tokens, tokens, "sentence_weights")


# --- ④ why √d_k -----------------------------------------------------------------------------------
def sqrt_part() -> None:
    """④ Why √d_k: the dot products' histograms (the slider of d_k in the first), their measured
    moments beside the theory (following d_k), and how peaked the softmax gets."""
    explain(t("single_head.sqrt_intro"))
    keys_column, seed_column, _ = st.columns([1, 1, 3])
    n_keys = widgets.number(
        lesson.N_KEYS,
        t("single_head.n_keys"),
        where=keys_column,
        help=t("single_head.n_keys_help", limit=lesson.MAX_KEYS),
    )
    seed = widgets.number(lesson.SQRT_SEED, t("single_head.seed"), where=seed_column)
    d_k = widgets.in_figure(lesson.SQRT_DK)
    positions = compute("sh_dots", cache_single_head.sqrt_positions, d_k, seed)
    if positions is not None:
        heads = [
            t("single_head.mean_measured"),
            t("single_head.mean_theory"),
            t("single_head.var_measured"),
            t("single_head.var_theory"),
        ]
        moments = {
            p.d_k: Version(
                table=lesson.variance_table(p, heads),
                caption=t(
                    "single_head.sample_caption",
                    n=p.n,
                    seed=p.seed,
                    ratio=lesson.short_number(p.ratio, 3),
                ),
            )
            for p in positions
        }
        follow(lesson.SQRT_DK, moments, "sqrt_moments")
        grid(cache_single_head.sqrt_figures(d_k, seed, words(), font_size()), 2)
    st.subheader(t("single_head.peak_title"))
    peaks = compute("sh_peak", cache_single_head.peakedness, n_keys, seed)
    if peaks is not None:
        explain(t("single_head.peak_intro", rows=peaks.n_rows))
        grid(cache_single_head.peak_figures(n_keys, seed, words(), font_size()), 2)
    st.info(t("single_head.article_004"))


# --- the part and its options ---------------------------------------------------------------------
@section
def part_and_options() -> None:
    """The chosen part; parts ① to ③ under their options (scaling, mask, τ), which change only
    what this section draws."""
    part = widgets.segmented(lesson.PART, t("single_head.view"))
    if part == "sqrt":
        sqrt_part()
        return
    scale_column, causal_column = st.columns(2)
    scale = widgets.toggle(
        lesson.SCALE,
        t("single_head.opt_scale"),
        where=scale_column,
        help=t("single_head.opt_scale_help"),
    )
    causal = widgets.toggle(
        lesson.CAUSAL,
        t("single_head.opt_causal"),
        where=causal_column,
        help=t("single_head.opt_causal_help"),
    )
    temperature = widgets.in_figure(lesson.TEMPERATURE)
    if part == "edit":
        edit_part(scale, causal, temperature)
    elif part == "sentence":
        st.caption(t("single_head.temp_note"))  # ① and ② say it under their weights (pipeline)
        sentence_part(scale, causal, temperature)
    else:
        worked_part(scale, causal, temperature)


with page("single_head"):
    # the sentence part's default sentence is the language's; every part's settings stay in the URL
    url_state.follow_language(lesson.TEXT.key, lesson.sentence_for, lang())
    url_state.bind_controls(lesson.controls_for(lang()))
    st.title(t("single_head.title"))
    explain(t("single_head.intro"), fold="common.about_page")
    formula(
        r"Z = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}\,\tau}\right) XW^V",
        "single_head",
    )
    part_and_options()
