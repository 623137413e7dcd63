"""Positional encoding: the sinusoidal table (article 003)."""

import streamlit as st

import visattn
from ui import url_state
from ui.charts import show
from ui.errors import compute
from ui.frame import explain, font_size, page
from ui.i18n import t
from visattn import figures

with page("positional"):
    st.title(t("positional.title"))
    explain(t("positional.intro"))
    n = st.slider(t("positional.n_positions"), 1, 200, key=url_state.bind("n", 50, lo=1, hi=200))
    d = st.slider(t("positional.d_model"), 2, 256, step=2, key=url_state.bind("d", 64, lo=2, hi=256))
    pe = compute("positional", visattn.sinusoidal_encoding, n, d)
    if pe is not None:
        show(figures.heatmap(pe, list(range(d)), list(range(n)), x_title=t("common.dimension"),
                             y_title=t("common.position"), value_name="PE", weights=False, font_size=font_size()), "sinusoidal_table")
