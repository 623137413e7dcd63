"""Shared widgets: an editable matrix whose value lives in the URL."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from . import url_state
from .i18n import t


def parse_frame(df: pd.DataFrame, name: str) -> np.ndarray:
    """The edited table as a float matrix, or a ValueError naming every cell that is not a finite number."""
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise ValueError(t("common.table_empty", name=name))
    bad = []
    out = np.empty(df.shape)
    for i in range(df.shape[0]):
        for j in range(df.shape[1]):
            v = df.iat[i, j]
            try:
                x = float(v) if v is not None and str(v).strip() != "" else math.nan
            except (TypeError, ValueError):
                x = None
            if x is None or not math.isfinite(x) or abs(x) > 1e12:
                shown = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
                bad.append(t("common.bad_cell", row=df.index[i], col=df.columns[j], value=shown[:20]))
            else:
                out[i, j] = x
    if bad:
        more = t("common.and_more", n=len(bad) - 5) if len(bad) > 5 else ""
        raise ValueError(t("common.table_not_numbers", name=name, cells="; ".join(bad[:5]) + more))
    return out


def set_matrix(key: str, m) -> None:
    """Replace the matrix under ``key`` (a preset, a new shape): the editor starts again from it."""
    st.session_state[key] = np.asarray(m, dtype=float).tolist()
    st.session_state[f"{key}__base"] = st.session_state[key]
    st.session_state[f"{key}__v"] = st.session_state.get(f"{key}__v", 0) + 1


def matrix_editor(key: str, default, *, name: str, row_labels=None, col_labels=None, dynamic_rows: bool = False,
                  height="auto") -> np.ndarray:
    """An editable matrix kept in the URL under ``key``; returns it as floats or raises ValueError.

    The editor shows the value the session started from (URL or default); edits are applied on top of it.
    """
    url_state.bind(key, np.asarray(default, dtype=float).tolist(), matrix=True)
    base = st.session_state.setdefault(f"{key}__base", st.session_state[key])
    base = np.asarray(base, dtype=float)
    rows = list(row_labels) if row_labels is not None and len(row_labels) == base.shape[0] else None
    cols = [str(c) for c in col_labels] if col_labels is not None and len(col_labels) == base.shape[1] else None
    frame = pd.DataFrame(base, columns=cols)
    if rows is not None and not dynamic_rows:
        frame.index = [str(r) if rows.count(r) == 1 else f"{i}:{r}" for i, r in enumerate(rows)]
    edited = st.data_editor(frame, key=f"{key}__ed{st.session_state.get(f'{key}__v', 0)}",
                            num_rows="dynamic" if dynamic_rows else "fixed", height=height,
                            hide_index=dynamic_rows)
    m = parse_frame(edited, name)
    st.session_state[key] = m.tolist()
    return m
