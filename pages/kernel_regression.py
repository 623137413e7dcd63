"""Kernel regression as attention (articles 002, 000): ① one query over key→value pairs; ② Q, K, V
and scoring functions; ③ self-attention."""

import numpy as np
import pandas as pd
import streamlit as st

from ui import url_state
from ui.cache_kernel import fit_sigma, kernel_lesson, scored, self_lesson
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import t
from ui.widgets import matrix_editor, set_matrix, slider_and_number
from visattn.figures import kernel as kfig
from visattn.lessons import kernel as L

KERNEL_LABEL = {
    "gaussian": "kernel.k_gaussian",
    "boxcar": "kernel.k_boxcar",
    "epanechnikov": "kernel.k_epanechnikov",
    "laplace": "kernel.k_laplace",
}
PRESET_LABEL = {
    "waist": "kernel.p_waist",
    "game_strength": "kernel.p_game_strength",
    "game_both": "kernel.p_game_both",
    "noisy": "kernel.p_noisy",
}
NOTE = {
    "waist": "kernel.note_waist",
    "game_strength": "kernel.note_game",
    "game_both": "kernel.note_game",
    "noisy": "kernel.note_noisy",
}
COLUMNS = {
    "waist": ("kernel.col_waist", "kernel.col_weight"),
    "game_strength": ("kernel.col_strength", "kernel.col_ability"),
    "game_both": ("kernel.col_strength", "kernel.col_intelligence", "kernel.col_ability"),
    "noisy": ("kernel.col_x", "kernel.col_y"),
}
METHOD_LABEL = {
    "additive": "kernel.s_additive",
    "dot": "kernel.s_dot",
    "scaled_dot": "kernel.s_scaled_dot",
}
WARNING = {
    "duplicates": "kernel.duplicates",
    "compact": "kernel.no_support",
    "overflow": "kernel.no_support_overflow",
}
A2_NOTE = {
    "score": "kernel.a2_score",
    "weight": "kernel.a2_weight",
    "dot_model": "kernel.a2_dot_model",
    "additive_model": "kernel.a2_additive_model",
}
A2_COLS = (
    "kernel.a2_col_what",
    "kernel.a2_col_printed",
    "kernel.a2_col_computed",
    "kernel.a2_col_agree",
)
BREAKDOWN_COLS = (
    "common.key",
    "common.value",
    "kernel.col_score",
    "kernel.col_exp",
    "common.weight",
    "kernel.col_contrib",
)
WORDS = (
    "common.query",
    "common.key",
    "common.weight",
    "kernel.estimate",
    "kernel.bars_title",
    "kernel.keys_axis",
    "kernel.curve_title",
    "kernel.fitted_curve",
    "kernel.data_points",
    "kernel.heatmap_title",
    "kernel.keys_sorted",
    "kernel.query_axis",
    "kernel.plane_title",
    "kernel.keys_sized",
    "kernel.loo_title",
    "kernel.loo_error",
    "kernel.sigma",
    "kernel.fitted_sigma",
    "kernel.current_sigma",
    "kernel.estimate_line",
    "kernel.no_estimate",
    "kernel.live_query",
    "kernel.live_sigma",
)
MATRIX_KEYS, MATRIX_WORD = (
    ("kr_Q", "kr_K", "kr_V", "kr_Wq", "kr_Wk", "kr_wv"),
    ("kernel.queries", "kernel.keys_word", "kernel.values_word"),
)
ss = st.session_state
column_labels = lambda preset, n: (
    [t(k) for k in COLUMNS[preset]]
    if len(COLUMNS[preset]) == n
    else [t("kernel.col_key_n", i=i + 1) for i in range(n - 1)] + [t("common.value")]
)
words = lambda labels=(): kfig.Words(
    tuple(labels), **{k.split(".")[1]: t(k) for k in WORDS}
)  # the figures' words, translated
load_preset = lambda: (
    set_matrix("kr_data", L.PRESETS[ss["kr_preset"]].table),
    ss.update(zip(("kr_q", "kr_q2", "kr_sigma"), L.preset_start(ss["kr_preset"]))),
)


def new_additive_weights():
    ss["kr_seed"] = ss.get("kr_seed", 0) + 1
    for key, m in zip(MATRIX_KEYS[3:], L.additive_weights(ss["kr_seed"])):
        set_matrix(key, m)


def read_table(p, preset):  # the key→value editor, at most MAX_TABLE_ROWS rows
    taken = ss[url_state.bind("kr_data", [list(r) for r in p.table], matrix=True)]
    m = matrix_editor(
        "kr_data",
        p.table,
        name=t("kernel.data_name"),
        col_labels=column_labels(preset, np.shape(taken)[1]),
        dynamic_rows=True,
        max_rows=L.MAX_TABLE_ROWS,
    )
    return L.check_table(m)


def fixed(
    where, key, name, default, rows, word=None
):  # a matrix of the lesson's shape (a link with another shape is reset)
    where.markdown(f"**{name}** {t(word) if word else ''}")
    with where:
        return compute(
            f"{key}_t",
            matrix_editor,
            key,
            default,
            name=name,
            row_labels=rows,
            col_labels=[name] if name == "w_v" else FEATS,
            height="content",
            fixed_shape=True,
        )


def scoring_controls(score_key, std_key, help=None):
    return (
        st.radio(
            t("kernel.scoring"),
            L.SCORINGS,
            format_func=lambda m: t(METHOD_LABEL[m]),
            horizontal=True,
            help=help,
            key=url_state.bind(score_key, "scaled_dot", options=L.SCORINGS),
        ),
        st.toggle(
            t("kernel.standardize"),
            key=url_state.bind(std_key, False),
            help=t("kernel.standardize_help"),
        ),
    )


def maps_and_output(
    where, r, names, png, heading, titles
):  # [scores |] weights heatmaps; in where[-1] the output and where rows look most
    for col, (fig, kind) in zip(
        where, kfig.score_maps(r, names, titles, words(), t("common.score"), font_size())
    ):
        with col:
            show(fig, f"{png}_{kind}")
    where[-1].markdown(f"**{heading}**")
    where[-1].dataframe(
        pd.DataFrame(
            r.output, index=[f"f({q})" for q in names[1]], columns=FEATS[: r.output.shape[1]]
        ).style.format("{:.4f}")
    )
    where[-1].caption(
        t(
            "kernel.top_pairs",
            pairs=t("common.list_sep").join(L.top_pairs(r.weights, names[1], names[0])),
        )
    )
    download_csv(r.weights, f"{png}_weights", names[1], names[0], key=f"csv_{png}")


@section
def one_query(
    fs,
    # ---- ① one query, key→value pairs, a kernel: its controls (the data set too) change only this tab
    # -------
):
    explain(t("kernel.intro_1d"))
    left, right = (
        (st.container(), st.container()) if presenter() else st.columns([2, 3], gap="large")
    )
    with left:
        st.selectbox(
            t("kernel.preset"),
            list(L.PRESETS),
            format_func=lambda k: t(PRESET_LABEL[k]),
            key="kr_preset",
            on_change=load_preset,
        )
        table = compute(
            "kr_table", read_table, L.PRESETS[preset := ss["kr_preset"]], preset
        )  # read here: a partial rerun has old args
        st.caption(t(NOTE[preset]) + " " + t("kernel.rows_limit", rows=L.MAX_TABLE_ROWS))
    table = (
        np.asarray(L.PRESETS[preset].table, dtype=float) if table is None else table
    )  # a bad first table (a tampered link): the preset's
    labels, ctl, starts = (
        column_labels(preset, table.shape[1]),
        L.controls(preset, table),
        L.preset_start(preset),
    )
    with right:
        url_state.bind("kr_q2", starts[1])  # kept in the link while the table has one key feature
        for j in range(len(ctl.ranges)):
            slider_and_number(
                url_state.bind(("kr_q", "kr_q2")[j], starts[j]),
                t("kernel.query_feature", name=labels[j]),
                *ctl.ranges[j],
                ctl.steps[j],
                help=t("kernel.query_help"),
            )
        kernel = st.selectbox(
            t("kernel.kernel"),
            L.KERNELS,
            format_func=lambda k: t(KERNEL_LABEL[k]),
            key=url_state.bind("kr_kernel", "gaussian", options=L.KERNELS),
        )
        slider_and_number(
            url_state.bind("kr_sigma", starts[2]),
            t("kernel.sigma"),
            *ctl.sigma_range,
            ctl.sigma_step,
            help=t("kernel.sigma_help"),
        )
        st.button(
            t("kernel.fit_button"),
            on_click=ss.__setitem__,
            args=("kr_sigma", (fit := fit_sigma(table, kernel)) and fit.sigma),
            disabled=fit is None,
            help=t("kernel.fit_help"),
            icon="🎯",
            key="kr_fit",
        )
        if fit is None or fit.flat_upto is not None:
            st.caption(
                t("kernel.fit_none")
                if fit is None
                else t("kernel.fit_flat", upto=f"{fit.flat_upto:.3g}")
            )
    if (
        lesson := compute(
            "kr_1d",
            kernel_lesson,
            table,
            (ss["kr_q"], ss["kr_q2"]),
            kernel,
            ss["kr_sigma"],
            ctl.ranges,
            ctl,
        )
    ) is None:
        return
    b, w = lesson.breakdown, words(labels)  # after an error: the last good view
    for kind, params in lesson.warnings(t("kernel.row_sep")):
        st.warning(t(WARNING[kind], **params), icon="⚠️")
    st.metric(
        t("kernel.estimate_at", q=L.key_text(b.query)), f"{b.estimate:.6g}" if b.supported else "—"
    )
    for fig, png in kfig.lesson_figures(lesson, w, fs):
        show(fig, png)
    if lesson.fit is not None:
        with st.expander(t("kernel.loo_expander"), expanded=False):
            explain(t("kernel.loo_explain"))
            show(kfig.loo_figure(lesson, w, fs), "kernel_loo_error")
    st.subheader(t("kernel.numbers_heading"))
    explain(t("kernel.numbers_explain"))
    st.dataframe(
        L.breakdown_table(b, cols := [t(k) for k in BREAKDOWN_COLS]),
        width="stretch",
        height=min(38 + 35 * (len(b.keys) + 1), 420),
    )
    st.latex((f := L.formula(b, lesson.kernel, lesson.sigma)).latex)
    if notes := [t("kernel.underflow")] * f.underflow + [
        t("kernel.more_terms", n=f.more, weight=f"{f.more_weight:.3g}")
    ] * (f.more > 0):
        st.caption(" ".join(notes))
    download_csv(
        L.breakdown_matrix(b),
        "kernel_breakdown",
        [L.key_text(k) for k in b.keys],
        labels + cols[2:3] + cols[4:],
        key="csv_kernel_1d",
    )


@section
def vectors(
    W,
    # ---- ② multi-dimensional queries, keys and values (the additive weights W are drawn outside, for ③
    # too) ----
):
    Q, K, V = [
        fixed(where, key, *spec, word)
        for where, key, spec, word in zip(st.columns(3), MATRIX_KEYS, L.MATRICES, MATRIX_WORD)
    ]
    method, standardized = scoring_controls("kr_score", "kr_std")
    if (
        md := compute("kr_md", scored, Q, K, V, method, *W, standardized)
        if all(m is not None for m in (Q, K, V, *W))
        else None
    ) is not None:
        maps_and_output(
            (*st.columns(2), st.container()),
            md,
            L.names(md),
            "kernel_md",
            t("kernel.output_heading"),
            (t("kernel.scores_title", method=t(METHOD_LABEL[method])), t("kernel.weights_title")),
        )
        st.latex(L.q1_sum(md))
        st.subheader(t("kernel.raw_heading"))
        explain(t("kernel.raw_explain", **L.float_facts_text()))
        row = lambda m, std: (
            f"{t(METHOD_LABEL[m])} · {t('kernel.standardized') if std else t('kernel.raw')}"
        )
        if (
            cmp := compute(
                "kr_cmp",
                L.comparison,
                Q,
                K,
                V,
                W,
                row,
                lambda i: t("kernel.top_weight_of", q=f"q{i}"),
                t("kernel.score_gap"),
            )
        ) is not None:
            st.table(cmp[0])
            st.caption(t("kernel.raw_caption", biggest=f"{cmp[1]:.5g}"))
    with st.expander(
        t("kernel.a2_title"), expanded=False
    ):  # article 002's slips, printed vs computed
        st.table(
            L.article_002_table([t(k) for k in A2_COLS], {n: t(k) for n, k in A2_NOTE.items()})
        )
        st.markdown(t("kernel.a2_body"))


@section
def self_attention(
    W,
    # ---- ③ self-attention: Q = K = V = X
    # --------------------------------------------------------------
):
    explain(t("kernel.intro_self"))
    X = fixed(st.container(), "kr_X", "X", L.X0, ["x1", "x2", "x3"])
    sa_score = scoring_controls("kr_sa_score", "kr_sa_std", help=t("kernel.self_additive_note"))
    if (
        sa := compute("kr_sa", self_lesson, X, sa_score[0], W, sa_score[1])
        if X is not None and all(m is not None for m in W)
        else None
    ) is not None:
        st.latex(sa.formula)
        maps_and_output(
            st.columns(2),
            sa.result,
            (sa.names, sa.names),
            "kernel_self",
            t("kernel.self_output"),
            (t("kernel.self_weights_title"),),
        )
        explain(t("kernel.self_explain"))


with page("kernel"):
    fs, FEATS = font_size(), [t("kernel.feature", i=1), t("kernel.feature", i=2)]
    st.title(t("kernel.title"))
    explain(t("kernel.intro"))
    tab1, tab2, tab3 = st.tabs([t("kernel.tab_1d"), t("kernel.tab_md"), t("kernel.tab_self")])
    url_state.bind(
        "kr_preset", "waist", options=list(L.PRESETS)
    )  # the sections bind their own controls' keys (in every full run)
    with tab1:
        one_query(fs)
    with tab2:
        explain(t("kernel.intro_md"))
        with st.expander(
            t("kernel.additive_weights"),
            expanded=ss[url_state.bind("kr_score", "scaled_dot", options=L.SCORINGS)] == "additive",
        ):
            explain(t("kernel.additive_explain"))
            W = [
                fixed(where, key, *spec)
                for where, key, spec in zip(st.columns(3), MATRIX_KEYS[3:], L.MATRICES[3:])
            ]
            st.button(t("kernel.reseed"), on_click=new_additive_weights, icon="🎲", key="kr_reseed")
        vectors(W)
    with tab3:
        self_attention(W)
