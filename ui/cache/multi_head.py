"""Cached runs for the multi-head page, over :mod:`visattn.lessons.multi_head`: keyed by the run's
:class:`~visattn.lessons.multi_head.Inputs`."""

from __future__ import annotations

import streamlit as st

from visattn.lessons import multi_head as lesson

run = st.cache_data(max_entries=32, show_spinner=False)(lesson.run_with)


@st.cache_data(max_entries=32, show_spinner=False)
def readings(inputs: lesson.Inputs, name: str) -> lesson.Readings:
    """The selector's reading ``name`` of the run of ``inputs``, labelled with them (flow over two
    layers is quick: no progress bar, so it can be cached)."""
    return lesson.readings(run(inputs).result, name, inputs.label)
