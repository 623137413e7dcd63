"""Kernel regression as attention (articles 002, 000): ① one query over key→value pairs; ② Q, K, V
and scoring functions; ③ self-attention.

Sections (``ui.frame.section``): ① the data set, the query and the kernel, with σ and everything σ
redraws as a section inside it (moving σ reruns the figures and the numbers, not the table
editor); ② the vectors; ③ self-attention. The additive score's weights feed ② and ③, so they are
drawn outside every section. Each is a tab (ui.frame.tabs: every tab's panel is drawn, the
open one shows; the open tab is in the link).
"""

import numpy as np
import pandas as pd
import streamlit as st

from ui import url_state, widgets
from ui.cache import kernel_regression as cache_kernel_regression
from ui.charts import download_csv, matrix_frame, show, table
from ui.errors import compute
from ui.follow import Version, follow
from ui.formulas import formula
from ui.frame import (
    explain,
    fold,
    folded_controls,
    font_size,
    page,
    presenter,
    section,
    tabs,
    when_open,
)
from ui.i18n import figure_words, label, t
from ui.widgets import matrix_editor, reset_if_reshaped, set_matrix, slider_and_number
from visattn.controls import Control
from visattn.figures import kernel_regression as kernel_regression_figures
from visattn.lessons import kernel_regression as lesson

SIGMA = lesson.CONTROLS["kr_sigma"]  # the fitted curve's own slider


def words() -> kernel_regression_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(kernel_regression_figures.Words)


def column_labels(preset: str, n: int) -> list[str]:
    """The key→value table's column names: the data set's, or key 1 … and value for a table of
    another width."""
    names = lesson.PRESETS[preset].columns
    if len(names) == n:
        return [label("kernel_regression.columns", name) for name in names]
    return [t("kernel_regression.col_key_n", i=i + 1) for i in range(n - 1)] + [t("common.value")]


def feature_names() -> list[str]:
    """Tab ② and ③'s column names: feature 1, feature 2."""
    return [t("kernel_regression.feature", i=1), t("kernel_regression.feature", i=2)]


def breakdown_columns() -> list[str]:
    """The key-by-key table's columns: key, value, score, e^s, weight, weight × value."""
    return [
        t("common.key"),
        t("common.value"),
        t("kernel_regression.col_score"),
        t("kernel_regression.col_exp"),
        t("common.weight"),
        t("kernel_regression.col_contrib"),
    ]


def load_preset() -> None:
    """A new data set: its table, query and σ, which a link then leaves out as defaults."""
    preset = st.session_state["kr_preset"]
    q1, q2, sigma = lesson.preset_start(preset)
    set_matrix("kr_data", lesson.PRESETS[preset].table)
    st.session_state["kr_q"] = q1
    st.session_state["kr_q2"] = q2
    st.session_state["kr_sigma"] = sigma
    url_state.bind_controls(lesson.controls_for(preset))


def set_sigma(sigma: float) -> None:
    st.session_state[SIGMA.key] = sigma


def new_additive_weights() -> None:
    """The dice button: the additive score's weights drawn again, with the next seed."""
    st.session_state["kr_seed"] = st.session_state.get("kr_seed", 0) + 1
    drawn = lesson.additive_weights(st.session_state["kr_seed"])
    for matrix, weights in zip(lesson.ADDITIVE, drawn, strict=True):
        set_matrix(matrix.control.key, weights)


def read_table(control: Control, preset: str) -> np.ndarray:
    """The key→value editor, at most MAX_TABLE_ROWS rows, checked by the lesson."""
    width = np.shape(st.session_state[control.key])[1]
    edited = matrix_editor(
        control,
        name=t("kernel_regression.data_name"),
        col_labels=column_labels(preset, width),
        dynamic_rows=True,
        max_rows=lesson.MAX_TABLE_ROWS,
    )
    return lesson.check_table(edited)


def matrix_input(where, matrix: lesson.Matrix, role: str = "") -> np.ndarray | None:
    """One of tab ② or ③'s matrices, in the lesson's shape (a link with another shape is reset);
    None (after the message) when it cannot be read."""
    where.markdown(f"**{matrix.name}** {role}")
    one_column = np.shape(matrix.control.default)[1] == 1
    with where:
        return compute(
            f"{matrix.control.key}_t",
            matrix_editor,
            matrix.control,
            name=matrix.name,
            row_labels=matrix.rows,
            col_labels=[matrix.name] if one_column else feature_names(),
            height="content",
            fixed_shape=True,
        )


def scored_attention(attention, names, png: str, titles, heading: str, maps_in, output_in) -> None:
    """A scored attention: its [scores and] weights heatmaps, one per column of ``maps_in``; in
    ``output_in`` the output f(·) row by row and the key each row looks at most; then the weights'
    CSV. ``names``: (key names, query names)."""
    keys, queries = names
    maps = cache_kernel_regression.score_maps(
        attention, keys, queries, tuple(titles), words(), font_size()
    )
    for where, (figure, kind) in zip(maps_in, maps, strict=True):
        with where:
            show(figure, f"{png}_{kind}")
    output_in.markdown(f"**{heading}**")
    output = pd.DataFrame(
        attention.output,
        index=[f"f({q})" for q in queries],
        columns=feature_names()[: attention.output.shape[1]],
    )
    table(output, formats=dict.fromkeys(output.columns, "%.4f"), width="content", where=output_in)
    pairs = t("common.list_sep").join(lesson.top_pairs(attention.weights, queries, keys))
    output_in.caption(t("kernel_regression.top_pairs", pairs=pairs))
    download_csv(attention.weights, f"{png}_weights", queries, keys, key=f"csv_{png}")


# ---- ① one query over key→value pairs ------------------------------------------------------------


@section
def one_query() -> None:
    """① The data set, the query and the kernel side by side, then the data set's table (folded)
    and the button that fits σ: two rows, so that the first screen reaches the weights; then
    :func:`bandwidth`."""
    explain(t("kernel_regression.intro_1d"), fold="common.about_section")
    if presenter():
        left, middle, right, pairs_box, fit_box = (st.container() for _ in range(5))
    else:
        left, middle, right = st.columns([2, 3, 2], gap="medium")
        pairs_box, fit_box = st.columns([5, 2], gap="medium")
    preset = widgets.select(
        lesson.PRESET, t("kernel_regression.preset"), where=left, on_change=load_preset
    )
    preset_controls = lesson.controls_for(preset)  # its table, query and σ are the defaults
    # the pairs, folded (open when a link or the reader changed them); what the data set is, under
    # them in sight (an invented one says so)
    with pairs_box:
        with folded_controls(t("kernel_regression.pairs"), [preset_controls["kr_data"]]):
            table = compute("kr_table", read_table, preset_controls["kr_data"], preset)
        st.caption(
            label("kernel_regression.preset_notes", preset)
            + " "
            + t("kernel_regression.rows_limit", rows=lesson.MAX_TABLE_ROWS)
        )
    if table is None:  # a bad first table (a tampered link): the data set's own
        table = np.asarray(lesson.PRESETS[preset].table, dtype=float)
    labels = column_labels(preset, table.shape[1])
    sliders = lesson.sliders(preset, table)
    with middle:
        for j, (lo, hi) in enumerate(sliders.ranges):  # one query slider per key feature
            slider_and_number(
                preset_controls[lesson.QUERY_KEYS[j]],
                t("kernel_regression.query_feature", name=labels[j]),
                t("kernel_regression.query_help"),
                lo=lo,
                hi=hi,
                step=sliders.steps[j],
            )
    kernel = widgets.select(
        lesson.CONTROLS["kr_kernel"], t("kernel_regression.kernel"), where=right
    )
    query = (st.session_state["kr_q"], st.session_state["kr_q2"])
    bandwidth(fit_box, table, query, kernel, labels, sliders)


@section
def bandwidth(where, table: np.ndarray, query: tuple, kernel: str, labels, sliders) -> None:
    """The fitted σ (its button drawn in ``where``, under the kernel) and everything σ redraws: σ
    itself is the fitted curve's slider, and the weights, the heatmap, the table and the formula
    follow it in the browser. Pressing "Fit σ" reruns this alone; the data set, the query and the
    kernel rerun it with new arguments."""
    fit = cache_kernel_regression.fit_sigma(table, kernel)
    with where:
        st.button(
            t("kernel_regression.fit_button"),
            on_click=set_sigma,
            args=(None if fit is None else fit.sigma,),
            disabled=fit is None,
            help=t("kernel_regression.fit_help"),
            icon=":material/target:",
            key="kr_fit",
        )
    sigma = widgets.in_figure(SIGMA)
    regression = compute(
        "kr_1d",
        cache_kernel_regression.regression,
        table,
        query,
        kernel,
        sigma,
        sliders.ranges,
        sliders,
    )
    if regression is None:
        return
    estimate_and_figures(regression, labels)  # after an error: the last good regression
    key_by_key(regression, labels)


def at_every_sigma(regression: lesson.Regression, version) -> dict[float, Version]:
    """``version(σ, the query key by key at σ, why no estimate)`` at every σ of the curve's
    slider: what an element following σ shows at each."""
    sweep = regression.by_sigma
    return {
        float(sigma): version(float(sigma), b, why)
        for sigma, b, why in zip(sweep.values, sweep.breakdowns, sweep.unreachable, strict=True)
    }


def estimate_and_figures(regression: lesson.Regression, labels: list[str]) -> None:
    """①'s picture: what to beware of, the weights, the estimate they make, the fitted curve (or
    the plane), and how σ is fitted."""
    for kind, params in regression.warnings(t("kernel_regression.row_sep")):
        st.warning(label("kernel_regression.warnings", kind, **params), icon=":material/warning:")

    def estimate(sigma: float, b, why: str) -> Version:
        notes = lesson.no_estimate(b.query, sigma, why)
        shown = f"{b.estimate:.6g}" if b.supported else "—"
        return Version(
            notes=tuple(("warning", label("kernel_regression.warnings", k, **p)) for k, p in notes),
            metric=(t("kernel_regression.estimate_at", q=lesson.key_text(b.query)), shown),
        )

    figures = cache_kernel_regression.regression_figures(regression, labels, words(), font_size())
    for number, (figure, png) in enumerate(figures):
        show(figure, png)
        if number == 0:  # the weights first, on the first screen; then the estimate they make
            follow(SIGMA, at_every_sigma(regression, estimate), "kernel_estimate")
    fit = regression.fit  # what the button beside the query can fit, said with how it fits
    if fit is None:
        st.caption(t("kernel_regression.fit_none"))
        return
    if fit.flat_upto is not None:
        st.caption(t("kernel_regression.fit_flat", upto=f"{fit.flat_upto:.3g}"))
    how_fitted = when_open(t("kernel_regression.loo_expander"), key="kr_loo_open")
    if how_fitted is not None:
        with how_fitted:
            explain(t("kernel_regression.loo_explain"))
            show(
                cache_kernel_regression.loo_figure(regression, words(), font_size()),
                "kernel_loo_error",
            )


def key_by_key(regression: lesson.Regression, labels: list[str]) -> None:
    """①'s numbers at every σ: each key's score, weight and share of the estimate, and the formula
    with this query's numbers (with its CSV)."""
    st.subheader(t("kernel_regression.numbers_heading"))
    explain(t("kernel_regression.numbers_explain"))
    columns = breakdown_columns()
    csv_columns = labels + columns[2:3] + columns[4:]  # key features…, value, score, weight, w × v

    def numbers(sigma: float, b, why: str) -> Version:
        written = lesson.formula(b, regression.kernel, sigma)
        notes = []
        if written.underflow:
            notes.append(t("kernel_regression.underflow"))
        if written.more > 0:
            weight = f"{written.more_weight:.3g}"
            notes.append(t("kernel_regression.more_terms", n=written.more, weight=weight))
        keys = [lesson.key_text(k) for k in b.keys]
        csv = matrix_frame(lesson.breakdown_matrix(b), keys, csv_columns)
        return Version(
            table=lesson.breakdown_table(b, columns),
            csv=csv.to_csv(float_format="%.6g"),
            tex=written.latex,
            caption=" ".join(notes),
        )

    follow(SIGMA, at_every_sigma(regression, numbers), "kernel_1d", csv="kernel_breakdown")


# ---- ② vectors: Q, K, V and a scoring function ---------------------------------------------------


def additive_weights() -> list[np.ndarray | None]:
    """The additive score's W_q, W_k, w_v, editable: tabs ② and ③ both use them, so they are drawn
    outside every section (open when a link scores tab ② additively)."""
    opened = st.session_state["kr_score"] == "additive"
    with fold(t("kernel_regression.additive_weights"), opened):
        explain(t("kernel_regression.additive_explain"))
        weights = []
        for where, matrix in zip(st.columns(3), lesson.ADDITIVE, strict=True):
            weights.append(matrix_input(where, matrix))
        st.button(
            t("kernel_regression.reseed"),
            on_click=new_additive_weights,
            icon=":material/casino:",
            key="kr_reseed",
        )
    return weights


@section
def vectors(weights: list[np.ndarray | None]) -> None:
    """② Queries, keys and values as vectors, and a scoring function."""
    matrices = []
    for where, matrix in zip(st.columns(3), lesson.VECTORS, strict=True):
        role = label("kernel_regression.matrix_roles", matrix.name)
        matrices.append(matrix_input(where, matrix, role))
    Q, K, V = matrices
    method = widgets.radio(lesson.CONTROLS["kr_score"], t("kernel_regression.scoring"))
    standardized = widgets.toggle(
        lesson.CONTROLS["kr_std"],
        t("kernel_regression.standardize"),
        help=t("kernel_regression.standardize_help"),
    )
    if all(m is not None for m in (*matrices, *weights)):
        attention = compute(
            "kr_md", cache_kernel_regression.scored, Q, K, V, method, *weights, standardized
        )
    else:  # the message is above; nothing to score
        attention = None
    if attention is not None:
        names = lesson.names(attention)  # (key names, query names)
        titles = (
            t("kernel_regression.scores_title", method=label("kernel_regression.scorings", method)),
            t("kernel_regression.weights_title"),
        )
        heading = t("kernel_regression.output_heading")
        maps_in = st.columns(2)
        scored_attention(attention, names, "kernel_md", titles, heading, maps_in, st.container())
        formula(lesson.q1_sum(attention), "kernel_q1_sum")
        raw_features(Q, K, V, weights)
    article_002()


def comparison_row(method: str, standardized: bool) -> str:
    state = t("kernel_regression.standardized") if standardized else t("kernel_regression.raw")
    return f"{label('kernel_regression.scorings', method)} · {state}"


def top_weight_column(i: int) -> str:
    return t("kernel_regression.top_weight_of", q=f"q{i}")


def raw_features(Q, K, V, weights) -> None:
    """Why softmax turns one-hot on raw features: every scoring, raw and standardised."""
    st.subheader(t("kernel_regression.raw_heading"))
    explain(t("kernel_regression.raw_explain", **lesson.float_facts_text()))
    comparison = compute(
        "kr_cmp",
        lesson.comparison,
        Q,
        K,
        V,
        weights,
        comparison_row,
        top_weight_column,
        t("kernel_regression.score_gap"),
    )
    if comparison is not None:
        frame, biggest = comparison
        st.table(frame)
        st.caption(t("kernel_regression.raw_caption", biggest=f"{biggest:.5g}"))


def article_002() -> None:
    """Article 002's slips: its printed numbers and formulas beside the computed ones."""
    with fold(t("kernel_regression.a2_title")):
        columns = [
            t("kernel_regression.a2_col_what"),
            t("kernel_regression.a2_col_printed"),
            t("kernel_regression.a2_col_computed"),
            t("kernel_regression.a2_col_agree"),
        ]
        notes = {
            note: label("kernel_regression.article_notes", note) for note in lesson.ARTICLE_NOTES
        }
        st.table(lesson.article_002_table(columns, notes))
        st.markdown(t("kernel_regression.a2_body"))


# ---- ③ self-attention: Q = K = V = X -------------------------------------------------------------


@section
def self_attention(weights: list[np.ndarray | None]) -> None:
    """③ The rows of X attend to each other."""
    explain(t("kernel_regression.intro_self"))
    X = matrix_input(st.container(), lesson.SELF)
    method = widgets.radio(
        lesson.CONTROLS["kr_sa_score"],
        t("kernel_regression.scoring"),
        help=t("kernel_regression.self_additive_note"),
    )
    standardized = widgets.toggle(
        lesson.CONTROLS["kr_sa_std"],
        t("kernel_regression.standardize"),
        help=t("kernel_regression.standardize_help"),
    )
    if X is None or any(w is None for w in weights):
        return
    attention = compute(
        "kr_sa", cache_kernel_regression.self_attention, X, method, weights, standardized
    )
    if attention is None:
        return
    formula(attention.formula, "kernel_self")
    left, right = st.columns(2)
    names = (attention.names, attention.names)
    titles = (t("kernel_regression.self_weights_title"),)
    heading = t("kernel_regression.self_output")
    scored_attention(attention.result, names, "kernel_self", titles, heading, [left], right)
    explain(t("kernel_regression.self_explain"))


# ---- the sections --------------------------------------------------------------------------------


def sections() -> None:
    """The three sections in their tabs' panels (ui.frame.tabs); ③ scores with ②'s additive
    weights."""
    panels = tabs(lesson.TAB)
    with panels["1d"]:
        one_query()
    with panels["md"]:
        explain(t("kernel_regression.intro_md"))
        weights = additive_weights()
        vectors(weights)
    with panels["self"]:
        self_attention(weights)


with page("kernel_regression"):
    # Every URL parameter, bound before any section runs; the data set first: the table, the query
    # and σ a link leaves out are the data set's own.
    url_state.bind_control(lesson.PRESET)
    url_state.bind_controls(lesson.controls_for(st.session_state["kr_preset"]))
    for matrix in lesson.MATRICES:  # a link's wrong shape is reset now, not when its tab opens
        reset_if_reshaped(matrix.control.key, matrix.control.default)
    st.title(t("kernel_regression.title"))
    explain(t("kernel_regression.intro"), fold="common.about_page")
    sections()
