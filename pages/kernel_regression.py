"""Kernel regression: attention as Nadaraya–Watson (articles 002, 000)."""

import numpy as np
import streamlit as st

import visattn
from ui import url_state
from ui.charts import show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures

WAIST = [[68, 126], [60, 110], [64, 115]]

with page("kernel"):
    st.title(t("kernel.title"))
    explain(t("kernel.intro"))
    q = st.slider(t("kernel.query"), 50.0, 80.0, step=0.5, key=url_state.bind("q", 62.0, lo=50.0, hi=80.0))
    keys, values = np.array(WAIST, dtype=float).T
    r = compute("kernel", visattn.nadaraya_watson, [q], keys, values)
    if r is not None:
        labels = [f"{k:g}→{v:g}" for k, v in zip(keys, values)]
        st.metric(t("kernel.estimate"), f"{float(r.estimates[0]):.4g}")
        show(figures.heatmap(r.weights, labels, [f"{q:g}"], x_title=t("common.key"), y_title=t("common.query"),
                             title=t("kernel.weights_title"), digits=3, font_size=font_size()), "kernel_weights")
