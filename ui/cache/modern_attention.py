"""The modern-attention page's Streamlit caches: each section of
:mod:`visattn.lessons.modern_attention` computed once per input (``st.cache_data``), and each heavy
figure built once per input and shared (``st.cache_resource``: show it, never modify it).

A figure's wrapper takes the section's inputs (the section itself comes from its own cached
wrapper), the values of the controls it draws, the font size and the figures' words
(:class:`visattn.figures.modern_attention.Words`, filled in the page's language)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from visattn.figures import modern_attention as modern_attention_figures
from visattn.lessons import modern_attention as lesson

gqa_section = st.cache_data(max_entries=64, show_spinner=False)(lesson.gqa_section)


@st.cache_data(max_entries=4, show_spinner=False)
def cost_rows(model: str) -> tuple[lesson.CostRow, ...]:
    return lesson.cost_rows(lesson.MODELS[model])


model_rows = st.cache_data(max_entries=1, show_spinner=False)(lesson.model_rows)
coinciding_lines = st.cache_data(max_entries=1, show_spinner=False)(lesson.coinciding_lines)
cache_section = st.cache_data(max_entries=16, show_spinner=False)(lesson.cache_section)
window_section = st.cache_data(max_entries=64, show_spinner=False)(lesson.window_section)
flash_section = st.cache_data(max_entries=64, show_spinner=False)(lesson.flash_section)
traffic_section = st.cache_data(max_entries=32, show_spinner=False)(lesson.traffic_section)


@st.cache_data(max_entries=32, show_spinner=False)
def traffic_over_n(d: int, sram_kb: int) -> tuple[list[int], list[int], list[int]]:
    """(N, standard, flash) over every N the control offers."""
    rows = [lesson.traffic_section(N, d, sram_kb).traffic for N in lesson.FLASH_N]
    return list(lesson.FLASH_N), [r.standard for r in rows], [r.flash for r in rows]


traffic_range = st.cache_data(max_entries=1, show_spinner=False)(lesson.traffic_range)
gqa_steps = st.cache_data(max_entries=32, show_spinner=False)(lesson.gqa_steps)


@st.cache_resource(max_entries=64, show_spinner=False)
def grouping(H: int, G: int, font_size: int, words: modern_attention_figures.Words) -> go.Figure:
    """Which K/V head each query head reads, with the slider of G (the same figure whatever T and
    the mask)."""
    steps = lesson.grouping_steps(H, G)
    return modern_attention_figures.grouping_live(steps, words=words, font_size=font_size)


@st.cache_resource(max_entries=64, show_spinner=False)
def head_maps(
    T: int, H: int, G: int, causal: bool, font_size: int, words: modern_attention_figures.Words
) -> go.Figure:
    """Every query head's weights, four to a row, following the grouping figure's G."""
    steps = gqa_steps(T, H, G, causal)
    return modern_attention_figures.maps_live(steps, words=words, font_size=font_size)


@st.cache_resource(max_entries=16, show_spinner=False)
def cache_curves(
    model: str,
    dtype: str,
    font_size: int,
    words: modern_attention_figures.Words,
    names: tuple[tuple[str, str], ...],
    dtype_name: str,
) -> go.Figure:
    """The cache of one sequence against context for every model (``names``: each model's id and
    name)."""
    section = cache_section(model, dtype)
    named = dict(names)
    curves = {named[key]: xy for key, xy in section.curves.items()}
    return modern_attention_figures.cache_curves(
        curves, gb_range=section.gb_range, dtype=dtype_name, words=words, font_size=font_size
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def window_mask(
    T: int, window: int, sinks: int, font_size: int, words: modern_attention_figures.Words
) -> go.Figure:
    section = window_section(T, window)
    return modern_attention_figures.window_live(section, sinks, words=words, font_size=font_size)


@st.cache_resource(max_entries=64, show_spinner=False)
def reach(T: int, window: int, layer: int, font_size: int, words: modern_attention_figures.Words):
    """The receptive field layer by layer, with the slider of the layer written out."""
    section = window_section(T, window)
    return modern_attention_figures.reach_live(section, layer, words=words, font_size=font_size)


@st.cache_resource(max_entries=64, show_spinner=False)
def flash_live(
    T: int,
    block_q: int,
    block_k: int,
    causal: bool,
    step: int,
    font_size: int,
    words: modern_attention_figures.Words,
) -> go.Figure:
    section = flash_section(T, block_q, block_k, causal)
    return modern_attention_figures.flash_live(section, step, words=words, font_size=font_size)


@st.cache_resource(max_entries=32, show_spinner=False)
def traffic_curves(d: int, sram_kb: int, font_size: int, words: modern_attention_figures.Words):
    """HBM accesses of both algorithms over every N the control offers, on the axis every choice
    shares."""
    Ns, standard, flash = traffic_over_n(d, sram_kb)
    return modern_attention_figures.traffic_curves(
        Ns,
        standard,
        flash,
        d=d,
        sram=lesson.sram_text(sram_kb),
        y_range=traffic_range(),
        words=words,
        font_size=font_size,
    )
