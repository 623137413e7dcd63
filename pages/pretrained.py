"""Pretrained model: all-MiniLM-L6-v2's 72 heads on your text (article 004), read through the one
reading selector (ui.reading_views): every head, the head finder and the Winograd twin, one head
large.

Compute: visattn.lessons.pretrained (cached in ui.cache_pretrained); every control is declared in
its ``CONTROLS``. Names count from 1 ("L4·H2"); URL parameters index from 0. The body runs in
functions so that no large array is a global of the script run: Streamlit keeps a run's globals
alive as long as a callback defined in it. For the same reason the sections take the text and the
toggles, and look the (up to 75 MB) arrays up in the shared caches."""

from __future__ import annotations

import streamlit as st

from ui import cache_models, cache_pretrained, reading_views, url_state
from ui import controls as widgets
from ui.charts import download_csv, plotly_words, show
from ui.errors import compute
from ui.frame import explain, font_size, page, presenter, section
from ui.i18n import label, t
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.figures import pretrained as figures
from visattn.figures.colour import colour_scale
from visattn.figures.core import plotly_text
from visattn.lessons import pretrained as lesson
from visattn.models.minilm import MAX_TOKENS

CONTROLS = lesson.CONTROLS


def words(name: str, layer: str | None = None, n_layers: int = lesson.N_LAYERS) -> dict[str, str]:
    """What the figures call a cell's value, a row and a column, in the page's language: a query and
    a key, or for rollout and flow an output token (after ``layer``; flow: the last of
    ``n_layers``; None: a grid of layers) and an input token."""
    if name == "flow":
        layer = lesson.layer_name(n_layers - 1)
    return {"value_name": reading_views.value_name(name), **reading_views.axis_words(name, layer)}


def file_name(name: str) -> str:
    """The start of the view's PNG and CSV names ("pretrained" for the weights)."""
    return "pretrained" if name == "weights" else f"pretrained_{name}"


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


def choose_text(causal: bool = False) -> tuple[str, bool, bool]:
    """The preset buttons, the text box and the two toggles of how tokens are shown (a decoder's:
    its special tokens, its byte pieces)."""
    presets = {
        name: (label("pretrained.presets", name), text) for name, text in lesson.PRESETS.items()
    }
    preset_buttons(
        "pt_text", presets, caption=t("pretrained.try_presets"), help_template="“{text}”"
    )
    text = widgets.text_area(
        CONTROLS["pt_text"],
        t("pretrained.text"),
        height=90,
        help=t("pretrained.text_help", limit=MAX_TOKENS, chars=CONTROLS["pt_text"].max_chars),
    )
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
    return text, hide, merge


def notices(run, view) -> None:
    """The text as the model read it: cut, characters it does not know, the tokens."""
    if run.truncated:
        st.warning(
            t("pretrained.truncated", n=run.n_tokens_in, limit=MAX_TOKENS),
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
    if view.kept_specials:
        st.info(t("pretrained.nothing_left"), icon=":material/info:")
    shown = escape(lesson.shown_tokens(view.tokens))
    st.caption(t("pretrained.tokens", n=len(view.tokens), tokens=shown))


@section
def every_head(model, text: str, hide: bool, merge: bool, name: str, colour: dict) -> None:
    """1. Every head (or layer, or flow's one map) in one grid; the grid's layer picker (long texts)
    redraws this section only."""
    with cache_pretrained.drawing(model, text):
        draw_every_head(model, text, hide, merge, name, colour)


def draw_every_head(model, text: str, hide: bool, merge: bool, name: str, colour: dict) -> None:
    run, view = cache_pretrained.token_view(model, text, hide, merge, name)
    st.header(t("pretrained.grid_header"))
    one_layer = lesson.one_layer(len(view.tokens), view.attn)  # a view with heads, too long for 72
    if not one_layer and name in reading_views.PER_HEAD:
        L, H = model.config.n_layers, model.config.n_heads
        explain(t("pretrained.grid_all_intro", n=L * H, L=L, H=H))
    layer = 0
    if one_layer:
        layer = widgets.radio(
            CONTROLS["pt_glayer"],
            t("pretrained.grid_layer"),
            options=range(model.config.n_layers),
            format_func=lesson.layer_name,
            help=t("pretrained.grid_layer_help", n=lesson.GRID_ALL_MAX, H=model.config.n_heads),
        )
    grid = lesson.grid(view.tokens, view.attn, layer)
    if grid.block > 1:
        st.caption(t("pretrained.pooled", T=grid.n_tokens, B=len(grid.labels), size=grid.block))
    png = file_name(name) + ("_all_heads" if grid.layer is None else f"_grid_L{grid.layer + 1}")
    n_layers = model.config.n_layers
    figure = cache_pretrained.grid_figure(
        grid, font_size(), presenter(), colour, **words(name, n_layers=n_layers)
    )
    show(figure, png)
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
    model, text: str, hide: bool, merge: bool, name: str, colour: dict, keys: tuple[str, str]
) -> None:
    """2. The head finder and the Winograd twin; 3. one head, large. One section: a bar of the
    finder opens a head below, and the finder marks the head that is open."""
    with cache_pretrained.drawing(model, text):
        _, view = cache_pretrained.token_view(model, text, hide, merge, name)
        source = head_finder(model, view, name, keys)
        one_head(model, view, name, colour, source)


def verdict(twins: lesson.Winograd) -> str:
    """Whether "…too wide." moves the weight to "street", said honestly."""
    if twins.switch:
        return t("pretrained.winograd_switch")
    return t("pretrained.winograd_no_switch")


def strong_heads(found: lesson.Finder, view, source: str, target: str, n_layers: int) -> str:
    """The finder's sentence: the heads that link source to target, or the strongest one."""
    if not found.strong:
        weight = f"{found.best.weight:.3f}"
        return t("pretrained.finder_none", head=found.names[0], w=weight, src=source, tgt=target)
    heads = [
        t(
            "pretrained.head_weight",
            head=lesson.cell_name(hw.layer, hw.head, view.attn.shape, n_layers),
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


def head_finder(model, view, name: str, keys: tuple[str, str]) -> int:
    """All heads ranked by the weight the source token puts on the target token; returns the
    source position."""
    st.header(t("pretrained.finder_header"))
    explain(t("pretrained.finder_intro", n=model.config.n_layers * model.config.n_heads))
    source_key, target_key = keys
    source_column, target_column = st.columns(2)
    with source_column:
        src = token_select(
            t("pretrained.source"), source_key, view.tokens, help=t("pretrained.source_help")
        )
    with target_column:
        tgt = token_select(
            t("pretrained.target"), target_key, view.tokens, help=t("pretrained.target_help")
        )
    open_head = (int(st.session_state["pt_layer"]), int(st.session_state["pt_head"]))
    n_layers = model.config.n_layers
    found = compute("pt_finder", lesson.finder, view.attn, src, tgt, open_head, n_layers)
    if found is None:
        return src
    source, target = view.tokens[src], view.tokens[tgt]
    st.markdown(strong_heads(found, view, escape(source), escape(target), n_layers))
    per_head = name in reading_views.PER_HEAD
    drawn = {"src": plotly_text(source), "tgt": plotly_text(target)}  # "<s>" is not markup
    if per_head:
        title = t("pretrained.finder_title", n=len(found.top), **drawn)
    else:
        title = t("pretrained.finder_title_maps", n=len(found.top), **drawn)
    figure = figures.finder_figure(
        found,
        title=title,
        font_size=font_size(),
        x_title=t("pretrained.finder_x") if per_head else t("reading.layer"),
        y_title=reading_views.value_name(name),
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


def one_head(model, view, name: str, colour: dict, src: int) -> None:
    """One head (or one map of the view) large: the heatmap, its CSV, and as lines."""
    st.header(t("pretrained.one_header"))
    layer_column, head_column = st.columns(2)
    layer = widgets.select(
        CONTROLS["pt_layer"],
        t("pretrained.layer"),
        where=layer_column,
        options=range(model.config.n_layers),
        format_func=lesson.layer_name,
        disabled=name == "flow",
    )
    head = widgets.select(
        CONTROLS["pt_head"],
        t("pretrained.head"),
        where=head_column,
        options=range(model.config.n_heads),
        format_func=lesson.head_label,
        disabled=name not in reading_views.PER_HEAD,
    )
    n_layers = model.config.n_layers
    large = lesson.one_head(view.tokens, view.attn, layer, head, n_layers)
    if large.block > 1:
        st.caption(
            t("pretrained.pooled", T=len(view.tokens), B=len(large.labels), size=large.block)
        )
    if name == "weights":
        title = t("pretrained.head_title", head=large.name)
    else:
        title = t("reading.cell_title", view=reading_views.view_label(name), name=large.name)
    figure = figures.head_figure(
        large,
        title=title,
        font_size=font_size(),
        colour=colour,
        **words(name, large.name, n_layers),
    )
    show(figure, f"{file_name(name)}_{large.name}")
    if large.hover_only:
        st.caption(t("pretrained.hover_numbers"))
    shown_layer = min(layer, len(view.attn) - 1)  # a view with one map: its layer
    download_csv(
        large.w,
        f"{file_name(name)}_L{shown_layer + 1}_H{head + 1}",
        view.tokens,
        view.tokens,
        key="pt_csv",
    )
    st.subheader(t("pretrained.lines_header", head=large.name))
    explain(t("pretrained.lines_intro"))
    only_source = widgets.toggle(
        CONTROLS["pt_lfoc"], t("pretrained.lines_only_src", token=view.tokens[src])
    )
    threshold, top_k = reading_views.line_filters(CONTROLS, "pt")
    window = lesson.lines(view.tokens, large.w, src, only_source)
    if len(window.tokens) < len(view.tokens):
        st.caption(
            t(
                "pretrained.lines_window",
                a=window.first + 1,
                b=window.last + 1,
                T=len(view.tokens),
                n=lesson.LINES_MAX,
            )
        )
    lines = figures.lines_figure(
        window,
        large.name,
        title=t("pretrained.lines_title", head=large.name),
        value_name=reading_views.value_name(name),
        font_size=font_size(),
        threshold=threshold,
        top_k=top_k,
    )
    show(lines, f"{file_name(name)}_lines_{large.name}")


def choose_model():
    """The model picker (ui.cache_models.picker: its id in the URL, the layer and head controls
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
    text, hide, merge = choose_text(getattr(model, "causal", False))
    name = reading_views.selector(CONTROLS, "pt")
    scale = reading_views.colour_controls(CONTROLS, "pt")  # every section draws on this scale
    with cache_pretrained.drawing(model, text):  # a long text's page waits its turn in a room
        draw(model, text, hide, merge, name, scale)


def draw(model, text: str, hide: bool, merge: bool, name: str, scale: dict) -> None:
    """The run of ``text``, its view ``name``, and the sections drawn from them."""
    with st.spinner(t("pretrained.running")):
        text_read = compute("pt_run", checked_text, model, text)
    if text_read is None:
        bind_pair(None)
        return
    made = reading_views.chosen(
        "pt_view", text_read, name, cache_pretrained.made, model, text_read, name
    )
    if made is None:
        bind_pair(None)
        return
    run, view = cache_pretrained.token_view(model, text_read, hide, merge, name)
    notices(run, view)
    keys = bind_pair(view.tokens, getattr(run, "causal", False))
    colour = colour_scale(view.attn, **scale)
    every_head(model, text_read, hide, merge, name, colour)
    finder_and_head(model, text_read, hide, merge, name, colour, keys)


with page("pretrained"):
    url_state.bind_controls(CONTROLS)
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"))
    st.caption(t("pretrained.numbering"))
    lesson_body()
