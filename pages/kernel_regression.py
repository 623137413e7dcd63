"""Kernel regression: attention as Nadaraya–Watson (articles 002, 000).

Three lessons, one tab each: a query weighs key→value pairs by a kernel (1-D and 2-D keys, with presets);
multi-dimensional Q, K, V with a choice of scoring function; self-attention with Q = K = V = X.
"""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui import url_state
from ui.cache_kernel import fit_sigma, kernel_lesson, scored
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from ui.widgets import matrix_editor, set_matrix
from visattn import figures
from visattn.kernel_regression import KERNELS, PRESETS, InputError
from visattn.scoring import SCORINGS, seeded_additive_weights

# Article 002's multi-dimensional example and its self-attention X.
Q0 = [[64, 85], [61, 80]]
K0 = [[68, 91], [60, 87], [64, 88]]
V0 = [[126, 180], [110, 172], [115, 170]]
X0 = [[67, 91], [60, 87], [64, 84]]
WQ0, WK0, WV0 = seeded_additive_weights(2, 2, hidden=2, seed=0)


# ---- small helpers: translation of compute errors, synced controls, number formatting ------------------------

def translated(fn):
    """``fn`` whose coded InputErrors come out as ValueErrors in the page's language."""
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            text = t(f"kernel.err_{e.code}", **e.params)
            raise ValueError(str(e) if text == f"kernel.err_{e.code}" else text) from None
    return run


def _copy(src, dst):
    st.session_state[dst] = st.session_state[src]


def set_value(key, value):
    st.session_state[key] = value


def slider_and_number(key, label, lo, hi, step, help=None):
    """One value (``key``, in the URL) shown twice: a slider over [lo, hi] for dragging, a box for any exact number."""
    v = float(st.session_state[key])
    st.session_state[key + "_s"] = float(min(max(v, lo), hi))
    st.session_state[key + "_n"] = v
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    c1.slider(label, float(lo), float(hi), step=float(step), key=key + "_s", on_change=_copy, args=(key + "_s", key), help=help)
    c2.number_input(label, step=float(step), format="%g", key=key + "_n", on_change=_copy, args=(key + "_n", key),
                    label_visibility="collapsed")


def num(v, digits=4) -> str:
    """A number for LaTeX: 4 significant digits, powers of ten written out, −∞ for -inf."""
    if np.isneginf(v):
        return r"-\infty"
    s = f"{v:.{digits}g}"
    if "e" in s:
        m, e = s.split("e")
        return rf"{m}\times 10^{{{int(e)}}}"
    return s


def key_text(row) -> str:
    return "(" + ", ".join(f"{x:g}" for x in row) + ")" if len(row) > 1 else f"{row[0]:g}"


def nice_step(span):
    return float(10 ** np.floor(np.log10(max(span, 1e-9) / 100)))


def load_preset():
    p = PRESETS[st.session_state["kr_preset"]]
    set_matrix("kr_data", p.table)
    st.session_state["kr_q"] = p.query[0]
    st.session_state["kr_q2"] = p.query[1] if len(p.query) > 1 else 0.0
    st.session_state["kr_sigma"] = p.sigma


def new_additive_weights():
    seed = st.session_state.get("kr_seed", 0) + 1
    st.session_state["kr_seed"] = seed
    for key, m in zip(("kr_Wq", "kr_Wk", "kr_wv"), seeded_additive_weights(2, 2, hidden=2, seed=seed)):
        set_matrix(key, np.reshape(m, (2, -1)))


def column_labels(preset, n_cols):
    labels = {"waist": (t("kernel.col_waist"), t("kernel.col_weight")),
              "game_strength": (t("kernel.col_strength"), t("kernel.col_ability")),
              "game_both": (t("kernel.col_strength"), t("kernel.col_intelligence"), t("kernel.col_ability")),
              "noisy": ("x", "y")}[preset]
    if len(labels) == n_cols:
        return list(labels)
    return [t("kernel.col_key_n", i=i + 1) for i in range(n_cols - 1)] + [t("common.value")]


def query_ranges(preset, table):
    """(lo, hi) per key feature: the preset's range, widened to take in every key of the table."""
    keys = np.asarray(table, dtype=float)[:, :-1]
    p = PRESETS[preset]
    out = []
    for j in range(keys.shape[1]):
        kmin, kmax = float(keys[:, j].min()), float(keys[:, j].max())
        pad = 0.1 * (kmax - kmin) or 1.0
        lo, hi = p.ranges[j] if keys.shape[1] == len(p.ranges) else (kmin - pad, kmax + pad)
        out.append((float(np.floor(min(lo, kmin - pad))), float(np.ceil(max(hi, kmax + pad)))))
    return tuple(out)


def fit_figure(lesson, q, labels, fs):
    """The fitted curve over the query range, the data points and the current query."""
    b = lesson.breakdown
    fig = figures.curves(lesson.curve_x, {t("kernel.fitted_curve"): lesson.curve_y},
                         markers={t("kernel.data_points"): (b.keys[:, 0], b.values)},
                         title=t("kernel.curve_title"), x_title=labels[0], y_title=labels[-1], font_size=fs)
    fig.data[1].marker.update(size=9, color="#333333")
    fig.add_shape(type="line", x0=q, x1=q, y0=0, y1=1, yref="paper", line=dict(dash="dot", color="#ff7f0e"))
    if b.supported:
        fig.add_trace(go.Scatter(x=[q], y=[b.estimate], mode="markers", name=t("kernel.estimate"),
                                 marker=dict(size=16, symbol="star", color="#ff7f0e"),
                                 hovertemplate=f"{t('common.query')}: %{{x:.4g}}<br>{t('kernel.estimate')}: %{{y:.4g}}<extra></extra>"))
    return fig


def plane_figure(lesson, q, labels, fs):
    """2-D keys as points sized by their weight for the query, over the estimate surface."""
    b = lesson.breakdown
    fig = go.Figure(go.Heatmap(x=lesson.curve_x.astype(np.float32), y=lesson.plane_y.astype(np.float32),
                               z=lesson.curve_y.astype(np.float32), colorscale="Viridis", opacity=0.55,
                               colorbar=dict(title=dict(text=labels[-1]), thickness=14),
                               hovertemplate=f"{labels[0]}: %{{x:.4g}}<br>{labels[1]}: %{{y:.4g}}<br>"
                                             f"{t('kernel.estimate')}: %{{z:.4g}}<extra></extra>"))
    text = [f"{t('common.key')} ({key_text(k)})<br>{labels[-1]}: {v:g}<br>{t('common.weight')}: {w:.4f}"
            for k, v, w in zip(b.keys, b.values, b.weights)]
    fig.add_trace(go.Scatter(x=b.keys[:, 0], y=b.keys[:, 1], mode="markers+text", name=t("kernel.keys_sized"),
                             text=[f"{w:.2f}" for w in b.weights], textposition="top center", hovertext=text,
                             hovertemplate="%{hovertext}<extra></extra>",
                             marker=dict(size=8 + 60 * np.sqrt(b.weights), color="#1f77b4", line=dict(color="white", width=1))))
    fig.add_trace(go.Scatter(x=[q[0]], y=[q[1]], mode="markers", name=t("common.query"),
                             marker=dict(size=18, symbol="star", color="#ff7f0e", line=dict(color="black", width=1)),
                             hovertemplate=f"{t('common.query')} (%{{x:g}}, %{{y:g}})<extra></extra>"))
    fig.update_xaxes(title=labels[0])
    fig.update_yaxes(title=labels[1])
    fig.update_layout(title=t("kernel.plane_title"), height=520, font=dict(size=fs), margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", y=-0.15))
    return fig


def loo_figure(lesson, fs):
    s_fit, grid, errors = lesson.fit
    errors = np.where(np.isfinite(errors), errors, np.nan)
    now = {t("kernel.current_sigma", sigma=f"{lesson.sigma:.4g}"): ([lesson.sigma], [lesson.loo_current])}
    fig = figures.curves(grid, {t("kernel.loo_error"): errors}, title=t("kernel.loo_title"), x_title=t("kernel.sigma"),
                         y_title=t("kernel.loo_error"), font_size=fs, markers=now if np.isfinite(lesson.loo_current) else None)
    fig.add_shape(type="line", x0=s_fit, x1=s_fit, y0=0, y1=1, yref="paper", line=dict(dash="dash", color="#2ca02c"))
    fig.add_annotation(x=np.log10(s_fit), y=1, yref="paper", text=t("kernel.fitted_sigma", sigma=f"{s_fit:.4g}"),
                       showarrow=False, yanchor="bottom", font=dict(color="#2ca02c"))
    fig.update_xaxes(type="log")
    return fig


def formula(b, kernel, sigma):
    """The kernel, the softmax and the weighted sum, first in symbols, then with this query's numbers."""
    d = r"\lVert q-k_i\rVert" if len(b.query) > 1 else r"|q-k_i|"
    score = {"gaussian": rf"s_i=-\frac{{{d}^2}}{{2\sigma^2}}",
             "laplace": rf"s_i=-\frac{{{d}}}{{\sigma}}",
             "boxcar": rf"s_i=\begin{{cases}}0 & {d}\le\sigma\\ -\infty & {d}>\sigma\end{{cases}}",
             "epanechnikov": rf"s_i=\begin{{cases}}\ln\!\left(1-\frac{{{d}^2}}{{\sigma^2}}\right) & {d}<\sigma\\ -\infty & {d}\ge\sigma\end{{cases}}"}
    st.latex(score[kernel] + r",\qquad \alpha_i=\frac{e^{s_i}}{\sum_j e^{s_j}},\qquad f(q)=\sum_i \alpha_i v_i")
    if not b.supported:
        return
    top = np.argsort(-b.weights, kind="stable")
    i = int(top[0])
    dist = (rf"\lVert{key_text(b.query)}-{key_text(b.keys[i])}\rVert" if len(b.query) > 1
            else rf"|{b.query[0]:g}-{b.keys[i, 0]:g}|")
    shown = {"gaussian": rf"-\frac{{{num(b.distances[i])}^2}}{{2\cdot {num(sigma)}^2}}",
             "laplace": rf"-\frac{{{num(b.distances[i])}}}{{{num(sigma)}}}",
             "boxcar": "0", "epanechnikov": rf"\ln\!\left(1-\frac{{{num(b.distances[i])}^2}}{{{num(sigma)}^2}}\right)"}[kernel]
    total = float(b.exp_scores.sum())
    if total > 1e-300:
        alpha = rf"\alpha_{{{i + 1}}}=\frac{{{num(b.exp_scores[i])}}}{{{num(total)}}}={num(b.weights[i])}"
    else:  # e^{s} underflows for every key: show what is computed, e^{s − max s}
        alpha = rf"\alpha_{{{i + 1}}}=\frac{{e^{{s_{{{i + 1}}}-\max_j s_j}}}}{{\sum_j e^{{s_j-\max_j s_j}}}}={num(b.weights[i])}"
    st.latex(rf"d_{{{i + 1}}}={dist}={num(b.distances[i])},\qquad s_{{{i + 1}}}={shown}={num(b.scores[i])}")
    st.latex(rf"e^{{s_{{{i + 1}}}}}={num(b.exp_scores[i])},\qquad {alpha}")
    n_terms = 4
    terms = [rf"{num(b.weights[j], 3)}\times {num(b.values[j])}" for j in top[:n_terms]]
    more = len(top) - n_terms
    rest = rf"+\underbrace{{\cdots}}_{{{more}}}" if more > 0 else ""
    fq = rf"f{key_text(b.query)}" if len(b.query) > 1 else rf"f({key_text(b.query)})"
    st.latex(fq + "=" + "+".join(terms) + rest + rf"={num(b.estimate, 6)}")
    if more > 0:
        st.caption(t("kernel.more_terms", n=more, weight=f"{b.weights[top[n_terms:]].sum():.3g}"))


def breakdown_table(b) -> pd.DataFrame:
    """key, value, score, exp(score), weight, weight × value per key, and the Σ row."""
    fmt = lambda v: "−∞" if np.isneginf(v) else f"{v:.4g}"  # noqa: E731
    rows = [[key_text(k), f"{v:g}", fmt(s), fmt(e), f"{w:.4f}", f"{c:.4f}"]
            for k, v, s, e, w, c in zip(b.keys, b.values, b.scores, b.exp_scores, b.weights, b.contributions)]
    rows.append(["", "", "", fmt(b.exp_scores.sum()), f"{b.weights.sum():.4f}",
                 f"{b.estimate:.4f}" if b.supported else "—"])
    cols = [t("common.key"), t("common.value"), t("kernel.col_score"), t("kernel.col_exp"), t("common.weight"),
            t("kernel.col_contrib")]
    return pd.DataFrame(rows, columns=cols, index=[str(i + 1) for i in range(len(b.keys))] + ["Σ"])


def comparison(Q, K, V, W):
    """Largest weight of each query for every scoring × (raw, standardised): how one-hot softmax gets."""
    rows, index = [], []
    for method in SCORINGS:
        for std in (False, True):
            r = scored(Q, K, V, method, *W, std)
            rows.append([f"{w.max():.3f} → k{int(w.argmax()) + 1}" for w in r.weights]
                        + [f"{np.ptp(r.scores, axis=1).max():.3g}"])
            index.append(f"{method_label(method)} · {t('kernel.standardized') if std else t('kernel.raw')}")
    cols = [t("kernel.top_weight_of", q=f"q{i + 1}") for i in range(len(Q))] + [t("kernel.score_gap")]
    biggest = float(np.abs(scored(Q, K, V, "dot", *W, False).scores).max())
    return pd.DataFrame(rows, index=index, columns=cols), biggest


def method_label(m):
    return {"additive": t("kernel.s_additive"), "dot": t("kernel.s_dot"), "scaled_dot": t("kernel.s_scaled_dot")}[m]


def kernel_label(k):
    return {"gaussian": t("kernel.k_gaussian"), "boxcar": t("kernel.k_boxcar"), "epanechnikov": t("kernel.k_epanechnikov"),
            "laplace": t("kernel.k_laplace")}[k]


def kernel_name(k):
    """The kernel's short name, for sentences."""
    return {"gaussian": t("kernel.kn_gaussian"), "boxcar": t("kernel.kn_boxcar"), "epanechnikov": t("kernel.kn_epanechnikov"),
            "laplace": t("kernel.kn_laplace")}[k]


def preset_label(p):
    return {"waist": t("kernel.p_waist"), "game_strength": t("kernel.p_game_strength"), "game_both": t("kernel.p_game_both"),
            "noisy": t("kernel.p_noisy")}[p]


# ---- the page ---------------------------------------------------------------------------------------------------

with page("kernel"):
    fs = font_size()
    st.title(t("kernel.title"))
    explain(t("kernel.intro"))
    tab1, tab2, tab3 = st.tabs([t("kernel.tab_1d"), t("kernel.tab_md"), t("kernel.tab_self")])

    # ---- 1. one query, key→value pairs, a kernel ------------------------------------------------------------------
    with tab1:
        explain(t("kernel.intro_1d"))
        preset = st.session_state[url_state.bind("kr_preset", "waist", options=list(PRESETS))]
        p = PRESETS[preset]
        url_state.bind("kr_data", [list(r) for r in p.table], matrix=True)
        left, right = st.columns([2, 3], gap="large")
        with left:
            st.selectbox(t("kernel.preset"), list(PRESETS), format_func=preset_label, key="kr_preset", on_change=load_preset)
            labels = column_labels(preset, np.shape(st.session_state["kr_data"])[1])
            table = compute("kr_table", matrix_editor, "kr_data", p.table, name=t("kernel.data_name"), col_labels=labels,
                            dynamic_rows=True, height=min(38 + 35 * (len(st.session_state["kr_data"]) + 1), 320))
            st.caption({"waist": t("kernel.note_waist"), "game_strength": t("kernel.note_game"),
                        "game_both": t("kernel.note_game"), "noisy": t("kernel.note_noisy")}[preset])
        if table is None:  # the very first table was bad (a tampered link): start from the preset
            table = np.asarray(p.table, dtype=float)
        labels = column_labels(preset, table.shape[1])
        ranges = query_ranges(preset, table) if table.shape[1] in (2, 3) else p.ranges
        with right:
            url_state.bind("kr_q", p.query[0])
            url_state.bind("kr_q2", p.query[1] if len(p.query) > 1 else 0.0)
            step = p.step if ranges == query_ranges(preset, p.table) else nice_step(ranges[0][1] - ranges[0][0])
            slider_and_number("kr_q", t("kernel.query_feature", name=labels[0]), *ranges[0], step, help=t("kernel.query_help"))
            if len(ranges) > 1:
                slider_and_number("kr_q2", t("kernel.query_feature", name=labels[1]), *ranges[1], p.step)
            st.selectbox(t("kernel.kernel"), KERNELS, format_func=kernel_label, key=url_state.bind("kr_kernel", "gaussian", options=list(KERNELS)))
            url_state.bind("kr_sigma", p.sigma)
            span = max(hi - lo for lo, hi in ranges)
            s_step = nice_step(span / 2)
            slider_and_number("kr_sigma", t("kernel.sigma"), s_step, float(np.ceil(max(span / 2, 2 * p.sigma))), s_step,
                              help=t("kernel.sigma_help"))
        query = (st.session_state["kr_q"], st.session_state["kr_q2"])
        kernel, sigma = st.session_state["kr_kernel"], st.session_state["kr_sigma"]
        lesson = compute("kr_1d", translated(kernel_lesson), table, query, kernel, sigma, ranges)
        with right:
            try:
                fit = fit_sigma(table, kernel)
            except ValueError:  # a bad table: its message is already on the page
                fit = ()
            st.button(t("kernel.fit_button"), on_click=set_value, args=("kr_sigma", fit[0] if fit else None),
                      disabled=not fit, help=t("kernel.fit_help"), icon="🎯", key="kr_fit")
            if fit is None:
                st.caption(t("kernel.fit_none"))
            elif fit and np.isclose(fit[2][0], np.nanmin(fit[2]), rtol=1e-6):  # the error is lowest at the smallest σ tried
                flat = fit[1][np.isclose(fit[2], np.nanmin(fit[2]), rtol=1e-6)].max()
                st.caption(t("kernel.fit_flat", upto=f"{flat:.3g}"))

        if lesson is not None:
            b, kernel, sigma = lesson.breakdown, lesson.kernel, lesson.sigma  # the view drawn (the last good one after an error)
            q_text = key_text(b.query)
            for key, rows in lesson.duplicates:
                st.warning(t("kernel.duplicates", k=key_text(key), rows=", ".join(str(r + 1) for r in rows)), icon="⚠️")
            if not b.supported:
                st.warning(t("kernel.no_support", q=q_text, sigma=f"{sigma:g}", kernel=kernel_name(kernel)), icon="🕳️")
            st.metric(t("kernel.estimate_at", q=q_text), f"{b.estimate:.6g}" if b.supported else "—")

            # the picture: where the weight goes
            key_labels = [key_text(k) for k in b.keys]
            show(figures.bars(key_labels, b.weights, title=t("kernel.bars_title", q=q_text), x_title=t("kernel.keys_axis", name=", ".join(labels[:-1])),
                              y_title=t("common.weight"), highlight=int(np.argmax(b.weights)) if b.supported else None,
                              ymax=1.1, font_size=fs), "kernel_weights_bars")
            if b.keys.shape[1] == 1:
                show(fit_figure(lesson, b.query[0], labels, fs), "kernel_fitted_curve")
                sorted_keys = [key_labels[i] for i in lesson.order]
                show(figures.heatmap(np.round(lesson.grid_weights, 3), sorted_keys, [f"{g:.4g}" for g in lesson.grid],
                                     title=t("kernel.heatmap_title"), x_title=t("kernel.keys_sorted", name=labels[0]),
                                     y_title=t("kernel.query_axis", name=labels[0]), value_name=t("common.weight"),
                                     digits=2, font_size=fs).update_layout(margin=dict(t=150)), "kernel_weights_heatmap")
            else:
                show(plane_figure(lesson, b.query, labels, fs), "kernel_plane")
            if lesson.fit is not None:
                with st.expander(t("kernel.loo_expander"), expanded=False):
                    explain(t("kernel.loo_explain"))
                    show(loo_figure(lesson, fs), "kernel_loo_error")

            # the numbers: one row per key, the last column sums to the estimate
            st.subheader(t("kernel.numbers_heading"))
            explain(t("kernel.numbers_explain"))
            st.dataframe(breakdown_table(b), width="stretch", height=min(38 + 35 * (len(b.keys) + 1), 420))
            if b.exp_scores.sum() < 1e-300:
                st.caption(t("kernel.underflow"))
            formula(b, kernel, sigma)
            download_csv(np.column_stack([b.keys, b.values, b.scores, b.weights, b.contributions]), "kernel_breakdown",
                         key_labels, labels[:-1] + [labels[-1], "score", "weight", "weight_x_value"], key="csv_kernel_1d")

    # ---- 2. multi-dimensional queries, keys and values ------------------------------------------------------------
    with tab2:
        explain(t("kernel.intro_md"))
        feats = [t("kernel.feature", i=1), t("kernel.feature", i=2)]
        cq, ck, cv = st.columns(3)
        with cq:
            st.markdown(f"**Q** ({t('kernel.queries')})")
            Q = compute("kr_Q_t", matrix_editor, "kr_Q", Q0, name="Q", row_labels=["q1", "q2"], col_labels=feats, height="content")
        with ck:
            st.markdown(f"**K** ({t('kernel.keys_word')})")
            K = compute("kr_K_t", matrix_editor, "kr_K", K0, name="K", row_labels=["k1", "k2", "k3"], col_labels=feats, height="content")
        with cv:
            st.markdown(f"**V** ({t('kernel.values_word')})")
            V = compute("kr_V_t", matrix_editor, "kr_V", V0, name="V", row_labels=["v1", "v2", "v3"], col_labels=feats, height="content")
        c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
        method = c1.radio(t("kernel.scoring"), SCORINGS, format_func=method_label, horizontal=True,
                          key=url_state.bind("kr_score", "scaled_dot", options=list(SCORINGS)))
        standardized = c2.toggle(t("kernel.standardize"), key=url_state.bind("kr_std", False), help=t("kernel.standardize_help"))
        with st.expander(t("kernel.additive_weights"), expanded=method == "additive"):
            explain(t("kernel.additive_explain"))
            w1, w2, w3 = st.columns(3)
            with w1:
                Wq = compute("kr_Wq_t", matrix_editor, "kr_Wq", WQ0, name="W_q", row_labels=["h1", "h2"], col_labels=feats, height="content")
            with w2:
                Wk = compute("kr_Wk_t", matrix_editor, "kr_Wk", WK0, name="W_k", row_labels=["h1", "h2"], col_labels=feats, height="content")
            with w3:
                wv = compute("kr_wv_t", matrix_editor, "kr_wv", WV0.reshape(2, 1), name="w_v", row_labels=["h1", "h2"],
                             col_labels=["w_v"], height="content")
            st.button(t("kernel.reseed"), on_click=new_additive_weights, icon="🎲", key="kr_reseed")
        W = (Wq, Wk, wv)
        md = None
        if all(m is not None for m in (Q, K, V, *W)):
            md = compute("kr_md", translated(scored), Q, K, V, method, *W, standardized)
        if md is not None:
            qs, ks = [f"q{i + 1}" for i in range(md.scores.shape[0])], [f"k{j + 1}" for j in range(md.scores.shape[1])]
            h1, h2 = st.columns(2)
            with h1:
                show(figures.heatmap(md.scores, ks, qs, title=t("kernel.scores_title", method=method_label(method)),
                                     x_title=t("common.key"), y_title=t("common.query"), value_name=t("common.score"),
                                     weights=False, digits=2, font_size=fs), "kernel_md_scores")
            with h2:
                show(figures.heatmap(np.round(md.weights, 3), ks, qs, title=t("kernel.weights_title"), x_title=t("common.key"),
                                     y_title=t("common.query"), value_name=t("common.weight"), digits=3, font_size=fs),
                     "kernel_md_weights")
            st.markdown(f"**{t('kernel.output_heading')}**")
            st.dataframe(pd.DataFrame(md.output, index=[f"f({q})" for q in qs], columns=feats).style.format("{:.4f}"))
            st.latex(r"f(q_1)=" + "+".join(rf"{num(w, 3)}\,v_{{{j + 1}}}" for j, w in enumerate(md.weights[0]))
                     + r"=(" + ", ".join(num(x, 5) for x in md.output[0]) + ")")
            download_csv(md.weights, "kernel_md_weights", qs, ks, key="csv_kernel_md")
            st.subheader(t("kernel.raw_heading"))
            explain(t("kernel.raw_explain"))
            cmp = compute("kr_cmp", translated(comparison), Q, K, V, W)
            if cmp is not None:
                st.dataframe(cmp[0], width="stretch")
                st.caption(t("kernel.raw_caption", biggest=f"{cmp[1]:.5g}"))

    # ---- 3. self-attention: Q = K = V = X ----------------------------------------------------------------------------
    with tab3:
        explain(t("kernel.intro_self"))
        X = compute("kr_X_t", matrix_editor, "kr_X", X0, name="X", row_labels=["x1", "x2", "x3"],
                    col_labels=[t("kernel.feature", i=1), t("kernel.feature", i=2)], height="content")
        c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
        sa_method = c1.radio(t("kernel.scoring"), SCORINGS, format_func=method_label, horizontal=True,
                             key=url_state.bind("kr_sa_score", "scaled_dot", options=list(SCORINGS)))
        sa_std = c2.toggle(t("kernel.standardize"), key=url_state.bind("kr_sa_std", False), help=t("kernel.standardize_help"))
        if sa_method == "additive":
            st.caption(t("kernel.self_additive_note"))
        sa = None
        if X is not None and all(m is not None for m in W):
            sa = compute("kr_sa", translated(scored), X, X, X, sa_method, *W, sa_std)
        if sa is not None:
            xs = [f"x{i + 1}" for i in range(len(sa.weights))]
            st.latex({"scaled_dot": r"f(X)=\mathrm{softmax}\!\left(\frac{XX^\top}{\sqrt{d_k}}\right)X",
                      "dot": r"f(X)=\mathrm{softmax}\!\left(XX^\top\right)X",
                      "additive": r"f(X)_i=\sum_j \mathrm{softmax}_j\!\left(w_v^\top\tanh(W_q x_i+W_k x_j)\right)x_j"}[sa_method])
            h1, h2 = st.columns(2)
            with h1:
                show(figures.heatmap(np.round(sa.weights, 3), xs, xs, title=t("kernel.self_weights_title"), x_title=t("common.key"),
                                     y_title=t("common.query"), value_name=t("common.weight"), digits=3, font_size=fs),
                     "kernel_self_weights")
            with h2:
                st.markdown(f"**{t('kernel.self_output')}**")
                st.dataframe(pd.DataFrame(sa.output, index=[f"f({x})" for x in xs],
                                          columns=[t("kernel.feature", i=1), t("kernel.feature", i=2)][:sa.output.shape[1]])
                             .style.format("{:.4f}"))
                top = ", ".join(f"{x} → x{int(j) + 1}" for x, j in zip(xs, sa.weights.argmax(1)))
                st.caption(t("kernel.self_top", pairs=top))
            explain(t("kernel.self_explain"))
            download_csv(sa.weights, "kernel_self_weights", xs, xs, key="csv_kernel_self")
