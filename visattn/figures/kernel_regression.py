"""The kernel-regression lesson's own figures: the weights over the keys, the fitted curve, the
query × key heatmap, keys in the plane, and the leave-one-out error against σ.

Live: when the regression carries its σ sweep (``regression(…, live=sliders)``), σ is the fitted
curve's (or the plane's) own slider, the control ``kr_sigma`` (:mod:`visattn.figures.live`), and
the weight bars, the heatmap and the leave-one-out error follow it: dragging redraws them, the
curve and the printed estimate in the browser.

Every word shown is a field of :class:`Words` (English; the app fills it in the page's language);
the table's column names (``labels``: key features…, value) come with the data. Builders take a
:class:`visattn.lessons.kernel_regression.Regression`; :func:`score_maps` takes a
:class:`visattn.scoring.ScoredAttention`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..lessons.kernel_regression import CONTROLS, Regression, SigmaSweep, key_text
from ..scoring import ScoredAttention
from .core import HOVER_NUMBER, _figure, _fmt, _title, compact
from .lines import bars, curves
from .live import SliderStep, add_slider, follow, packed
from .matrices import heatmap

ORANGE, GREEN, BLUE = "#ff7f0e", "#2ca02c", "#1f77b4"
SIGMA = CONTROLS["kr_sigma"]


@dataclass(frozen=True)
class Words:
    """The words of these figures. Templates, filled here: ``bars_title`` and ``estimate_here``
    with {q} (the query), ``keys_axis``, ``keys_sorted`` and ``query_axis`` with {name} (the key
    features), ``fitted_sigma`` and ``current_sigma`` with {sigma}, ``estimate_line`` with {fq}
    and {value}, ``no_estimate`` with {q}."""

    query: str = "query"
    key: str = "key"
    weight: str = "weight"
    score: str = "score"
    estimate: str = "Estimate"
    bars_title: str = "Attention weights of the query {q} over the keys"
    keys_axis: str = "key ({name})"
    curve_title: str = "The fitted curve: the estimate at every query"
    fitted_curve: str = "estimate f(q)"
    estimate_here: str = "estimate at the query {q}"
    data_points: str = "key→value pairs"
    heatmap_title: str = (
        "Attention weights for a grid of queries (rows) over the sorted keys (columns)"
    )
    keys_sorted: str = "key, sorted ({name})"
    query_axis: str = "query ({name})"
    plane_title: str = (
        "Keys in the plane, sized by their weight for the query; colour: the estimate at every"
        " point"
    )
    keys_sized: str = "keys (size = weight)"
    loo_title: str = "Leave-one-out squared error against σ"
    loo_error: str = "leave-one-out mean squared error"
    sigma: str = "Bandwidth σ"
    fitted_sigma: str = "fitted σ = {sigma}"
    current_sigma: str = "current σ = {sigma}"
    estimate_line: str = "estimate {fq} = {value}"
    no_estimate: str = "no estimate at {q}: no key within reach"
    live_sigma: str = "bandwidth σ = "


WORDS = Words()


def estimate_text(query: np.ndarray, estimate: float, w: Words = WORDS) -> str:
    """The printed estimate at ``query``: "estimate f(62) = 112.5", or that there is none."""
    q = key_text(query)
    if not np.isfinite(estimate):
        return w.no_estimate.format(q=q)
    return w.estimate_line.format(
        fq=f"f{q}" if len(query) > 1 else f"f({q})", value=f"{estimate:.6g}"
    )


def _header(layout: dict, text: str) -> None:
    """The estimate printed on a line of its own between the title and the plot (an annotation a
    step rewrites)."""
    margin = dict(layout.get("margin") or {})
    # the plot keeps its height
    layout["height"] = (layout.get("height") or 400) + 96 - (margin.get("t") or 60)
    layout["margin"] = margin | dict(t=96)
    layout["title"] = dict(layout.get("title") or {}) | dict(
        y=1.0, yref="container", yanchor="top", pad=dict(t=12)
    )
    layout["annotations"] = [
        dict(
            text=text,
            x=0,
            y=1,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            yshift=10,
            showarrow=False,
            font=dict(color=ORANGE),
        )
    ] + list(layout.get("annotations") or [])


def _colours(weights: np.ndarray, supported: bool) -> list[str]:
    top = int(np.argmax(weights)) if supported else -1
    return [ORANGE if i == top else BLUE for i in range(len(weights))]


def _bar_text(weights: np.ndarray) -> list[str]:
    return [_fmt(float(v), 3) for v in weights]


def weight_bars(
    regression: Regression, labels: Sequence[str], w: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """One bar per key: the query's attention weights (the heaviest key highlighted). With the
    regression's σ sweep: the estimate printed above the plot, and the bars following σ."""
    b = regression.breakdown
    fig = bars(
        [key_text(k) for k in b.keys],
        b.weights,
        title=w.bars_title.format(q=key_text(b.query)),
        x_title=w.keys_axis.format(name=", ".join(labels[:-1])),
        y_title=w.weight,
        highlight=int(np.argmax(b.weights)) if b.supported else None,
        ymax=1.1,
        font_size=font_size,
    )
    if (sw := regression.by_sigma) is None:
        return fig
    spec = fig.to_plotly_json()
    _header(spec["layout"], estimate_text(b.query, b.estimate, w))
    fig = _figure(spec["data"], spec["layout"])
    labelled = spec["data"][0].get("text") is not None  # bars() prints the values up to 40 bars

    def step(k: int) -> SliderStep:
        at = sw.breakdowns[k]
        bar = {"y": packed(at.weights), "marker.color": _colours(at.weights, at.supported)} | (
            {"text": _bar_text(at.weights)} if labelled else {}
        )
        return SliderStep({0: bar}, {"annotations[0].text": estimate_text(b.query, at.estimate, w)})

    return _follow_sigma(fig, sw, step)


def _sigma_slider(fig: go.Figure, sw: SigmaSweep, w: Words, step) -> go.Figure:
    return add_slider(
        fig,
        SIGMA,
        label=w.live_sigma,
        values=sw.values,
        steps=[step(i) for i in range(len(sw.values))],
        active=sw.active,
        fmt=_sigma_text,
        digits=5,
    )


def _sigma_text(sigma: float) -> str:
    return f"{sigma:.4g}"


def _follow_sigma(fig: go.Figure, sw: SigmaSweep, step) -> go.Figure:
    return follow(
        fig,
        SIGMA,
        values=sw.values,
        steps=[step(i) for i in range(len(sw.values))],
        active=sw.active,
        digits=5,
    )


def fit_figure(
    regression: Regression, labels: Sequence[str], w: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """The fitted curve over the query range, the data points and the current query (1-D keys),
    with the slider of σ when the regression carries its sweep."""
    b = regression.breakdown
    q = float(b.query[0])
    fig = curves(
        regression.curve_x,
        {w.fitted_curve: regression.curve_y},
        markers={w.data_points: (b.keys[:, 0], b.values)},
        title=w.curve_title,
        x_title=labels[0],
        y_title=labels[-1],
        font_size=font_size,
    )
    spec = fig.to_plotly_json()
    data, layout = spec["data"], spec["layout"]
    data[1]["marker"] = {"size": 9, "color": "#333333"}
    hover = (
        f"{w.query}: %{{x:{HOVER_NUMBER}}}<br>{w.estimate}: %{{y:{HOVER_NUMBER}}}<extra></extra>"
    )
    for tr in data:
        tr["hovertemplate"] = (
            f"{labels[0]}: %{{x:{HOVER_NUMBER}}}<br>"
            f"{labels[-1]}: %{{y:{HOVER_NUMBER}}}<extra>{tr['name']}</extra>"
        )
    # live: the star moves with σ (and may have no estimate)
    if b.supported or regression.by_sigma is not None:
        data.append(
            dict(
                type="scatter",
                x=[q],
                y=[b.estimate if b.supported else None],
                mode="markers",
                name=w.estimate_here.format(q=key_text(b.query)),
                hovertemplate=hover,
                marker=dict(size=16, symbol="star", color=ORANGE),
            )
        )
    layout["shapes"] = [
        dict(type="line", x0=q, x1=q, y0=0, y1=1, yref="paper", line=dict(dash="dot", color=ORANGE))
    ]
    if (sw := regression.by_sigma) is None:
        return _figure(data, layout)
    _header(layout, estimate_text(b.query, b.estimate, w))

    def step(i: int) -> SliderStep:  # the curve and the star at the i-th σ
        return SliderStep(
            {0: {"y": packed(sw.curves[i])}, 2: {"y": [sw.estimates[i]]}},
            {"annotations[0].text": estimate_text(b.query, float(sw.estimates[i]), w)},
        )

    return _sigma_slider(_figure(data, layout), sw, w, step)


def grid_heatmap(
    regression: Regression, labels: Sequence[str], w: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """Weights of a grid of queries (rows) over the keys sorted by value (columns), 1-D keys;
    following σ when the regression carries its sweep."""
    sorted_keys = [key_text(regression.breakdown.keys[i]) for i in regression.order]
    queries = [f"{g:.4g}" for g in regression.grid]

    def draw(weights: np.ndarray) -> go.Figure:
        return heatmap(
            np.round(weights, 3),
            sorted_keys,
            queries,
            title=w.heatmap_title,
            x_title=w.keys_sorted.format(name=labels[0]),
            y_title=w.query_axis.format(name=labels[0]),
            value_name=w.weight,
            digits=2,
            font_size=font_size,
        )

    spec = draw(regression.grid_weights).to_plotly_json()
    spec["layout"]["margin"]["t"] = 150  # the long title above the keys' tick labels
    fig = _figure(spec["data"], spec["layout"])
    if (sw := regression.by_sigma) is None:
        return fig
    labelled = spec["data"][0].get("text") is not None  # heatmap() prints small maps' numbers

    def step(k: int) -> SliderStep:
        (cells,) = draw(sw.grid_weights[k]).to_plotly_json()["data"]  # the heatmap drawn at σ_k
        return SliderStep({0: {"z": cells["z"]} | ({"text": cells["text"]} if labelled else {})})

    return _follow_sigma(fig, sw, step)


def plane_figure(
    regression: Regression, labels: Sequence[str], w: Words = WORDS, font_size: int = 14
) -> go.Figure:
    """2-D keys as points sized by their weight for the query, over the estimate surface, with the
    slider of σ when the regression carries its sweep."""
    b = regression.breakdown
    q = b.query
    lab = labels
    surface = dict(
        type="heatmap",
        x=compact(regression.curve_x),
        y=compact(regression.plane_y),
        z=compact(regression.curve_y),
        colorscale="Viridis",
        opacity=0.55,
        colorbar=dict(title=_title(lab[-1]), thickness=14),
        hovertemplate=(
            f"{lab[0]}: %{{x:{HOVER_NUMBER}}}<br>{lab[1]}: %{{y:{HOVER_NUMBER}}}<br>"
            f"{w.estimate}: %{{z:{HOVER_NUMBER}}}"
            "<extra></extra>"
        ),
    )

    def hover(weights: np.ndarray) -> list[str]:  # (Nk,) weights → one hover text per key
        return [
            f"{w.key} ({key_text(k)})<br>{lab[-1]}: {v:g}<br>{w.weight}: {x:.4f}"
            for k, v, x in zip(b.keys, b.values, weights, strict=True)
        ]

    def size(weights: np.ndarray) -> list[float]:  # a key's marker grows with its weight
        return (8 + 60 * np.sqrt(weights)).tolist()

    keys = dict(
        type="scatter",
        x=compact(b.keys[:, 0]),
        y=compact(b.keys[:, 1]),
        mode="markers+text",
        name=w.keys_sized,
        text=[f"{x:.2f}" for x in b.weights],
        textposition="top center",
        hovertext=hover(b.weights),
        hovertemplate="%{hovertext}<extra></extra>",
        marker=dict(size=size(b.weights), color=BLUE, line=dict(color="white", width=1)),
    )
    star = dict(
        type="scatter",
        x=[float(q[0])],
        y=[float(q[1])],
        mode="markers",
        name=w.query,
        marker=dict(size=18, symbol="star", color=ORANGE, line=dict(color="black", width=1)),
        hovertemplate=f"{w.query} (%{{x:g}}, %{{y:g}})<extra></extra>",
    )
    layout = dict(
        title=_title(w.plane_title),
        xaxis=dict(title=_title(lab[0])),
        yaxis=dict(title=_title(lab[1])),
        height=520,
        font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h", y=-0.15),
    )
    if (sw := regression.by_sigma) is None:
        return _figure([surface, keys, star], layout)
    _header(layout, estimate_text(q, b.estimate, w))
    # the slider goes below
    layout["legend"] = dict(orientation="h", y=1.0, yanchor="bottom", x=1, xanchor="right")

    def step(i: int) -> SliderStep:  # the surface and the keys' sizes at the i-th σ
        weights = sw.breakdowns[i].weights
        return SliderStep(
            {
                0: {"z": packed(sw.curves[i])},
                1: {
                    "marker.size": size(weights),
                    "text": [f"{x:.2f}" for x in weights],
                    "hovertext": hover(weights),
                },
            },
            {"annotations[0].text": estimate_text(q, sw.breakdowns[i].estimate, w)},
        )

    return _sigma_slider(_figure([surface, keys, star], layout), sw, w, step)


def regression_figures(
    regression: Regression, labels: Sequence[str], w: Words = WORDS, font_size: int = 14
) -> list[tuple[go.Figure, str]]:
    """Tab ①'s figures with their PNG names: the weight bars, then the curve and the heatmap (1-D
    keys) or the plane. ``labels`` names the table's columns (key features…, value)."""
    if regression.breakdown.keys.shape[1] == 1:
        more = [
            (fit_figure(regression, labels, w, font_size), "kernel_fitted_curve"),
            (grid_heatmap(regression, labels, w, font_size), "kernel_weights_heatmap"),
        ]
    else:
        more = [(plane_figure(regression, labels, w, font_size), "kernel_plane")]
    return [(weight_bars(regression, labels, w, font_size), "kernel_weights_bars"), *more]


def score_maps(
    r: ScoredAttention,
    names: tuple[Sequence[str], Sequence[str]],
    titles: Sequence[str],
    w: Words = WORDS,
    font_size: int = 14,
) -> list[tuple[go.Figure, str]]:
    """Heatmaps of a scored attention ``r`` (queries × keys) with their PNG suffixes: the scores
    when ``titles`` has two entries (scores title, weights title), then the weights. ``names`` =
    (key names, query names)."""
    common = dict(x_title=w.key, y_title=w.query, font_size=font_size)
    out = (
        [
            (
                heatmap(
                    r.scores,
                    *names,
                    title=titles[0],
                    value_name=w.score,
                    weights=False,
                    digits=2,
                    **common,
                ),
                "scores",
            )
        ]
        if len(titles) > 1
        else []
    )
    return out + [
        (
            heatmap(
                np.round(r.weights, 3),
                *names,
                title=titles[-1],
                value_name=w.weight,
                digits=3,
                **common,
            ),
            "weights",
        )
    ]


def loo_figure(regression: Regression, w: Words = WORDS, font_size: int = 14) -> go.Figure:
    """Leave-one-out error against σ (log axis), the fitted σ (dashed) and the current σ (a point,
    following σ when the regression carries its sweep)."""
    fit = regression.fit
    errors = np.where(np.isfinite(fit.errors), fit.errors, np.nan)
    now = {
        w.current_sigma.format(sigma=f"{regression.sigma:.4g}"): (
            [regression.sigma],
            [regression.loo_current],
        )
    }
    sw = regression.by_sigma
    fig = curves(
        fit.grid,
        {w.loo_error: errors},
        title=w.loo_title,
        x_title=w.sigma,
        y_title=w.loo_error,
        font_size=font_size,
        # the current σ's point (a gap where its error is not finite); live, always there
        markers=now if sw is not None or np.isfinite(regression.loo_current) else None,
    )
    spec = fig.to_plotly_json()
    layout = spec["layout"]
    layout["xaxis"]["type"] = "log"
    layout["shapes"] = [
        dict(
            type="line",
            x0=fit.sigma,
            x1=fit.sigma,
            y0=0,
            y1=1,
            yref="paper",
            line=dict(dash="dash", color=GREEN),
        )
    ]
    # inside the plot, beside the dashed line (above it the label would cover the figure's title on
    # a projector)
    layout["annotations"] = [
        dict(
            x=float(np.log10(fit.sigma)),
            y=0.98,
            yref="paper",
            text=w.fitted_sigma.format(sigma=f"{fit.sigma:.4g}"),
            showarrow=False,
            xanchor="left",
            yanchor="top",
            xshift=4,
            font=dict(color=GREEN),
        )
    ]
    fig = _figure(spec["data"], layout)
    if sw is None:
        return fig

    def step(k: int) -> SliderStep:
        sigma, error = float(sw.values[k]), float(sw.loo[k])
        point = {"x": [sigma], "y": [error if np.isfinite(error) else None]}
        return SliderStep({1: point | {"name": w.current_sigma.format(sigma=f"{sigma:.4g}")}})

    return _follow_sigma(fig, sw, step)
