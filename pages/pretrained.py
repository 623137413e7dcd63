"""Pretrained model: all-MiniLM-L6-v2's 72 heads on your text (article 004), read through the one
reading selector (ui.reading_selector): every head, the head finder and the Winograd twin, one head
large.

Compute: visattn.lessons.pretrained (cached in ui.cache.pretrained); every control is declared in
its ``CONTROLS``. Names count from 1 ("L4·H2"); URL parameters index from 0. The body runs in
functions so that no large array is a global of the script run: Streamlit keeps a run's globals
alive as long as a callback defined in it. For the same reason the sections take the text and the
toggles, and look the (up to 75 MB) arrays up in the shared caches."""

from __future__ import annotations

import streamlit as st

from ui import reading_selector, url_state, widgets
from ui.cache import models as cache_models
from ui.cache import pretrained as cache_pretrained
from ui.charts import download_csv, plotly_words, show
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
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.display import head_label, layer_name, paper_name
from visattn.figures import pretrained as pretrained_figures
from visattn.figures.colour import colour_scale
from visattn.lessons import pretrained as lesson
from visattn.models.encoder import MAX_MODEL_TOKENS

CONTROLS = lesson.CONTROLS
# how tokens are shown, the reading and its colour scale: folded above the first figure
# (ui.frame.folded_controls)
DISPLAY_KEYS = ("pt_hide", "pt_merge", "pt_view", "pt_scale", "pt_gamma", "pt_palette", "pt_range")


def words() -> pretrained_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(pretrained_figures.Words)


def file_name(reading: str) -> str:
    """The start of the reading's PNG and CSV names ("pretrained" for the weights)."""
    return "pretrained" if reading == "weights" else f"pretrained_{reading}"


def checked_text(model, text: str) -> str:
    """The text, once the model has read it (InputError if it cannot): the session keeps this string
    as its last good result, and the sections look its run up in the cache by it — not the run,
    which would keep a 75 MB array alive in every session."""
    return cache_pretrained.run_text(model, text).text


def bind_pair(tokens: list[str] | None, causal: bool = False) -> tuple[str, str]:
    """The finder's source and target positions, reset to "it" → "animal" (or the first two words;
    a decoder's last and first) when the tokens change; tokens None (nothing to pick from): the
    URL's positions are kept."""
    source, target = lesson.default_pair(tokens, causal) if tokens else (0, 0)
    source_key = bind_token(CONTROLS["pt_src"], tokens, source)
    target_key = bind_token(CONTROLS["pt_tgt"], tokens, target)
    return source_key, target_key


def choose_text() -> str:
    """The preset buttons and the text box, folded under the text itself (open when it is not the
    page's own), so that the first screen reaches the grid."""
    title = t("pretrained.text_fold", text=title_text(CONTROLS["pt_text"]))
    with folded_controls(title, [CONTROLS["pt_text"]]):
        presets = {
            name: (label("pretrained.presets", name), text) for name, text in lesson.PRESETS.items()
        }
        preset_buttons(
            "pt_text", presets, caption=t("pretrained.try_presets"), help_template="“{text}”"
        )
        return widgets.text_area(
            CONTROLS["pt_text"],
            t("pretrained.text"),
            height=90,
            help=t(
                "pretrained.text_help", limit=MAX_MODEL_TOKENS, chars=CONTROLS["pt_text"].max_chars
            ),
        )


def choose_tokens(causal: bool = False) -> tuple[bool, bool]:
    """The two toggles of how tokens are shown (a decoder's: its special tokens, its byte
    pieces)."""
    hide_column, merge_column = st.columns(2)
    if causal:
        hide_words = (t("models.hide"), t("models.hide_help"))
        merge_words = (t("models.merge"), t("models.merge_help"))
    else:
        hide_words = (t("pretrained.hide"), t("pretrained.hide_help"))
        merge_words = (t("pretrained.merge"), t("pretrained.merge_help"))
    hide = widgets.toggle(CONTROLS["pt_hide"], hide_words[0], where=hide_column, help=hide_words[1])
    merge = widgets.toggle(
        CONTROLS["pt_merge"], merge_words[0], where=merge_column, help=merge_words[1]
    )
    return hide, merge


def notices(run, shown) -> None:
    """What of the text the model could not read (``shown``: its tokens and weights as the
    toggles show them): cut, characters it does not know, nothing left but special tokens (the
    tokens it read are listed under the grid)."""
    if run.truncated:
        st.warning(
            t("pretrained.truncated", n=run.n_tokens_in, limit=MAX_MODEL_TOKENS),
            icon=":material/content_cut:",
        )
    unknown = lesson.unknown(run)
    # statements, not `a if c else b`: Streamlit's magic would st.write that
    if unknown is not None and unknown.every:
        st.warning(t("pretrained.all_unk", chars=escape(unknown.chars)), icon=":material/warning:")
    elif unknown is not None:
        st.info(
            t("pretrained.unk", n=unknown.n, chars=escape(unknown.chars)), icon=":material/info:"
        )
    if shown.kept_specials:
        st.info(t("pretrained.nothing_left"), icon=":material/info:")


@section
def every_head(model, text: str, hide: bool, merge: bool, reading: str, colour: dict) -> None:
    """1. Every head (or layer, or flow's one map) in one grid; the grid's layer picker (long texts)
    redraws this section only."""
    with cache_pretrained.drawing(model, text):
        draw_every_head(model, text, hide, merge, reading, colour)


def draw_every_head(model, text: str, hide: bool, merge: bool, reading: str, colour: dict) -> None:
    run, shown = cache_pretrained.as_shown(model, text, hide, merge, reading)
    st.header(t("pretrained.grid_header"))
    # a reading with heads, too long for 72
    one_layer = lesson.one_layer(len(shown.tokens), shown.attn)
    layer = 0
    if one_layer:
        layer = widgets.radio(
            CONTROLS["pt_glayer"],
            t("pretrained.grid_layer"),
            options=range(model.config.n_layers),
            format_func=layer_name,
            help=t("pretrained.grid_layer_help", n=lesson.GRID_ALL_MAX, H=model.config.n_heads),
        )
    grid = lesson.grid(shown.tokens, shown.attn, layer)
    if grid.block > 1:
        st.caption(t("pretrained.pooled", T=grid.n_tokens, B=len(grid.labels), size=grid.block))
    png = file_name(reading) + ("_all_heads" if grid.layer is None else f"_grid_L{grid.layer + 1}")
    drawn = reading_selector.named(reading, model.config.n_layers)
    figure = cache_pretrained.grid_figure(grid, drawn, colour, words(), font_size(), presenter())
    show(figure, png)
    listed = escape(lesson.listed_tokens(shown.tokens))  # the text as the model read it
    st.caption(t("pretrained.tokens", n=len(shown.tokens), tokens=listed))
    st.caption(t("pretrained.numbering"))  # the grid's names, under it
    if not one_layer and reading in reading_selector.PER_HEAD:  # how to read it: under it
        L, H = model.config.n_layers, model.config.n_heads
        explain(t("pretrained.grid_all_intro", n=L * H, L=L, H=H))
    patterns = lesson.patterns(run.attentions)
    separator, none = t("pretrained.list_sep"), t("pretrained.none")
    total = model.config.n_layers * model.config.n_heads
    prev = separator.join(patterns.prev) or none
    if getattr(run, "causal", False):  # the first token, not [CLS]; no head can look ahead
        explain(t("models.grid_read_causal", n_cls=patterns.n_cls, total=total, prev=prev))
        return
    next_heads = separator.join(patterns.next) or none
    explain(
        t("pretrained.grid_read", n_cls=patterns.n_cls, total=total, prev=prev, next=next_heads)
    )


@section
def finder_and_head(
    model, text: str, hide: bool, merge: bool, reading: str, colour: dict, keys: tuple[str, str]
) -> None:
    """2. The head finder and the Winograd twin; 3. one head, large. One section: a bar of the
    finder opens a head below, and the finder marks the head that is open."""
    with cache_pretrained.drawing(model, text):
        _, shown = cache_pretrained.as_shown(model, text, hide, merge, reading)
        source = head_finder(model, shown, reading, keys)
        one_head(model, shown, reading, colour, source)


def verdict(twins: lesson.Winograd) -> str:
    """Whether "…too wide." moves the weight to "street", said honestly."""
    if twins.switch:
        return t("pretrained.winograd_switch")
    return t("pretrained.winograd_no_switch")


def strong_heads(found: lesson.Finder, shown, source: str, target: str, n_layers: int) -> str:
    """The finder's sentence: the heads that link source to target, or the strongest one."""
    if not found.strong:
        weight = f"{found.best.weight:.3f}"
        return t("pretrained.finder_none", head=found.names[0], w=weight, src=source, tgt=target)
    heads = [
        t(
            "pretrained.head_weight",
            head=lesson.cell_name(hw.layer, hw.head, shown.attn.shape, n_layers),
            w=f"{hw.weight:.3f}",
        )
        for hw in found.strong
    ]
    return t(
        "pretrained.finder_strong",
        n=len(found.strong),
        heads=t("pretrained.list_sep").join(heads),
        src=source,
        tgt=target,
    )


def head_finder(model, shown, reading: str, keys: tuple[str, str]) -> int:
    """All heads ranked by the weight the source token puts on the target token; returns the
    source position."""
    st.header(t("pretrained.finder_header"))
    explain(t("pretrained.finder_intro", n=model.config.n_layers * model.config.n_heads))
    source_key, target_key = keys
    source_column, target_column = st.columns(2)
    with source_column:
        src = token_select(
            t("pretrained.source"), source_key, shown.tokens, help=t("pretrained.source_help")
        )
    with target_column:
        tgt = token_select(
            t("pretrained.target"), target_key, shown.tokens, help=t("pretrained.target_help")
        )
    open_head = (int(st.session_state["pt_layer"]), int(st.session_state["pt_head"]))
    n_layers = model.config.n_layers
    found = compute("pt_finder", lesson.finder, shown.attn, src, tgt, open_head, n_layers)
    if found is None:
        return src
    source, target = shown.tokens[src], shown.tokens[tgt]
    st.markdown(strong_heads(found, shown, escape(source), escape(target), n_layers))
    drawn = reading_selector.named(reading, n_layers)
    figure = pretrained_figures.finder_figure(
        found, source, target, drawn, words=words(), font_size=font_size()
    )
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": "png",
            "filename": "visattn_pretrained_finder",
            "scale": 3 if presenter() else 2,
        },
        **plotly_words(),
    }
    st.plotly_chart(
        figure,
        width="stretch",
        config=config,
        key=cache_pretrained.BARS,
        theme=None,  # the figures' own (visattn.figures.core.TEMPLATE)
        on_select=cache_pretrained.open_clicked,
        selection_mode="points",
    )
    st.caption(t("pretrained.finder_click"))
    if shown.attn.shape[1] > 1:  # a reading with heads: its bars are heads, counted from 1
        paper = paper_name(found.best.layer, found.best.head)
        st.caption(t("pretrained.finder_numbering", head=found.names[0], paper=paper))
    st.button(
        t("pretrained.open_top", head=found.names[0]),
        key="pt_open_top",
        on_click=cache_pretrained.open_head,
        args=(found.best.layer, found.best.head),
    )
    twins = cache_pretrained.twins(model)
    if twins is not None:  # a tokenizer that splits "animal" has no twin to measure
        explain(t("pretrained.winograd", **twins.cells()) + " " + verdict(twins))
    return src


def one_head(model, shown, reading: str, colour: dict, src: int) -> None:
    """One head (or one map of the reading) large: the heatmap, its CSV, and as lines."""
    st.header(t("pretrained.one_header"))
    layer_column, head_column = st.columns(2)
    layer = widgets.select(
        CONTROLS["pt_layer"],
        t("pretrained.layer"),
        where=layer_column,
        options=range(model.config.n_layers),
        format_func=layer_name,
        disabled=reading == "flow",
    )
    head = widgets.select(
        CONTROLS["pt_head"],
        t("pretrained.head"),
        where=head_column,
        options=range(model.config.n_heads),
        format_func=head_label,
        disabled=reading not in reading_selector.PER_HEAD,
    )
    n_layers = model.config.n_layers
    large = lesson.one_head(shown.tokens, shown.attn, layer, head, n_layers)
    if large.block > 1:
        st.caption(
            t("pretrained.pooled", T=len(shown.tokens), B=len(large.labels), size=large.block)
        )
    drawn = reading_selector.named(reading, n_layers)
    figure = pretrained_figures.head_figure(
        large, drawn, colour=colour, words=words(), font_size=font_size()
    )
    show(figure, f"{file_name(reading)}_{large.name}")
    if reading in reading_selector.PER_HEAD:  # one head of one layer: what changes its maps
        cache_models.layer_notes(model, layer)
    if large.hover_only:
        st.caption(t("pretrained.hover_numbers"))
    shown_layer = min(layer, len(shown.attn) - 1)  # a reading with one map: its layer
    download_csv(
        large.w,
        f"{file_name(reading)}_L{shown_layer + 1}_H{head + 1}",
        shown.tokens,
        shown.tokens,
        key="pt_csv",
    )
    st.subheader(t("pretrained.lines_header", head=large.name))
    explain(t("pretrained.lines_intro"))
    only_source = widgets.toggle(
        CONTROLS["pt_lfoc"], t("pretrained.lines_only_src", token=shown.tokens[src])
    )
    threshold, top_k = reading_selector.line_filters(CONTROLS, "pt")
    window = lesson.lines(shown.tokens, large.w, src, only_source)
    if len(window.tokens) < len(shown.tokens):
        st.caption(
            t(
                "pretrained.lines_window",
                a=window.first + 1,
                b=window.last + 1,
                T=len(shown.tokens),
                n=lesson.LINES_MAX,
            )
        )
    lines = pretrained_figures.lines_figure(
        window,
        large.name,
        drawn,
        threshold=threshold,
        top_k=top_k,
        words=words(),
        font_size=font_size(),
    )
    show(lines, f"{file_name(reading)}_lines_{large.name}")


def choose_model():
    """The model picker (ui.cache.models.picker: its id in the URL, the layer and head controls
    cut to its size); None when no model can be loaded."""
    layers = (CONTROLS["pt_glayer"], CONTROLS["pt_layer"])
    model = cache_models.picker(CONTROLS["pt_model"], layers, (CONTROLS["pt_head"],))
    if model is not None:
        cache_pretrained.remember_shape(model)
    return model


def lesson_body() -> None:
    model = choose_model()
    if model is None:
        bind_pair(None)
        return
    text_column, display_column = st.columns(2)
    with text_column:
        text = choose_text()
    with (
        display_column,
        folded_controls(t("pretrained.view_options"), [CONTROLS[k] for k in DISPLAY_KEYS]),
    ):
        hide, merge = choose_tokens(getattr(model, "causal", False))
        reading = reading_selector.selector(CONTROLS, "pt")
        scale = reading_selector.colour_controls(CONTROLS, "pt")  # every section draws on it
    with cache_pretrained.drawing(model, text):  # a long text's page waits its turn in a room
        draw(model, text, hide, merge, reading, scale)


def draw(model, text: str, hide: bool, merge: bool, reading: str, scale: dict) -> None:
    """The run of ``text``, its ``reading``, and the sections drawn from them."""
    with st.spinner(t("pretrained.running")):
        text_read = compute("pt_run", checked_text, model, text)
    if text_read is None:
        bind_pair(None)
        return
    made = reading_selector.chosen(
        "pt_view", text_read, reading, cache_pretrained.made, model, text_read, reading
    )
    if made is None:
        bind_pair(None)
        return
    run, shown = cache_pretrained.as_shown(model, text_read, hide, merge, reading)
    notices(run, shown)
    if not merge and lesson.split_characters(run):  # "中 1/3": what it is, and the toggle
        st.caption(t("models.pieces_shown"))
    keys = bind_pair(shown.tokens, getattr(run, "causal", False))
    colour = colour_scale(shown.attn, **scale)
    every_head(model, text_read, hide, merge, reading, colour)
    finder_and_head(model, text_read, hide, merge, reading, colour, keys)


with page("pretrained"):
    url_state.bind_controls(CONTROLS)
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"), fold="common.about_page")
    lesson_body()
