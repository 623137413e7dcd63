"""Cached sections of the decoder page: one-line wrappers over :mod:`visattn.lessons.decoder`."""

from __future__ import annotations

import streamlit as st

from visattn.lessons import decoder as lesson


@st.cache_data(max_entries=32, show_spinner=False)
def mask(tokens: tuple[str, ...]) -> lesson.MaskSection:
    return lesson.mask_section(list(tokens))


@st.cache_data(max_entries=32, show_spinner=False)
def cache(tokens: tuple[str, ...], step: int) -> lesson.CacheSection:
    return lesson.cache_section(list(tokens), step)


@st.cache_data(max_entries=8, show_spinner=False)
def cost(shape: str) -> lesson.CostSection:
    return lesson.cost_section(shape)


@st.cache_data(max_entries=32, show_spinner=False)
def circuit(tokens: tuple[str, ...], ablate: bool) -> lesson.CircuitSection:
    return lesson.circuit_section(list(tokens), ablate)
