"""Pretrained model: all-MiniLM-L6-v2's 72 heads on your text (article 004). Compute: visattn.lessons.pretrained.
Names count from 1 ("L4·H2"); URL parameters index from 0. The body runs in functions so that no large array is a
global of the script run: Streamlit keeps a run's globals alive as long as a callback defined in it."""

from __future__ import annotations

import streamlit as st

from ui import url_state
from ui.cache_pretrained import BARS, grid_figure, model_or_error, open_clicked, open_head, run_text, winograd
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter
from ui.i18n import t
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.figures import pretrained as figures
from visattn.lessons import pretrained as lesson
from visattn.models.minilm import INSTALL_COMMAND, MAX_TOKENS

PRESET_LABEL = {"tired": "pretrained.preset_tired", "wide": "pretrained.preset_wide",
                "chinese": "pretrained.preset_chinese", "paragraph": "pretrained.preset_paragraph"}
VERDICT = {True: "pretrained.winograd_switch", False: "pretrained.winograd_no_switch"}
words = lambda: dict(value_name=t("common.weight"), query_name=t("common.query"), key_name=t("common.key"))
checked_text = lambda model, text: run_text(model, text).text   # a session keeps this string as its last good, not the run


def bind_pair(tokens: list[str] | None) -> list[str]:   # None: nothing to pick from, keep the URL's positions
    auto = lesson.default_pair(tokens) if tokens else (0, 0)
    return [bind_token(key, tokens, a, hi=MAX_TOKENS - 1) for key, a in zip(("pt_src", "pt_tgt"), auto)]


def notices(run, view) -> None:   # the text as the model read it
    if run.truncated:
        st.warning(t("pretrained.truncated", n=run.n_tokens_in, limit=MAX_TOKENS), icon="✂️")
    if (unk := lesson.unknown(run)) is not None:
        st.warning(t("pretrained.all_unk", chars=unk.chars), icon="⚠️") if unk.every else st.info(t("pretrained.unk", n=unk.n, chars=unk.chars), icon="ℹ️")
    if view.kept_specials:
        st.info(t("pretrained.nothing_left"), icon="ℹ️")
    st.caption(t("pretrained.tokens", n=len(view.tokens), tokens=lesson.shown_tokens(view.tokens)))


def every_head(run, view) -> None:
    st.header(t("pretrained.grid_header"))
    layer = 0
    if len(view.tokens) <= lesson.GRID_ALL_MAX:
        explain(t("pretrained.grid_all_intro"))
    else:
        layer = st.radio(t("pretrained.grid_layer"), list(range(lesson.N_LAYERS)), key="pt_glayer", horizontal=True, format_func=lambda l: f"L{l + 1}",
                         help=t("pretrained.grid_layer_help", n=lesson.GRID_ALL_MAX))
    g = lesson.grid(view.tokens, view.attn, layer)
    if g.block > 1:
        st.caption(t("pretrained.pooled", T=g.n_tokens, B=len(g.labels), size=g.block))
    show(grid_figure(g, font_size(), presenter(), **words()), "pretrained_all_heads" if g.layer is None else f"pretrained_grid_L{g.layer + 1}")
    p = lesson.patterns(run.attentions)
    sep, none = t("pretrained.list_sep"), t("pretrained.none")
    explain(t("pretrained.grid_read", n_cls=p.n_cls, prev=sep.join(p.prev) or none, next=sep.join(p.next) or none))


def head_finder(model, view, k_src: str, k_tgt: str) -> int:
    """Source/target pickers, the ranked heads as clickable bars, the sentence naming the strong heads."""
    st.header(t("pretrained.finder_header"))
    explain(t("pretrained.finder_intro"))
    c = st.columns(2)
    with c[0]:
        src = token_select(t("pretrained.source"), k_src, view.tokens, help=t("pretrained.source_help"))
    with c[1]:
        tgt = token_select(t("pretrained.target"), k_tgt, view.tokens, help=t("pretrained.target_help"))
    f = compute("pt_finder", lesson.finder, view.attn, src, tgt, (int(st.session_state["pt_layer"]), int(st.session_state["pt_head"])))
    if f is None:
        return src
    pair = dict(src=view.tokens[src], tgt=view.tokens[tgt])
    if f.strong:
        heads = t("pretrained.list_sep").join(t("pretrained.head_weight", head=lesson.head_name(hw.layer, hw.head), w=f"{hw.weight:.3f}") for hw in f.strong)
        st.markdown(t("pretrained.finder_strong", n=len(f.strong), heads=heads, **pair))
    else:
        st.markdown(t("pretrained.finder_none", head=lesson.head_name(f.best.layer, f.best.head), w=f"{f.best.weight:.3f}", **pair))
    fig = figures.finder_figure(f, title=t("pretrained.finder_title", n=len(f.top), **pair), font_size=font_size(),
                                x_title=t("pretrained.finder_x"), y_title=t("common.weight"))
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": "visattn_pretrained_finder", "scale": 3 if presenter() else 2}}
    st.plotly_chart(fig, width="stretch", config=config, key=BARS, on_select=open_clicked, selection_mode="points")
    c = st.columns([3, 1])
    c[0].caption(t("pretrained.finder_click"))
    c[1].button(t("pretrained.open_top", head=lesson.head_name(f.best.layer, f.best.head)), key="pt_open_top",
                on_click=open_head, args=(f.best.layer, f.best.head), width="stretch")
    w = winograd(model)
    explain(t("pretrained.winograd", **w.cells()) + " " + t(VERDICT[w.switch]))
    return src


def one_head(view, src: int) -> None:
    st.header(t("pretrained.one_header"))
    c = st.columns(2)
    layer = c[0].selectbox(t("pretrained.layer"), list(range(lesson.N_LAYERS)), key="pt_layer", format_func=lambda l: f"L{l + 1}")
    head = c[1].selectbox(t("pretrained.head"), list(range(lesson.N_HEADS)), key="pt_head", format_func=lambda h: f"H{h + 1}")
    h = lesson.one_head(view.tokens, view.attn, layer, head)
    if h.block > 1:
        st.caption(t("pretrained.pooled", T=len(view.tokens), B=len(h.labels), size=h.block))
    show(figures.head_figure(h, title=t("pretrained.head_title", head=h.name), font_size=font_size(), **words()), f"pretrained_{h.name}")
    if h.hover_only:
        st.caption(t("pretrained.hover_numbers"))
    download_csv(h.w, f"pretrained_L{layer + 1}_H{head + 1}", view.tokens, view.tokens, key="pt_csv")
    st.subheader(t("pretrained.lines_header", head=h.name))
    explain(t("pretrained.lines_intro"))
    only_src = st.toggle(t("pretrained.lines_only_src", token=view.tokens[src]), key="pt_lfoc")
    ln = lesson.lines(view.tokens, h.w, src, only_src)
    if len(ln.tokens) < len(view.tokens):
        st.caption(t("pretrained.lines_window", a=ln.first + 1, b=ln.last + 1, T=len(view.tokens), n=lesson.LINES_MAX))
    fig = figures.lines_figure(ln, h.name, title=t("pretrained.lines_title", head=h.name), value_name=t("common.weight"), font_size=font_size())
    show(fig, f"pretrained_lines_{h.name}")


def main() -> None:
    k_text = url_state.bind("pt_text", lesson.SENTENCE)
    for key, default, n in (("pt_hide", False, 0), ("pt_merge", False, 0), ("pt_lfoc", False, 0), ("pt_glayer", 0, 6),
                            ("pt_layer", 3, lesson.N_LAYERS), ("pt_head", 1, lesson.N_HEADS)):
        url_state.bind(key, default, **({"options": list(range(n))} if n else {}))
    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:
        bind_pair(None)
        st.error(t("pretrained.missing"), icon="📦")
        st.code(INSTALL_COMMAND, language="bash")
        st.caption(t("pretrained.missing_note"))
        st.expander(t("pretrained.missing_detail")).code(reason, language=None, wrap_lines=True)   # the exception, verbatim
        return
    preset_buttons(k_text, {name: (t(PRESET_LABEL[name]), text) for name, text in lesson.PRESETS.items()},
                   caption=t("pretrained.presets"), help_template="“{text}”")
    text = st.text_area(t("pretrained.text"), key=k_text, height=90, max_chars=url_state.MAX_TEXT,
                        help=t("pretrained.text_help", limit=MAX_TOKENS, chars=url_state.MAX_TEXT))
    c = st.columns(2)
    hide = c[0].toggle(t("pretrained.hide"), key="pt_hide", help=t("pretrained.hide_help"))
    merge = c[1].toggle(t("pretrained.merge"), key="pt_merge", help=t("pretrained.merge_help"))
    with st.spinner(t("pretrained.running")):
        good = compute("pt_run", checked_text, model, text[:url_state.MAX_TEXT])
    if good is None:
        return bind_pair(None)
    run = run_text(model, good)
    view = lesson.token_view(run, hide, merge)
    notices(run, view)
    k_src, k_tgt = bind_pair(view.tokens)
    every_head(run, view)                                        # 1. every head
    src = head_finder(model, view, k_src, k_tgt)                 # 2. the head finder, the Winograd twin
    one_head(view, src)                                          # 3. one head, large


with page("pretrained"):
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"))
    st.caption(t("pretrained.numbering"))
    main()
