"""Multi-head attention (articles 004, 003, 000): the lesson of :mod:`visattn.lessons.multi_head`,
drawn through issue 12's one selector."""

from __future__ import annotations

import streamlit as st

from ui import reading_views as rv
from ui import url_state
from ui.cache_multi_head import readings, run
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import t
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn import figures, shapes
from visattn.figures import multi_head as mh_fig
from visattn.figures.reading import colour_scale, filtered_line_view
from visattn.lessons import multi_head as lesson
from visattn.text import MAX_TOKENS

HEAD = {
    "coreference": ("multi_head.head_coreference", "multi_head.why_coreference"),
    "state": ("multi_head.head_state", "multi_head.why_state"),
    "previous": ("multi_head.head_previous", "multi_head.why_previous"),
    "broad": ("multi_head.head_broad", "multi_head.why_broad"),
}
PRESET = {
    "tired": "multi_head.preset_tired",
    "wide": "multi_head.preset_wide",
    "scared": "multi_head.preset_scared",
    "high": "multi_head.preset_high",
    "two_adjectives": "multi_head.preset_two_adjectives",
}
STEP = {
    "x": "multi_head.step_x",
    "qkv": "multi_head.step_qkv",
    "attend": "multi_head.step_attend",
    "concat": "multi_head.step_concat",
    "norm": "multi_head.step_norm",
    "x_designed": "multi_head.step_x_designed",
    "x_random": "multi_head.step_x_random",
    "x_next": "multi_head.step_x_next",
    "attend_text": "multi_head.step_attend_text",
    "qkv_text": "multi_head.step_qkv_text",
    "concat_text": "multi_head.step_concat_text",
    "norm_text": "multi_head.step_norm_text",
    "fig_shape": "multi_head.fig_shape",
    "fig_head": "multi_head.fig_head",
    "fig_concat": "multi_head.fig_concat",
    "fig_mha": "multi_head.fig_mha",
}
AXIS = {
    "token": "common.token",
    "query": "common.query",
    "key": "common.key",
    "dimension": "common.dimension",
    "position": "common.position",
}
WHAT = {
    "X": "multi_head.what_X",
    "W_q": "multi_head.what_W_q",
    "W_k": "multi_head.what_W_k",
    "W_v": "multi_head.what_W_v",
    "Q": "multi_head.what_Q",
    "W_q_h": "multi_head.what_W_q_h",
    "K": "multi_head.what_K",
    "V": "multi_head.what_V",
    "Q_h": "multi_head.what_Q_h",
    "K_h": "multi_head.what_K_h",
    "V_h": "multi_head.what_V_h",
    "A_h": "multi_head.what_A_h",
    "A": "multi_head.what_A",
    "head_h": "multi_head.what_head_h",
    "Z": "multi_head.what_Z",
    "concat": "multi_head.what_concat",
    "W_o": "multi_head.what_W_o",
    "MHA": "multi_head.what_MHA",
    "residual": "multi_head.what_residual",
}
METRICS = (
    ("multi_head.shapes_dh", "dh"),
    ("multi_head.shapes_params", "total"),
    ("multi_head.shapes_per_head", "per_head"),
    ("multi_head.shapes_weights", "weights"),
)
NAME = {
    "concat": "multi_head.name_concat",
    "residual": "multi_head.name_residual",
    "head_h": "multi_head.name_head_h",
}  # the others are symbols
COLUMNS = (
    "multi_head.col_matrix",
    "multi_head.col_shape",
    "multi_head.col_entries",
    "multi_head.col_learned",
    "multi_head.col_what",
)
cells = lambda n, per_row: [
    (col, k)
    for start in range(0, n, per_row)
    for col, k in zip(st.columns(per_row), range(start, min(n, start + per_row)))
]
head_label = lambda name: t(HEAD[name][0]) if name in HEAD else t("multi_head.head_n", n=name)
SHAPE_KEYS, SHAPE_MAX = (
    ("mh_sT", "mh_sD", "mh_sH"),
    (shapes.MAX_TOKENS, shapes.MAX_D_MODEL, shapes.MAX_D_MODEL),
)  # the shape explorer's


@section
def shape_explorer(here: tuple | None) -> None:  # here: the shapes of the run above (None: no run)
    st.header(t("multi_head.shapes_header"))
    explain(t("multi_head.shapes_intro"))
    for col, (label, key, values) in zip(
        st.columns(3),
        [("multi_head.shapes_gpt3", "mh_shapes_gpt3", shapes.GPT3.values())]
        + [("multi_head.shapes_here", "mh_shapes_here", here)] * (here is not None),
    ):
        col.button(
            t(label),
            on_click=st.session_state.update,
            kwargs=dict(zip(SHAPE_KEYS, values)),
            key=key,
            width="stretch",
        )
    sT, sD, sH = (
        col.number_input(t(label), min_value=1, max_value=hi, step=1, key=k)
        for col, label, hi, k in zip(
            st.columns(3),
            ("multi_head.shapes_T", "multi_head.d_model", "multi_head.n_heads"),
            SHAPE_MAX,
            SHAPE_KEYS,
        )
    )
    s = compute("multi_head_shapes", lesson.explore, int(sT), int(sD), int(sH))
    if s is not None:
        n, m = (
            s.numbers,
            st.columns(2 if presenter() else 4),
        )  # two metrics a row on a projector: labels stay whole
        for k, (label, value) in enumerate(METRICS):
            m[k % len(m)].metric(
                t(label), n[value], help=t("multi_head.shapes_dh_help", **n) if k == 0 else None
            )
        st.markdown(t("multi_head.shapes_formula", **n))
        st.table(
            s.table(
                [t(k) for k in COLUMNS],
                {n: t(k) for n, k in WHAT.items()},
                {n: t(k) for n, k in NAME.items()},
            )
        )  # every row, wrapped
        st.caption(t("multi_head.shapes_extra", **n))
        if s.gpt3:
            st.caption(t("multi_head.shapes_gpt3_note", **n))


with page("multi_head"):
    st.title(t("multi_head.title"))
    explain(t("multi_head.intro") + "\n\n" + t("multi_head.article_003"))
    # Every key is bound on every run (also those whose widget is hidden now), so the URL keeps
    # them.
    k_src, k_text = (
        url_state.bind("mh_src", "designed", options=list(lesson.SOURCES)),
        url_state.bind("mh_text", lesson.SENTENCE),
    )
    k_d, k_h = (
        url_state.bind("mh_d", 32, lo=2, hi=lesson.MAX_RANDOM_D),
        url_state.bind("mh_h", 4, lo=1, hi=lesson.MAX_RANDOM_HEADS),
    )
    k_seed, k_head = (
        url_state.bind("mh_seed", 0, lo=0, hi=lesson.MAX_SEED),
        url_state.bind("mh_head", 0, lo=0, hi=lesson.MAX_RANDOM_HEADS - 1),
    )
    k_layer, k_lfoc = (
        url_state.bind("mh_layer", lesson.N_LAYERS, options=list(range(1, lesson.N_LAYERS + 1))),
        url_state.bind("mh_lfoc", True),
    )
    k_pipe, k_vis = (
        url_state.bind("mh_pipe", False),
        [url_state.bind(f"mh_v{h}", True) for h in range(lesson.MAX_RANDOM_HEADS)],
    )
    url_state.bind_all(
        {
            k: (shapes.GPT3[v], {"lo": 1, "hi": hi})
            for k, v, hi in zip(SHAPE_KEYS, ("T", "d_model", "n_heads"), SHAPE_MAX)
        }
    )
    rv.bind("mh")
    fs, weight_name, axes = (
        font_size(),
        t("common.weight"),
        {kind: t(key) for kind, key in AXIS.items()},
    )
    source = st.radio(
        t("multi_head.source"),
        list(lesson.SOURCES),
        key=k_src,
        horizontal=True,
        help=t("multi_head.source_help"),
        format_func=lambda s: (
            t("multi_head.source_designed") if s == "designed" else t("multi_head.source_random")
        ),
    )
    preset_buttons(
        k_text,
        {name: (t(PRESET[name]), text) for name, text in lesson.PRESETS.items()},
        caption=t("multi_head.presets"),
        help_template="“{text}”",
    )
    text = st.text_input(
        t("multi_head.text"),
        key=k_text,
        max_chars=url_state.MAX_TEXT,
        help=t("multi_head.text_help", tokens=MAX_TOKENS, chars=url_state.MAX_TEXT),
    )
    d_model, n_heads, seed = (int(st.session_state[k]) for k in (k_d, k_h, k_seed))
    if source == "random":
        d_model, n_heads, seed = (
            col.number_input(
                t(label), min_value=lo, max_value=hi, step=1, key=k, help=t(hint) if hint else None
            )
            for col, (label, lo, hi, k, hint) in zip(
                st.columns(3),
                (
                    ("multi_head.d_model", 2, lesson.MAX_RANDOM_D, k_d, ""),
                    (
                        "multi_head.n_heads",
                        1,
                        lesson.MAX_RANDOM_HEADS,
                        k_h,
                        "multi_head.n_heads_help",
                    ),
                    ("multi_head.seed", 0, lesson.MAX_SEED, k_seed, ""),
                ),
            )
        )
    layer = (
        st.radio(
            t("multi_head.layer"),
            list(range(1, lesson.N_LAYERS + 1)),
            key=k_layer,
            horizontal=True,
            format_func=lambda n: t("multi_head.layer_n", n=n),
            help=t("multi_head.layer_help"),
        )
        - 1
    )
    name, scale = rv.selector("mh"), rv.colour_controls("mh")
    good = compute(
        "multi_head_run",
        lambda *a: run(*a) and a,
        text,
        source,
        int(d_model),
        int(n_heads),
        int(seed),
    )  # the inputs of the last good run
    r = run(*good) if good else None
    k_tok = bind_token(
        "mh_tok",
        r.tokens if r else None,
        lesson.focus_default(r.tokens) if r else 0,
        hi=MAX_TOKENS - 1,
    )
    if (
        r is not None
        and (rd := rv.chosen("mh_view", repr(good), name, readings, *good, name, progress=False))
        is not None
    ):
        tokens, heads, Hr, view = (
            r.tokens,
            [head_label(n) for n in r.head_names],
            len(r.head_names),
            lesson.layer_view(r, layer, rd.w),
        )
        names = (
            heads if name in rv.PER_HEAD else [rv.label(name)]
        )  # the view's maps of this layer: the heads, or one merged map
        H, colour, value_name, L = (
            len(names),
            colour_scale(rd.w, **scale),
            rv.value_name(name),
            f"L{layer + 1}" + (name != "weights") * f"_{name}",
        )
        if unknown := lesson.unknown_words(r):
            st.info(
                t("multi_head.unknown_words", words=escape(t("common.list_sep").join(unknown))),
                icon="ℹ️",
            )
        st.session_state[k_head] = (
            int(st.session_state[k_head]) if int(st.session_state[k_head]) < Hr else 0
        )
        st.header(t("multi_head.grid_header", layer=layer + 1))
        explain(t("multi_head.grid_intro"))
        show(
            mh_fig.layer_grid(
                view.weights,
                tokens,
                names,
                view.grid_cols,
                font_size=fs,
                value_name=value_name,
                colour=colour,
                query_name=axes["query"],
                key_name=axes["key"],
            ),
            f"multi_head_grid_{L}",
        )
        st.caption(
            t(
                "multi_head.diffuse",
                mean=f"{view.row_max_mean:.2f}",
                uniform=f"{view.uniform:.2f}",
                T=len(tokens),
            )
        )
        explain(
            "\n".join(
                t("multi_head.why_item", head=heads[h], why=t(HEAD[n][1]))
                for h, n in enumerate(r.head_names)
            )
            if lesson.is_designed(r)
            else t("multi_head.why_random")
        )
        st.header(t("multi_head.focus_header"))
        i = token_select(
            t("multi_head.focus_token"), k_tok, tokens, help=t("multi_head.focus_help")
        )
        f = lesson.focus(r, layer, i, bool(st.session_state[k_lfoc]), rd.w)
        st.markdown(
            t("multi_head.focus_summary", token=escape(tokens[i]), layer=layer + 1)
            + " "
            + t("common.list_sep").join(
                t(
                    "multi_head.focus_item",
                    head=names[h],
                    target=escape(tokens[b]),
                    w=f"{f.top[h]:.2f}",
                )
                for h, b in enumerate(f.best)
            )
        )
        for col, h in cells(H, f.per_row) if f.bars else ():
            with col:
                title = t(
                    "multi_head.focus_bar_title",
                    head=names[h],
                    token=tokens[i],
                    target=tokens[f.best[h]],
                    w=f"{f.top[h]:.2f}",
                )
                show(
                    mh_fig.focus_bars(
                        tokens,
                        view.weights[h, i],
                        f.best[h],
                        title=title,
                        narrow=f.per_row > 2,
                        font_size=fs,
                        y_title=value_name,
                    ),
                    f"multi_head_focus_{L}_{(r.head_names if H == Hr else names)[h]}",
                )
        if not f.bars:
            show(
                figures.heatmap(
                    view.weights[:, i, :],
                    tokens,
                    names,
                    font_size=fs,
                    x_title=axes["key"],
                    y_title=t("common.head"),
                    title=t("multi_head.focus_heat_title", token=tokens[i]),
                    value_name=value_name,
                    **colour,
                ),
                f"multi_head_focus_{L}",
            )
        st.header(t("multi_head.lines_header"))
        explain(t("multi_head.lines_intro"))
        visible = [h for col, h in cells(H, min(H, 8)) if col.checkbox(names[h], key=k_vis[h])]
        st.toggle(t("multi_head.lines_only_focus", token=tokens[i]), key=k_lfoc)
        threshold, top_k = rv.line_filters("mh")
        if visible:
            show(
                filtered_line_view(
                    f.lines,
                    tokens,
                    threshold=threshold,
                    top_k=top_k,
                    head_names=names,
                    visible=visible,
                    font_size=fs,
                    value_name=value_name,
                    title=t("multi_head.lines_title", layer=layer + 1),
                ),
                f"multi_head_lines_{L}",
            )
        else:
            st.info(t("multi_head.lines_none"), icon="ℹ️")
        st.header(t("multi_head.one_header"))
        c = min(
            h := st.selectbox(
                t("multi_head.one_head"),
                list(range(Hr)),
                key=k_head,
                format_func=lambda j: heads[j],
            ),
            H - 1,
        )  # c: the view's map
        show(
            figures.heatmap(
                view.weights[c],
                tokens,
                tokens,
                font_size=fs,
                x_title=axes["key"],
                y_title=axes["query"],
                value_name=value_name,
                title=t("multi_head.one_title", head=names[c], layer=layer + 1),
                **colour,
            ),
            f"multi_head_{L}_{r.head_names[h]}",
        )
        explain(
            t(HEAD[r.head_names[h]][1]) if lesson.is_designed(r) else t("multi_head.why_random")
        )
        download_csv(
            view.weights[c],
            f"multi_head_{L}_head_{r.head_names[h]}",
            tokens,
            tokens,
            key="mh_csv_head",
        )
        st.header(t("multi_head.pipe_header"))
        explain(t("multi_head.pipe_intro"))
        if st.toggle(t("multi_head.pipe_show"), key=k_pipe):
            p = lesson.pipeline(r, layer, h)
            words = dict(
                layer=layer + 1,
                prev=layer,
                head=heads[h],
                D=p.D,
                H=p.H,
                dh=p.Dh,
                lo=p.lo,
                hi=p.hi,
                **vars(lesson.input_counts()),
            )
            for step in p.steps:
                st.subheader(t(STEP[step.title], **words))
                explain(t(STEP[step.text], **words))
                for col, m in [
                    (col, m) for row in step.rows for col, m in zip(st.columns(len(row)), row)
                ]:
                    with col:
                        show(
                            mh_fig.step_matrix(
                                m,
                                title=t(
                                    STEP[m.title],
                                    name=m.name,
                                    n=m.sub,
                                    T=m.m.shape[0],
                                    c=m.m.shape[1],
                                ),
                                axis_names=axes,
                                value_name=weight_name if m.weights else t("common.value"),
                                font_size=fs,
                            ),
                            m.png,
                        )
            st.caption(
                t("multi_head.step_out") if p.last else t("multi_head.step_next", next=layer + 2)
            )
    shape_explorer(
        lesson.here(r) if r is not None else None
    )  # its own section: its controls redraw it alone
