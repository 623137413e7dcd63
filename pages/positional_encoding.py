"""Positional encoding (article 003): the sinusoidal table, relative position, why attention needs order,
and RoPE and ALiBi beside the sinusoid.

One section is drawn at a time (chosen with a control kept in the URL); every section's controls are
registered on every run so that a link keeps all of them.
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

from ui import url_state
from ui.charts import download_csv, show
from ui.errors import compute, show_error
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures, tokenize
from visattn import positional as P

SECTIONS = ["table", "relative", "order", "beyond"]
PAIRS = {"zh": ("小明喜欢吃苹果", "苹果喜欢吃小明"), "en": ("the dog bit the man", "the man bit the dog")}
MAX_SHOWN_POSITIONS, MAX_SHOWN_DIMS = 512, 256   # what a browser draws quickly as a heatmap (float32, no cell text)
MAX_CURVES = 8
EVEN_SMALL = list(range(2, 65, 2))
EVEN_WIDE = list(range(2, 257, 2))
BASE = 10000.0

# Every control of the page: URL key → (default, bounds or options). All are bound on every run.
CONTROLS = {
    "pe_sec": ("table", {"options": SECTIONS}),
    # the table: generous limits so that a user can type a value that is too large and read why
    "pe_n": (64, {"lo": 0, "hi": 100_000}),
    "pe_d": (128, {"lo": 0, "hi": 10_000}),
    "pe_dims": ("0, 1, 20, 21, 60", {}),
    # relative position
    "pe_rd": (32, {"options": EVEN_WIDE}),
    "pe_rn": (40, {"lo": 2, "hi": 128}),
    "pe_ri": (2, {"lo": 0, "hi": 127}),
    "pe_rk": (3, {"lo": 0, "hi": 1000}),
    "pe_rp": (5, {"lo": 0, "hi": 1000}),
    # why attention needs it
    "pe_pair": ("zh", {"options": [*PAIRS, "custom"]}),
    "pe_a": (PAIRS["zh"][0], {}),
    "pe_b": (PAIRS["zh"][1], {}),
    "pe_od": (16, {"options": EVEN_SMALL}),
    # RoPE and ALiBi
    "pe_bd": (64, {"options": EVEN_WIDE}),
    "pe_bp": (200, {"lo": 0, "hi": 1000}),
    "pe_bmax": (160, {"lo": 8, "hi": 1000}),
    "pe_bqk": ("same", {"options": ["same", "random"]}),
    "pe_bh": (8, {"lo": 1, "hi": 16}),
    "pe_bn": (10, {"lo": 3, "hi": 24}),
}


def bound(key: str) -> str:
    default, kind = CONTROLS[key]
    return url_state.bind(key, default, **kind)


def clamp(key: str, lo, hi) -> None:
    """Keep a control whose range depends on another inside that range before it is drawn."""
    st.session_state[key] = min(max(st.session_state[key], lo), hi)


def fmt(v: float, digits: int = 4) -> str:
    return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"


# ---------------------------------------------------------------- the sinusoidal table

def checked_table(n, d) -> tuple[int, int]:
    """Translated messages for the table's limits; checked before anything is allocated."""
    if n < 1:
        raise ValueError(t("positional.err_n_small", n=n))
    if n > P.MAX_POSITIONS:
        raise ValueError(t("positional.err_n_big", n=n, max=P.MAX_POSITIONS))
    if d < 2:
        raise ValueError(t("positional.err_d_small", d=d))
    if d > P.MAX_D_MODEL:
        raise ValueError(t("positional.err_d_big", d=d, max=P.MAX_D_MODEL))
    if d % 2:
        raise ValueError(t("positional.err_d_odd", d=d, lower=d - 1, upper=d + 1))
    return P.check_table(n, d)          # the compute package's own check, as a backstop


def parse_dims(text: str, d: int) -> tuple[list[int], list[int]]:
    """(dimensions to plot, dimensions left out because d_model has no such column)."""
    parts = [p for p in text.replace("，", ",").replace(",", " ").split() if p]
    try:
        dims = list(dict.fromkeys(int(p) for p in parts))
    except ValueError:
        raise ValueError(t("positional.err_dims", text=text[:40], last=d - 1)) from None
    if not dims:
        raise ValueError(t("positional.err_dims", text=text[:40], last=d - 1))
    if len(dims) > MAX_CURVES:
        raise ValueError(t("positional.err_dims_many", n=len(dims), max=MAX_CURVES))
    keep = [k for k in dims if 0 <= k < d]
    return keep or [0, 1], [k for k in dims if not 0 <= k < d]


def table_view(n: int, d: int):
    n, d = checked_table(n, d)
    rows = np.arange(0, n, math.ceil(n / MAX_SHOWN_POSITIONS))
    cols = P.pair_columns(d, MAX_SHOWN_DIMS)
    shown = P.sinusoidal_at(rows, d, BASE, dims=cols)          # (≤256, ≤128), never the whole table
    return n, d, rows, cols, shown


def sparse_ticks(fig, labels, axis: str, most: int = 24) -> None:
    """Label every k-th cell only, so long axes stay readable."""
    step = max(1, math.ceil(len(labels) / most))
    idx = list(range(0, len(labels), step))
    shown = [str(labels[i]) for i in idx]          # the axes are categorical: ticks name categories
    kw = dict(tickmode="array", tickvals=shown, ticktext=shown, tickangle=0)
    (fig.update_xaxes if axis == "x" else fig.update_yaxes)(**kw)


def section_table() -> None:
    st.header(t("positional.sec_table"))
    explain(t("positional.table_intro"))
    st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right),\qquad "
             r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)")
    c1, c2, c3 = st.columns(3)
    n = c1.number_input(t("positional.n_positions"), min_value=0, max_value=100_000, step=1, key=bound("pe_n"),
                        help=t("positional.n_help", max=P.MAX_POSITIONS))
    d = c2.number_input(t("positional.d_model"), min_value=0, max_value=10_000, step=2, key=bound("pe_d"),
                        help=t("positional.d_help", max=P.MAX_D_MODEL))
    dims_text = c3.text_input(t("positional.dims"), key=bound("pe_dims"), max_chars=80,
                              help=t("positional.dims_help", max=MAX_CURVES))
    view = compute("pe_table", table_view, int(n), int(d))
    if view is None:
        return
    n, d, rows, cols, shown = view
    if len(rows) < n or len(cols) < d:
        st.info(t("positional.downsampled", n=n, d=d, rows=len(rows), cols=len(cols),
                  rstep=int(rows[1] - rows[0]) if len(rows) > 1 else 1, cstep=int(cols[2] - cols[0]) // 2 if len(cols) > 2 else 1))
    fig = figures.heatmap(shown, [int(c) for c in cols], [int(r) for r in rows], title=t("positional.table_title", n=n, d=d),
                          x_title=t("common.dimension"), y_title=t("common.position"), value_name="PE", weights=False,
                          show_text=False, height=640, font_size=font_size())
    sparse_ticks(fig, [int(c) for c in cols], "x")
    sparse_ticks(fig, [int(r) for r in rows], "y", most=16)
    # a new chart element when the shape changes: Plotly keeps stale tick positions across an in-place update
    show(fig, "sinusoidal_table", key=f"pe_table_{len(rows)}x{len(cols)}")
    download_csv(shown, "sinusoidal_table", [int(r) for r in rows], [int(c) for c in cols])

    st.subheader(t("positional.curves_heading"))
    explain(t("positional.curves_intro"))
    try:
        dims, dropped = parse_dims(dims_text, d)
    except ValueError as exc:
        show_error(exc)
    else:
        if dropped:
            st.caption(t("positional.dims_dropped", dims=", ".join(map(str, dropped)), last=d - 1))
        pos = np.arange(n)
        values = P.sinusoidal_at(pos, d, BASE, dims=dims)                 # (n, len(dims))
        kind = {0: "sin", 1: "cos"}
        ys = {t("positional.curve_name", k=k, fn=kind[k % 2], i=k // 2): values[:, j] for j, k in enumerate(dims)}
        show(figures.curves(pos, ys, title=t("positional.curves_title"), x_title=t("common.position"),
                            y_title="PE", font_size=font_size()), "sinusoid_curves")

    st.subheader(t("positional.wave_heading"))
    wl = P.wavelengths(d, BASE)
    pairs = np.arange(d // 2)
    explain(t("positional.wave_intro", shortest=fmt(wl[0]), longest=fmt(wl[-1], 6), d=d))
    fig = figures.curves(pairs, {t("positional.wave_name"): wl}, title=t("positional.wave_title", d=d),
                         x_title=t("positional.pair_axis"), y_title=t("positional.wave_axis"), mode="lines+markers",
                         font_size=font_size())
    fig.update_yaxes(type="log")
    # a trace, not add_hline: shapes on a log axis take log10 coordinates but their annotations do not
    fig.add_scatter(x=[0, d // 2 - 1], y=[n, n], mode="lines", line=dict(dash="dot", color="#555"),
                    name=t("positional.wave_n", n=n))
    show(fig, "sinusoid_wavelengths")
    slow = int(np.argmax(wl > n)) if (wl > n).any() else None
    if slow is not None:
        st.caption(t("positional.wave_slow", i=slow, dim=2 * slow, n=n))


# ---------------------------------------------------------------- relative position

def section_relative() -> None:
    st.header(t("positional.sec_relative"))
    explain(t("positional.rel_intro"))
    c1, c2 = st.columns(2)
    d = c1.select_slider(t("positional.d_model"), EVEN_WIDE, key=bound("pe_rd"))
    n = c2.slider(t("positional.n_positions"), 2, 128, key=bound("pe_rn"))
    pe = P.sinusoidal_encoding(n, d, BASE)                                  # (n, d), small
    dots = pe @ pe.T                                                        # (n, d) x (d, n) -> (n, n)
    fig = figures.heatmap(dots, list(range(n)), list(range(n)), title=t("positional.dot_title", d=d),
                          x_title=t("positional.pos_q"), y_title=t("positional.pos_p"), value_name="PE·PE",
                          weights=False, height=520, font_size=font_size())
    most = 40 if font_size() < 16 else 16          # fewer, larger labels on a projector
    sparse_ticks(fig, list(range(n)), "x", most=most)
    sparse_ticks(fig, list(range(n)), "y", most=most)
    show(fig, "pe_dot_matrix")
    offsets = np.arange(-(n - 1), n)
    rows = sorted({0, n // 3, (2 * n) // 3})
    markers = {t("positional.row_p", p=p): (np.arange(n) - p, dots[p]) for p in rows}
    fig = figures.curves(offsets, {t("positional.formula_curve"): P.offset_dot(offsets, d, BASE)},
                         title=t("positional.offset_title"), x_title=t("positional.offset_axis"), y_title="PE(p)·PE(q)",
                         markers=markers, font_size=font_size())
    for trace in fig.data[1:]:
        trace.marker.size = 6 if n > 48 else 9
    show(fig, "pe_dot_offset")
    # spread of PE(p)·PE(q) over all pairs with the same offset: zero up to rounding
    spread = max(float(np.ptp(np.diagonal(dots, k))) for k in range(-(n - 1), n))
    st.success(t("positional.offset_spread", spread=f"{spread:.1e}"))

    st.subheader(t("positional.rot_heading"))
    explain(t("positional.rot_intro"))
    clamp("pe_ri", 0, d // 2 - 1)
    c1, c2, c3 = st.columns(3)
    i = c1.slider(t("positional.pair"), 0, d // 2 - 1, key=bound("pe_ri")) if d > 2 else c1.number_input(
        t("positional.pair"), 0, 0, key=bound("pe_ri"))
    k = c2.number_input(t("positional.offset_k"), 0, 1000, key=bound("pe_rk"))
    p = c3.number_input(t("positional.position_p"), 0, 1000, key=bound("pe_rp"))
    omega = P.frequencies(d, BASE)[i]
    M = P.rotation_matrix(k, i, d, BASE)
    now = P.sinusoidal_at([p, p + k], d, BASE, dims=[2 * i, 2 * i + 1])    # (2, 2): rows PE(p), PE(p + k)
    moved = M @ now[0]
    st.latex(rf"\omega_{{{i}}} = 10000^{{-{2 * i}/{d}}} = {fmt(omega)},\qquad \theta = k\,\omega_{{{i}}} = {k}\times{fmt(omega)} = {fmt(k * omega)}")
    st.latex(rf"M_{{{k}}} = \begin{{pmatrix}} \cos\theta & \sin\theta \\ -\sin\theta & \cos\theta \end{{pmatrix}}"
             rf" = \begin{{pmatrix}} {M[0, 0]:.4f} & {M[0, 1]:.4f} \\ {M[1, 0]:.4f} & {M[1, 1]:.4f} \end{{pmatrix}}")
    st.latex(rf"M_{{{k}}}\,PE({p}) = \begin{{pmatrix}} {M[0, 0]:.4f} & {M[0, 1]:.4f} \\ {M[1, 0]:.4f} & {M[1, 1]:.4f} \end{{pmatrix}}"
             rf"\begin{{pmatrix}} {now[0, 0]:.4f} \\ {now[0, 1]:.4f} \end{{pmatrix}}"
             rf" = \begin{{pmatrix}} {moved[0]:.4f} \\ {moved[1]:.4f} \end{{pmatrix}}"
             rf",\qquad PE({p + k}) = \begin{{pmatrix}} {now[1, 0]:.4f} \\ {now[1, 1]:.4f} \end{{pmatrix}}")
    st.caption(t("positional.rot_check", i=i, a=2 * i, b=2 * i + 1, p=p, q=p + k,
                 err=f"{float(np.abs(moved - now[1]).max()):.1e}"))
    # the pair (sin, cos) walks round the unit circle, one step of ω_i per position
    steps = np.arange(0, max(n, p + k + 1))
    circle = P.sinusoidal_at(steps, d, BASE, dims=[2 * i, 2 * i + 1])
    fig = figures.curves(circle[:, 0], {t("positional.circle_name", i=i): circle[:, 1]}, mode="lines+markers",
                         title=t("positional.circle_title", i=i), x_title=f"PE[pos, {2 * i}] = sin",
                         y_title=f"PE[pos, {2 * i + 1}] = cos",
                         markers={f"PE({p})": ([now[0, 0]], [now[0, 1]]), f"PE({p + k})": ([now[1, 0]], [now[1, 1]])},
                         font_size=font_size())
    fig.update_yaxes(scaleanchor="x", scaleratio=1, range=[-1.15, 1.15])
    fig.update_xaxes(range=[-1.15, 1.15])
    fig.update_layout(height=460)
    show(fig, "pe_rotation_circle")


# ---------------------------------------------------------------- why attention needs it

def checked_pair(a: str, b: str):
    """The two texts' tokens, or a translated ValueError (empty, too long, not a reordering)."""
    toks = []
    for text in (a, b):
        if not text.strip():
            raise ValueError(t("positional.err_empty"))
        try:
            toks.append(tokenize(text))
        except ValueError:
            raise ValueError(t("positional.err_long", max=64)) from None
    if sorted(toks[0]) != sorted(toks[1]):
        raise ValueError(t("positional.err_not_perm"))
    return toks


def order_view(a: str, b: str, d: int):
    checked_pair(a, b)
    return P.word_order(a, b, d, positions=False), P.word_order(a, b, d, positions=True)


def section_order() -> None:
    st.header(t("positional.sec_order"))
    explain(t("positional.order_intro"))
    c1, c2 = st.columns([2, 1])
    pair = c1.radio(t("positional.pair_choice"), [*PAIRS, "custom"], key=bound("pe_pair"), horizontal=True,
                    format_func=lambda s: t(f"positional.pair_{s}"))
    d = c2.select_slider(t("positional.d_model"), EVEN_SMALL, key=bound("pe_od"))
    if pair == "custom":
        c1, c2 = st.columns(2)
        a = c1.text_input(t("positional.text_a"), key=bound("pe_a"), max_chars=200)
        b = c2.text_input(t("positional.text_b"), key=bound("pe_b"), max_chars=200)
    else:
        a, b = PAIRS[pair]
    res = compute("pe_order", order_view, a, b, d)
    if res is None:
        return
    plain, with_pe = res
    A, B = plain.tokens_a, plain.tokens_b
    st.markdown(t("positional.tokens", a=" · ".join(A), b=" · ".join(B)))
    st.markdown(t("positional.perm", pairs=", ".join(f"{B[j]} ← {int(plain.perm[j])}" for j in range(len(B)))))
    for res_, key in ((plain, "without"), (with_pe, "with")):
        st.subheader(t(f"positional.{key}_heading"))
        explain(t(f"positional.{key}_intro"))
        c1, c2 = st.columns(2)
        for col, w, toks, label, name in ((c1, res_.weights_a, A, "A", "a"), (c2, res_.weights_b, B, "B", "b")):
            glued = all(len(x) == 1 and not x.isascii() for x in toks)     # CJK: one character per token
            fig = figures.heatmap(w, toks, toks, title=t("positional.weights_title", s=label, text=("" if glued else " ").join(toks)),
                                  x_title=t("common.key"), y_title=t("common.query"), value_name=t("common.weight"),
                                  font_size=font_size())
            if glued:
                fig.update_xaxes(tickangle=0)                                 # upright characters
            with col:
                show(fig, f"order_{key}_{name}")
        err = res_.max_difference
        msg = t(f"positional.{key}_diff", err=f"{err:.1e}")
        (st.success if err < 1e-9 else st.info)(msg)
    rows = [{t("positional.col_token"): B[j], t("positional.col_from"): int(plain.perm[j]), t("positional.col_to"): j,
             t("positional.col_without"): float(np.linalg.norm(plain.difference[j])),
             t("positional.col_with"): float(np.linalg.norm(with_pe.difference[j]))} for j in range(len(B))]
    st.markdown(t("positional.table_heading"))
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config={
        t("positional.col_without"): st.column_config.NumberColumn(format="%.2e"),
        t("positional.col_with"): st.column_config.NumberColumn(format="%.3f")})


# ---------------------------------------------------------------- RoPE and ALiBi

def slope_text(m: float) -> str:
    e = -math.log2(m)
    return f"1/{2 ** round(e)}" if abs(e - round(e)) < 1e-9 else f"2^(−{e:.3g})"


def section_beyond() -> None:
    st.header(t("positional.sec_beyond"))
    explain(t("positional.beyond_intro"))
    st.latex(r"\text{RoPE:}\quad \begin{pmatrix} x_{2i}' \\ x_{2i+1}' \end{pmatrix} = "
             r"\begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}"
             r"\begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix},\quad \theta_i = 10000^{-2i/d}")
    st.latex(r"\text{ALiBi:}\quad s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d}} - m_h\,|i-j|")
    c1, c2, c3, c4 = st.columns(4)
    d = c1.select_slider(t("positional.d_model"), EVEN_WIDE, key=bound("pe_bd"))
    p = c2.slider(t("positional.query_pos"), 0, 1000, key=bound("pe_bp"))
    far = c3.slider(t("positional.max_distance"), 8, 1000, key=bound("pe_bmax"))
    qk = c4.radio(t("positional.qk"), ["same", "random"], key=bound("pe_bqk"), format_func=lambda s: t(f"positional.qk_{s}"))

    rng = np.random.default_rng(0)
    q = rng.standard_normal(d)
    k = q.copy() if qk == "same" else rng.standard_normal(d)
    dist = np.arange(far + 1)
    at0 = P.distance_scores(q, k, 0, dist, slope=0.0, base=BASE)
    atp = P.distance_scores(q, k, p, dist, slope=0.0, base=BASE)
    ys = {t("positional.s_sin", p=0): at0.sinusoidal, t("positional.s_sin", p=p): atp.sinusoidal,
          t("positional.s_rope", p=0): at0.rope, t("positional.s_rope", p=p): atp.rope}
    fig = figures.curves(dist, ys, title=t("positional.score_title"), x_title=t("positional.distance_axis"),
                         y_title=t("positional.score_axis"), font_size=font_size())
    for trace, dash in zip(fig.data, ("solid", "dot", "solid", "dash")):
        trace.line.dash = dash
    show(fig, "score_vs_distance")
    rope_gap = float(np.abs(atp.rope - at0.rope).max())
    sin_gap = float(np.abs(atp.sinusoidal - at0.sinusoidal).max())
    st.success(t("positional.rope_gap", p=p, err=f"{rope_gap:.1e}"))
    st.info(t("positional.sin_gap", p=p, gap=f"{sin_gap:.3g}"))
    explain(t("positional.score_notes"))

    st.subheader(t("positional.alibi_heading"))
    explain(t("positional.alibi_intro"))
    c1, c2 = st.columns(2)
    H = c1.slider(t("positional.alibi_heads"), 1, 16, key=bound("pe_bh"))
    n = c2.slider(t("positional.alibi_positions"), 3, 24, key=bound("pe_bn"))
    slopes = P.alibi_slopes(H)
    st.markdown(t("positional.slopes", slopes=", ".join(slope_text(float(m)) for m in slopes)))
    ys = {t("positional.s_alibi", h=j + 1, m=slope_text(float(m))): P.distance_scores(q, k, 0, dist, slope=float(m)).alibi
          for j, m in enumerate(slopes)}
    show(figures.curves(dist, ys, title=t("positional.alibi_score_title"), x_title=t("positional.distance_axis"),
                        y_title=t("positional.score_axis"), font_size=font_size()), "alibi_score_vs_distance")
    bias = P.alibi_bias(H, n)                                                   # (H, n, n)
    C = min(4, H)
    R = math.ceil(H / C)
    grid = np.full((R * C, n, n), np.nan)
    grid[:H] = bias
    fig = figures.head_grid(grid.reshape(R, C, n, n), list(range(n)), list(range(n)), value_name=t("positional.bias"),
                            query_name=t("common.query"), key_name=t("common.key"),
                            cell_titles=[t("positional.head_slope", h=j + 1, m=slope_text(float(m))) for j, m in enumerate(slopes)]
                            + [""] * (R * C - H),
                            zmin=float(bias.min()) or -1.0, zmax=0.0, colorscale="Blues_r",
                            title=t("positional.alibi_title", n=n), font_size=font_size(), cell_px=270)
    fig.update_xaxes(tickangle=0)
    show(fig, "alibi_bias")
    download_csv(bias.reshape(H * n, n), "alibi_bias", [f"h{j + 1}:{i}" for j in range(H) for i in range(n)], list(range(n)))


with page("positional"):
    st.title(t("positional.title"))
    explain(t("positional.intro"))
    for key in CONTROLS:          # every section's controls live in the URL, whichever section is drawn
        bound(key)
    section = st.segmented_control(t("positional.section"), SECTIONS, key=bound("pe_sec"), required=True,
                                   format_func=lambda s: t(f"positional.sec_{s}"))
    {"table": section_table, "relative": section_relative, "order": section_order, "beyond": section_beyond}[
        section or "table"]()
