"""Positional encoding (article 003): the sinusoidal table, relative position, why attention needs
order, and RoPE and ALiBi beside the sinusoid.

Compute, controls and LaTeX: visattn.lessons.positional_encoding; figures and their words:
visattn.figures.positional_encoding. Each lesson section is a tab (the open tab is a control, in the
URL; every tab's panel is drawn, the open one shows: ui.frame.tabs). Each is a ui.frame.section, so
its own controls rerun it alone. Every section's controls are bound on every full run: a link keeps
them all. The rotation's offset k and the scores' query position p are their figures' own sliders;
what the page says of them follows the slider in the browser (ui.follow)."""

import pandas as pd
import streamlit as st

from ui import url_state, widgets
from ui.charts import download_csv, show, table
from ui.errors import compute
from ui.follow import Version, follow
from ui.formulas import formula
from ui.frame import explain, font_size, page, presenter, section, tabs
from ui.i18n import figure_words, label, t
from ui.text import escape
from visattn.figures import positional_encoding as positional_encoding_figures
from visattn.lessons import positional_encoding as lesson
from visattn.positional_encoding import MAX_CURVES, MAX_D_MODEL, MAX_POSITIONS

OFFSET = lesson.CONTROLS["pe_rk"]  # the rotation circle's own slider
QUERY_AT = lesson.CONTROLS["pe_bp"]  # the score figure's own slider


def heading(title: str, intro: str, level=st.subheader) -> None:
    """A heading and its prose (hidden in presenter mode)."""
    level(title)
    explain(intro)


def plot(png: str, builder, /, *args, key: str | None = None) -> None:
    """A figure of visattn.figures.positional_encoding in the page's language and font size; its
    camera button saves ``png``."""
    words = figure_words(positional_encoding_figures.Words)
    show(builder(*args, words=words, font_size=font_size()), png, key=key)


# ---------------------------------------------------------------- the sinusoidal table


@section
def section_table() -> None:
    """The table of sines and cosines: n and d_model change all three figures (so they share this
    section), the list of dimensions only the curves."""
    st.header(label("positional_encoding.sections", "table"))
    explain(t("positional_encoding.table_intro"), fold="common.about_section")
    left, middle, right = st.columns(3)
    n = widgets.number(
        lesson.CONTROLS["pe_n"],
        t("positional_encoding.n_positions"),
        where=left,
        help=t("positional_encoding.n_help", max=MAX_POSITIONS),
    )
    d = widgets.number(
        lesson.CONTROLS["pe_d"],
        t("positional_encoding.d_model"),
        where=middle,
        help=t("positional_encoding.d_help", max=MAX_D_MODEL),
    )
    dims_text = widgets.text(
        lesson.CONTROLS["pe_dims"],
        t("positional_encoding.dims"),
        where=right,
        help=t("positional_encoding.dims_help", max=MAX_CURVES, chars=lesson.MAX_DIMS_CHARS),
    )
    table = compute("pe_table", lesson.table, n, d)
    if table is None:
        return
    table_heatmap(table)
    formula(lesson.TABLE_LATEX, "positional_table")  # the table's rule, under the table
    heading(t("positional_encoding.curves_heading"), t("positional_encoding.curves_intro"))
    chosen_curves(table, dims_text)
    wavelength_intro = t(
        "positional_encoding.wave_intro", shortest=table.shortest, longest=table.longest, d=table.d
    )
    heading(t("positional_encoding.wave_heading"), wavelength_intro)
    wavelengths(table)


def table_heatmap(table: lesson.Table) -> None:
    """The table as a heatmap (every few positions and pairs of a large one) and its CSV."""
    if table.downsampled:
        downsampled = t(
            "positional_encoding.downsampled",
            n=table.n,
            d=table.d,
            rows=len(table.rows),
            cols=len(table.cols),
            rstep=table.rstep,
            cstep=table.cstep,
        )
        st.info(downsampled)
    # a new chart when the shape changes: Plotly keeps stale tick positions across an update; a
    # chart's key (chart_…) is what a projector opens the page on (ui/lecture/tour.py)
    shape = f"{len(table.rows)}x{len(table.cols)}"
    plot(
        "sinusoidal_table",
        positional_encoding_figures.table_heatmap,
        table,
        key=f"chart_sinusoidal_table_{shape}",
    )
    positions = [int(r) for r in table.rows]
    columns = [int(c) for c in table.cols]
    download_csv(table.shown, "sinusoidal_table", positions, columns)


def chosen_curves(table: lesson.Table, dims_text: str) -> None:
    """The columns typed in the dimensions box, over every position of the table."""
    curves = compute("pe_curves", lesson.curves, table.n, table.d, dims_text)
    if curves is None:
        return
    if curves.dropped:
        dropped = ", ".join(str(k) for k in curves.dropped)
        st.caption(t("positional_encoding.dims_dropped", dims=dropped, last=table.d - 1))
    plot("sinusoid_curves", positional_encoding_figures.dimension_curves, curves)


def wavelengths(table: lesson.Table) -> None:
    """Each sin/cos pair's wavelength on a log axis, beside the table's n positions."""
    plot("sinusoid_wavelengths", positional_encoding_figures.wavelength_plot, table)
    if table.slow is not None:
        st.caption(t("positional_encoding.wave_slow", i=table.slow, dim=2 * table.slow, n=table.n))


# ---------------------------------------------------------------- relative position


@section
def section_relative() -> None:
    """PE(p)·PE(q) depends on the offset only; then one pair turned k positions on."""
    heading(
        label("positional_encoding.sections", "relative"),
        t("positional_encoding.rel_intro"),
        st.header,
    )
    left, right = st.columns(2)
    d = widgets.select_slider(
        lesson.CONTROLS["pe_rd"], t("positional_encoding.d_model"), where=left
    )
    n = widgets.slider(lesson.CONTROLS["pe_rn"], t("positional_encoding.n_positions"), where=right)
    relative = lesson.relative(d, n)
    plot("pe_dot_matrix", positional_encoding_figures.dot_matrix, relative)
    plot("pe_dot_offset", positional_encoding_figures.offset_curve, relative)
    st.success(t("positional_encoding.offset_spread", spread=relative.spread))
    section_rotation(d, n)


@section
def section_rotation(d: int, n: int) -> None:
    """One pair turned k positions on: the pair and p rerun only this; k is the circle's own
    slider, and the formula and its check follow it."""
    heading(t("positional_encoding.rot_heading"), t("positional_encoding.rot_intro"))
    last_pair = d // 2 - 1  # the pair must exist at this d_model
    widgets.clamp(lesson.CONTROLS["pe_ri"], hi=last_pair)
    left, right = st.columns(2)
    i = widgets.select_slider(
        lesson.CONTROLS["pe_ri"], t("positional_encoding.pair"), where=left, hi=last_pair
    )
    p = widgets.number(lesson.CONTROLS["pe_rp"], t("positional_encoding.position_p"), where=right)
    rotation = lesson.rotation(d, i, widgets.in_figure(OFFSET), p, n, narrow=presenter())

    def check(j: int) -> Version:
        """The formula and its check at the slider's j-th offset."""
        q, err = p + rotation.ks[j], rotation.errs[j]
        caption = t("positional_encoding.rot_check", i=i, a=2 * i, b=2 * i + 1, p=p, q=q, err=err)
        return Version(tex=rotation.latex[j], caption=caption)

    follow(OFFSET, {k: check(j) for j, k in enumerate(rotation.ks)}, "positional_rotation")
    plot("pe_rotation_circle", positional_encoding_figures.rotation_live, rotation)


# ---------------------------------------------------------------- why attention needs order


@section
def section_order() -> None:
    """The same sentence in two orders: equal outputs without positions, different with them."""
    heading(
        label("positional_encoding.sections", "order"),
        t("positional_encoding.order_intro"),
        st.header,
    )
    left, right = st.columns([2, 1])
    pair = widgets.radio(
        lesson.CONTROLS["pe_pair"], t("positional_encoding.pair_choice"), where=left
    )
    d = widgets.select_slider(
        lesson.CONTROLS["pe_od"], t("positional_encoding.d_model"), where=right
    )
    if pair == "custom":
        text_help = t("positional_encoding.text_help", chars=lesson.MAX_SENTENCE_CHARS)
        left, right = st.columns(2)
        a = widgets.text(
            lesson.CONTROLS["pe_a"], t("positional_encoding.text_a"), where=left, help=text_help
        )
        b = widgets.text(
            lesson.CONTROLS["pe_b"], t("positional_encoding.text_b"), where=right, help=text_help
        )
    else:
        a, b = lesson.PAIRS[pair]
    order = compute("pe_order", lesson.order, a, b, d)
    if order is None:
        return
    tokens_a, tokens_b = order.plain.tokens_a, order.plain.tokens_b
    moves = ", ".join(f"{row.token} ← {row.source}" for row in order.rows)
    tokens = t(
        "positional_encoding.tokens",
        a=escape(" · ".join(tokens_a)),
        b=escape(" · ".join(tokens_b)),
        pairs=escape(moves),
    )
    st.markdown(tokens)
    for variant, run in order.runs.items():
        heading(
            label("positional_encoding.variants", variant),
            label("positional_encoding.variant_intro", variant),
        )
        left, right = st.columns(2)
        with left:
            plot(
                f"order_{variant}_A", positional_encoding_figures.order_weights, order, variant, "A"
            )
        with right:
            plot(
                f"order_{variant}_B", positional_encoding_figures.order_weights, order, variant, "B"
            )
        err = lesson.fmt(run.max_difference, 2)
        difference = label("positional_encoding.variant_diff", variant, err=err)
        if run.max_difference < lesson.SAME:
            st.success(difference)
        else:
            st.info(difference)
    columns = [
        t("positional_encoding.col_token"),
        t("positional_encoding.col_from"),
        t("positional_encoding.col_to"),
        t("positional_encoding.col_without"),
        t("positional_encoding.col_with"),
    ]
    st.markdown(t("positional_encoding.table_heading"))
    table(
        pd.DataFrame(order.rows, columns=columns),
        formats={columns[3]: "%.2e", columns[4]: "%.3f"},
        hide_index=True,
        width="content",
    )


def gap_notes(p: int, rope: str, sin: str) -> Version:
    """How far the query-at-p curves lie from the query-at-0 ones: RoPE's and the added
    sinusoids'."""
    rope_gap = t("positional_encoding.rope_gap", p=p, err=rope)
    sin_gap = t("positional_encoding.sin_gap", p=p, gap=sin)
    return Version(notes=(("success", rope_gap), ("info", sin_gap)))


@section
def section_beyond() -> None:
    """RoPE and added sinusoids for one (q, k) pair as the key moves away (the query's position p is
    the score figure's own slider; the notes that name p follow it); then ALiBi's heads, which p
    does not change."""
    heading(
        label("positional_encoding.sections", "beyond"),
        t("positional_encoding.beyond_intro"),
        st.header,
    )
    formula(lesson.beyond_latex(narrow=presenter()), "positional_beyond")
    first, second, third = st.columns(3)
    d = widgets.select_slider(
        lesson.CONTROLS["pe_bd"], t("positional_encoding.d_model"), where=first
    )
    far = widgets.slider(
        lesson.CONTROLS["pe_bmax"], t("positional_encoding.max_distance"), where=second
    )
    qk = widgets.radio(
        lesson.CONTROLS["pe_bqk"], t("positional_encoding.qk"), where=third, horizontal=False
    )
    beyond = lesson.beyond(d, widgets.in_figure(QUERY_AT), far, qk)
    steps = lesson.beyond_steps(beyond)
    plot("score_vs_distance", positional_encoding_figures.score_live, beyond, steps)
    gaps = zip(steps.ps, steps.rope_gap, steps.sin_gap, strict=True)
    follow(QUERY_AT, {p: gap_notes(p, rope, sin) for p, rope, sin in gaps}, "positional_gaps")
    explain(t("positional_encoding.score_notes"))
    section_alibi(beyond)


@section
def section_alibi(beyond: lesson.Beyond) -> None:
    """ALiBi's heads over the same (q, k): its own controls rerun only this."""
    heading(t("positional_encoding.alibi_heading"), t("positional_encoding.alibi_intro"))
    left, right = st.columns(2)
    H = widgets.slider(lesson.CONTROLS["pe_bh"], t("positional_encoding.alibi_heads"), where=left)
    n = widgets.slider(
        lesson.CONTROLS["pe_bn"], t("positional_encoding.alibi_positions"), where=right
    )
    alibi = lesson.alibi(H, n, beyond)
    st.markdown(t("positional_encoding.slopes", slopes=", ".join(alibi.slopes)))
    plot("alibi_score_vs_distance", positional_encoding_figures.alibi_lines, beyond, alibi)
    plot("alibi_bias", positional_encoding_figures.alibi_grid, alibi, 2 if presenter() else 4)
    row_names = [
        t("positional_encoding.csv_head_row", h=h + 1, i=i) for h in range(H) for i in range(n)
    ]
    download_csv(alibi.bias.reshape(H * n, n), "alibi_bias", row_names, range(n))  # (H·n, n)


SECTIONS = {
    "table": section_table,
    "relative": section_relative,
    "order": section_order,
    "beyond": section_beyond,
}


def sections() -> None:
    """Each section in its tab's panel (ui.frame.tabs: opening a tab shows it, drawing nothing)."""
    for name, panel in tabs(lesson.CONTROLS["pe_sec"]).items():
        with panel:
            SECTIONS[name]()


with page("positional_encoding"):
    url_state.bind_controls(lesson.CONTROLS)  # every section's controls, whichever is drawn
    st.title(t("positional_encoding.title"))
    explain(t("positional_encoding.intro"), fold="common.about_page")
    sections()
