"""The modern-attention page's Streamlit caches: each section of
:mod:`visattn.lessons.modern_attention` computed once per input (``st.cache_data``), and each heavy
figure built once per input and shared (``st.cache_resource``: show it, never modify it).

A figure's wrapper takes the section's inputs (the section itself comes from its own cached
wrapper), the font size and the translated words; a title that changes along an in-figure slider
arrives as a template and is filled here."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from visattn.figures import modern as modern_figures
from visattn.lessons import modern_attention as lesson


@st.cache_data(max_entries=64, show_spinner=False)
def gqa_section(T: int, H: int, G: int, causal: bool) -> lesson.GQASection:
    return lesson.gqa_section(T, H, G, causal)


@st.cache_data(max_entries=4, show_spinner=False)
def cost_rows(model: str) -> tuple[lesson.CostRow, ...]:
    return lesson.cost_rows(lesson.MODELS[model])


@st.cache_data(max_entries=1, show_spinner=False)
def model_rows() -> tuple[lesson.ModelRow, ...]:
    return lesson.model_rows()


@st.cache_data(max_entries=1, show_spinner=False)
def coinciding_lines() -> tuple[lesson.Coinciding, ...]:
    return lesson.coinciding_lines()


@st.cache_data(max_entries=16, show_spinner=False)
def cache_section(model: str, dtype: str) -> lesson.CacheSection:
    return lesson.cache_section(model, dtype)


@st.cache_data(max_entries=64, show_spinner=False)
def window_section(T: int, window: int) -> lesson.WindowSection:
    return lesson.window_section(T, window)


@st.cache_data(max_entries=64, show_spinner=False)
def flash_section(T: int, block_q: int, block_k: int, causal: bool):
    return lesson.flash_section(T, block_q, block_k, causal)


@st.cache_data(max_entries=32, show_spinner=False)
def traffic_section(N: int, d: int, sram_kb: int) -> lesson.TrafficSection:
    return lesson.traffic_section(N, d, sram_kb)


@st.cache_data(max_entries=32, show_spinner=False)
def traffic_over_n(d: int, sram_kb: int) -> tuple[list[int], list[int], list[int]]:
    """(N, standard, flash) over every N the control offers."""
    rows = [lesson.traffic_section(N, d, sram_kb).traffic for N in lesson.FLASH_N]
    return list(lesson.FLASH_N), [r.standard for r in rows], [r.flash for r in rows]


@st.cache_data(max_entries=1, show_spinner=False)
def traffic_range() -> tuple[int, int]:
    return lesson.traffic_range()


@st.cache_data(max_entries=32, show_spinner=False)
def gqa_steps(T: int, H: int, G: int, causal: bool) -> lesson.GQASteps:
    return lesson.gqa_steps(T, H, G, causal)


@st.cache_resource(max_entries=64, show_spinner=False)
def grouping(H: int, G: int, font_size: int, **words: str) -> go.Figure:
    """Which K/V head each query head reads, with an in-figure slider over every G dividing H (the
    same figure whatever T and the mask)."""
    steps = lesson.grouping_steps(H, G)
    template = words.pop("title")

    def title(g: int) -> str:
        return template.format(H=H, G=g)

    return modern_figures.grouping_live(steps, title=title, font_size=font_size, **words)


@st.cache_resource(max_entries=64, show_spinner=False)
def head_maps(T: int, H: int, G: int, causal: bool, font_size: int, **words: str) -> go.Figure:
    """Every query head's weights, four to a row, each titled with the K/V head it reads, with an
    in-figure slider over every G dividing H (kind names: words["kind_<kind>"])."""
    steps = gqa_steps(T, H, G, causal)
    cell_template, title_template = words.pop("cell_title"), words.pop("title")
    kinds = {kind: words.pop(f"kind_{kind}") for kind in lesson.KINDS}

    def cell_title(h: int, g: int) -> str:
        return cell_template.format(h=h, g=g)

    def title(g: int, kind: str) -> str:
        return title_template.format(G=g, kind=kinds[kind])

    return modern_figures.maps_live(
        steps, cell_title=cell_title, title=title, font_size=font_size, **words
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def cache_curves(model: str, dtype: str, font_size: int, **words: str) -> go.Figure:
    """The cache of one sequence against context for every model (names: words["name_<id>"])."""
    section = cache_section(model, dtype)
    curves = {words.pop(f"name_{key}"): xy for key, xy in section.curves.items()}
    return modern_figures.cache_curves(
        curves, gb_range=section.gb_range, font_size=font_size, **words
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def window_live(T: int, window: int, font_size: int, **words: str) -> go.Figure:
    section = window_section(T, window)
    template = words.pop("title")

    def title(w: int) -> str:
        return template.format(w=w)

    return modern_figures.window_live(section, title=title, font_size=font_size, **words)


@st.cache_resource(max_entries=64, show_spinner=False)
def reach(T: int, window: int, font_size: int, **words: str) -> go.Figure:
    """The receptive field, each row named from words["layer_name"] (with {l}, the layer, and {n},
    the positions it reaches)."""
    section = window_section(T, window)
    layer_name = words.pop("layer_name")
    names = [layer_name.format(l=k, n=n) for k, n in enumerate(section.spans, start=1)]
    return modern_figures.receptive(section.reach, layer_names=names, font_size=font_size, **words)


@st.cache_resource(max_entries=64, show_spinner=False)
def flash_live(
    T: int,
    block_q: int,
    block_k: int,
    causal: bool,
    font_size: int,
    panel_titles: tuple[str, ...],
    **words: str,
) -> go.Figure:
    section = flash_section(T, block_q, block_k, causal)
    step_title, skipped_title = words.pop("title"), words.pop("skipped_title")

    def title(i: int, j: int, n: int, skipped: bool, error: float, rescale: str) -> str:
        template = skipped_title if skipped else step_title
        return template.format(i=i, j=j, n=n, err=f"{error:.1e}", rescale=rescale)

    return modern_figures.flash_live(
        section, title=title, panel_titles=panel_titles, font_size=font_size, **words
    )
