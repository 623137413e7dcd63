"""Plotly figures from arrays and labels. No Streamlit here: every builder returns a ``go.Figure``.

Token labels may repeat ("the" twice in one sentence), and Plotly merges equal category names, so a
repeated label gets invisible zero-width spaces appended: it reads the same and stays its own row. The
axes are categorical, so hover text names query and key without per-cell custom data (a 12-head grid of
128 tokens stays about 1 MB).
Weights share one colour scale 0…1. Cell text is drawn only where it stays readable (≤ 24×24), and
arrays are sent as float32 to keep the page light.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

WEIGHT_SCALE = "Blues"
DIVERGING_SCALE = "RdBu_r"
MAX_TEXT_CELLS = 24          # above this many rows or columns, numbers are in the hover only
HEAD_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a")


def _fmt(v: float, digits: int) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 10 ** 5 or abs(v) < 10 ** (-digits):
        return f"{v:.{max(digits - 1, 1)}e}"
    return f"{v:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{v:.0f}"


def cell_text(m: np.ndarray, digits: int = 2, fixed: bool = False) -> list[list[str]]:
    """Matrix of short number strings: scientific notation for very large or small entries, or with
    ``fixed`` always ``digits`` decimals (weights read 0.000 rather than 2.7e-04)."""
    if fixed:
        return [[f"{float(v):.{digits}f}" for v in row] for row in m]
    return [[_fmt(float(v), digits) for v in row] for row in m]


F32_MAX = float(np.finfo(np.float32).max)


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace and layout dicts, skipping Plotly's property validation.

    Validation costs ~10–15 ms a heatmap and ~0.3 s for a 72-cell grid, on every rerun of a page; the
    builders here write only well-formed properties (tests validate every builder's output once).
    """
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def _title(text: str) -> dict:
    return {"text": text}


def _scale(name_or_list):
    """A colour scale as the explicit list plotly.js needs (names like "RdBu_r" exist only in Python)."""
    return get_colorscale(name_or_list) if isinstance(name_or_list, str) else name_or_list


def compact(a) -> np.ndarray:
    """``a`` as float32 (half the bytes to the browser) unless an entry is beyond float32's range."""
    a = np.asarray(a, dtype=np.float64)
    return a.astype(np.float32) if not (np.abs(a[np.isfinite(a)]) > F32_MAX).any() else a


def unique_labels(labels, n: int) -> list[str]:
    """``labels`` as strings (or 0…n−1), each repeat made distinct with trailing zero-width spaces."""
    labels = [str(x) for x in labels] if labels is not None else [str(i) for i in range(n)]
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        k = seen.get(lab, 0)
        seen[lab] = k + 1
        out.append(lab + "\u200b" * k)
    return out


MAX_TICKS = 40


def _ticks(labels, n):
    labels = unique_labels(labels, n)
    axis = dict(type="category", categoryorder="array", categoryarray=labels)
    if n > MAX_TICKS:  # a long axis names every k-th category; the hover still names every cell
        axis["tickvals"] = labels[:: -(-n // MAX_TICKS)]
    return axis, labels


def _top_margin(labels, font_size: int, angled: bool, title: bool) -> int:
    """Room above a heatmap for its title and its (possibly slanted) top tick labels."""
    longest = max((len(s.rstrip("\u200b")) for s in labels), default=1)
    ticks = (0.5 * font_size * min(longest, 14) * 0.72) if angled else font_size * 1.4
    return int(30 + ticks + (font_size * 2.4 if title else 0))


def heatmap(m, x_labels=None, y_labels=None, *, title: str = "", x_title: str = "", y_title: str = "",
            value_name: str = "weight", weights: bool = True, zmin=None, zmax=None, colorscale: str | None = None,
            digits: int = 2,
            show_text: bool | None = None, masked=None, height: int | None = None, font_size: int = 14) -> go.Figure:
    """One matrix as a heatmap; rows are queries (top to bottom), columns keys.

    ``masked`` (same shape, bool) marks cells hidden by a mask: they are veiled grey (with a ✕ where numbers show).
    With ``weights=True`` the colour scale is the shared 0…1 of attention weights; otherwise it spans the data
    (diverging around 0 when there are negative entries). ``value_name`` labels the hover and colour bar.
    """
    m = np.asarray(m, dtype=np.float64)
    rows, cols = m.shape
    xt, xl = _ticks(x_labels, cols)
    yt, yl = _ticks(y_labels, rows)
    is_weight = weights and zmin is None and zmax is None
    if is_weight:
        zmin, zmax = 0.0, 1.0
    if colorscale is None:
        colorscale = WEIGHT_SCALE if is_weight or (np.nanmin(m) >= 0) else DIVERGING_SCALE
    if colorscale == DIVERGING_SCALE and zmin is None and zmax is None:
        bound = float(np.nanmax(np.abs(m))) or 1.0
        zmin, zmax = -bound, bound
    if show_text is None:
        show_text = rows <= MAX_TEXT_CELLS and cols <= MAX_TEXT_CELLS
    z = compact(m)
    text = cell_text(m, digits, fixed=is_weight) if show_text else None
    if masked is not None:
        masked = np.asarray(masked, dtype=bool)
        if show_text:
            text = [["✕" if masked[i, j] else text[i][j] for j in range(cols)] for i in range(rows)]
    data = [dict(
        type="heatmap", z=z, x=xl, y=yl, zmin=zmin, zmax=zmax, colorscale=_scale(colorscale),
        text=text, texttemplate="%{text}" if show_text else None,
        textfont=dict(size=max(9, font_size - 2 - max(rows, cols) // 6)),
        hovertemplate=(f"{y_title or 'row'}: %{{y}}<br>{x_title or 'column'}: %{{x}}"
                       f"<br>{value_name}: %{{z:.4g}}<extra></extra>"),
        colorbar=dict(title=_title(value_name), thickness=14),
    )]
    if masked is not None and masked.any():
        veil = np.where(masked, 1.0, np.nan).astype(np.float32)
        data.append(dict(type="heatmap", z=veil, x=xl, y=yl, colorscale=[[0, "#9e9e9e"], [1, "#9e9e9e"]],
                         opacity=0.55, showscale=False, hoverinfo="skip"))
    angled = cols > 6
    side = max(rows, cols)
    layout = dict(
        xaxis=dict(title=_title(x_title), side="top", tickangle=-45 if angled else 0, **xt),
        yaxis=dict(title=_title(y_title), autorange="reversed", **yt),
        title=dict(text=title, y=0.98), font=dict(size=font_size),
        height=height or int(min(900, max(260, 120 + 34 * side))),
        margin=dict(l=10, r=10, t=_top_margin(xl, font_size, angled, bool(title)) + (20 if x_title else 0), b=10))
    return _figure(data, layout)


def head_grid(w, x_labels=None, y_labels=None, *, row_titles=None, col_titles=None, cell_titles=None, title: str = "",
              value_name: str = "weight", query_name: str = "query", key_name: str = "key", font_size: int = 12,
              cell_px: int = 230, zmin: float = 0.0, zmax: float = 1.0, colorscale: str = WEIGHT_SCALE) -> go.Figure:
    """A grid of heatmaps from one (rows, cols, Tq, Tk) array on one shared colour scale (weights: 0…1).

    As d2l's ``show_heatmaps``: one call draws a single matrix (1, 1, Tq, Tk) or a layer × head grid.
    Each cell is titled ``cell_titles[r·C + c]``, else "row title · column title". A cell that is all NaN
    (padding a last row) is left blank. Tick labels, when the tokens are few enough to read, are drawn on
    the left column and the bottom row only: every cell has the same tokens.
    The layout is written directly rather than through ``make_subplots``, which takes ~0.3 s for 72 cells.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"head_grid needs a (rows, cols, Tq, Tk) array, got shape {w.shape}.")
    R, C, Tq, Tk = w.shape
    xt, xl = _ticks(x_labels, Tk)
    yt, yl = _ticks(y_labels, Tq)
    if cell_titles is None:
        cell_titles = [" · ".join(p for p in (row_titles[r] if row_titles else "", col_titles[c] if col_titles else "") if p)
                       for r in range(R) for c in range(C)]
    show_ticks = max(Tq, Tk) <= 40 and C <= 4
    gap_x, gap_y = 0.02 + 0.1 / C, (min(0.3 / R, 0.12) if R > 1 else 0.0)
    cell_w, cell_h = (1 - gap_x * (C - 1)) / C, (1 - gap_y * (R - 1)) / R
    layout: dict = {"annotations": []}
    data = []
    for r in range(R):
        for c in range(C):
            k = r * C + c
            sfx = "" if k == 0 else str(k + 1)
            x0, y1 = c * (cell_w + gap_x), 1 - r * (cell_h + gap_y)
            blank = bool(np.isnan(w[r, c]).all())
            bottom = r == R - 1 or bool(np.isnan(w[r + 1, c]).all())
            layout[f"xaxis{sfx}"] = dict(domain=[max(x0, 0.0), min(x0 + cell_w, 1.0)], anchor=f"y{sfx}", tickangle=-60,
                                         showticklabels=show_ticks and bottom, visible=not blank, **xt)
            layout[f"yaxis{sfx}"] = dict(domain=[max(y1 - cell_h, 0.0), min(y1, 1.0)], anchor=f"x{sfx}",
                                         autorange="reversed", showticklabels=show_ticks and c == 0, visible=not blank, **yt)
            if blank:
                continue
            name = cell_titles[k]
            layout["annotations"].append(dict(text=name, x=x0 + cell_w / 2, y=y1, xref="paper", yref="paper",
                                              showarrow=False, yanchor="bottom", font=dict(size=font_size)))
            data.append(dict(
                type="heatmap", z=compact(w[r, c]), x=xl, y=yl, coloraxis="coloraxis", name=name, xaxis=f"x{sfx}",
                yaxis=f"y{sfx}", hovertemplate=(f"{name}<br>{query_name}: %{{y}}<br>{key_name}: %{{x}}"
                                                f"<br>{value_name}: %{{z:.3f}}<extra></extra>")))
    layout.update(title=_title(title), coloraxis=dict(colorscale=_scale(colorscale), cmin=zmin, cmax=zmax,
                                                      colorbar=dict(title=_title(value_name), thickness=14)),
                  font=dict(size=font_size), height=int(min(2400, 80 + cell_px * R)),
                  margin=dict(l=10, r=10, t=60 if not title else 90, b=10))
    return _figure(data, layout)


def line_view(w, tokens, *, head_names=None, visible=None, title: str = "", font_size: int = 14,
              min_weight: float = 0.02) -> go.Figure:
    """Tokens in two columns, one line per (query, key) pair per head, opacity = weight.

    The classic Tensor2Tensor picture. ``w`` is (H, T, T); ``visible`` is a list of head indices to draw
    (all by default); lines under ``min_weight`` are left out to keep the figure light.
    """
    w = np.asarray(w, dtype=np.float64)
    H, T, _ = w.shape
    names = list(head_names) if head_names is not None else [f"head {h}" for h in range(H)]
    visible = range(H) if visible is None else visible
    data = []
    for h in visible:
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        # One trace per tenth of weight (opacity is per trace in Plotly): at most 10 traces a head.
        level = np.ceil(w[h] * 10).astype(int)
        first = True
        for b in range(1, 11):
            pairs = [(i, j) for i in range(T) for j in range(T) if level[i, j] == b and w[h, i, j] >= min_weight]
            if not pairs:
                continue
            xs, ys, hover = [], [], []
            for i, j in pairs:
                label = f"{names[h]}<br>{tokens[i]} → {tokens[j]}<br>weight: {w[h, i, j]:.3f}"
                xs += [0, 1, None]
                ys += [i, j, None]
                hover += [label, label, None]
            data.append(dict(
                type="scatter", x=xs, y=ys, mode="lines", line=dict(color=colour, width=1 + 5 * b / 10), opacity=b / 10,
                name=names[h], legendgroup=names[h], showlegend=first, text=hover,
                hovertemplate="%{text}<extra></extra>"))
            first = False
    y = list(range(T))
    data.append(dict(type="scatter", x=[0] * T, y=y, mode="text", text=list(tokens), textposition="middle left",
                     showlegend=False, hoverinfo="skip", textfont=dict(size=font_size)))
    data.append(dict(type="scatter", x=[1] * T, y=y, mode="text", text=list(tokens), textposition="middle right",
                     showlegend=False, hoverinfo="skip", textfont=dict(size=font_size)))
    layout = dict(xaxis=dict(visible=False, range=[-0.6, 1.6]), yaxis=dict(visible=False, autorange="reversed"),
                  title=_title(title), height=int(min(1400, 120 + 28 * T)), font=dict(size=font_size),
                  margin=dict(l=10, r=10, t=60, b=10), legend=dict(orientation="h", y=-0.02))
    return _figure(data, layout)


def bars(labels, values, *, title: str = "", x_title: str = "", y_title: str = "weight", highlight=None,
         ymax=None, font_size: int = 14, digits: int = 3, fixed: bool = False, label_min: float | None = None) -> go.Figure:
    """One bar per label (repeated labels stay apart); ``highlight`` indexes a bar.

    Bars are labelled with their values (up to 40 bars): ``fixed`` gives ``digits`` decimals (weights read
    against each other), ``label_min`` leaves bars below it unlabelled.
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    colours = ["#ff7f0e" if highlight is not None and i == highlight else "#1f77b4" for i in range(n)]
    xt, xl = _ticks(labels, n)
    data = [dict(type="bar", x=xl, y=compact(values), marker=dict(color=colours),
                 text=[("" if label_min is not None and v < label_min else
                        f"{v:.{digits}f}" if fixed else _fmt(float(v), digits)) for v in values] if n <= 40 else None,
                 textposition="outside", hovertemplate=f"%{{x}}<br>{y_title}: %{{y:.4g}}<extra></extra>")]
    yaxis = dict(title=_title(y_title)) | (dict(range=[0, ymax]) if ymax is not None else {})
    layout = dict(xaxis=dict(title=_title(x_title), **xt), yaxis=yaxis, title=_title(title), height=360,
                  font=dict(size=font_size), margin=dict(l=10, r=10, t=60, b=10))
    return _figure(data, layout)


def curves(x, ys: dict, *, title: str = "", x_title: str = "", y_title: str = "", mode: str = "lines",
           font_size: int = 14, markers: dict | None = None) -> go.Figure:
    """Several named curves over one x; ``markers`` adds named point sets {name: (xs, ys)}."""
    x = compact(x)
    data = [dict(type="scatter", x=x, y=compact(y), mode=mode, name=str(name)) for name, y in ys.items()]
    data += [dict(type="scatter", x=compact(mx), y=compact(my), mode="markers", name=str(name), marker=dict(size=10))
             for name, (mx, my) in (markers or {}).items()]
    layout = dict(xaxis=dict(title=_title(x_title)), yaxis=dict(title=_title(y_title)), title=_title(title), height=400,
                  font=dict(size=font_size), margin=dict(l=10, r=10, t=60, b=10))
    return _figure(data, layout)
