"""Multi-head attention (articles 004, 003, 000): the lesson of :mod:`visattn.lessons.multi_head`,
drawn through the one reading selector the MiniLM pages share.

Top to bottom: the heads and the sentence, the layer and how to read it; then every head of that
layer, one token in every head with the lines, one head large with its pipeline, and the shape
explorer. A section's own controls redraw that section alone (``ui.frame.section``); the controls
above the first section feed them all."""

from __future__ import annotations

import streamlit as st

from ui import reading_selector, url_state, widgets
from ui.cache import multi_head as cache_multi_head
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
from ui.i18n import figure_words, label, lang, t
from ui.text import escape
from ui.widgets import bind_token, preset_buttons, token_select
from visattn.figures import multi_head as multi_head_figures
from visattn.figures.colour import colour_scale
from visattn.lessons import multi_head as lesson
from visattn.shapes import GPT3
from visattn.text import MAX_SENTENCE_TOKENS

CONTROLS = lesson.CONTROLS
# the reading and its colour scale: folded above the first figure (ui.frame.folded_controls)
READING_KEYS = ("mh_view", "mh_scale", "mh_gamma", "mh_palette", "mh_range")


def words() -> multi_head_figures.Words:
    """The figures' words in the page's language."""
    return figure_words(multi_head_figures.Words)


def head_label(name: str) -> str:
    """A head as the page names it: the designed heads by what they do, random ones by number."""
    if name in lesson.HEAD_NAMES:
        return label("multi_head.heads", name)
    return t("multi_head.head_n", n=name)


def why(result: lesson.Result, name: str) -> str:
    """Why a head attends as it does: the designed head's reason (naming the words of the
    sentence's language), or that random heads have none."""
    if lesson.is_designed(result):
        return label("multi_head.head_why", name, **lesson.example_words(result))
    return t("multi_head.why_random")


def grid_cells(n: int, per_row: int):
    """(column, k) for k = 0 … n - 1, ``per_row`` columns to a row (a last short row keeps the
    width of the others)."""
    for start in range(0, n, per_row):
        columns = st.columns(per_row)
        yield from zip(columns, range(start, min(n, start + per_row)), strict=False)


def random_sizes(source: str) -> tuple[int, int, int]:
    """d_model, n_heads and seed of the random heads: their boxes when the random heads are shown,
    else the values the link keeps for them."""
    if source != "random":
        return (
            int(st.session_state["mh_d"]),
            int(st.session_state["mh_h"]),
            int(st.session_state["mh_seed"]),
        )
    width_column, heads_column, seed_column = st.columns(3)
    d_model = widgets.number(CONTROLS["mh_d"], t("multi_head.d_model"), where=width_column)
    n_heads = widgets.number(
        CONTROLS["mh_h"],
        t("multi_head.n_heads"),
        where=heads_column,
        help=t("multi_head.n_heads_help"),
    )
    seed = widgets.number(CONTROLS["mh_seed"], t("multi_head.seed"), where=seed_column)
    return int(d_model), int(n_heads), int(seed)


def choose_sentence() -> str:
    """The example sentences and the sentence box, folded under the sentence itself (open when it
    is not the language's own), so that the first screen reaches the grid."""
    text_control = lesson.controls_for(lang())["mh_text"]  # its default: the language's sentence
    title = t("multi_head.sentence_fold", text=title_text(text_control))
    with folded_controls(title, [text_control]):
        presets = {
            name: (label("multi_head.presets", name), sentence)
            for name, sentence in lesson.presets_for(lang()).items()
        }
        preset_buttons(
            "mh_text", presets, caption=t("multi_head.presets_caption"), help_template="“{text}”"
        )
        return widgets.text(
            text_control,
            t("multi_head.text"),
            help=t(
                "multi_head.text_help", tokens=MAX_SENTENCE_TOKENS, chars=text_control.max_chars
            ),
        )


# ── 1. every head of one layer ──────────────────────────────────────────────────────────────────
def every_head(result, layer_maps, titles, head_names, value_name, colour) -> None:
    st.header(t("multi_head.grid_header", layer=layer_maps.layer + 1))
    grid = multi_head_figures.layer_grid(
        layer_maps.weights,
        result.tokens,
        titles,
        layer_maps.grid_cols,
        value_name=value_name,
        colour=colour,
        words=words(),
        font_size=font_size(),
    )
    show(grid, f"multi_head_grid_{layer_maps.tag}")
    explain(t("multi_head.grid_intro"))  # how to read the grid, under it: the figure comes first
    st.caption(
        t(
            "multi_head.diffuse",
            mean=f"{layer_maps.row_max_mean:.2f}",
            uniform=f"{layer_maps.uniform:.2f}",
            T=len(result.tokens),
        )
    )
    if lesson.is_designed(result):
        reasons = [
            t("multi_head.why_item", head=head_names[h], why=why(result, name))
            for h, name in enumerate(result.head_names)
        ]
        explain("\n".join(reasons))
    else:
        explain(t("multi_head.why_random"))


# ── 2. one token in every head ──────────────────────────────────────────────────────────────────
@section
def token_focus(result, layer_maps, reading_maps, titles, value_name, colour) -> None:
    """The focus token redraws this section and the lines below it (``reading_maps``: the
    reading's maps of every layer)."""
    tokens, layer = result.tokens, layer_maps.layer
    st.header(t("multi_head.focus_header"))
    token = token_select(
        t("multi_head.focus_token"), CONTROLS["mh_tok"].key, tokens, help=t("multi_head.focus_help")
    )
    focus = lesson.focus(result, layer, token, reading_maps)
    targets = [
        t(
            "multi_head.focus_item_uniform",
            head=titles[h],
            lo=f"{focus.low[h]:.2f}",
            hi=f"{focus.top[h]:.2f}",
        )
        if focus.uniform[h]
        else t(
            "multi_head.focus_item",
            head=titles[h],
            target=escape(tokens[best]),
            w=f"{focus.top[h]:.2f}",
        )
        for h, best in enumerate(focus.best)
    ]
    summary = t("multi_head.focus_summary", token=escape(tokens[token]), layer=layer + 1)
    st.markdown(summary + " " + t("common.list_sep").join(targets))
    if any(focus.uniform):
        st.caption(t("multi_head.uniform_rule", factor=lesson.UNIFORM_FACTOR))
    if focus.bars:
        # a file name per map: the run's head, or the reading's one merged map
        file_names = result.head_names if layer_maps.per_head else titles
        for column, h in grid_cells(len(titles), focus.per_row):
            bars = multi_head_figures.focus_bars(
                tokens,
                layer_maps.weights[h, token],
                focus,
                h,
                titles[h],
                value_name=value_name,
                words=words(),
                font_size=font_size(),
            )
            with column:
                show(bars, f"multi_head_focus_{layer_maps.tag}_{file_names[h]}")
    else:
        focus_row = multi_head_figures.focus_heatmap(
            layer_maps.weights[:, token, :],  # (H, T): the focus token's row in every head
            tokens,
            titles,
            token,
            value_name=value_name,
            colour=colour,
            words=words(),
            font_size=font_size(),
        )
        show(focus_row, f"multi_head_focus_{layer_maps.tag}")
    lines(result, layer_maps, reading_maps, token, titles, value_name)


# ── 3. the lines ────────────────────────────────────────────────────────────────────────────────
@section
def lines(result, layer_maps, reading_maps, token, titles, value_name) -> None:
    tokens = result.tokens
    st.header(t("multi_head.lines_header"))
    explain(t("multi_head.lines_intro"))
    visible = []
    for column, h in grid_cells(len(titles), min(len(titles), 8)):
        if widgets.checkbox(lesson.HEAD_VISIBLE[h], titles[h], where=column):
            visible.append(h)
    only_focus = widgets.toggle(
        CONTROLS["mh_lfoc"], t("multi_head.lines_only_focus", token=tokens[token])
    )
    threshold, top_k = reading_selector.line_filters(CONTROLS, "mh")
    if not visible:
        st.info(t("multi_head.lines_none"), icon=":material/info:")
        return
    figure = multi_head_figures.lines_figure(
        lesson.focus_lines(result, layer_maps.layer, token, only_focus, reading_maps),
        tokens,
        layer_maps.layer,
        titles,
        visible,
        threshold=threshold,
        top_k=top_k,
        value_name=value_name,
        words=words(),
        font_size=font_size(),
    )
    show(figure, f"multi_head_lines_{layer_maps.tag}")


# ── 4. one head, large ──────────────────────────────────────────────────────────────────────────
@section
def one_head(result, layer_maps, titles, head_names, value_name, colour) -> None:
    """The head redraws this section and the pipeline below it."""
    tokens, layer = result.tokens, layer_maps.layer
    st.header(t("multi_head.one_header"))
    head_control = CONTROLS["mh_head"]
    if int(st.session_state[head_control.key]) >= len(head_names):
        st.session_state[head_control.key] = 0  # fewer heads than the link's head: the first

    def head_title(h: int) -> str:
        return head_names[h]

    head = widgets.select(
        head_control,
        t("multi_head.one_head"),
        options=range(len(head_names)),
        format_func=head_title,
    )
    map_index = min(head, len(titles) - 1)  # the reading's map: this head's, or the one merged
    one_map = multi_head_figures.head_figure(
        layer_maps.weights[map_index],
        tokens,
        titles[map_index],
        layer,
        value_name=value_name,
        colour=colour,
        words=words(),
        font_size=font_size(),
    )
    name = result.head_names[head]
    show(one_map, f"multi_head_{layer_maps.tag}_{name}")
    explain(why(result, name))
    download_csv(
        layer_maps.weights[map_index],
        f"multi_head_{layer_maps.tag}_head_{name}",
        tokens,
        tokens,
        key="mh_csv_head",
    )
    pipeline(result, layer, head, head_names)


# ── 5. the pipeline of that head ────────────────────────────────────────────────────────────────
@section
def pipeline(result, layer, head, head_names) -> None:
    st.header(t("multi_head.pipe_header"))
    explain(t("multi_head.pipe_intro"))
    if not widgets.toggle(CONTROLS["mh_pipe"], t("multi_head.pipe_show")):
        return
    steps = lesson.pipeline(result, layer, head)
    numbers = dict(
        layer=layer + 1,
        prev=layer,
        head=head_names[head],
        D=steps.D,
        H=steps.H,
        dh=steps.Dh,
        lo=steps.lo,
        hi=steps.hi,
        **vars(lesson.input_counts()),
    )
    for step in steps.steps:
        st.subheader(label("multi_head.steps", step.title, **numbers))
        explain(label("multi_head.step_texts", step.text, **numbers))
        for row in step.rows:
            for column, panel in zip(st.columns(len(row)), row, strict=True):
                matrix = multi_head_figures.step_matrix(panel, words=words(), font_size=font_size())
                with column:
                    show(matrix, panel.png)
    if steps.last:
        st.caption(t("multi_head.step_out"))
    else:
        st.caption(t("multi_head.step_next", next=layer + 2))


# ── 6. the shape explorer ───────────────────────────────────────────────────────────────────────
def set_shapes(T: int, d_model: int, n_heads: int) -> None:
    """The explorer's three sizes at once (a button's callback)."""
    st.session_state["mh_sT"] = T
    st.session_state["mh_sD"] = d_model
    st.session_state["mh_sH"] = n_heads


@section
def shape_explorer(here: tuple[int, int, int] | None) -> None:
    """``here``: (T, d_model, n_heads) of the run above (None: no run)."""
    st.header(t("multi_head.shapes_header"))
    explain(t("multi_head.shapes_intro"))
    gpt3_column, here_column, _ = st.columns(3)
    gpt3_column.button(
        t("multi_head.shapes_gpt3"),
        on_click=set_shapes,
        kwargs=GPT3,
        key="mh_shapes_gpt3",
        width="stretch",
    )
    if here is not None:
        here_column.button(
            t("multi_head.shapes_here"),
            on_click=set_shapes,
            args=here,
            key="mh_shapes_here",
            width="stretch",
        )
    tokens_column, width_column, heads_column = st.columns(3)
    T = widgets.number(CONTROLS["mh_sT"], t("multi_head.shapes_T"), where=tokens_column)
    d_model = widgets.number(CONTROLS["mh_sD"], t("multi_head.d_model"), where=width_column)
    n_heads = widgets.number(CONTROLS["mh_sH"], t("multi_head.n_heads"), where=heads_column)
    shapes = compute("multi_head_shapes", lesson.explore, int(T), int(d_model), int(n_heads))
    if shapes is None:
        return
    numbers = shapes.numbers
    columns = st.columns(2 if presenter() else 4)  # two metrics a row on a projector: labels whole
    for k, metric in enumerate(lesson.SHAPE_METRICS):
        columns[k % len(columns)].metric(
            label("multi_head.shape_metrics", metric),
            numbers[metric],
            help=t("multi_head.shapes_dh_help", **numbers) if metric == "dh" else None,
        )
    st.markdown(t("multi_head.shapes_formula", **numbers))
    headers = [label("multi_head.shape_columns", column) for column in lesson.SHAPE_COLUMNS]
    what = {name: label("multi_head.matrix_what", name) for name in lesson.MATRICES}
    names = {name: label("multi_head.matrix_names", name) for name in lesson.WORDED_MATRICES}
    st.table(shapes.table(headers, what, names))  # every row, wrapped
    st.caption(t("multi_head.shapes_extra", **numbers))
    if shapes.gpt3:
        st.caption(t("multi_head.shapes_gpt3_note", **numbers))


with page("multi_head"):
    # Every key is bound on every run (also those whose widget is hidden now), so the URL keeps
    # them.
    url_state.follow_language("mh_text", lesson.sentence_for, lang())
    url_state.bind_controls(lesson.controls_for(lang()))  # the default sentence of the language
    st.title(t("multi_head.title"))
    explain(t("multi_head.intro") + "\n\n" + t("multi_head.article_003"), fold="common.about_page")

    # The heads and the sentence: everything below is drawn from their run.
    source_column, layer_column = st.columns(2)
    source = widgets.radio(
        CONTROLS["mh_src"],
        t("multi_head.source"),
        where=source_column,
        help=t("multi_head.source_help"),
    )
    layer_number = widgets.radio(
        CONTROLS["mh_layer"],
        t("multi_head.layer"),
        where=layer_column,
        help=t("multi_head.layer_help"),
    )
    d_model, n_heads, seed = random_sizes(source)
    layer = layer_number - 1  # 0-based from here on
    sentence_column, reading_column = st.columns(2)
    with sentence_column:
        text = choose_sentence()
    with (
        reading_column,
        folded_controls(t("common.reading_colours"), [CONTROLS[k] for k in READING_KEYS]),
    ):
        reading = reading_selector.selector(CONTROLS, "mh")
        scale = reading_selector.colour_controls(CONTROLS, "mh")

    inputs = lesson.Inputs(text, source, d_model, n_heads, seed)
    run = compute("multi_head_run", cache_multi_head.run, inputs)  # on failure: the last good run
    tokens = run.result.tokens if run is not None else None
    bind_token(CONTROLS["mh_tok"], tokens, lesson.focus_default(tokens) if tokens else 0)
    readings = None
    if run is not None:
        readings = reading_selector.chosen(
            "mh_view",
            run.inputs.label,
            reading,
            cache_multi_head.readings,
            run.inputs,
            reading,
            progress=False,
        )

    if readings is not None:
        result = run.result
        layer_maps = lesson.layer_maps(result, layer, readings.w, reading)
        head_names = [head_label(name) for name in result.head_names]
        # a title per map of the reading: the heads, or its one merged map
        titles = head_names if layer_maps.per_head else [reading_selector.reading_label(reading)]
        value_name = reading_selector.value_name(reading)
        colour = colour_scale(readings.w, **scale)
        unknown = lesson.unknown_words(result)
        if unknown:
            listed = escape(t("common.list_sep").join(unknown))
            st.info(t("multi_head.unknown_words", words=listed), icon=":material/info:")
        every_head(result, layer_maps, titles, head_names, value_name, colour)
        token_focus(result, layer_maps, readings.w, titles, value_name, colour)
        one_head(result, layer_maps, titles, head_names, value_name, colour)

    shape_explorer(lesson.here(run.result) if run is not None else None)
