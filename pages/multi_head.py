"""Multi-head attention (articles 004, 003, 000).

Article 004's picture: in "The animal didn't cross the street because it was too tired." one head links
it → animal (who "it" is), another it → tired (what state "it" is in). The designed transformer
(:mod:`visattn.designed`) shows it with weights whose every entry has a reason; the same views with seeded
random weights show what an untrained head looks like. Then the pipeline with every shape, and the shape
explorer for any size up to GPT-3's 96 heads × 128.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import visattn
from ui import url_state
from ui.cache_multi_head import N_LAYERS, designed_run, random_run
from ui.charts import download_csv, show
from ui.errors import compute, show_error
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures, shapes
from visattn.models import designed
from visattn.text import MAX_TOKENS

SENTENCE = "The animal didn't cross the street because it was too tired."
PRESETS = {   # the Winograd pair of article 004, then variants built from the designed lexicon
    "tired": SENTENCE,
    "wide": "The animal didn't cross the street because it was too wide.",
    "scared": "The dog didn't cross the river because it was too scared.",
    "high": "The cat didn't jump over the wall because it was too high.",
    "two_adjectives": "The horse didn't cross the wide road because it was tired.",
}
SOURCES = ("designed", "random")
MAX_COUNT = 100_000        # tokens counted before the limit check, so the message can say how many there were
MAX_RANDOM_D = 256
MAX_RANDOM_HEADS = 16
GRID_COLS = 4              # heads per row of the grid
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


# --- input → tokens → a run (every ValueError here is shown by ui.errors.compute) ----------------------------
def tokens_of(text: str) -> list[str]:
    """The tokens of ``text`` or a translated ValueError (empty, too long)."""
    text = (text or "").replace("\u2019", "'")
    if not text.strip():
        raise ValueError(t("multi_head.err_empty"))
    try:
        tokens = visattn.tokenize(text, max_tokens=MAX_COUNT)
    except ValueError:
        raise ValueError(t("multi_head.err_empty")) from None
    if len(tokens) > MAX_TOKENS:
        raise ValueError(t("multi_head.err_too_many", n=len(tokens), limit=MAX_TOKENS))
    return tokens


def heads_error(d_model: int, n_heads: int) -> ValueError:
    """check_heads' complaint in the page's language, with the nearest head counts that would work."""
    small = [h for h in range(1, int(d_model ** 0.5) + 1) if d_model % h == 0]   # O(√D), fine for GPT sizes
    divisors = sorted(set(small) | {d_model // h for h in small})
    lower = max((h for h in divisors if h < n_heads), default=1)
    upper = min((h for h in divisors if h > n_heads), default=d_model)
    return ValueError(t("multi_head.err_heads", d=d_model, h=n_heads, dh=f"{d_model / n_heads:.3g}",
                        lower=lower, upper=upper))


def run_model(text: str, source: str, d_model: int, n_heads: int, seed: int):
    tokens = tokens_of(text)
    if source == "designed":
        return designed_run(tuple(tokens))
    try:
        visattn.check_heads(d_model, n_heads)
    except ValueError:
        raise heads_error(d_model, n_heads) from None
    return random_run(tuple(tokens), d_model, n_heads, seed)


def explore_shapes(T: int, d_model: int, n_heads: int) -> shapes.MultiHeadShapes:
    try:
        visattn.check_heads(d_model, n_heads)
    except ValueError:
        raise heads_error(d_model, n_heads) from None
    return shapes.multi_head_shapes(T, d_model, n_heads)


# --- small helpers ---------------------------------------------------------------------------------------------
def head_label(r, h: int) -> str:
    name = r.head_names[h]
    if name in designed.HEAD_NAMES:
        return t(f"multi_head.head_{name}")
    return f"{t('common.head')} {name}"


def dims(n: int) -> list[str]:
    return [str(j + 1) for j in range(n)]


def fmt_int(n: int) -> str:
    return f"{n:,}"


def set_text(sentence: str) -> None:
    st.session_state["mh_text"] = sentence


def set_explorer(T: int, d_model: int, n_heads: int) -> None:
    st.session_state.update(mh_sT=T, mh_sD=d_model, mh_sH=n_heads)


def focus_default(tokens: list[str]) -> int:
    """The first pronoun ("it"), else the first token."""
    for i, tok in enumerate(tokens):
        if "pronoun" in designed.word_features(tok):
            return i
    return 0


def small_heatmap(m, rows, cols, title: str, name: str, *, weights: bool = False, x_title: str = "",
                  y_title: str = "", text: bool | None = None, row_px: int = 26) -> None:
    """One step's matrix; float noise below 1e-9 (e.g. 4e-17 from a cancelled sum) is drawn as the 0 it is."""
    m = np.asarray(m, dtype=float)
    m = np.where(np.abs(m) < 1e-9, 0.0, m)
    height = int(min(700, max(230, 130 + row_px * m.shape[0])))
    fig = figures.heatmap(m, cols, rows, title=title, weights=weights, height=height, font_size=font_size(),
                          x_title=x_title, y_title=y_title, show_text=text,
                          value_name=t("common.weight") if weights else t("common.value"))
    show(fig, name)


def grid(w: np.ndarray, r, tokens: list[str], layer: int) -> None:
    """All heads of one layer in one figure on the shared 0…1 scale; blanks pad the last row."""
    H, T, _ = w.shape
    cols = 2 if H <= 4 else GRID_COLS
    rows = -(-H // cols)
    block = np.full((rows * cols, T, T), np.nan)
    block[:H] = w
    fig = figures.head_grid(block.reshape(rows, cols, T, T), tokens, tokens,
                            cell_titles=[head_label(r, k) if k < H else "" for k in range(rows * cols)],
                            font_size=font_size(), value_name=t("common.weight"), cell_px=330 if cols <= 2 else 230)
    show(fig, f"multi_head_grid_L{layer + 1}")


# --- the page ----------------------------------------------------------------------------------------------------
with page("multi_head"):
    st.title(t("multi_head.title"))
    explain(t("multi_head.intro"))

    # Every key is bound on every run (also those whose widget is hidden now), so the URL keeps them.
    k_src = url_state.bind("mh_src", "designed", options=list(SOURCES))
    k_text = url_state.bind("mh_text", SENTENCE)
    k_d = url_state.bind("mh_d", 32, lo=2, hi=MAX_RANDOM_D)
    k_h = url_state.bind("mh_h", 4, lo=1, hi=MAX_RANDOM_HEADS)
    k_seed = url_state.bind("mh_seed", 0, lo=0, hi=999_999)
    k_layer = url_state.bind("mh_layer", N_LAYERS, options=list(range(1, N_LAYERS + 1)))
    k_head = url_state.bind("mh_head", 0, lo=0, hi=MAX_RANDOM_HEADS - 1)
    k_lfoc = url_state.bind("mh_lfoc", True)
    k_vis = [url_state.bind(f"mh_v{h}", True) for h in range(MAX_RANDOM_HEADS)]
    k_pipe = url_state.bind("mh_pipe", False)
    k_sT = url_state.bind("mh_sT", shapes.GPT3["T"], lo=1, hi=shapes.MAX_TOKENS)
    k_sD = url_state.bind("mh_sD", shapes.GPT3["d_model"], lo=1, hi=shapes.MAX_D_MODEL)
    k_sH = url_state.bind("mh_sH", shapes.GPT3["n_heads"], lo=1, hi=shapes.MAX_D_MODEL)

    # ── controls ────────────────────────────────────────────────────────────────────────────────────────────
    source = st.radio(t("multi_head.source"), list(SOURCES), format_func=lambda s: t(f"multi_head.source_{s}"),
                      key=k_src, horizontal=True, help=t("multi_head.source_help"))
    st.caption(t("multi_head.presets"))
    cols = st.columns(len(PRESETS))
    for col, (name, sentence) in zip(cols, PRESETS.items()):
        col.button(t(f"multi_head.preset_{name}"), on_click=set_text, args=(sentence,), key=f"mh_preset_{name}",
                   help=sentence, width="stretch")
    text = st.text_input(t("multi_head.text"), key=k_text, help=t("multi_head.text_help"))
    d_model, n_heads, seed = int(st.session_state[k_d]), int(st.session_state[k_h]), int(st.session_state[k_seed])
    if source == "random":
        c = st.columns(3)
        d_model = c[0].number_input(t("multi_head.d_model"), min_value=2, max_value=MAX_RANDOM_D, step=1, key=k_d)
        n_heads = c[1].number_input(t("multi_head.n_heads"), min_value=1, max_value=MAX_RANDOM_HEADS, step=1, key=k_h,
                                    help=t("multi_head.n_heads_help"))
        seed = c[2].number_input(t("multi_head.seed"), min_value=0, max_value=999_999, step=1, key=k_seed)
    layer = st.radio(t("multi_head.layer"), list(range(1, N_LAYERS + 1)), key=k_layer, horizontal=True,
                     format_func=lambda n: t("multi_head.layer_n", n=n), help=t("multi_head.layer_help")) - 1

    r = compute("multi_head_run", run_model, text, source, int(d_model), int(n_heads), int(seed))
    if r is not None:
        tokens = r.tokens
        T, H = len(tokens), len(r.head_names)
        is_designed = isinstance(r, designed.DesignedResult)
        w = r.weights[layer]                                       # (H, T, T)
        if is_designed:
            unknown = sorted({tok for tok in tokens if not designed.word_features(tok)}, key=str.lower)
            if unknown:
                st.info(t("multi_head.unknown_words", words=", ".join(unknown)), icon="ℹ️")

        # Focus token: the pronoun by default; back to it when the sentence changes, clamped if out of range.
        auto = focus_default(tokens)
        k_tok = url_state.bind("mh_tok", auto, lo=0, hi=MAX_TOKENS - 1)
        prev = st.session_state.get("_mh_tokens")
        if prev is not None and prev != tokens:
            st.session_state[k_tok] = auto
        elif not 0 <= int(st.session_state[k_tok]) < T:
            url_state.notices().append(k_tok)
            st.session_state[k_tok] = auto
        st.session_state["_mh_tokens"] = tokens
        if int(st.session_state[k_head]) >= H:
            st.session_state[k_head] = 0

        # ── 1. every head ────────────────────────────────────────────────────────────────────────────────
        st.header(t("multi_head.grid_header", layer=layer + 1))
        explain(t("multi_head.grid_intro"))
        grid(w, r, tokens, layer)
        row_max = float(w.max(axis=-1).mean())
        st.caption(t("multi_head.diffuse", mean=f"{row_max:.2f}", uniform=f"{1 / T:.2f}", T=T))
        if is_designed:
            explain("\n".join(f"- **{head_label(r, h)}** — {t(f'multi_head.why_{name}')}"
                              for h, name in enumerate(r.head_names)))
        else:
            explain(t("multi_head.why_random"))

        # ── 2. token focus ───────────────────────────────────────────────────────────────────────────────
        st.header(t("multi_head.focus_header"))
        i = st.selectbox(t("multi_head.focus_token"), list(range(T)), key=k_tok,
                         format_func=lambda j: f"{j + 1}: {tokens[j]}", help=t("multi_head.focus_help"))
        best = [int(np.argmax(w[h, i])) for h in range(H)]
        st.markdown(t("multi_head.focus_summary", token=tokens[i], layer=layer + 1) + " "
                    + "; ".join(f"**{head_label(r, h)}** → **{tokens[best[h]]}** ({w[h, i, best[h]]:.2f})"
                                for h in range(H)))
        if H <= 8:
            per_row = 2 if H <= 4 else 4
            for start in range(0, H, per_row):
                cols = st.columns(per_row)
                for col, h in zip(cols, range(start, min(H, start + per_row))):
                    with col:
                        fig = figures.bars(tokens, w[h, i], highlight=best[h], ymax=1.15, font_size=font_size(),
                                           y_title=t("common.weight"), digits=2, fixed=True, label_min=0.03,
                                           title=t("multi_head.focus_bar_title", head=head_label(r, h), token=tokens[i],
                                                   target=tokens[best[h]], w=f"{w[h, i, best[h]]:.2f}"))
                        fig.update_layout(height=320)
                        if per_row > 2:            # too narrow for a number on every bar: the title has the top one
                            fig.update_traces(text=None)
                        show(fig, f"multi_head_focus_L{layer + 1}_{r.head_names[h]}")
        else:
            fig = figures.heatmap(w[:, i, :], tokens, [head_label(r, h) for h in range(H)], font_size=font_size(),
                                  title=t("multi_head.focus_heat_title", token=tokens[i]), x_title=t("common.key"),
                                  y_title=t("common.head"), value_name=t("common.weight"))
            show(fig, f"multi_head_focus_L{layer + 1}")

        # ── 3. the line view ─────────────────────────────────────────────────────────────────────────────
        st.header(t("multi_head.lines_header"))
        explain(t("multi_head.lines_intro"))
        per_row = min(H, 8)
        visible = []
        for start in range(0, H, per_row):
            cols = st.columns(per_row)
            for col, h in zip(cols, range(start, min(H, start + per_row))):
                if col.checkbox(head_label(r, h), key=k_vis[h]):
                    visible.append(h)
        only_focus = st.toggle(t("multi_head.lines_only_focus", token=tokens[i]), key=k_lfoc)
        lines = w
        if only_focus:
            lines = np.zeros_like(w)
            lines[:, i, :] = w[:, i, :]
        if visible:
            show(figures.line_view(lines, tokens, head_names=[head_label(r, h) for h in range(H)], visible=visible,
                                   font_size=font_size(), title=t("multi_head.lines_title", layer=layer + 1)),
                 f"multi_head_lines_L{layer + 1}")
        else:
            st.info(t("multi_head.lines_none"), icon="ℹ️")

        # ── 4. one head, large ───────────────────────────────────────────────────────────────────────────
        st.header(t("multi_head.one_header"))
        h = st.selectbox(t("multi_head.one_head"), list(range(H)), key=k_head, format_func=lambda j: head_label(r, j))
        fig = figures.heatmap(w[h], tokens, tokens, font_size=font_size(), x_title=t("common.key"),
                              y_title=t("common.query"), value_name=t("common.weight"),
                              title=t("multi_head.one_title", head=head_label(r, h), layer=layer + 1))
        show(fig, f"multi_head_L{layer + 1}_{r.head_names[h]}")
        explain(t(f"multi_head.why_{r.head_names[h]}") if is_designed else t("multi_head.why_random"))
        download_csv(w[h], f"multi_head_L{layer + 1}_head_{r.head_names[h]}", tokens, tokens, key="mh_csv_head")

        # ── 5. the pipeline, step by step, with shapes ───────────────────────────────────────────────────
        st.header(t("multi_head.pipe_header"))
        explain(t("multi_head.pipe_intro"))
        if st.toggle(t("multi_head.pipe_show"), key=k_pipe):
            tr = r.layers[layer]
            D, Dh = tr.X_in.shape[1], tr.mha.Q.shape[2]
            n = str(h + 1).translate(SUB)
            dim_labels = list(r.dim_names) if is_designed else dims(D)
            st.subheader(t("multi_head.step_x", layer=layer + 1))
            if layer == 0:
                explain(t("multi_head.step_x_designed") if is_designed else t("multi_head.step_x_random"))
            else:
                explain(t("multi_head.step_x_next", prev=layer))
            small_heatmap(tr.X_in, tokens, dim_labels, t("multi_head.fig_shape", name="X", T=T, c=D), "mh_pipe_x",
                          x_title=t("common.dimension"))
            if layer == 0:
                P = r.positions
                small_heatmap(P, tokens, dims(P.shape[1]), t("multi_head.fig_shape", name="PE", T=T, c=P.shape[1]),
                              "mh_pipe_pe", x_title=t("common.position"))
            st.subheader(t("multi_head.step_qkv", head=head_label(r, h)))
            explain(t("multi_head.step_qkv_text", D=D, H=H, dh=Dh, lo=h * Dh + 1, hi=(h + 1) * Dh))
            c = st.columns(3)
            for col, (m, name) in zip(c, ((tr.mha.Q[h], "Q"), (tr.mha.K[h], "K"), (tr.mha.V[h], "V"))):
                with col:
                    small_heatmap(m, tokens, dims(Dh), t("multi_head.fig_shape", name=name + n, T=T, c=Dh),
                                  f"mh_pipe_{name.lower()}", x_title=t("common.dimension"), text=False)
            st.subheader(t("multi_head.step_attend", head=head_label(r, h)))
            c = st.columns(2)
            with c[0]:
                small_heatmap(tr.mha.weights[h], tokens, tokens, t("multi_head.fig_shape", name="A" + n, T=T, c=T),
                              "mh_pipe_a", weights=True, x_title=t("common.key"), y_title=t("common.query"))
            with c[1]:
                small_heatmap(tr.mha.heads[h], tokens, dims(Dh),
                              t("multi_head.fig_shape", name=f"head{n} = A{n}V{n}", T=T, c=Dh), "mh_pipe_head",
                              x_title=t("common.dimension"))
            st.subheader(t("multi_head.step_concat"))
            explain(t("multi_head.step_concat_text", H=H, dh=Dh, D=D))
            c = st.columns(2)
            with c[0]:
                small_heatmap(tr.mha.concat, tokens, dims(D), t("multi_head.fig_shape", name="concat", T=T, c=D),
                              "mh_pipe_concat", x_title=t("common.dimension"))
            with c[1]:
                W_o = (designed.DESIGNED_CONFIG.layers[layer] if is_designed else r.params[layer]).W_o
                small_heatmap(W_o, dims(D), dims(D), t("multi_head.fig_shape", name="W_O", T=D, c=D), "mh_pipe_wo",
                              row_px=int(max(6, min(26, 400 // D))))
            small_heatmap(tr.mha.output, tokens, dim_labels,
                          t("multi_head.fig_shape", name="MHA(X) = concat · W_O", T=T, c=D), "mh_pipe_mha",
                          x_title=t("common.dimension"))
            st.subheader(t("multi_head.step_norm"))
            explain(t("multi_head.step_norm_text"))
            c = st.columns(2)
            with c[0]:
                small_heatmap(tr.residual, tokens, dim_labels, t("multi_head.fig_shape", name="X + MHA(X)", T=T, c=D),
                              "mh_pipe_residual", x_title=t("common.dimension"))
            with c[1]:
                small_heatmap(tr.Z, tokens, dim_labels, t("multi_head.fig_shape", name="Z = LayerNorm", T=T, c=D),
                              "mh_pipe_z", x_title=t("common.dimension"))
            if layer + 1 < len(r.layers):
                st.caption(t("multi_head.step_next", next=layer + 2))

    # ── 6. shape explorer: any size, nothing allocated ───────────────────────────────────────────────────────
    st.header(t("multi_head.shapes_header"))
    explain(t("multi_head.shapes_intro"))
    c = st.columns(3)
    c[0].button(t("multi_head.shapes_gpt3"), on_click=set_explorer, args=tuple(shapes.GPT3.values()),
                key="mh_shapes_gpt3", width="stretch")
    if r is not None:
        here = (len(r.tokens), int(r.X.shape[1]), len(r.head_names))
        c[1].button(t("multi_head.shapes_here"), on_click=set_explorer, args=here, key="mh_shapes_here",
                    width="stretch")
    c = st.columns(3)
    sT = c[0].number_input(t("multi_head.shapes_T"), min_value=1, max_value=shapes.MAX_TOKENS, step=1, key=k_sT)
    sD = c[1].number_input(t("multi_head.d_model"), min_value=1, max_value=shapes.MAX_D_MODEL, step=1, key=k_sD)
    sH = c[2].number_input(t("multi_head.n_heads"), min_value=1, max_value=shapes.MAX_D_MODEL, step=1, key=k_sH)
    s = None
    try:
        s = explore_shapes(int(sT), int(sD), int(sH))
    except ValueError as exc:
        show_error(exc)
    if s is not None:
        m = st.columns(4)
        m[0].metric(t("multi_head.shapes_dh"), fmt_int(s.d_head), help=t("multi_head.shapes_dh_help",
                                                                        D=fmt_int(s.d_model), H=s.n_heads))
        m[1].metric(t("multi_head.shapes_params"), fmt_int(s.params_per_layer))
        m[2].metric(t("multi_head.shapes_per_head"), fmt_int(s.params_per_head))
        m[3].metric(t("multi_head.shapes_weights"), fmt_int(s.weight_entries))
        st.markdown(t("multi_head.shapes_formula", D=fmt_int(s.d_model), D2=fmt_int(s.d_model ** 2),
                      total=fmt_int(s.params_per_layer), H=s.n_heads, dh=fmt_int(s.d_head)))
        table = pd.DataFrame({
            t("multi_head.col_matrix"): [mx.name for mx in s.matrices],
            t("multi_head.col_shape"): ["(" + ", ".join(fmt_int(x) for x in mx.shape) + ")" for mx in s.matrices],
            t("multi_head.col_entries"): [fmt_int(mx.size) for mx in s.matrices],
            t("multi_head.col_learned"): ["✓" if mx.learned else "" for mx in s.matrices],
            t("multi_head.col_what"): [t(f"multi_head.what_{mx.name}") for mx in s.matrices],
        })
        st.dataframe(table, hide_index=True, width="stretch", height=35 * (len(table) + 1) + 3)
        st.caption(t("multi_head.shapes_extra", bias=fmt_int(s.bias_params), ln=fmt_int(s.layer_norm_params)))
        if (s.T, s.d_model, s.n_heads) == tuple(shapes.GPT3.values()):
            st.caption(t("multi_head.shapes_gpt3_note", layers=shapes.GPT3_LAYERS,
                               total=fmt_int(shapes.GPT3_LAYERS * s.params_per_layer)))
