"""Pretrained model: MiniLM-L6's real attention, computed in NumPy (article 004)."""

import streamlit as st

from ui.frame import explain, page
from ui.i18n import t

with page("pretrained"):
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"))
