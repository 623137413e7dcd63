"""Reading attention in MiniLM (issue 12): one text read six ways, what [CLS] and [SEP] take by
value norms, two sentences side by side, one head's queries and keys in a plane.

Compute: visattn.lessons.reading (cached in ui.cache_reading); every control is declared in its
``CONTROLS``. Names count from 1 ("L4·H2"), URL parameters from 0. The body runs in functions: no
large array is a global of the script run (Streamlit keeps a run's globals alive with its
callbacks)."""

from __future__ import annotations

import streamlit as st

from ui import cache_reading, reading_views, url_state
from ui import controls as widgets
from ui.cache_pretrained import model_or_error
from ui.charts import download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, section
from ui.i18n import label, t
from ui.text import escape
from ui.widgets import preset_buttons
from visattn.figures import reading as reading_figures
from visattn.figures.colour import colour_scale
from visattn.figures.lines import filtered_line_view
from visattn.figures.matrices import head_grid, heatmap
from visattn.lessons import reading as lesson

CONTROLS = lesson.CONTROLS


def words() -> dict[str, str]:
    """What the figures call a query and a key, in the page's language."""
    return {"query_name": t("common.query"), "key_name": t("common.key")}


def percent(share: float) -> str:
    return f"{100 * share:.0f}"


def choose_text() -> str:
    """The preset buttons and the text box; returns the text."""
    presets = {
        name: (label("reading.presets", name), text) for name, text in lesson.PRESETS.items()
    }
    preset_buttons("rd_text", presets, caption=t("reading.try_presets"), help_template="“{text}”")
    return widgets.text_area(
        CONTROLS["rd_text"],
        t("reading.text"),
        height=90,
        help=t("reading.text_help", limit=lesson.MAX_TOKENS),
    )


def choose_view() -> tuple[str, int, int, dict]:
    """The reading, its layer and head, and its colour scale: every section reads them, so none of
    these controls is in a section."""
    name = reading_views.selector(CONTROLS, "rd")
    layer_column, head_column = st.columns(2)
    layer = widgets.select(
        CONTROLS["rd_layer"],
        t("reading.layer"),
        where=layer_column,
        format_func=lesson.layer_name,
        disabled=name == "flow",
    )
    head = widgets.select(
        CONTROLS["rd_head"],
        t("reading.head"),
        where=head_column,
        format_func=lesson.head_label,
        disabled=name not in lesson.PER_HEAD,
    )
    scale = reading_views.colour_controls(CONTROLS, "rd")
    return name, layer, head, scale


@section
def six_readings(run: lesson.Run, name: str, layer: int, head: int, scale: dict) -> dict:
    """1. The chosen reading of the whole text: the grid, one cell large, and as lines (the line
    filters redraw this section only). Returns the colour scale it drew with (the unit scale when
    the reading cannot be had), for the two sentences below."""
    st.header(t("reading.views_header"))
    readings = reading_views.chosen("rd_view", run.text, name, cache_reading.readings, run, name)
    if readings is None:
        return colour_scale(**{**scale, "value_range": "unit"})
    view = lesson.view(readings, layer, head)
    value_name = reading_views.value_name(name)
    colour = colour_scale(view.grid, **scale)
    grid_figure = head_grid(
        view.grid,
        run.tokens,
        run.tokens,
        cell_titles=view.titles,
        value_name=value_name,
        font_size=font_size(),
        title=t("reading.grid_title", view=reading_views.view_label(name)),
        **colour,
        **words(),
    )
    show(grid_figure, f"reading_grid_{name}")
    cell_figure = heatmap(
        view.cell,
        run.tokens,
        run.tokens,
        title=t("reading.cell_title", view=reading_views.view_label(name), name=view.name),
        value_name=value_name,
        x_title=t("common.key"),
        y_title=t("common.query"),
        font_size=font_size(),
        **colour,
    )
    show(cell_figure, f"reading_{name}_{view.name}")
    download_csv(view.cell, f"reading_{name}_{view.name}", run.tokens, run.tokens, key="rd_csv")
    st.subheader(t("reading.lines_header", name=view.name))
    threshold, top_k = reading_views.line_filters(CONTROLS, "rd")
    lines_figure = filtered_line_view(
        view.cell[None],  # (1, T, T): one head
        run.tokens,
        threshold=threshold,
        top_k=top_k,
        head_names=[view.name],
        value_name=value_name,
        title=t("reading.lines_title", name=view.name),
        font_size=font_size(),
    )
    show(lines_figure, f"reading_lines_{name}")
    return colour


def specials(run: lesson.Run, layer: int, head: int) -> None:
    """2. How much of the attention [CLS] and [SEP] take, by weights and by what arrives."""
    st.header(t("reading.share_header"))
    share = lesson.share(run, layer, head)
    summary = t(
        "reading.share",
        w=percent(share.by_weight),
        n=percent(share.by_norm),
        head=share.head,
        hw=percent(share.head_weight),
        hn=percent(share.head_norm),
    )
    st.markdown(summary)
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


@section
def two_sentences(model, name: str, layer: int, head: int, colour: dict) -> None:
    """3. The same cell of the reading for sentence A and sentence B, and B − A when they align
    (the two text boxes redraw this section only)."""
    st.header(t("reading.pair_header"))
    explain(t("reading.pair_intro"))
    a_column, b_column = st.columns(2)
    a = widgets.text(CONTROLS["rd_a"], t("reading.sentence_a"), where=a_column)
    b = widgets.text(CONTROLS["rd_b"], t("reading.sentence_b"), where=b_column)
    pair = compute("rd_pair", cache_reading.pair, model, a, b, name, layer, head)
    if pair is None:
        return
    figure = reading_figures.comparison(
        pair.a,
        pair.b,
        pair.tokens_a,
        pair.tokens_b,
        titles=(t("reading.sentence_a"), t("reading.sentence_b"), t("reading.diff_title")),
        title=t("reading.pair_title", view=reading_views.view_label(name), name=pair.name),
        value_name=reading_views.value_name(name),
        diff_name=t("reading.difference"),
        note_unaligned=t("reading.unaligned_short"),
        colour=colour,
        font_size=font_size(),
        **words(),
    )
    show(figure, f"reading_pair_{name}")
    st.info(alignment_note(pair), icon="ℹ️")


def plane_figure(geometry: lesson.Geometry, by_position: bool):
    """The query/key plane of ``geometry`` with the page's words."""
    return reading_figures.qk_geometry(
        geometry.projection,
        geometry.tokens,
        geometry.weights,
        colour_by_position=by_position,
        title=t("reading.qk_title", name=geometry.name),
        x_title=t("reading.pc", n=1, pct=geometry.explained[0]),
        y_title=t("reading.pc", n=2, pct=geometry.explained[1]),
        position_name=t("common.position"),
        top_keys_name=t("reading.top_keys"),
        font_size=font_size(),
        **words(),
    )


@section
def queries_and_keys(model, run: lesson.Run, layer: int, head: int) -> None:
    """4. One head's queries and keys in the plane of their two main directions, for the tokens
    the page reads (the colour toggle redraws this section only)."""
    st.header(t("reading.qk_header"))
    explain(t("reading.qk_intro"))
    geometry = compute("rd_qk", cache_reading.geometry, model, run.text, layer, head)
    by_position = widgets.toggle(CONTROLS["rd_qkpos"], t("reading.qk_position"))
    if geometry is None:
        return
    if run.truncated:
        st.caption(t("reading.qk_capped", n=len(geometry.tokens), total=run.n_tokens_in))
    figure = compute("rd_qk_figure", plane_figure, geometry, by_position)
    if figure is not None:
        show(figure, f"reading_qk_{geometry.name}")


def lesson_body() -> None:
    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:
        reading_views.model_missing(reason)
        return
    text = choose_text()
    name, layer, head, scale = choose_view()
    with st.spinner(t("pretrained.running")):
        run = compute("rd_run", cache_reading.run, model, text)
    if run is None:
        return
    if run.truncated:
        st.warning(t("reading.truncated", n=run.n_tokens_in, limit=lesson.MAX_TOKENS), icon="✂️")
    colour = six_readings(run, name, layer, head, scale)
    specials(run, layer, head)
    two_sentences(model, name, layer, head, colour)
    queries_and_keys(model, run, layer, head)


with page("reading"):
    url_state.bind_controls(CONTROLS)
    st.title(t("reading.title"))
    explain(t("reading.intro"))
    lesson_body()
