"""Single head (articles 001, 004): worked example, editable matrices, your sentence, why √d_k;
compute in visattn.{lessons,figures}.single_head."""

import numpy as np
import streamlit as st

from ui import cache_pretrained, url_state
from ui import cache_single_head as cache
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import t
from ui.text import escape
from ui.widgets import bind_token, matrix_editor, set_matrix, token_select
from visattn.figures import single_head as fig
from visattn.lessons import single_head as L

VIEWS = {
    "worked": "single_head.view_worked",
    "edit": "single_head.view_edit",
    "sentence": "single_head.view_sentence",
    "sqrt": "single_head.view_sqrt",
}
EMB = {"seeded": "single_head.emb_seeded", "pretrained": "single_head.emb_pretrained"}
NOTE_ROW = {
    "scores": "single_head.note_row_scores",
    "scaled": "single_head.note_row_scaled",
    "weights": "single_head.note_row_weights",
}
STEP = {
    "inputs": "single_head.step_inputs",
    "qkv": "single_head.step_qkv",
    "scores": "single_head.step_scores",
    "out": "single_head.step_out",
}
WORDS = {
    "value": "single_head.value",
    "score": "common.score",
    "weight": "common.weight",
    "dimension": "common.dimension",
    "token": "common.token",
    "key": "common.key",
    "query": "common.query",
    "sent_scores": "single_head.sent_scores",
    "sent_weights": "single_head.sent_weights",
}
SIZES = (
    ("sh_T", 2, "single_head.T"),
    ("sh_d", 4, "single_head.d_model"),
    ("sh_dk", 4, "single_head.d_k"),
)
SQRT = {
    "density": "single_head.density",
    "measured": "single_head.measured",
    "peak_max": "single_head.peak_max",
    "peak_entropy": "single_head.peak_entropy",
    "max_weight": "single_head.max_weight",
    "entropy": "single_head.entropy",
    "uniform": "single_head.ref_uniform",
    "onehot": "single_head.ref_onehot",
}
caption_if = lambda shown, key: st.caption(t(key)) if shown else None
box = lambda col, label, key, default, lo, hi, **kw: col.number_input(
    t(label), lo, hi, step=1, key=url_state.bind(key, default, lo=lo, hi=hi), **kw
)


def grid(
    figs, n: int, prefix: str = "", spec=None
) -> None:  # n figures to a row (2 on a projector), wrapping: every figure is drawn
    n = min(n, 2) if presenter() else n
    for start in range(0, len(figs), n):
        for col, (name, f) in zip(
            st.columns(spec if spec and len(spec) == n else n), figs[start : start + n]
        ):
            with col:
                show(f, f"{prefix}{name}")


def pipeline(
    tr, tokens, prefix: str, scale: bool, temperature: float, inputs=None
) -> None:  # (X, W) → Q, K, V → QKᵀ → softmax → Z; one query
    words = {k: t(key) for k, key in WORDS.items()} | {
        "z": t("single_head.fig_z", T=tr.X.shape[0], dv=tr.V.shape[1]),
        "scores": t("single_head.fig_scaled", r=L.num(np.sqrt(tr.Q.shape[1])))
        if scale
        else t("single_head.fig_unscaled"),
        "weights_one": t("single_head.fig_weights"),
        "weights_tau": t("single_head.fig_weights_tau", tau="{tau}"),
    }  # the live weights' titles
    for step, n, figs in cache.pipeline(tr, tuple(tokens), words, inputs, temperature, font_size()):
        st.markdown(t(STEP[step]))
        grid(figs, n, prefix + "_", [1.15, 1, 1, 1])
        caption_if(step == "scores" and tr.mask is not None, "single_head.mask_caption")
    for col, (m, name, cols, caption) in zip(
        st.columns(2),
        (
            (tr.weights, "weights", tokens, "single_head.csv_weights"),
            (tr.output, "output", L.dims(tr.V.shape[1]), "single_head.csv_output"),
        ),
    ):
        with col:
            download_csv(m, f"{prefix}_{name}", tokens, cols, key=f"csv_{prefix}_{name}")
            st.caption(t(caption))
    st.subheader(t("single_head.follow_title"))
    query_row(tr, tokens, scale, temperature)


@section
def query_row(
    tr, tokens, scale: bool, temperature: float
) -> None:  # one query: its row written out
    i = token_select(
        t("single_head.query_token"),
        bind_token("sh_q", tokens, 0, hi=L.MAX_TOKENS - 1),
        tokens,
        help=t("single_head.query_help"),
    )
    for line in L.follow_latex(tr, i, scale=scale, temperature=temperature):
        st.latex(line)
    caption_if(tr.mask is not None, "single_head.minus_inf")


def view_worked(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.worked_intro"))
    if (tr := compute("sh_worked", L.worked, scale, causal, temperature)) is None:
        return
    pipeline(tr, list(L.TOKENS), "worked", scale, temperature, inputs=(L.W_Q, L.W_K, L.W_V))
    cols = [
        t("single_head.note_col_what"),
        t("single_head.note_col_printed"),
        t("single_head.note_col_computed"),
        t("single_head.note_col_agree"),
    ]
    with st.container(border=True):
        st.markdown(t("single_head.note_title", printed=cols[1], computed=cols[2]))
        st.table(
            L.note_table(note := L.article_note(), cols, {k: t(key) for k, key in NOTE_ROW.items()})
        )
        st.markdown(
            t(
                "single_head.note_body",
                rows=t("single_head.list_sep").join(map(str, note.picked_rows)),
                **note.values,
            )
        )


def fill(
    article: bool = False, keys=tuple(L.ARTICLE)
) -> None:  # the editors under keys: article 001's matrices and sizes, or seeded random
    st.session_state.update({key: default for key, default, _ in SIZES} if article else {})
    mats = L.refill(
        article, *(int(st.session_state[k]) for k in ("sh_T", "sh_d", "sh_dk", "sh_seed"))
    )
    for key in [k for k in keys if k in mats]:
        set_matrix(key, mats[key])


def view_edit(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.edit_intro"))
    c = st.columns(4)
    sizes = [
        box(
            c[i],
            label,
            key,
            default,
            int(key != "sh_dk"),
            L.MAX_EDIT,
            on_change=fill,
            help=t("single_head.d_k_help") if key == "sh_dk" else None,
        )
        for i, (key, default, label) in enumerate(SIZES)
    ]
    box(c[3], "single_head.seed", "sh_seed", 0, 0, 9999, on_change=fill)
    if (missing := [k for k in L.ARTICLE if k not in st.query_params]) and sizes != [
        d for _, d, _ in SIZES
    ]:
        fill(keys=missing)  # a link with sizes but without (all) its matrices
    for col, label, article in zip(
        st.columns([1, 1, 2]), (t("single_head.fill"), t("single_head.reset")), (False, True)
    ):
        col.button(label, on_click=fill, args=(article,), width="stretch")
    mats, cols = (
        {},
        st.columns(2 if max(sizes[1:]) <= 6 else 1),
    )  # wide matrices one to a row, not cut off
    for i, (key, default) in enumerate(L.ARTICLE.items()):
        with cols[
            i % len(cols)
            # a cell that is not a number: its message, and the matrix as it last was (so the last
            # good view)
        ]:
            st.markdown(f"**{L.NAMES[key]}** ({L.FORMULA[key]})")
            mats[key] = compute(key, matrix_editor, key, default, name=L.NAMES[key], height="auto")
    if (
        all(m is not None for m in mats.values())
        and (
            tr := compute(
                "sh_edit",
                L.edit_trace,
                mats,
                *map(int, sizes),
                scale=scale,
                causal=causal,
                temperature=temperature,
            )
        )
        is not None
    ):
        pipeline(tr, [f"x{i + 1}" for i in range(tr.X.shape[0])], "edit", scale, temperature)


def view_sentence(scale: bool, causal: bool, temperature: float) -> None:
    explain(t("single_head.sentence_intro", limit=L.MAX_TOKENS))
    text = st.text_input(
        t("single_head.sentence"),
        key=url_state.bind("sh_text", L.SENTENCE),
        max_chars=url_state.MAX_TEXT,
        help=t("single_head.sentence_help", chars=url_state.MAX_TEXT, limit=L.MAX_TOKENS),
    )
    source = st.radio(
        t("single_head.emb"),
        [*EMB],
        format_func=lambda s: t(EMB[s]),
        horizontal=True,
        key=url_state.bind("sh_emb", "seeded", options=[*EMB]),
    )
    caption_if(source == "pretrained", "single_head.emb_pretrained_note")
    c = st.columns([1, 1, 1, 1.6])
    d_model, d_k = (
        box(c[0], "single_head.d_model", "sh_sd", 16, 2, L.MAX_SENTENCE_D),
        box(c[1], "single_head.d_k", "sh_sdk", 8, 1, L.MAX_SENTENCE_D),
    )
    seed, side = (
        box(c[2], "single_head.seed", "sh_sseed", 0, 0, 9999),
        c[3].toggle(t("single_head.side"), key=url_state.bind("sh_side", False)),
    )
    if (
        out := compute(
            "sh_sentence",
            L.sentence,
            text,
            source,
            int(d_model),
            int(d_k),
            int(seed),
            scale=scale,
            causal=causal,
            temperature=temperature,
            model=cache_pretrained.model_or_error()[0] if source == "pretrained" else None,
        )
    ) is None:
        return
    tokens, tr = out.tokens, out.trace
    st.caption(t("single_head.tokens", n=len(tokens), tokens=escape(" · ".join(tokens))))
    text_on = L.numbers_fit(len(tokens), side)
    grid(
        figs := cache.sentence(
            tr,
            tuple(tokens),
            {k: t(key) for k, key in WORDS.items()},
            side,
            text_on,
            temperature,
            font_size(),
        ),
        len(figs),
    )  # a lone map takes the full width
    caption_if(not text_on, "single_head.hover_numbers")
    caption_if(tr.mask is not None, "single_head.mask_caption")
    download_csv(tr.weights, "sentence_weights", tokens, tokens, key="csv_sentence_w")


def view_sqrt() -> None:
    explain(t("single_head.sqrt_intro"))
    c = st.columns([3, 1, 1])
    d_k = c[0].select_slider(
        t("single_head.sqrt_dk"),
        L.DK_CHOICES,
        key=url_state.bind("sh_vdk", 64, options=list(L.DK_CHOICES)),
    )
    n_keys = box(
        c[1],
        "single_head.n_keys",
        "sh_nkeys",
        16,
        2,
        L.MAX_KEYS,
        help=t("single_head.n_keys_help", limit=L.MAX_KEYS),
    )
    seed = box(c[2], "single_head.seed", "sh_vseed", 0, 0, 9999)
    words = {k: t(key, dk=d_k, n=n_keys) for k, key in SQRT.items()}
    if (w := compute("sh_dots", cache.why_sqrt, int(d_k), int(seed))) is not None:
        heads = [
            t("single_head.mean_measured"),
            t("single_head.mean_theory"),
            t("single_head.var_measured"),
            t("single_head.var_theory"),
        ]
        st.table(L.variance_table(w, heads))
        st.caption(
            t(
                "single_head.sample_caption",
                n=len(w.sample.raw),
                seed=w.sample.seed,
                ratio=L.num(w.ratio, 3),
            )
        )
        grid(fig.why_sqrt(w, words, font_size(), steps=cache.sqrt_steps(int(seed))), 2)
    st.subheader(t("single_head.peak_title"))
    if (p := compute("sh_peak", cache.peakedness, int(n_keys), int(seed))) is not None:
        explain(t("single_head.peak_intro", rows=p.n_rows))
        grid(fig.peaks(p, words, font_size()), 2)
    st.info(t("single_head.article_004"))


@section
def lesson() -> (
    None
):  # the view and its options: each control here changes only what this section draws
    view = st.segmented_control(
        t("single_head.view"),
        list(VIEWS),
        format_func=lambda v: t(VIEWS[v]),
        required=True,
        key=url_state.bind("sh_view", "worked", options=list(VIEWS)),
    )
    if view == "sqrt":
        return view_sqrt()
    c1, c2, c3 = (
        st.columns([1, 1.3, 2]) if not presenter() else (*st.columns(2), st.container())
    )  # the options of the first three views
    scale = c1.toggle(
        t("single_head.opt_scale"),
        key=url_state.bind("sh_scale", True),
        help=t("single_head.opt_scale_help"),
    )
    causal = c2.toggle(
        t("single_head.opt_causal"),
        key=url_state.bind("sh_causal", False),
        help=t("single_head.opt_causal_help"),
    )
    temperature = c3.slider(
        t("single_head.opt_temp"),
        0.05,
        5.0,
        step=0.05,
        key=url_state.bind("sh_temp", 1.0, lo=0.05, hi=5.0),  # = L.TEMPERATURE
        help=t("single_head.opt_temp_help"),
    )
    {"worked": view_worked, "edit": view_edit, "sentence": view_sentence}[view or "worked"](
        scale, causal, temperature
    )


with page("single_head"):
    st.title(t("single_head.title"))
    explain(t("single_head.intro"))
    url_state.bind_all(L.CONTROLS)  # every view's settings stay in the URL, whichever view is drawn
    st.latex(
        r"Z = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}\,\tau}\right) XW^V"
    )
    lesson()
