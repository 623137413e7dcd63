"""Showing figures and matrices: Plotly's toolbar PNG with a meaningful name, CSV downloads."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .frame import presenter
from .i18n import t
from .widgets import token_label


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "visattn"


def show(fig: go.Figure, name: str, key: str | None = None) -> None:
    """Draw ``fig`` full width; the camera button saves ``visattn_<name>.png`` at slide
    resolution."""
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": "png",
            "filename": f"visattn_{_slug(name)}",
            "scale": 3 if presenter() else 2,
        },
    }
    st.plotly_chart(fig, width="stretch", config=config, key=key or f"chart_{_slug(name)}")


def matrix_frame(m, row_labels=None, col_labels=None) -> pd.DataFrame:
    m = np.asarray(m, dtype=float)
    rows = (
        [str(x) for x in row_labels]
        if row_labels is not None
        else [str(i + 1) for i in range(m.shape[0])]
    )
    cols = (
        [str(x) for x in col_labels]
        if col_labels is not None
        else [str(j + 1) for j in range(m.shape[1])]
    )
    # Repeated tokens would make duplicate labels; number them (from 1, as the pages do) so the CSV
    # stays unambiguous.
    rows = [token_label(i, r) if rows.count(r) > 1 else r for i, r in enumerate(rows)]
    cols = [token_label(j, c) if cols.count(c) > 1 else c for j, c in enumerate(cols)]
    return pd.DataFrame(m, index=rows, columns=cols)


def download_csv(m, name: str, row_labels=None, col_labels=None, key: str | None = None) -> None:
    """A button that downloads matrix ``m`` as ``visattn_<name>.csv``."""
    csv = matrix_frame(m, row_labels, col_labels).to_csv(float_format="%.6g").encode("utf-8")
    st.download_button(
        t("common.download_csv"),
        csv,
        file_name=f"visattn_{_slug(name)}.csv",
        mime="text/csv",
        key=key or f"csv_{_slug(name)}",
        icon="⬇️",
    )
