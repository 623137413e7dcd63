"""Positional encoding (article 003): the sinusoidal table, relative position, why attention needs
order, and RoPE and ALiBi beside the sinusoid. Compute and LaTeX: visattn.lessons.positional;
figures: visattn.figures.positional. One section is drawn at a time (a ui.frame.section); every
section's controls are bound on every full run: a link keeps them all."""

import pandas as pd
import streamlit as st

from ui import url_state
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import t
from ui.text import escape
from visattn import figures
from visattn.figures import positional as fig
from visattn.lessons import positional as L
from visattn.positional import MAX_CURVES, MAX_D_MODEL, MAX_POSITIONS

SECTION = {
    "table": "positional.sec_table",
    "relative": "positional.sec_relative",
    "order": "positional.sec_order",
    "beyond": "positional.sec_beyond",
}
PAIR = {
    "zh": "positional.pair_zh",
    "en": "positional.pair_en",
    "custom": "positional.pair_custom",
}  # L.PAIR_CHOICES
QK = {"same": "positional.qk_same", "random": "positional.qk_random"}
VARIANTS = (
    (
        "without",
        "positional.without_heading",
        "positional.without_intro",
        "positional.without_diff",
    ),  # (name, heading,
    ("with", "positional.with_heading", "positional.with_intro", "positional.with_diff"),
)  # intro, measured difference)


def bound(key: str) -> str:
    default, kind = L.CONTROLS[key]
    url_state.bind(key, default, **kind)
    if (
        key in L.MAX_CHARS and len(st.session_state[key]) > L.MAX_CHARS[key]
    ):  # a link longer than its box allows: refused
        st.session_state[key] = default
        url_state.notices().append(key)
    return key


part = lambda title, intro, level=st.subheader: (
    level(title),
    explain(intro),
)  # a heading and its (presenter-hidden) prose


def plot(
    png: str, builder, /, *args, key: str | None = None, **words
) -> None:  # a figure at the page's font size
    show(builder(*args, font_size=font_size(), **words), png, key=key)


@section
def section_table() -> None:
    part(t("positional.sec_table"), t("positional.table_intro"), st.header)
    st.latex(L.TABLE_LATEX)
    c1, c2, c3 = st.columns(3)
    n = c1.number_input(
        t("positional.n_positions"),
        0,
        100_000,
        step=1,
        key=bound("pe_n"),
        help=t("positional.n_help", max=MAX_POSITIONS),
    )
    d = c2.number_input(
        t("positional.d_model"),
        0,
        10_000,
        step=2,
        key=bound("pe_d"),
        help=t("positional.d_help", max=MAX_D_MODEL),
    )
    dims_text = c3.text_input(
        t("positional.dims"),
        key=bound("pe_dims"),
        max_chars=L.MAX_DIMS_CHARS,
        help=t("positional.dims_help", max=MAX_CURVES, chars=L.MAX_DIMS_CHARS),
    )
    if (tab := compute("pe_table", L.table, int(n), int(d))) is None:
        return
    if tab.downsampled:
        st.info(
            t(
                "positional.downsampled",
                n=tab.n,
                d=tab.d,
                rows=len(tab.rows),
                cols=len(tab.cols),
                rstep=tab.rstep,
                cstep=tab.cstep,
            )
        )
    plot(
        "sinusoidal_table",
        fig.table_heatmap,
        tab.shown,
        tab.rows,
        tab.cols,
        key=f"pe_table_{len(tab.rows)}x{len(tab.cols)}",  # stale ticks
        title=t("positional.table_title", n=tab.n, d=tab.d),
        x_title=t("common.dimension"),
        y_title=t("common.position"),
    )
    download_csv(
        tab.shown, "sinusoidal_table", [int(r) for r in tab.rows], [int(c) for c in tab.cols]
    )
    part(t("positional.curves_heading"), t("positional.curves_intro"))
    if (cur := compute("pe_curves", L.curves, tab.n, tab.d, dims_text)) is not None:
        if cur.dropped:
            st.caption(
                t("positional.dims_dropped", dims=", ".join(map(str, cur.dropped)), last=tab.d - 1)
            )
        ys = {
            t("positional.curve_name", k=k, fn=cur.kind(j), i=k // 2): cur.values[:, j]
            for j, k in enumerate(cur.dims)
        }
        plot(
            "sinusoid_curves",
            figures.curves,
            cur.positions,
            ys,
            title=t("positional.curves_title"),
            x_title=t("common.position"),
            y_title="PE",
        )
    part(
        t("positional.wave_heading"),
        t("positional.wave_intro", shortest=tab.shortest, longest=tab.longest, d=tab.d),
    )
    plot(
        "sinusoid_wavelengths",
        fig.wavelength_plot,
        tab.wavelengths,
        tab.n,
        name=t("positional.wave_name"),
        n_name=t("positional.wave_n", n=tab.n),
        title=t("positional.wave_title", d=tab.d),
        x_title=t("positional.pair_axis"),
        y_title=t("positional.wave_axis"),
    )
    if tab.slow is not None:
        st.caption(t("positional.wave_slow", i=tab.slow, dim=2 * tab.slow, n=tab.n))


@section
def section_relative() -> None:
    part(t("positional.sec_relative"), t("positional.rel_intro"), st.header)
    c1, c2 = st.columns(2)
    d, n = (
        c1.select_slider(t("positional.d_model"), L.EVEN_WIDE, key=bound("pe_rd")),
        c2.slider(t("positional.n_positions"), 2, 128, key=bound("pe_rn")),
    )
    rel = L.relative(d, n)
    plot(
        "pe_dot_matrix",
        fig.dot_matrix,
        rel.dots,
        title=t("positional.dot_title", d=d),
        x_title=t("positional.pos_q"),
        y_title=t("positional.pos_p"),
    )
    plot(
        "pe_dot_offset",
        fig.offset_curve,
        rel.offsets,
        rel.formula,
        {t("positional.row_p", p=p): xy for p, xy in rel.markers.items()},
        formula_name=t("positional.formula_curve"),
        title=t("positional.offset_title"),
        x_title=t("positional.offset_axis"),
    )
    st.success(t("positional.offset_spread", spread=rel.spread))
    rotation(d, n)


@section
def rotation(
    d: int, n: int
) -> None:  # one pair turned k positions on: its own controls rerun only this
    part(t("positional.rot_heading"), t("positional.rot_intro"))
    st.session_state["pe_ri"] = min(
        st.session_state["pe_ri"], d // 2 - 1
    )  # the pair must exist at this d_model
    c1, c2, c3 = st.columns(3)
    i = c1.select_slider(t("positional.pair"), list(range(d // 2)), key=bound("pe_ri"))
    k, p = (
        c2.number_input(t("positional.offset_k"), 0, 1000, key=bound("pe_rk")),
        c3.number_input(t("positional.position_p"), 0, 1000, key=bound("pe_rp")),
    )
    st.latex((rot := L.rotation(d, i, k, p, n, narrow=presenter())).latex)
    st.caption(t("positional.rot_check", i=i, a=2 * i, b=2 * i + 1, p=p, q=p + k, err=rot.err))
    plot(
        "pe_rotation_circle",
        fig.rotation_live,
        rot,
        L.rotation_steps(d, i, k, p),
        name=t("positional.circle_name", i=i),
        title=lambda k, theta: t("positional.circle_title", i=i, k=k, theta=L.fmt(theta)),
        x_title=t("positional.circle_x", a=2 * i),
        y_title=t("positional.circle_y", b=2 * i + 1),
    )


@section
def section_order() -> None:
    part(t("positional.sec_order"), t("positional.order_intro"), st.header)
    c1, c2 = st.columns([2, 1])
    pair = c1.radio(
        t("positional.pair_choice"),
        L.PAIR_CHOICES,
        key=bound("pe_pair"),
        horizontal=True,
        format_func=lambda s: t(PAIR[s]),
    )
    d = c2.select_slider(t("positional.d_model"), L.EVEN_SMALL, key=bound("pe_od"))
    limit = L.MAX_SENTENCE_CHARS
    a, b = (
        L.PAIRS[pair]
        if pair != "custom"
        else (
            c.text_input(
                t(label), key=bound(k), max_chars=limit, help=t("positional.text_help", chars=limit)
            )
            for c, label, k in zip(
                st.columns(2), ("positional.text_a", "positional.text_b"), ("pe_a", "pe_b")
            )
        )
    )
    if (res := compute("pe_order", L.order, a, b, d)) is None:
        return
    A, B = res.plain.tokens_a, res.plain.tokens_b
    st.markdown(
        t(
            "positional.tokens",
            a=escape(" · ".join(A)),
            b=escape(" · ".join(B)),
            pairs=escape(", ".join(f"{r.token} ← {r.source}" for r in res.rows)),
        )
    )
    for (name, heading, intro, diff), run in zip(VARIANTS, (res.plain, res.with_pe)):
        part(t(heading), t(intro))
        for col, w, toks, label in zip(st.columns(2), (run.weights_a, run.weights_b), (A, B), "AB"):
            with col:
                plot(
                    f"order_{name}_{label}",
                    figures.heatmap,
                    w,
                    toks,
                    toks,
                    title=t("positional.weights_title", s=label, text=res.joined(toks)),
                    x_title=t("common.key"),
                    y_title=t("common.query"),
                    value_name=t("common.weight"),
                    tick_angle=0 if res.glued else None,
                )
        (st.success if run.max_difference < L.SAME else st.info)(
            t(diff, err=L.fmt(run.max_difference, 2))
        )
    cols = [
        t("positional.col_token"),
        t("positional.col_from"),
        t("positional.col_to"),
        t("positional.col_without"),
        t("positional.col_with"),
    ]
    st.markdown(t("positional.table_heading"))
    st.dataframe(
        pd.DataFrame(res.rows, columns=cols),
        hide_index=True,
        column_config={
            cols[3]: st.column_config.NumberColumn(format="%.2e"),
            cols[4]: st.column_config.NumberColumn(format="%.3f"),
        },
    )


@section
def section_beyond() -> None:
    part(t("positional.sec_beyond"), t("positional.beyond_intro"), st.header)
    st.latex(L.beyond_latex(narrow=presenter()))
    c1, c2, c3, c4 = st.columns(4)
    d, p = (
        c1.select_slider(t("positional.d_model"), L.EVEN_WIDE, key=bound("pe_bd")),
        c2.slider(t("positional.query_pos"), 0, 1000, key=bound("pe_bp")),
    )
    far = c3.slider(t("positional.max_distance"), 8, 1000, key=bound("pe_bmax"))
    qk = c4.radio(t("positional.qk"), L.QK, key=bound("pe_bqk"), format_func=lambda s: t(QK[s]))
    bey = L.beyond(d, p, far, qk)
    plot(
        "score_vs_distance",
        fig.score_live,
        bey,
        L.beyond_steps(bey),
        names=lambda at: (t("positional.s_sin", p=at), t("positional.s_rope", p=at)),
        title=t("positional.score_title"),
        subtitle=lambda at, rope, sin: t("positional.score_gaps", p=at, rope=rope, sin=sin),
        x_title=t("positional.distance_axis"),
        y_title=t("positional.score_axis"),
    )
    st.success(t("positional.rope_gap", p=p, err=bey.rope_gap))
    st.info(t("positional.sin_gap", p=p, gap=bey.sin_gap))
    explain(t("positional.score_notes"))
    alibi(bey)


@section
def alibi(bey) -> None:  # ALiBi's heads over the same (q, k): its own controls rerun only this
    part(t("positional.alibi_heading"), t("positional.alibi_intro"))
    c1, c2 = st.columns(2)
    H, n = (
        c1.slider(t("positional.alibi_heads"), 1, 16, key=bound("pe_bh")),
        c2.slider(t("positional.alibi_positions"), 3, 24, key=bound("pe_bn")),
    )
    st.markdown(t("positional.slopes", slopes=", ".join((ali := L.alibi(H, n, bey)).slopes)))
    plot(
        "alibi_score_vs_distance",
        figures.curves,
        bey.distances,
        {t("positional.s_alibi", h=h + 1, m=m): ali.lines[h] for h, m in enumerate(ali.slopes)},
        title=t("positional.alibi_score_title"),
        x_title=t("positional.distance_axis"),
        y_title=t("positional.score_axis"),
    )
    plot(
        "alibi_bias",
        fig.alibi_grid,
        ali.grid(2 if presenter() else 4),
        [t("positional.head_slope", h=h + 1, m=m) for h, m in enumerate(ali.slopes)],
        title=t("positional.alibi_title", n=n),
        value_name=t("positional.bias"),
        query_name=t("common.query"),
        key_name=t("common.key"),
    )
    download_csv(
        ali.bias.reshape(H * n, n),
        "alibi_bias",
        [t("positional.csv_head_row", h=h + 1, i=i) for h in range(H) for i in range(n)],
        range(n),
    )


with page("positional"):
    st.title(t("positional.title"))
    explain(t("positional.intro"))
    for key in L.CONTROLS:  # every section's controls live in the URL, whichever section is drawn
        bound(key)
    shown = st.segmented_control(
        t("positional.section"),
        L.SECTIONS,
        key=bound("pe_sec"),
        required=True,
        format_func=lambda s: t(SECTION[s]),
    )
    {
        "table": section_table,
        "relative": section_relative,
        "order": section_order,
        "beyond": section_beyond,
    }[shown or "table"]()
