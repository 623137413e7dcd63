"""Single head: scaled dot-product self-attention, every intermediate matrix (articles 001, 002, 004)."""

import streamlit as st

import visattn
from ui.charts import show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures

X = [[1, 0, 1, 0], [0, 2, 0, 2]]
W_Q = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
W_V = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]
TOKENS = ["Thinking", "Machines"]

with page("single_head"):
    st.title(t("single_head.title"))
    explain(t("single_head.intro"))
    tr = compute("single_head", visattn.self_attention, X, W_Q, W_K, W_V)
    if tr is not None:
        show(figures.heatmap(tr.weights, TOKENS, TOKENS, x_title=t("common.key"), y_title=t("common.query"),
                             title=t("single_head.weights_title"), digits=3, font_size=font_size()), "single_head_weights")
