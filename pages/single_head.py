"""Single head: scaled dot-product self-attention, every intermediate matrix (articles 001, 002, 004).

Four views: the worked example of article 001 ("Thinking Machines"), the same pipeline with every matrix
editable, the user's own sentence, and why scores are divided by √d_k. Every number on the page is
computed from the matrices; the article's printed numbers appear only as labelled quotations.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import visattn
from ui import url_state
from ui.cache_pretrained import model_or_error
from ui.cache_single_head import PEAK_GRID, dot_products, peakedness
from ui.charts import download_csv, show
from ui.errors import compute, last_good, show_error
from ui.frame import explain, font_size, page, presenter
from ui.i18n import t
from ui.widgets import matrix_editor, set_matrix
from visattn import figures, scaling
from visattn.models.minilm import INSTALL_COMMAND
from visattn.text import MAX_TOKENS

# Article 001, "Thinking Machines": the matrices exactly as printed there. Everything is computed from them.
TOKENS = ["Thinking", "Machines"]
X = [[1, 0, 1, 0], [0, 2, 0, 2]]
W_Q = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
W_V = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]

# QUOTATIONS, not results: what article 001 prints for its own example. Shown beside the computed values in
# the "printed vs computed" note; several do not follow from the matrices above.
PRINTED_001 = {
    "q1": [2, 0, 2, 0], "k1": [0, 2, 2, 0], "v1": [1, 1, 1, 1],
    "q2": [0, 4, 0, 4], "k2": [4, 0, 4, 0], "v2": [2, 2, 2, 2],
    "scores1": [4, 16],          # q1·k1, q1·k2
    "scaled1": [2, 8],           # ÷ √4
    "weights1": [0.012, 0.988],  # "softmax([2, 8]) ≈ [0.012, 0.988]"
    "z1": [1.97, 1.97, 1.97, 1.97],
}

VIEWS = ("worked", "edit", "sentence", "sqrt")
SENTENCE = "The animal didn't cross the street because it was too tired."
MAX_EDIT = 12          # largest T, d_model, d_k in the editors
DK_CHOICES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]   # √d_k panel
MAX_COUNT = 100_000    # tokens counted before the limit check, so the message can say how many there were


# --- embeddings for "your own sentence": text → (tokens, X (T, D)) ---------------------------------------------
def _seeded(text: str, d_model: int, seed: int):
    tokens = visattn.tokenize(text, max_tokens=MAX_COUNT)
    if len(tokens) > MAX_TOKENS:
        raise ValueError(t("single_head.err_too_many", n=len(tokens), limit=MAX_TOKENS))
    return tokens, visattn.seeded_embedding(tokens, d_model, seed)


def _pretrained(text: str, d_model: int, seed: int):
    """MiniLM's word pieces and their rows of its word-embedding table, projected on the table's d_model
    principal axes and scaled to mean square 1 (:meth:`MiniLM.reduced_embeddings`). ``seed`` only drives W."""
    model, _ = model_or_error()
    if model is None:
        raise ValueError(t("single_head.err_no_model", cmd=INSTALL_COMMAND))
    try:
        tokens, ids, _, n_in = model.tokenize(text)
    except ValueError:
        raise ValueError(t("single_head.err_unreadable")) from None
    if n_in - 2 > MAX_TOKENS:                                      # [CLS] and [SEP] are not drawn here
        raise ValueError(t("single_head.err_too_many", n=n_in - 2, limit=MAX_TOKENS))
    return tokens[1:-1], model.reduced_embeddings(ids[1:-1], d_model)


# text → (tokens, X); the chooser below appears as soon as there are two sources.
EMBEDDINGS = {"seeded": _seeded, "pretrained": _pretrained}


# --- small formatting helpers ----------------------------------------------------------------------------------
def num(v, digits: int = 4) -> str:
    """A number as short as it can be: 3, 1.5, 0.0293."""
    v = float(v)
    if abs(v - round(v)) < 1e-9:
        return str(int(round(v)))
    s = f"{v:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def vec(v, digits: int = 4) -> str:
    return "[" + ", ".join(num(x, digits) for x in v) + "]"


def _par(v) -> str:
    s = num(v)
    return f"({s})" if s.startswith("-") else s


def latex_vec(v) -> str:
    return r"\left[" + r",\ ".join(num(x) for x in v) + r"\right]"


def dims(n: int) -> list[str]:
    return [str(j + 1) for j in range(n)]


# --- figures -----------------------------------------------------------------------------------------------------
def small(m, rows, cols, title: str, name: str, *, weights: bool = False, masked=None, height: int = 250,
          x_title: str = "", y_title: str = "") -> None:
    """One compact labelled heatmap with its numbers (several per row)."""
    m = np.asarray(m, dtype=float)
    digits = 4 if max(m.shape) <= 4 else 2
    fig = figures.heatmap(m, cols, rows, title=title, weights=weights, digits=digits, masked=masked, height=height,
                          x_title=x_title, y_title=y_title, font_size=font_size(),
                          value_name=t("common.weight") if weights else t("single_head.value"))
    fig.update_traces(showscale=False)
    if max(m.shape) <= figures.MAX_TEXT_CELLS:   # short fixed-point text: 0.0293 on tiny matrices, 0.03 on larger
        fmt = (lambda v: num(v, 4)) if max(m.shape) <= 4 else (lambda v: _cell(v, "{:.2f}"))
        fig.data[0].text = [["✕" if masked is not None and masked[i, j] else fmt(v) for j, v in enumerate(row)]
                            for i, row in enumerate(m)]
    if max(m.shape) <= 12:
        fig.update_traces(textfont_size=(font_size() + 1) if max(m.shape) <= 6 else font_size() - 1)
    if m.shape[1] > 3 and max(len(str(c)) for c in cols) > 3:
        fig.update_xaxes(tickangle=-40)   # token names over narrow columns would run into each other
    fig.update_layout(margin=dict(l=10, r=10, t=80, b=10))
    grey_masked(fig, masked)
    show(fig, name)


def columns(n: int, spec=None):
    """n figures side by side; at most two on a projector, where fonts are larger."""
    if presenter() and n > 2:
        return st.columns(2)
    return st.columns(spec if spec is not None else n) if n > 1 else [st.container()]


def row_height(*mats) -> int:
    n = max(np.asarray(m).shape[0] for m in mats)
    return int(max(220, 120 + 38 * n))


def show_trace(tr, tokens, prefix: str, *, scale: bool, temperature: float, inputs=None) -> None:
    """The pipeline as rows of compact heatmaps: (X, W) → Q, K, V → QKᵀ, ÷√d_k, softmax, Z."""
    T, D = tr.X.shape
    d_k, d_v = tr.Q.shape[1], tr.V.shape[1]
    dim_title = t("common.dimension")
    if inputs is not None:
        st.markdown(t("single_head.step_inputs"))
        W_q, W_k, W_v = inputs
        cols = columns(4, [1.15, 1, 1, 1]) if max(D, d_k) <= 6 else columns(2)
        h = row_height(W_q)
        items = [(tr.X, tokens, dims(D), t("single_head.fig_x", T=T, D=D), "x"),
                 (W_q, dims(D), dims(d_k), t("single_head.fig_wq", D=D, dk=d_k), "wq"),
                 (W_k, dims(D), dims(d_k), t("single_head.fig_wk", D=D, dk=d_k), "wk"),
                 (W_v, dims(D), dims(d_v), t("single_head.fig_wv", D=D, dv=d_v), "wv")]
        for i, (m, r, c, title, n) in enumerate(items):
            with cols[i % len(cols)]:
                small(m, r, c, title, f"{prefix}_{n}", height=h)
    st.markdown(t("single_head.step_qkv"))
    width = max(d_k, d_v)
    cols = columns(3 if width <= 4 else 2 if width <= 8 else 1)
    h = row_height(tr.Q)
    for col, (m, title, n) in zip(cols, [(tr.Q, t("single_head.fig_q", T=T, dk=d_k), "q"),
                                        (tr.K, t("single_head.fig_k", T=T, dk=d_k), "k"),
                                        (tr.V, t("single_head.fig_v", T=T, dv=d_v), "v")]):
        with col:
            small(m, tokens, dims(m.shape[1]), title, f"{prefix}_{n}", height=h, x_title=dim_title)
    st.markdown(t("single_head.step_scores"))
    mask_hidden = None if tr.mask is None else ~tr.mask
    cols = columns(3 if T <= 4 else 2 if T <= 8 else 1)
    h = row_height(tr.raw_scores)
    scaled_title = (t("single_head.fig_scaled", r=num(np.sqrt(d_k))) if scale else t("single_head.fig_unscaled"))
    w_title = (t("single_head.fig_weights") if temperature == 1 else t("single_head.fig_weights_tau", tau=num(temperature)))
    items = [(tr.raw_scores, t("single_head.fig_raw"), "raw", False, tokens),
             (tr.scores, scaled_title, "scores", False, tokens),
             (tr.weights, w_title, "weights", True, tokens)]
    for i, (m, title, n, is_w, xl) in enumerate(items):
        with cols[i % len(cols)]:
            small(m, tokens, xl, title, f"{prefix}_{n}", weights=is_w, height=h, masked=mask_hidden,
                  x_title=t("common.key"), y_title=t("common.query"))
    if tr.mask is not None:
        st.caption(t("single_head.mask_caption"))
    st.markdown(t("single_head.step_out"))
    c1, c2 = st.columns([2, 1]) if d_v <= 6 else st.columns([3, 1])
    with c1:
        small(tr.output, tokens, dims(d_v), t("single_head.fig_z", T=T, dv=d_v), f"{prefix}_z", height=row_height(tr.output),
              x_title=dim_title)
    with c2:
        st.space("medium")
        download_csv(tr.weights, f"{prefix}_weights", tokens, tokens, key=f"csv_{prefix}_w")
        st.caption(t("single_head.csv_weights"))
        download_csv(tr.output, f"{prefix}_output", tokens, dims(d_v), key=f"csv_{prefix}_z")
        st.caption(t("single_head.csv_output"))


def _cell(v: float, fmt: str) -> str:
    s = fmt.format(v)
    return s.lstrip("-") if float(s) == 0 else s     # no "-0.0"


def cell_numbers(fig, m, masked, fmt: str) -> None:
    """Fixed-width cell text (0.05, not 5.0e-02) so a row of small weights stays readable."""
    m = np.asarray(m)
    fig.data[0].text = [["✕" if masked is not None and masked[i, j] else _cell(v, fmt) for j, v in enumerate(row)]
                        for i, row in enumerate(m)]
    if max(m.shape) <= 16:
        fig.update_traces(textfont_size=font_size() if max(m.shape) <= 8 else font_size() - 2)
    grey_masked(fig, masked)


def grey_masked(fig, masked) -> None:
    """Veil the cells hidden by the causal mask (small matrices only: one shape per cell)."""
    if masked is None or max(np.shape(masked)) > figures.MAX_TEXT_CELLS:
        return
    for i, j in zip(*np.nonzero(masked)):
        fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, fillcolor="#d9d9d9",
                      opacity=0.85, line_width=0, layer="above")
        fig.add_annotation(x=int(j), y=int(i), text="✕", showarrow=False, font=dict(color="#555555", size=font_size()))


def query_picker(tokens) -> int:
    """The query token to follow (kept in the URL); clamped when the sentence got shorter."""
    key = url_state.bind("sh_q", 0, lo=0, hi=MAX_TOKENS - 1)
    if not 0 <= int(st.session_state[key]) < len(tokens):
        st.session_state[key] = 0
    return st.selectbox(t("single_head.query_token"), list(range(len(tokens))),
                        format_func=lambda i: f"{i + 1}: {tokens[i]}", key=key)


def follow_token(tr, i: int, *, scale: bool, temperature: float) -> None:
    """Query token i's row written out with its numbers, from x_i to z_i."""
    T = tr.X.shape[0]
    d_k = tr.Q.shape[1]
    n = i + 1
    via_x = rf"{latex_vec(tr.X[i])}\, W^Q = " if tr.X.shape[1] <= 6 else ""
    lines = [rf"\mathbf{{q}}_{n} = \mathbf{{x}}_{n} W^Q = {via_x}{latex_vec(tr.Q[i])}"]
    div = rf"\sqrt{{{d_k}}}" if scale else ""
    for j in range(T):
        m = j + 1
        if tr.mask is not None and not tr.mask[i, j]:
            lines.append(rf"s_{{{n},j}} = -\infty \quad (j > {n})")   # causal: every later key at once
            break
        lhs = rf"s_{{{n},{m}}} = " + (rf"\frac{{\mathbf{{q}}_{n}\cdot\mathbf{{k}}_{m}}}{{{div}}}" if scale
                                      else rf"\mathbf{{q}}_{n}\cdot\mathbf{{k}}_{m}")
        raw = tr.raw_scores[i, j]
        if d_k <= 6:
            terms = " + ".join(rf"{_par(a)}\cdot{_par(b)}" for a, b in zip(tr.Q[i], tr.K[j]))
            mid = rf"\frac{{{terms}}}{{{num(np.sqrt(d_k))}}} = \frac{{{num(raw)}}}{{{num(np.sqrt(d_k))}}}" if scale else terms
        else:
            mid = rf"\frac{{{num(raw)}}}{{{num(np.sqrt(d_k))}}}" if scale else num(raw)
        lines.append(rf"{lhs} = {mid} = {num(tr.scores[i, j])}")
        if T > 8 and j >= 7 and j < T - 1:
            lines.append(r"\ldots")
            break
    s_name = rf"\mathbf{{s}}_{n}" if temperature == 1 else rf"\mathbf{{s}}_{n} / {num(temperature)}"
    w = tr.weights[i]
    allowed = [j for j in range(T) if tr.mask is None or tr.mask[i, j]]
    if T <= 4:
        denom = " + ".join(rf"e^{{{num(tr.scores[i, j] / temperature)}}}" for j in allowed)
        fracs = r",\ ".join((rf"\frac{{e^{{{num(tr.scores[i, j] / temperature)}}}}}{{{denom}}}" if j in allowed else "0")
                            for j in range(T))
        lines.append(rf"\begin{{aligned}}\boldsymbol{{\alpha}}_{n} &= \operatorname{{softmax}}({s_name}) = \left[{fracs}\right]"
                     rf"\\ &= {latex_vec(w)}\end{{aligned}}")
    else:
        lines.append(rf"\boldsymbol{{\alpha}}_{n} = \operatorname{{softmax}}({s_name}) = {latex_vec(w)}")
    if T <= 4 and tr.V.shape[1] <= 6:
        terms = " + ".join(rf"{num(w[j])}\,{latex_vec(tr.V[j])}" for j in allowed)
        lines.append(rf"\begin{{aligned}}\mathbf{{z}}_{n} &= \textstyle\sum_j \alpha_{{{n},j}}\,\mathbf{{v}}_j = {terms}"
                     rf"\\ &= {latex_vec(tr.output[i])}\end{{aligned}}")
    else:
        lines.append(rf"\mathbf{{z}}_{n} = \textstyle\sum_j \alpha_{{{n},j}}\,\mathbf{{v}}_j = {latex_vec(tr.output[i])}")
    for line in lines:
        st.latex(line)
    if tr.mask is not None:
        st.caption(t("single_head.minus_inf"))


def options() -> tuple[bool, bool, float]:
    c1, c2, c3 = st.columns([1, 1.3, 2]) if not presenter() else (*st.columns(2), st.container())
    scale = c1.toggle(t("single_head.opt_scale"), key=url_state.bind("sh_scale", True), help=t("single_head.opt_scale_help"))
    causal = c2.toggle(t("single_head.opt_causal"), key=url_state.bind("sh_causal", False), help=t("single_head.opt_causal_help"))
    temperature = c3.slider(t("single_head.opt_temp"), 0.05, 5.0, step=0.05, key=url_state.bind("sh_temp", 1.0, lo=0.05, hi=5.0),
                            help=t("single_head.opt_temp_help"))
    return scale, causal, temperature


# --- view 1: the worked example -----------------------------------------------------------------------------------
def printed_vs_computed(article) -> None:
    """The note for a lecturer: article 001's printed numbers next to the ones its matrices give."""
    P = PRINTED_001
    V = np.asarray(W_V, dtype=float)
    rows = [("q₁ = x₁·W^Q", P["q1"], article.Q[0]), ("k₁ = x₁·W^K", P["k1"], article.K[0]),
            ("v₁ = x₁·W^V", P["v1"], article.V[0]), ("q₂ = x₂·W^Q", P["q2"], article.Q[1]),
            ("k₂ = x₂·W^K", P["k2"], article.K[1]), ("v₂ = x₂·W^V", P["v2"], article.V[1]),
            (t("single_head.note_row_scores"), P["scores1"], article.raw_scores[0]),
            (t("single_head.note_row_scaled"), P["scaled1"], article.scores[0]),
            (t("single_head.note_row_weights"), P["weights1"], article.weights[0]),
            ("z₁", P["z1"], article.output[0])]
    table = pd.DataFrame(
        [(name, vec(p), vec(c), "✓" if np.max(np.abs(np.asarray(p) - c)) <= 0.005 else "✗") for name, p, c in rows],
        columns=[t("single_head.note_col_what"), t("single_head.note_col_printed"), t("single_head.note_col_computed"),
                 t("single_head.note_col_agree")])
    with st.container(border=True):
        st.markdown(t("single_head.note_title"))
        st.table(table.set_index(table.columns[0]))
        x1 = np.asarray(X[0], dtype=float)
        picked = [j for j in range(len(x1)) if x1[j] != 0]
        implied_w = visattn.softmax(np.asarray(P["scaled1"], dtype=float))      # what the printed scores really give
        implied_z = np.asarray(P["weights1"]) @ (np.asarray(X, dtype=float) @ V)  # what the printed weights really give
        st.markdown(t("single_head.note_body",
                      x1=vec(x1), rows=t("single_head.list_sep").join(str(j + 1) for j in picked),
                      sum=" + ".join(vec(W_Q[j]) for j in picked), q1=vec(article.Q[0]), q1p=vec(P["q1"]),
                      k1=vec(article.K[0]), q2=vec(article.Q[1]), k2=vec(article.K[1]),
                      s1=vec(article.raw_scores[0]), sc1=vec(article.scores[0]), w1=vec(article.weights[0]),
                      sp=vec(P["scaled1"]), wp=vec(P["weights1"]), wimp=vec(implied_w),
                      zimp=num(implied_z[0], 4), zp=num(P["z1"][0]), z1=num(article.output[0, 0], 4)))


def view_worked(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.worked_intro"))
    tr = compute("sh_worked", visattn.self_attention, X, W_Q, W_K, W_V, scale=scale, causal=causal, temperature=temperature)
    if tr is None:
        return
    show_trace(tr, TOKENS, "worked", scale=scale, temperature=temperature, inputs=(W_Q, W_K, W_V))
    st.subheader(t("single_head.follow_title"))
    follow_token(tr, query_picker(TOKENS), scale=scale, temperature=temperature)
    article = visattn.self_attention(X, W_Q, W_K, W_V)  # the article's own setting: scaled, τ = 1, no mask
    printed_vs_computed(article)


# --- view 2: edit everything ----------------------------------------------------------------------------------
MATRICES = (("sh_x", "X"), ("sh_wq", "W^Q"), ("sh_wk", "W^K"), ("sh_wv", "W^V"))


def _fill_random() -> None:
    """Seeded random matrices of the chosen shape (X ~ N(0, 1), W ~ N(0, 1/d_model), rounded to stay legible)."""
    ss = st.session_state
    T, D, d_k = int(ss.get("sh_T", 2)), int(ss.get("sh_d", 4)), int(ss.get("sh_dk", 4))
    if min(T, D, d_k) < 1:
        return  # the page explains what is wrong; keep the matrices as they are
    rng = np.random.default_rng(int(ss.get("sh_seed", 0)))
    set_matrix("sh_x", rng.standard_normal((T, D)).round(1))
    for key in ("sh_wq", "sh_wk", "sh_wv"):
        set_matrix(key, (rng.standard_normal((D, d_k)) / np.sqrt(D)).round(2))


def _reset_article() -> None:
    ss = st.session_state
    ss["sh_T"], ss["sh_d"], ss["sh_dk"] = 2, 4, 4
    for (key, _), m in zip(MATRICES, (X, W_Q, W_K, W_V)):
        set_matrix(key, m)


def check_shapes(mats: dict, T: int, D: int, d_k: int) -> None:
    """Shapes that do not fit, explained (translated), as one ValueError."""
    if d_k < 1:
        raise ValueError(t("single_head.err_dk", dk=d_k))
    want = {"sh_x": (T, D), "sh_wq": (D, d_k), "sh_wk": (D, d_k), "sh_wv": (D, d_k)}
    problems = [t("single_head.err_shape", name=name, r=mats[key].shape[0], c=mats[key].shape[1],
                  want=f"{want[key][0]}×{want[key][1]}", formula=t(f"single_head.shape_{key}"))
                for key, name in MATRICES if mats[key].shape != want[key]]
    if problems:
        raise ValueError("\n" + "".join(f"\n- {p}" for p in problems) + "\n\n" + t("single_head.err_shape_fix"))


def _edit_trace(mats, T, D, d_k, scale, causal, temperature):
    check_shapes(mats, T, D, d_k)
    return visattn.self_attention(mats["sh_x"], mats["sh_wq"], mats["sh_wk"], mats["sh_wv"],
                                  scale=scale, causal=causal, temperature=temperature)


def view_edit(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.edit_intro"))
    c = st.columns(4)
    T = c[0].number_input(t("single_head.T"), 1, MAX_EDIT, step=1, key=url_state.bind("sh_T", 2, lo=1, hi=MAX_EDIT),
                          on_change=_fill_random)
    D = c[1].number_input(t("single_head.d_model"), 1, MAX_EDIT, step=1, key=url_state.bind("sh_d", 4, lo=1, hi=MAX_EDIT),
                          on_change=_fill_random)
    d_k = c[2].number_input(t("single_head.d_k"), 0, MAX_EDIT, step=1, key=url_state.bind("sh_dk", 4, lo=0, hi=MAX_EDIT),
                            on_change=_fill_random, help=t("single_head.d_k_help"))
    c[3].number_input(t("single_head.seed"), 0, 9999, step=1, key=url_state.bind("sh_seed", 0, lo=0, hi=9999),
                      on_change=_fill_random)
    b = st.columns([1, 1, 2])
    b[0].button(t("single_head.fill"), on_click=_fill_random, width="stretch")
    b[1].button(t("single_head.reset"), on_click=_reset_article, width="stretch")
    mats, bad = {}, False
    cols = st.columns(2)
    defaults = {"sh_x": X, "sh_wq": W_Q, "sh_wk": W_K, "sh_wv": W_V}
    for i, (key, name) in enumerate(MATRICES):
        with cols[i % len(cols)]:
            st.markdown(t(f"single_head.editor_{key}"))
            try:
                m = matrix_editor(key, defaults[key], name=name, height="auto")  # None is rejected by st.data_editor in 1.67
            except ValueError as exc:
                show_error(exc)
                bad = True
            else:
                mats[key] = m
    if bad:  # keep teaching from the last matrices that worked while the cell is being fixed
        st.info(t("single_head.fix_cells"))
        tr = last_good("sh_edit")
    else:
        tr = compute("sh_edit", _edit_trace, mats, int(T), int(D), int(d_k), scale, causal, temperature)
    if tr is None:
        return
    tokens = [f"x{i + 1}" for i in range(tr.X.shape[0])]
    show_trace(tr, tokens, "edit", scale=scale, temperature=temperature)
    st.subheader(t("single_head.follow_title"))
    follow_token(tr, query_picker(tokens), scale=scale, temperature=temperature)


# --- view 3: your own sentence --------------------------------------------------------------------------------
def sentence_trace(text: str, source: str, d_model: int, d_k: int, seed: int, scale: bool, causal: bool, temperature: float):
    """Tokens and the trace of one randomly initialised head (seeded W ~ N(0, 1/d_model)) over the sentence."""
    if not text.strip():
        raise ValueError(t("single_head.err_empty"))
    tokens, X_ = EMBEDDINGS[source](text, d_model, seed)          # (T, D)
    D = X_.shape[1]
    rng = np.random.default_rng(seed)
    W_q, W_k, W_v = (rng.standard_normal((D, d_k)) / np.sqrt(D) for _ in range(3))   # (D, Dk) each
    return tokens, visattn.self_attention(X_, W_q, W_k, W_v, scale=scale, causal=causal, temperature=temperature)


def view_sentence(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.sentence_intro"))
    text = st.text_input(t("single_head.sentence"), key=url_state.bind("sh_text", SENTENCE), help=t("single_head.sentence_help"))
    source = "seeded"
    if len(EMBEDDINGS) > 1:
        source = st.radio(t("single_head.emb"), list(EMBEDDINGS), format_func=lambda s: t(f"single_head.emb_{s}"),
                          key=url_state.bind("sh_emb", "seeded", options=list(EMBEDDINGS)), horizontal=True)
        if source == "pretrained":
            st.caption(t("single_head.emb_pretrained_note"))
    c = st.columns([1, 1, 1, 1.6])
    d_model = c[0].number_input(t("single_head.d_model"), 2, 64, step=1, key=url_state.bind("sh_sd", 16, lo=2, hi=64))
    d_k = c[1].number_input(t("single_head.d_k"), 1, 64, step=1, key=url_state.bind("sh_sdk", 8, lo=1, hi=64))
    seed = c[2].number_input(t("single_head.seed"), 0, 9999, step=1, key=url_state.bind("sh_sseed", 0, lo=0, hi=9999))
    side = c[3].toggle(t("single_head.side"), key=url_state.bind("sh_side", False))
    out = compute("sh_sentence", sentence_trace, text, source, int(d_model), int(d_k), int(seed), scale, causal, temperature)
    if out is None:
        return
    tokens, tr = out
    st.caption(t("single_head.tokens", n=len(tokens), tokens=" · ".join(tokens)))
    masked = None if tr.mask is None else ~tr.mask
    T = len(tokens)
    # Numbers in the cells only while a cell is wide enough at 1280 px (half width when side by side).
    text_on = T <= (8 if side else figures.MAX_TEXT_CELLS)
    common = dict(x_title=t("common.key"), y_title=t("common.query"), font_size=font_size(), masked=masked, show_text=text_on)
    w_fig = figures.heatmap(tr.weights, tokens, tokens, title=t("single_head.sent_weights"),
                            value_name=t("common.weight"), **common)
    if text_on:
        cell_numbers(w_fig, tr.weights, masked, "{:.2f}")
    if not text_on:
        st.caption(t("single_head.hover_numbers"))
    if side:
        s_fig = figures.heatmap(tr.scores, tokens, tokens, title=t("single_head.sent_scores"), weights=False,
                                value_name=t("common.score"), **common)
        if text_on:
            cell_numbers(s_fig, tr.scores, masked, "{:.1f}")
        c1, c2 = st.columns(2)
        with c1:
            show(s_fig, "sentence_scores")
        with c2:
            show(w_fig, "sentence_weights")
    else:
        show(w_fig, "sentence_weights")
    if tr.mask is not None:
        st.caption(t("single_head.mask_caption"))
    download_csv(tr.weights, "sentence_weights", tokens, tokens, key="csv_sentence_w")
    i = query_picker(tokens)
    show(figures.bars(tokens, tr.weights[i], title=t("single_head.row_title", token=tokens[i]), y_title=t("common.weight"),
                      highlight=int(np.argmax(tr.weights[i])), ymax=1.1, font_size=font_size()), "sentence_row")


# --- view 4: why √d_k ----------------------------------------------------------------------------------------
def view_sqrt() -> None:
    explain(t("single_head.sqrt_intro"))
    c = st.columns([3, 1, 1])
    d_k = c[0].select_slider(t("single_head.sqrt_dk"), DK_CHOICES, key=url_state.bind("sh_vdk", 64, options=DK_CHOICES))
    n_keys = c[1].number_input(t("single_head.n_keys"), 2, 256, step=1, key=url_state.bind("sh_nkeys", 16, lo=2, hi=256))
    seed = c[2].number_input(t("single_head.seed"), 0, 9999, step=1, key=url_state.bind("sh_vseed", 0, lo=0, hi=9999))
    s = compute("sh_dots", dot_products, int(d_k), int(seed))
    if s is not None:
        stats = pd.DataFrame(
            [[num(s.raw_mean, 3), "0", num(s.raw_var, 3), str(s.d_k)],
             [num(s.scaled_mean, 3), "0", num(s.scaled_var, 3), "1"]],
            index=[t("single_head.raw_name"), t("single_head.scaled_name", dk=s.d_k)],
            columns=[t("single_head.mean_measured"), t("single_head.mean_theory"), t("single_head.var_measured"),
                     t("single_head.var_theory")])
        st.table(stats)
        st.caption(t("single_head.sample_caption", n=len(s.raw), seed=s.seed, ratio=num(s.raw_var / s.d_k, 3)))
        cols = st.columns(2)
        for col, values, var, title, xt, name in (
                (cols[0], s.raw, float(s.d_k), t("single_head.hist_raw", dk=s.d_k), "q·k", "sqrt_hist_raw"),
                (cols[1], s.scaled, 1.0, t("single_head.hist_scaled", dk=s.d_k), "q·k/√d_k", "sqrt_hist_scaled")):
            half = 4.5 * np.sqrt(var)
            centres, dens = scaling.density_histogram(values, bins=61, lo=-half, hi=half)
            fig = figures.curves(centres, {t("single_head.measured"): dens,
                                           t("single_head.normal", var=num(var)): scaling.normal_pdf(centres, var)},
                                 title=title, x_title=xt, y_title=t("single_head.density"), font_size=font_size())
            fig.data[0].line.shape = "hvh"
            fig.data[1].line.update(dash="dash", color="#ff7f0e")
            fig.update_layout(height=340, legend=dict(orientation="h", y=-0.25))
            with col:
                show(fig, name)
    st.subheader(t("single_head.peak_title"))
    explain(t("single_head.peak_intro"))
    p = compute("sh_peak", peakedness, int(n_keys), int(seed))
    if p is not None:
        raw_name, scaled_name = "softmax(q·k)", "softmax(q·k/√d_k)"
        cols = st.columns(2)
        figs = (
            (figures.curves(p.d_k, {raw_name: p.max_weight_raw, scaled_name: p.max_weight_scaled},
                            title=t("single_head.peak_max", n=p.n_keys), x_title="d_k", y_title=t("single_head.max_weight"),
                            mode="lines+markers", font_size=font_size()), "sqrt_max_weight", [1.0 / p.n_keys, 1.0]),
            (figures.curves(p.d_k, {raw_name: p.entropy_raw, scaled_name: p.entropy_scaled},
                            title=t("single_head.peak_entropy", n=p.n_keys), x_title="d_k", y_title=t("single_head.entropy"),
                            mode="lines+markers", font_size=font_size()), "sqrt_entropy", [float(np.log(p.n_keys)), 0.0]))
        for col, (fig, name, refs) in zip(cols, figs):
            fig.data[1].line.color = "#ff7f0e"
            fig.data[1].marker.color = "#ff7f0e"
            fig.update_xaxes(type="log", tickvals=list(PEAK_GRID), ticktext=[str(g) for g in PEAK_GRID])
            for y, label in zip(refs, (t("single_head.ref_uniform"), t("single_head.ref_onehot"))):
                fig.add_hline(y=y, line_dash="dot", line_color="grey", annotation_text=label, annotation_position="top left")
            fig.update_layout(height=380, legend=dict(orientation="h", y=-0.25))
            with col:
                show(fig, name)
    st.info(t("single_head.article_004"))


with page("single_head"):
    st.title(t("single_head.title"))
    explain(t("single_head.intro"))
    st.latex(r"Z = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}\,\tau}\right) XW^V")
    view = st.segmented_control(t("single_head.view"), VIEWS, format_func=lambda v: t(f"single_head.view_{v}"),
                                key=url_state.bind("sh_view", "worked", options=list(VIEWS)), required=True)
    if view == "sqrt":
        view_sqrt()
    else:
        scale, causal, temperature = options()
        {"worked": view_worked, "edit": view_edit, "sentence": view_sentence}[view or "worked"](scale, causal, temperature)
