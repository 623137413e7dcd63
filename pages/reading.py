"""Reading attention (issue 12) in MiniLM: six readings, [CLS]/[SEP] by norms, two sentences, query/key geometry.
Compute: visattn.lessons.reading. Names count from 1 ("L4·H2"), URL parameters from 0. The body runs in functions:
no large array is a global of the script run (Streamlit keeps a run's globals alive with its callbacks)."""

from __future__ import annotations

import streamlit as st

from ui import cache_reading as cache
from ui import url_state
from ui.cache_pretrained import model_or_error
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from ui.widgets import preset_buttons
from visattn import figures
from visattn.figures import reading as rfig
from visattn.lessons import reading as lesson
from visattn.models.minilm import INSTALL_COMMAND
from visattn.reading import FLOW_MAX_TOKENS

PRESET = {"tired": "reading.preset_tired", "wide": "reading.preset_wide", "chinese": "reading.preset_chinese", "paragraph": "reading.preset_paragraph"}
VIEW = {"weights": ("reading.view_weights", "reading.about_weights"), "norm_weighted": ("reading.view_norm", "reading.about_norm"),
        "mean": ("reading.view_mean", "reading.about_mean"), "max": ("reading.view_max", "reading.about_max"),
        "rollout": ("reading.view_rollout", "reading.about_rollout"), "flow": ("reading.view_flow", "reading.about_flow")}
VALUE = {k: "common.weight" if k in ("weights", "mean", "max") else "reading.value_share" for k in lesson.VIEWS}
SCALE = {"linear": "reading.scale_linear", "log": "reading.scale_log", "power": "reading.scale_power"}
PALETTE = {"Blues": "reading.palette_blues", "Viridis": "reading.palette_viridis", "Greys": "reading.palette_greys"}
RANGE = {"unit": "reading.range_unit", "max": "reading.range_max"}
TOP_K = (0, 1, 2, 3, 5)
KEYS = [(k, d, {"options": list(o)}) for k, d, o in (("rd_view", "weights", lesson.VIEWS), ("rd_layer", 3, range(lesson.N_LAYERS)),
        ("rd_head", 1, range(lesson.N_HEADS)), ("rd_scale", "linear", rfig.SCALES), ("rd_palette", "Blues", rfig.PALETTES),
        ("rd_range", "unit", rfig.RANGES), ("rd_topk", 0, TOP_K))] + [("rd_text", lesson.SENTENCE, {}), ("rd_a", lesson.SENTENCE, {}),
        ("rd_b", lesson.WIDE, {}), ("rd_qkpos", False, {}), ("rd_gamma", 0.5, {"lo": 0.1, "hi": 3.0}), ("rd_thr", 0.02, {"lo": 0.0, "hi": 0.5})]
words = lambda: dict(query_name=t("common.query"), key_name=t("common.key"))
checked_text = lambda model, text: cache.run(model, text).text   # a session keeps this string as its last good, not the run


def radio(where, label: str, key: str, options, labels: dict, **kw):
    return where.radio(t(label), list(options), key=key, horizontal=True, format_func=lambda o: t(labels[o]), **kw)


def controls() -> tuple[str, int, int, dict]:
    """The view, layer, head and colour-scale controls; the colour scale as figure keyword arguments (without values)."""
    name = radio(st, "reading.view", "rd_view", lesson.VIEWS, {k: v[0] for k, v in VIEW.items()}, help=t("reading.view_help", n=FLOW_MAX_TOKENS))
    explain(t(VIEW[name][1]))
    c = st.columns(2)
    layer = c[0].selectbox(t("reading.layer"), list(range(lesson.N_LAYERS)), key="rd_layer", format_func=lambda l: f"L{l + 1}", disabled=name == "flow")
    head = c[1].selectbox(t("reading.head"), list(range(lesson.N_HEADS)), key="rd_head", format_func=lambda h: f"H{h + 1}",
                          disabled=name not in lesson.PER_HEAD)
    c = st.columns(3)
    scale = radio(c[0], "reading.scale", "rd_scale", rfig.SCALES, SCALE, help=t("reading.scale_help"))
    gamma = c[0].slider(t("reading.gamma"), 0.1, 3.0, key="rd_gamma", step=0.05) if scale == "power" else 0.5
    palette = radio(c[1], "reading.palette", "rd_palette", rfig.PALETTES, PALETTE, help=t("reading.palette_help"))
    vrange = radio(c[2], "reading.range", "rd_range", rfig.RANGES, RANGE)
    return name, layer, head, dict(scale=scale, palette=palette, value_range=vrange, gamma=gamma)


def the_view(model, r, name: str, layer: int, head: int):   # None (the message shown) when it cannot be had
    slot = st.empty()   # flow's progress bar while it runs, cleared after
    progress = (lambda done, total: slot.progress(done / total, text=t("reading.flow_running"))) if name == "flow" else None
    rd = compute("rd_view", cache.readings, model, r.text, name, progress)
    slot.empty()
    return lesson.view(rd, layer, head) if rd is not None and rd.text == r.text and rd.view == name else None


def views(model, r, name: str, layer: int, head: int, scale: dict) -> None:
    st.header(t("reading.views_header"))
    if (v := the_view(model, r, name, layer, head)) is None:
        return
    value, fs, colour = t(VALUE[name]), font_size(), rfig.colour_scale(v.grid, **scale)
    show(figures.head_grid(v.grid, r.tokens, r.tokens, cell_titles=v.titles, value_name=value, font_size=fs,
                           title=t("reading.grid_title", view=t(VIEW[name][0])), **colour, **words()), f"reading_grid_{name}")
    show(figures.heatmap(v.cell, r.tokens, r.tokens, title=t("reading.cell_title", view=t(VIEW[name][0]), name=v.name), value_name=value,
                         x_title=t("common.key"), y_title=t("common.query"), font_size=fs, **colour), f"reading_{name}_{v.name}")
    download_csv(v.cell, f"reading_{name}_{v.name}", r.tokens, r.tokens, key="rd_csv")
    st.subheader(t("reading.lines_header", name=v.name))
    c = st.columns(2)
    threshold = c[0].slider(t("reading.threshold"), 0.0, 0.5, key="rd_thr", step=0.01, help=t("reading.threshold_help"))
    top_k = c[1].selectbox(t("reading.top_k"), list(TOP_K), key="rd_topk", format_func=lambda k: str(k) if k else t("reading.top_k_all"))
    show(rfig.filtered_line_view(v.cell[None], r.tokens, threshold=threshold, top_k=top_k or None, head_names=[v.name], value_name=value,
                                 title=t("reading.lines_title", name=v.name), font_size=fs), f"reading_lines_{name}")
    return colour


def specials(r, layer: int, head: int) -> None:
    st.header(t("reading.share_header"))
    s, pct = lesson.share(r, layer, head), lambda x: f"{100 * x:.0f}"
    st.markdown(t("reading.share", w=pct(s.by_weight), n=pct(s.by_norm), head=s.head, hw=pct(s.head_weight), hn=pct(s.head_norm)))
    explain(t("reading.share_means"))


def two_sentences(model, name: str, layer: int, head: int, colour: dict) -> None:
    st.header(t("reading.pair_header"))
    explain(t("reading.pair_intro"))
    a, b = (col.text_input(t(label), key=k, max_chars=url_state.MAX_TEXT)
            for col, label, k in zip(st.columns(2), ("reading.sentence_a", "reading.sentence_b"), ("rd_a", "rd_b")))
    if (p := compute("rd_pair", cache.pair, model, a, b, name, layer, head)) is None:
        return
    titles = (t("reading.sentence_a"), t("reading.sentence_b"), t("reading.diff_title"))
    show(rfig.comparison(p.a, p.b, p.tokens_a, p.tokens_b, titles=titles, title=t("reading.pair_title", view=t(VIEW[name][0]), name=p.name),
                         value_name=t(VALUE[name]), diff_name=t("reading.difference"), note_unaligned=t("reading.unaligned_short"),
                         colour=colour, font_size=font_size(), **words()), f"reading_pair_{name}")
    al, where = p.alignment, t("common.list_sep").join(f"{i + 1}: {p.tokens_a[i]} / {p.tokens_b[i]}" for i in p.alignment.differ)
    st.info(t("reading.aligned", n=len(al.differ), where=where) if al.aligned else
            t("reading.unaligned", a=al.n_a, b=al.n_b, prefix=al.prefix, suffix=al.suffix), icon="ℹ️")


def qk(model, r, layer: int, head: int) -> None:
    st.header(t("reading.qk_header"))
    explain(t("reading.qk_intro"))
    g, by_pos = compute("rd_qk", cache.geometry, model, r.text, layer, head), st.toggle(t("reading.qk_position"), key="rd_qkpos")
    if g is None or len(g.weights) != len(r.tokens):
        return
    show(rfig.qk_geometry(g.projection, r.tokens, g.weights, colour_by_position=by_pos, title=t("reading.qk_title", name=g.name),
                          x_title=t("reading.pc", n=1, pct=g.explained[0]), y_title=t("reading.pc", n=2, pct=g.explained[1]),
                          position_name=t("common.position"), top_keys_name=t("reading.top_keys"), font_size=font_size(), **words()),
         f"reading_qk_{g.name}")


def main() -> None:
    for key, default, kind in KEYS:
        url_state.bind(key, default, **kind)
    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:   # as the pretrained page: the install command and the exception, verbatim
        st.error(t("pretrained.missing"), icon="📦")
        st.code(INSTALL_COMMAND, language="bash")
        st.caption(t("pretrained.missing_note"))
        return st.expander(t("pretrained.missing_detail")).code(reason, language=None, wrap_lines=True)
    preset_buttons("rd_text", {n: (t(PRESET[n]), text) for n, text in lesson.PRESETS.items()}, caption=t("reading.presets"), help_template="“{text}”")
    text = st.text_area(t("reading.text"), key="rd_text", height=90, max_chars=url_state.MAX_TEXT, help=t("reading.text_help", limit=lesson.MAX_TOKENS))
    name, layer, head, scale = controls()
    with st.spinner(t("pretrained.running")):
        r = cache.run(model, good) if (good := compute("rd_run", checked_text, model, text[:url_state.MAX_TEXT])) is not None else None
    if r is None:
        return
    if r.truncated:
        st.warning(t("reading.truncated", n=r.n_tokens_in, limit=lesson.MAX_TOKENS), icon="✂️")
    colour = views(model, r, name, layer, head, scale)              # 1. six readings of one text
    specials(r, layer, head)                                        # 2. what [CLS] and [SEP] really take
    two_sentences(model, name, layer, head, colour or rfig.colour_scale(**{**scale, "value_range": "unit"}))   # 3. two sentences
    qk(model, r, layer, head)                                       # 4. one head's queries and keys


with page("reading"):
    st.title(t("reading.title"))
    explain(t("reading.intro"))
    main()
