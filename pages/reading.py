"""Reading attention (issue 12) in MiniLM: six readings, [CLS]/[SEP] by norms, two sentences,
query/key geometry. Compute: visattn.lessons.reading. Names count from 1 ("L4·H2"), URL parameters
from 0. The body runs in functions: no large array is a global of the script run (Streamlit keeps a
run's globals alive with its callbacks)."""

from __future__ import annotations

import streamlit as st

from ui import cache_reading as cache
from ui import reading_views as rv
from ui import url_state
from ui.cache_pretrained import model_or_error
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, section
from ui.i18n import t
from ui.text import escape
from ui.widgets import preset_buttons
from visattn import figures
from visattn.figures import reading as rfig
from visattn.lessons import reading as lesson

PRESET = {
    "tired": "reading.preset_tired",
    "wide": "reading.preset_wide",
    "chinese": "reading.preset_chinese",
    "paragraph": "reading.preset_paragraph",
}
KEYS = [
    ("rd_layer", 3, {"options": list(range(lesson.N_LAYERS))}),
    ("rd_head", 1, {"options": list(range(lesson.N_HEADS))}),
    ("rd_text", lesson.SENTENCE, {}),
    ("rd_a", lesson.SENTENCE, {}),
    ("rd_b", lesson.WIDE, {}),
    ("rd_qkpos", False, {}),
]
words = lambda: dict(query_name=t("common.query"), key_name=t("common.key"))
checked_text = lambda model, text: (
    cache.run(model, text).text
)  # a session keeps this string as its last good, not the run


def controls() -> tuple[str, int, int, dict]:
    """The view, layer, head and colour-scale controls (every section reads them, so none is in a
    section)."""
    name = rv.selector("rd")
    c = st.columns(2)
    layer = c[0].selectbox(
        t("reading.layer"),
        list(range(lesson.N_LAYERS)),
        key="rd_layer",
        format_func=lambda l: f"L{l + 1}",
        disabled=name == "flow",
    )
    head = c[1].selectbox(
        t("reading.head"),
        list(range(lesson.N_HEADS)),
        key="rd_head",
        format_func=lambda h: f"H{h + 1}",
        disabled=name not in lesson.PER_HEAD,
    )
    return name, layer, head, rv.colour_controls("rd")


@section
def views(
    model, r, name: str, layer: int, head: int, scale: dict
) -> None:  # the line filters redraw this section only
    st.header(t("reading.views_header"))
    if (rd := rv.chosen("rd_view", r.text, name, cache.readings, model, r.text, name)) is None:
        return
    v = lesson.view(rd, layer, head)
    value, fs, colour = rv.value_name(name), font_size(), rfig.colour_scale(v.grid, **scale)
    show(
        figures.head_grid(
            v.grid,
            r.tokens,
            r.tokens,
            cell_titles=v.titles,
            value_name=value,
            font_size=fs,
            title=t("reading.grid_title", view=rv.label(name)),
            **colour,
            **words(),
        ),
        f"reading_grid_{name}",
    )
    show(
        figures.heatmap(
            v.cell,
            r.tokens,
            r.tokens,
            title=t("reading.cell_title", view=rv.label(name), name=v.name),
            value_name=value,
            x_title=t("common.key"),
            y_title=t("common.query"),
            font_size=fs,
            **colour,
        ),
        f"reading_{name}_{v.name}",
    )
    download_csv(v.cell, f"reading_{name}_{v.name}", r.tokens, r.tokens, key="rd_csv")
    st.subheader(t("reading.lines_header", name=v.name))
    threshold, top_k = rv.line_filters("rd")
    show(
        rfig.filtered_line_view(
            v.cell[None],
            r.tokens,
            threshold=threshold,
            top_k=top_k,
            head_names=[v.name],
            value_name=value,
            title=t("reading.lines_title", name=v.name),
            font_size=fs,
        ),
        f"reading_lines_{name}",
    )
    return colour


def specials(r, layer: int, head: int) -> None:
    st.header(t("reading.share_header"))
    s, pct = lesson.share(r, layer, head), lambda x: f"{100 * x:.0f}"
    st.markdown(
        t(
            "reading.share",
            w=pct(s.by_weight),
            n=pct(s.by_norm),
            head=s.head,
            hw=pct(s.head_weight),
            hn=pct(s.head_norm),
        )
    )
    explain(t("reading.share_means"))


@section
def two_sentences(model, name: str, layer: int, head: int, colour: dict) -> None:
    st.header(t("reading.pair_header"))
    explain(t("reading.pair_intro"))
    a, b = (
        col.text_input(t(label), key=k, max_chars=url_state.MAX_TEXT)
        for col, label, k in zip(
            st.columns(2), ("reading.sentence_a", "reading.sentence_b"), ("rd_a", "rd_b")
        )
    )
    if (p := compute("rd_pair", cache.pair, model, a, b, name, layer, head)) is None:
        return
    titles = (t("reading.sentence_a"), t("reading.sentence_b"), t("reading.diff_title"))
    show(
        rfig.comparison(
            p.a,
            p.b,
            p.tokens_a,
            p.tokens_b,
            titles=titles,
            title=t("reading.pair_title", view=rv.label(name), name=p.name),
            value_name=rv.value_name(name),
            diff_name=t("reading.difference"),
            note_unaligned=t("reading.unaligned_short"),
            colour=colour,
            font_size=font_size(),
            **words(),
        ),
        f"reading_pair_{name}",
    )
    al, where = (
        p.alignment,
        t("common.list_sep").join(
            f"{i + 1}: {escape(p.tokens_a[i])} / {escape(p.tokens_b[i])}"
            for i in p.alignment.differ
        ),
    )
    st.info(
        t("reading.aligned", n=len(al.differ), where=where)
        if al.aligned
        else t("reading.unaligned", a=al.n_a, b=al.n_b, prefix=al.prefix, suffix=al.suffix),
        icon="ℹ️",
    )


@section
def qk(model, r, layer: int, head: int) -> None:
    st.header(t("reading.qk_header"))
    explain(t("reading.qk_intro"))
    g, by_pos = (
        compute("rd_qk", cache.geometry, model, r.text, layer, head),
        st.toggle(t("reading.qk_position"), key="rd_qkpos"),
    )
    if g is None or len(g.weights) != len(r.tokens):
        return
    show(
        rfig.qk_geometry(
            g.projection,
            r.tokens,
            g.weights,
            colour_by_position=by_pos,
            title=t("reading.qk_title", name=g.name),
            x_title=t("reading.pc", n=1, pct=g.explained[0]),
            y_title=t("reading.pc", n=2, pct=g.explained[1]),
            position_name=t("common.position"),
            top_keys_name=t("reading.top_keys"),
            font_size=font_size(),
            **words(),
        ),
        f"reading_qk_{g.name}",
    )


def main() -> None:
    for key, default, kind in KEYS:
        url_state.bind(key, default, **kind)
    rv.bind("rd")
    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:
        return rv.model_missing(reason)
    preset_buttons(
        "rd_text",
        {n: (t(PRESET[n]), text) for n, text in lesson.PRESETS.items()},
        caption=t("reading.presets"),
        help_template="“{text}”",
    )
    text = st.text_area(
        t("reading.text"),
        key="rd_text",
        height=90,
        max_chars=url_state.MAX_TEXT,
        help=t("reading.text_help", limit=lesson.MAX_TOKENS),
    )
    name, layer, head, scale = controls()
    with st.spinner(t("pretrained.running")):
        r = (
            cache.run(model, good)
            if (good := compute("rd_run", checked_text, model, text[: url_state.MAX_TEXT]))
            is not None
            else None
        )
    if r is None:
        return
    if r.truncated:
        st.warning(t("reading.truncated", n=r.n_tokens_in, limit=lesson.MAX_TOKENS), icon="✂️")
    colour = views(model, r, name, layer, head, scale)  # 1. six readings of one text
    specials(r, layer, head)  # 2. what [CLS] and [SEP] really take
    two_sentences(
        model, name, layer, head, colour or rfig.colour_scale(**{**scale, "value_range": "unit"})
    )  # 3. two sentences
    qk(model, r, layer, head)  # 4. one head's queries and keys


with page("reading"):
    st.title(t("reading.title"))
    explain(t("reading.intro"))
    main()
