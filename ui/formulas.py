"""Displayed formulas: the formula element (ui/formula.js), typeset in the browser only when its TeX
changes, with the KaTeX that st.latex uses (Streamlit's rehype-katex chunk) and so drawn as
st.latex draws it. A section that reruns leaves its unchanged formulas alone, and a changed one is
set in one go instead of being rebuilt node by node by React (the kernel page's σ: about a tenth of
a change; benchmarks/README.md)."""

from __future__ import annotations

import streamlit as st

from .charts import element_script, streamlit_chunk

FORMULA_NAME = "visattn_formula"
KATEX_CHUNK = streamlit_chunk("rehype-katex.*.js")
_formula = st.components.v2.component(
    FORMULA_NAME, js=element_script("katex.js", "formula.js"), isolate_styles=False
)


def formula(tex: str, name: str) -> None:
    """``tex`` as one display formula; ``name`` (unique on the page) keeps it the same element from
    one run to the next."""
    _formula(key=f"formula_{name}", data={"tex": tex, "chunk": KATEX_CHUNK})
