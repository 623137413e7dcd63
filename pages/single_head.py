"""Single head (articles 001, 004): ① the worked example, ② every matrix editable, ③ your own
sentence, ④ why √d_k.

The view and its options are one section: each of them (τ among them) changes only what that
section draws, so moving one reruns it alone; one query's row is a section of its own inside it.
The lesson, its controls and its numbers: visattn.lessons.single_head; the figures, cached:
ui.cache_single_head."""

import streamlit as st

from ui import cache_pretrained, cache_single_head, url_state
from ui import controls as widgets
from ui.charts import download_csv, show
from ui.errors import compute
from ui.formulas import formula
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import label, lang, t
from ui.text import escape
from ui.widgets import bind_token, matrix_editor, set_matrix, token_select
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


def map_words() -> dict:
    """The words of the heatmaps, translated: hover and colour-bar names, axis titles, the
    sentence's titles."""
    return {
        "value": t("single_head.value"),
        "score": t("common.score"),
        "weight": t("common.weight"),
        "dimension": t("common.dimension"),
        "token": t("common.token"),
        "key": t("common.key"),
        "query": t("common.query"),
        "sent_scores": t("single_head.sent_scores"),
        "sent_weights": t("single_head.sent_weights"),
    }


def pipeline_words(tr, scale: bool) -> dict:
    """The pipeline's words: the heatmaps' and the titles that have words in them (the live
    weights' title gets its τ in the figure)."""
    T, d_v = tr.V.shape  # (T, Dv)
    if scale:
        scores = t("single_head.fig_scaled", r=lesson.root(tr.Q.shape[1]))
    else:
        scores = t("single_head.fig_unscaled")
    return map_words() | {
        "z": t("single_head.fig_z", T=T, dv=d_v),
        "scores": scores,
        "weights_one": t("single_head.fig_weights"),
        "weights_tau": t("single_head.fig_weights_tau", tau="{tau}"),
    }


def pipeline(tr, tokens: list, prefix: str, scale: bool, temperature: float, inputs=None) -> None:
    """One head step by step, (X, W) → Q, K, V → QKᵀ → softmax → Z, then one query's row."""
    words = pipeline_words(tr, scale)
    steps = cache_single_head.pipeline(tr, tuple(tokens), words, inputs, temperature, font_size())
    ranges = lesson.colour_ranges(tr, inputs)
    for step, per_row, named_figures in steps:
        st.markdown(label("single_head.steps", step))
        grid(named_figures, per_row, f"{prefix}_", widths=[1.15, 1, 1, 1])
        st.caption(colour_note(step, ranges[step]))
        if step == "scores" and tr.mask is not None:
            st.caption(t("single_head.mask_caption"))
    weights_column, output_column = st.columns(2)
    with weights_column:
        name = f"{prefix}_weights"
        download_csv(tr.weights, name, tokens, tokens, key=f"csv_{name}")
        st.caption(t("single_head.csv_weights"))
    with output_column:
        name = f"{prefix}_output"
        download_csv(tr.output, name, tokens, lesson.dims(tr.V.shape[1]), key=f"csv_{name}")
        st.caption(t("single_head.csv_output"))
    st.subheader(t("single_head.follow_title"))
    query_row(tr, tokens, scale, temperature)


def colour_note(step: str, colour: lesson.ColourRange) -> str:
    """Which matrices of ``step`` share its colour scale, and the scale's range."""
    what = label("single_head.colour_groups", step)
    if colour.diverging:
        note = t("single_head.colour_diverging", what=what, bound=lesson.num(colour.zmax, 2))
    else:
        note = t("single_head.colour_sequential", what=what, top=lesson.num(colour.zmax, 2))
    return note + " " + t("single_head.colour_weights") if step == "scores" else note


@section
def query_row(tr, tokens: list, scale: bool, temperature: float) -> None:
    """One query's row written out with its numbers, from x_i to z_i."""
    key = bind_token(lesson.QUERY, tokens)
    i = token_select(t("single_head.query_token"), key, tokens, help=t("single_head.query_help"))
    lines = lesson.follow_latex(tr, i, scale=scale, temperature=temperature)
    for n, line in enumerate(lines):
        formula(line, f"single_head_follow_{n}")
    if tr.mask is not None:
        st.caption(t("single_head.minus_inf"))


# --- ① the worked example -------------------------------------------------------------------------
def view_worked(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.worked_intro"))
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


def view_edit(scale: bool, causal: bool, temperature: float) -> None:
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
def view_sentence(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.sentence_intro", limit=lesson.MAX_TOKENS))
    text = widgets.text(
        lesson.TEXT,
        t("single_head.sentence"),
        help=t("single_head.sentence_help", chars=lesson.TEXT.max_chars, limit=lesson.MAX_TOKENS),
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
        tr, tuple(tokens), map_words(), side, numbers_shown, temperature, font_size()
    )
    grid(maps, len(maps))  # a lone map takes the full width
    if not numbers_shown:
        st.caption(t("single_head.hover_numbers"))
    if tr.mask is not None:
        st.caption(t("single_head.mask_caption"))
    download_csv(tr.weights, "sentence_weights", tokens, tokens, key="csv_sentence_w")


# --- ④ why √d_k -----------------------------------------------------------------------------------
def view_sqrt() -> None:
    explain(t("single_head.sqrt_intro"))
    dk_column, keys_column, seed_column = st.columns([3, 1, 1])
    d_k = widgets.select_slider(lesson.SQRT_DK, t("single_head.sqrt_dk"), where=dk_column)
    n_keys = widgets.number(
        lesson.N_KEYS,
        t("single_head.n_keys"),
        where=keys_column,
        help=t("single_head.n_keys_help", limit=lesson.MAX_KEYS),
    )
    seed = widgets.number(lesson.SQRT_SEED, t("single_head.seed"), where=seed_column)
    measured = compute("sh_dots", cache_single_head.why_sqrt, d_k, seed)
    if measured is not None:
        heads = [
            t("single_head.mean_measured"),
            t("single_head.mean_theory"),
            t("single_head.var_measured"),
            t("single_head.var_theory"),
        ]
        st.table(lesson.variance_table(measured, heads))
        ratio = lesson.num(measured.ratio, 3)
        n_pairs = len(measured.sample.raw)
        st.caption(
            t("single_head.sample_caption", n=n_pairs, seed=measured.sample.seed, ratio=ratio)
        )
        words = {"density": t("single_head.density"), "measured": t("single_head.measured")}
        grid(cache_single_head.sqrt_figures(d_k, seed, words, font_size()), 2)
    st.subheader(t("single_head.peak_title"))
    peaks = compute("sh_peak", cache_single_head.peakedness, n_keys, seed)
    if peaks is not None:
        explain(t("single_head.peak_intro", rows=peaks.n_rows))
        words = {
            "peak_max": t("single_head.peak_max", n=n_keys),
            "peak_entropy": t("single_head.peak_entropy", n=n_keys),
            "max_weight": t("single_head.max_weight"),
            "entropy": t("single_head.entropy"),
            "uniform": t("single_head.ref_uniform"),
            "onehot": t("single_head.ref_onehot"),
        }
        grid(cache_single_head.peak_figures(n_keys, seed, words, font_size()), 2)
    st.info(t("single_head.article_004"))


# --- the view and its options ---------------------------------------------------------------------
@section
def view_and_options() -> None:
    """The chosen view; views ① to ③ under their options (scaling, mask, τ), which change only
    what this section draws."""
    view = widgets.segmented(lesson.VIEW, t("single_head.view"))
    if view == "sqrt":
        view_sqrt()
        return
    if presenter():
        scale_column, causal_column = st.columns(2)
        temperature_column = st.container()
    else:
        scale_column, causal_column, temperature_column = st.columns([1, 1.3, 2])
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
    temperature = widgets.slider(
        lesson.TEMPERATURE,
        t("single_head.opt_temp"),
        where=temperature_column,
        help=t("single_head.opt_temp_help"),
    )
    if view == "edit":
        view_edit(scale, causal, temperature)
    elif view == "sentence":
        view_sentence(scale, causal, temperature)
    else:
        view_worked(scale, causal, temperature)


with page("single_head"):
    # the sentence view's default sentence is the language's; every view's settings stay in the URL
    url_state.follow_language(lesson.TEXT.key, lesson.sentence_for, lang())
    url_state.bind_controls(lesson.controls_for(lang()))
    st.title(t("single_head.title"))
    explain(t("single_head.intro"))
    formula(
        r"Z = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}\,\tau}\right) XW^V",
        "single_head",
    )
    view_and_options()
