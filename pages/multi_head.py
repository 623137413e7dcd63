"""Multi-head attention (articles 004, 003, 000)."""

import numpy as np
import streamlit as st

import visattn
from ui.charts import show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures

SENTENCE = "The animal didn't cross the street because it was too tired."


def random_heads(text: str, d_model: int = 32, n_heads: int = 4, seed: int = 0):
    tokens = visattn.tokenize(text)
    X = visattn.seeded_embedding(tokens, d_model, seed) + visattn.sinusoidal_encoding(len(tokens), d_model)
    rng = np.random.default_rng(seed)
    W = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return tokens, visattn.multi_head_attention(X, *W, n_heads)


with page("multi_head"):
    st.title(t("multi_head.title"))
    explain(t("multi_head.intro"))
    out = compute("multi_head", random_heads, SENTENCE)
    if out is not None:
        tokens, r = out
        show(figures.head_grid(r.weights[None], tokens, tokens, col_titles=[f"{t('common.head')} {h}" for h in range(4)],
                               font_size=font_size(), cell_px=320), "multi_head_grid")
