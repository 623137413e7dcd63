"""Pretrained model: all-MiniLM-L6-v2's 72 heads on your text (article 004), read through issue 12's
one selector (ui.reading_views). Compute: visattn.lessons.pretrained. Names count from 1 ("L4·H2");
URL parameters index from 0. The body runs in functions so that no large array is a global of the
script run: Streamlit keeps a run's globals alive as long as a callback defined in it."""

from __future__ import annotations

import streamlit as st

from ui import reading_views as rv
from ui import url_state
from ui.cache_pretrained import BARS, model_or_error, open_clicked, open_head, run_text, winograd
from ui.cache_reading import grid_figure, pretrained_readings, token_view
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import t
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.figures import pretrained as figures
from visattn.figures.reading import colour_scale
from visattn.lessons import pretrained as lesson
from visattn.models.minilm import MAX_TOKENS

PRESET_LABEL = {
    "tired": "pretrained.preset_tired",
    "wide": "pretrained.preset_wide",
    "chinese": "pretrained.preset_chinese",
    "paragraph": "pretrained.preset_paragraph",
}
VERDICT = {True: "pretrained.winograd_switch", False: "pretrained.winograd_no_switch"}
words = lambda name: dict(
    value_name=rv.value_name(name), query_name=t("common.query"), key_name=t("common.key")
)
checked_text = lambda model, text: (
    run_text(model, text).text
)  # a session keeps this string as its last good, not the run
# source and target positions; tokens None: nothing to pick from, keep the URL's positions
bind_pair = lambda tk: [
    bind_token(k, tk, a, hi=MAX_TOKENS - 1)
    for k, a in zip(("pt_src", "pt_tgt"), lesson.default_pair(tk) if tk else (0, 0))
]


def notices(run, view) -> None:  # the text as the model read it
    if run.truncated:
        st.warning(t("pretrained.truncated", n=run.n_tokens_in, limit=MAX_TOKENS), icon="✂️")
    if (
        (unk := lesson.unknown(run)) is not None and unk.every
    ):  # statements, not `a if c else b`: Streamlit's magic would st.write that
        st.warning(t("pretrained.all_unk", chars=escape(unk.chars)), icon="⚠️")
    elif unk is not None:
        st.info(t("pretrained.unk", n=unk.n, chars=escape(unk.chars)), icon="ℹ️")
    if view.kept_specials:
        st.info(t("pretrained.nothing_left"), icon="ℹ️")
    st.caption(
        t("pretrained.tokens", n=len(view.tokens), tokens=escape(lesson.shown_tokens(view.tokens)))
    )


@section
def every_head(
    model, shown: tuple, colour: dict
) -> None:  # the grid's layer picker redraws this section only
    (run, view), name = token_view(model, *shown), shown[-1]
    st.header(t("pretrained.grid_header"))
    if (
        not (one := lesson.one_layer(len(view.tokens), view.attn)) and name in rv.PER_HEAD
    ):  # one: a view with heads, too long for all 72
        explain(t("pretrained.grid_all_intro"))
    layer = (
        st.radio(
            t("pretrained.grid_layer"),
            list(range(lesson.N_LAYERS)),
            key="pt_glayer",
            horizontal=True,
            format_func=lambda l: f"L{l + 1}",
            help=t("pretrained.grid_layer_help", n=lesson.GRID_ALL_MAX),
        )
        if one
        else 0
    )
    g = lesson.grid(view.tokens, view.attn, layer)
    if g.block > 1:
        st.caption(t("pretrained.pooled", T=g.n_tokens, B=len(g.labels), size=g.block))
    png = ("pretrained" if name == "weights" else f"pretrained_{name}") + (
        "_all_heads" if g.layer is None else f"_grid_L{g.layer + 1}"
    )
    show(grid_figure(g, font_size(), presenter(), colour, **words(name)), png)
    p, sep, none = lesson.patterns(run.attentions), t("pretrained.list_sep"), t("pretrained.none")
    explain(
        t(
            "pretrained.grid_read",
            n_cls=p.n_cls,
            prev=sep.join(p.prev) or none,
            next=sep.join(p.next) or none,
        )
    )


@section
def finder_and_head(
    model, shown: tuple, colour: dict, k_src: str, k_tgt: str
) -> None:  # the finder opens a head below, which it marks
    (_, view), name = token_view(model, *shown), shown[-1]
    one_head(view, name, colour, head_finder(model, view, name, k_src, k_tgt))


def head_finder(model, view, name: str, k_src: str, k_tgt: str) -> int:
    st.header(t("pretrained.finder_header"))
    explain(t("pretrained.finder_intro"))
    c = st.columns(2)
    with c[0]:
        src = token_select(
            t("pretrained.source"), k_src, view.tokens, help=t("pretrained.source_help")
        )
    with c[1]:
        tgt = token_select(
            t("pretrained.target"), k_tgt, view.tokens, help=t("pretrained.target_help")
        )
    f = compute(
        "pt_finder",
        lesson.finder,
        view.attn,
        src,
        tgt,
        (int(st.session_state["pt_layer"]), int(st.session_state["pt_head"])),
    )
    if f is None:
        return src
    pair, md = (
        {"src": f(view.tokens[src]), "tgt": f(view.tokens[tgt])} for f in (str, escape)
    )  # for the figure's title, for markdown
    heads = t("pretrained.list_sep").join(
        t(
            "pretrained.head_weight",
            head=lesson.cell_name(*hw[:2], view.attn.shape),
            w=f"{hw.weight:.3f}",
        )
        for hw in f.strong
    )
    st.markdown(
        t("pretrained.finder_strong", n=len(f.strong), heads=heads, **md)
        if f.strong
        else t("pretrained.finder_none", head=f.names[0], w=f"{f.best.weight:.3f}", **md)
    )
    title = (
        t("pretrained.finder_title", n=len(f.top), **pair)
        if name in rv.PER_HEAD
        else t("pretrained.finder_title_maps", n=len(f.top), **pair)
    )
    fig = figures.finder_figure(
        f,
        title=title,
        font_size=font_size(),
        x_title=t("pretrained.finder_x") if name in rv.PER_HEAD else t("reading.layer"),
        y_title=rv.value_name(name),
    )
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": "png",
            "filename": "visattn_pretrained_finder",
            "scale": 3 if presenter() else 2,
        },
    }
    st.plotly_chart(
        fig,
        width="stretch",
        config=config,
        key=BARS,
        on_select=open_clicked,
        selection_mode="points",
    )
    st.caption(t("pretrained.finder_click"))
    st.button(
        t("pretrained.open_top", head=f.names[0]),
        key="pt_open_top",
        on_click=open_head,
        args=(f.best.layer, f.best.head),
    )
    explain(t("pretrained.winograd", **(w := winograd(model)).cells()) + " " + t(VERDICT[w.switch]))
    return src


def one_head(view, name: str, colour: dict, src: int) -> None:
    st.header(t("pretrained.one_header"))
    c = st.columns(2)
    layer = c[0].selectbox(
        t("pretrained.layer"),
        list(range(lesson.N_LAYERS)),
        key="pt_layer",
        format_func=lambda l: f"L{l + 1}",
        disabled=name == "flow",
    )
    head = c[1].selectbox(
        t("pretrained.head"),
        list(range(lesson.N_HEADS)),
        key="pt_head",
        format_func=lambda h: f"H{h + 1}",
        disabled=name not in rv.PER_HEAD,
    )
    h, fs, base = (
        lesson.one_head(view.tokens, view.attn, layer, head),
        font_size(),
        "pretrained" if name == "weights" else f"pretrained_{name}",
    )
    if h.block > 1:
        st.caption(t("pretrained.pooled", T=len(view.tokens), B=len(h.labels), size=h.block))
    title = (
        t("pretrained.head_title", head=h.name)
        if name == "weights"
        else t("reading.cell_title", view=rv.label(name), name=h.name)
    )
    show(
        figures.head_figure(h, title=title, font_size=fs, colour=colour, **words(name)),
        f"{base}_{h.name}",
    )
    if h.hover_only:
        st.caption(t("pretrained.hover_numbers"))
    download_csv(
        h.w,
        f"{base}_L{min(layer, len(view.attn) - 1) + 1}_H{head + 1}",
        view.tokens,
        view.tokens,
        key="pt_csv",
    )
    st.subheader(t("pretrained.lines_header", head=h.name))
    explain(t("pretrained.lines_intro"))
    only_src = st.toggle(t("pretrained.lines_only_src", token=view.tokens[src]), key="pt_lfoc")
    threshold, top_k = rv.line_filters("pt")
    ln = lesson.lines(view.tokens, h.w, src, only_src)
    if len(ln.tokens) < len(view.tokens):
        st.caption(
            t(
                "pretrained.lines_window",
                a=ln.first + 1,
                b=ln.last + 1,
                T=len(view.tokens),
                n=lesson.LINES_MAX,
            )
        )
    show(
        figures.lines_figure(
            ln,
            h.name,
            title=t("pretrained.lines_title", head=h.name),
            value_name=rv.value_name(name),
            font_size=fs,
            threshold=threshold,
            top_k=top_k,
        ),
        f"{base}_lines_{h.name}",
    )


def main() -> None:
    url_state.bind_all(lesson.CONTROLS)
    rv.bind("pt")
    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:
        bind_pair(None)
        return rv.model_missing(reason)
    preset_buttons(
        "pt_text",
        {name: (t(PRESET_LABEL[name]), text) for name, text in lesson.PRESETS.items()},
        caption=t("pretrained.presets"),
        help_template="“{text}”",
    )
    text = st.text_area(
        t("pretrained.text"),
        key="pt_text",
        height=90,
        max_chars=url_state.MAX_TEXT,
        help=t("pretrained.text_help", limit=MAX_TOKENS, chars=url_state.MAX_TEXT),
    )
    hide, merge = (
        col.toggle(t(label), key=key, help=t(hint))
        for col, (label, key, hint) in zip(
            st.columns(2),
            (
                ("pretrained.hide", "pt_hide", "pretrained.hide_help"),
                ("pretrained.merge", "pt_merge", "pretrained.merge_help"),
            ),
        )
    )
    name, scale = (
        rv.selector("pt"),
        rv.colour_controls("pt"),
    )  # every section draws the chosen view on this scale
    with st.spinner(t("pretrained.running")):
        good = compute("pt_run", checked_text, model, text[: url_state.MAX_TEXT])
    if (
        good is None
        or rv.chosen("pt_view", good, name, pretrained_readings, model, good, name) is None
    ):  # good: the text as run
        return bind_pair(None)
    run, view = token_view(
        model, *(shown := (good, hide, merge, name))
    )  # sections get these keys, not the arrays
    notices(run, view)
    k_src, k_tgt = bind_pair(view.tokens)
    colour = colour_scale(view.attn, **scale)
    every_head(model, shown, colour)  # 1. every head (or layer, or flow's one map)
    finder_and_head(
        model, shown, colour, k_src, k_tgt
    )  # 2. the head finder, the Winograd twin; 3. one head, large


with page("pretrained"):
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"))
    st.caption(t("pretrained.numbering"))
    main()
