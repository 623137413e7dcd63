"""Reading attention in any model the server has (the bundled MiniLM, a BERT
encoder, a GPT-2 or LLaMA-family decoder, picked as on the pretrained page): one text read six
ways, what [CLS] and [SEP] (a decoder: its first token) take by value norms, two sentences side by
side, one head's queries and keys in a plane.

Compute: visattn.lessons.reading (cached in ui.cache.reading); every control is declared in its
``CONTROLS``. Names count from 1 ("L4·H2"), URL parameters from 0. The body runs in functions: no
large array is a global of the script run (Streamlit keeps a run's globals alive with its
callbacks)."""

from __future__ import annotations

import streamlit as st

from ui import reading_selector, url_state, widgets
from ui.cache import models as cache_models
from ui.cache import pretrained as cache_pretrained
from ui.cache import reading as cache_reading
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import (
    explain,
    folded_controls,
    font_size,
    page,
    presenter,
    section,
    title_text,
)
from ui.i18n import figure_words, label, t
from ui.reading_selector import THROUGH_LAYERS
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.display import paper_name, percent
from visattn.figures import reading as reading_figures
from visattn.figures.colour import colour_scale
from visattn.lessons import reading as lesson

CONTROLS = lesson.CONTROLS
# the colour scale: folded above the first figure (ui.frame.folded_controls)
COLOUR_KEYS = ("rd_scale", "rd_gamma", "rd_palette", "rd_range")


def words() -> reading_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(reading_figures.Words)


def choose_text(model) -> str:
    """The preset buttons (named as ``model`` reads them) and the text box; returns the text."""
    table = lesson.preset_table(model)
    presets = {name: (label(table, name), text) for name, text in lesson.PRESETS.items()}
    preset_buttons("rd_text", presets, caption=t("reading.try_presets"), help_template="“{text}”")
    return widgets.text_area(
        CONTROLS["rd_text"],
        t("reading.text"),
        height=90,
        help=t("reading.text_help", limit=lesson.MAX_READ_TOKENS),
    )


def choose_reading(model, layer_column, head_column) -> tuple[str, int, int, dict, bool]:
    """The reading, its layer and head (among the model's; their boxes in ``layer_column`` and
    ``head_column``), its colour scale, and whether the norm-weighted reading is unnormalised:
    every section reads them, so none of these controls is in a section."""
    reading = reading_selector.selector(CONTROLS, "rd")
    if model.causal and reading in THROUGH_LAYERS:
        explain(t("reading.causal_through"))
    raw = False
    if reading == "norm_weighted":
        raw = widgets.toggle(CONTROLS["rd_raw"], t("reading.raw"), help=t("reading.raw_help"))
    layer = widgets.select(
        CONTROLS["rd_layer"],
        t("reading.layer"),
        where=layer_column,
        options=range(model.config.n_layers),
        format_func=lesson.layer_name,
        disabled=reading == "flow",
    )
    head = widgets.select(
        CONTROLS["rd_head"],
        t("reading.head"),
        where=head_column,
        options=range(model.config.n_heads),
        format_func=lesson.head_label,
        disabled=reading not in lesson.PER_HEAD,
    )
    with folded_controls(t("common.colours"), [CONTROLS[k] for k in COLOUR_KEYS]):
        scale = reading_selector.colour_controls(
            CONTROLS, "rd", unbounded=raw
        )  # α‖f(x)‖ may pass 1
    return reading, layer, head, scale, raw


@section
def six_readings(
    model, run: lesson.Run, reading: str, layer: int, head: int, scale: dict, raw: bool
) -> dict:
    """1. The chosen reading of the whole text: the grid, one cell large, and as lines (the line
    filters redraw this section only). Returns the colour scale it drew with (the unit scale when
    the reading cannot be had), for the two sentences below."""
    with cache_pretrained.drawing(model, run.text, lesson.MAX_READ_TOKENS):
        return draw_readings(model, run, reading, layer, head, scale, raw)


def draw_readings(
    model, run: lesson.Run, reading: str, layer: int, head: int, scale: dict, raw: bool
) -> dict:
    st.header(t("reading.views_header"))
    if raw:  # one product, not stored (a cached wrapper is the lead's to add)
        readings = reading_selector.chosen(
            "rd_view", run.text, reading, lesson.raw_readings, run, progress=False
        )
    else:
        readings = reading_selector.chosen(
            "rd_view", run.text, reading, cache_reading.readings, model, run, reading
        )
    if readings is None:
        return colour_scale(**{**scale, "value_range": "unit"})
    tokens, readings = lesson.shown(run, readings)  # a character's pieces merged into it
    maps = lesson.maps(readings, layer, head, run.n_layers)
    drawn = reading_selector.named(reading, run.n_layers, raw)
    colour = colour_scale(maps.grid, **scale)
    grid = reading_figures.grid_figure(
        maps, tokens, drawn, colour=colour, words=words(), font_size=font_size()
    )
    show(grid, f"reading_grid_{reading}")
    if len(tokens) < len(run.tokens):
        st.caption(t("reading.merged", n=len(run.tokens), m=len(tokens)))
    cell = reading_figures.cell_figure(
        maps, tokens, drawn, colour=colour, words=words(), font_size=font_size()
    )
    show(cell, f"reading_{reading}_{maps.name}")
    if reading in lesson.PER_HEAD:  # one head's map: its name counted from 1, and as papers name it
        st.caption(t("reading.numbering", name=maps.name, paper=paper_name(layer, head)))
        cache_models.layer_notes(model, layer)  # what changes this layer's maps
    download_csv(maps.cell, f"reading_{reading}_{maps.name}", tokens, tokens, key="rd_csv")
    st.subheader(t("reading.lines_header", name=maps.name))
    threshold, top_k = reading_selector.line_filters(CONTROLS, "rd")
    lines = reading_figures.lines_figure(
        lesson.line_weights(maps.cell, raw),
        tokens,
        maps.name,
        drawn,
        threshold=threshold,
        top_k=top_k,
        words=words(),
        font_size=font_size(),
    )
    show(lines, f"reading_lines_{reading}")
    return colour


def specials(run: lesson.Run, layer: int, head: int) -> None:
    """2. How much of the attention [CLS] and [SEP] (a decoder: its first token) take, by weights
    and by what arrives."""
    share = lesson.share(run, layer, head)
    numbers = {
        "w": percent(share.by_weight),
        "n": percent(share.by_norm),
        "head": share.head,
        "hw": percent(share.head_weight),
        "hn": percent(share.head_norm),
        "even": percent(share.even),
    }
    if share.causal:
        st.header(t("reading.share_header_causal"))
        st.markdown(t("reading.share_causal", token=escape(run.tokens[0]), **numbers))
        explain(t("reading.share_means_causal"))
        return
    st.header(t("reading.share_header"))
    st.markdown(t("reading.share", **numbers))
    explain(t("reading.share_means"))


def alignment_note(pair: lesson.Pair) -> str:
    """Whether the two sentences' tokens line up, and where they differ."""
    alignment = pair.alignment
    if not alignment.aligned:
        return t(
            "reading.unaligned",
            a=alignment.n_a,
            b=alignment.n_b,
            prefix=alignment.prefix,
            suffix=alignment.suffix,
        )
    differ = [
        f"{i + 1}: {escape(pair.tokens_a[i])} / {escape(pair.tokens_b[i])}"
        for i in alignment.differ
    ]
    return t("reading.aligned", n=len(differ), where=t("common.list_sep").join(differ))


def raw_pair(model, a: str, b: str, layer: int, head: int) -> lesson.Pair:
    """The two sentences' unnormalised norm-weighted maps (the runs cached, the product not)."""
    return lesson.raw_pair(cache_reading.run(model, a), cache_reading.run(model, b), layer, head)


@section
def two_sentences(model, reading: str, layer: int, head: int, colour: dict, raw: bool) -> None:
    """3. The same cell of the reading for sentence A and sentence B, and B − A when they align
    (the two text boxes redraw this section only)."""
    st.header(t("reading.pair_header"))
    explain(t("reading.pair_intro"))
    a_column, b_column = st.columns(2)
    a = widgets.text(CONTROLS["rd_a"], t("reading.sentence_a"), where=a_column)
    b = widgets.text(CONTROLS["rd_b"], t("reading.sentence_b"), where=b_column)
    if raw:
        pair = compute("rd_pair", raw_pair, model, a, b, layer, head)
    else:
        pair = compute("rd_pair", cache_reading.pair, model, a, b, reading, layer, head)
    if pair is None:
        return
    figure = reading_figures.comparison(
        pair.a,
        pair.b,
        pair.tokens_a,
        pair.tokens_b,
        name=pair.name,
        reading=reading_selector.named(reading, model.config.n_layers, raw),
        colour=colour,
        words=words(),
        font_size=font_size(),
    )
    show(figure, f"reading_pair_{reading}")
    st.info(alignment_note(pair), icon=":material/info:")


@section
def queries_and_keys(model, run: lesson.Run, layer: int, head: int, focus_key: str) -> None:
    """4. One head's queries and keys in the plane of their two main directions, for the tokens
    the page reads (the colour toggle and the labelled query redraw this section only)."""
    st.header(t("reading.qk_header"))
    explain(t("reading.qk_intro"))
    geometry = compute("rd_qk", cache_reading.geometry, model, run.text, layer, head)
    focus_column, position_column = st.columns(2)
    with focus_column:
        focus = token_select(
            t("reading.qk_focus"), focus_key, run.tokens, help=t("reading.qk_focus_help")
        )
    by_position = widgets.toggle(
        CONTROLS["rd_qkpos"], t("reading.qk_position"), where=position_column
    )
    if geometry is None:
        return
    if run.truncated:
        st.caption(t("reading.qk_capped", n=len(geometry.tokens), total=run.n_tokens_in))
    if geometry.rotary:
        st.caption(t("reading.qk_rotary"))
    st.caption(t("reading.qk_labels", token=escape(run.tokens[focus]), k=lesson.QK_TOP_KEYS))
    if lesson.split_characters(run):  # the plane's points are pieces: say what "中 1/3" is
        st.caption(t("reading.qk_pieces"))
    figure = compute(
        "rd_qk_figure",
        reading_figures.plane_figure,
        geometry,
        by_position,
        focus,
        lesson.QK_TOP_KEYS,
        words(),
        font_size(),
    )
    if figure is not None:
        show(figure, f"reading_qk_{geometry.name}")


def choose_model():
    """The model (:func:`ui.cache.models.picker`), its line beside the page's folded introduction
    (on a projector, which hides the introduction, alone)."""
    if presenter():
        return cache_models.picker(
            CONTROLS["rd_model"], (CONTROLS["rd_layer"],), (CONTROLS["rd_head"],)
        )
    about_column, model_column = st.columns([3, 2], vertical_alignment="center")
    with about_column:
        explain(t("reading.intro"), fold="common.about_page")
    with model_column:
        return cache_models.picker(
            CONTROLS["rd_model"], (CONTROLS["rd_layer"],), (CONTROLS["rd_head"],)
        )


def lesson_body() -> None:
    """One row for the model and one for the text (folded: its title is the text) beside the layer
    and the head, so that the first screen reaches the first figure."""
    model = choose_model()
    if model is None:
        return
    text_column, layer_column, head_column = st.columns([2, 1, 1], vertical_alignment="bottom")
    title = t("reading.text_fold", text=title_text(CONTROLS["rd_text"]))
    with text_column, folded_controls(title, [CONTROLS["rd_text"]]):
        text = choose_text(model)
    reading, layer, head, scale, raw = choose_reading(model, layer_column, head_column)
    with cache_pretrained.drawing(model, text, lesson.MAX_READ_TOKENS):  # waits its turn in a room
        draw(model, text, reading, layer, head, scale, raw)


def draw(model, text: str, reading: str, layer: int, head: int, scale: dict, raw: bool) -> None:
    """The run of ``text`` and the four sections drawn from it."""
    with st.spinner(t("pretrained.running")):
        run = compute("rd_run", cache_reading.run, model, text)
    if run is not None and run.model != cache_pretrained.model_key(model):
        run = None  # the last good run was another model's: its layers and heads are not these
    tokens = run.tokens if run is not None else None
    focus_default = lesson.focus_default(tokens, model.causal) if tokens else 0
    focus_key = bind_token(CONTROLS["rd_qkfocus"], tokens, focus_default)
    if run is None:
        return
    if run.truncated:
        st.warning(
            t("reading.truncated", n=run.n_tokens_in, limit=lesson.MAX_READ_TOKENS),
            icon=":material/content_cut:",
        )
    colour = six_readings(model, run, reading, layer, head, scale, raw)
    specials(run, layer, head)
    two_sentences(model, reading, layer, head, colour, raw)
    queries_and_keys(model, run, layer, head, focus_key)


with page("reading"):
    url_state.bind_controls(CONTROLS)
    st.title(t("reading.title"))
    lesson_body()
