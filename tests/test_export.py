"""The lecture's export and predict-then-reveal, without the app: a figure drawn without its numbers
(and colours), never touching the shared figure; a standalone HTML file with plotly.js inside and no
address to fetch; a page's zip. Opening the HTML from disk offline and dragging its slider:
tests/test_browser_lecture.py."""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import plotly.graph_objects as go

from visattn import export
from visattn.figures import heatmap


def weights_figure() -> go.Figure:
    fig = heatmap(np.array([[0.25, 0.75], [0.5, 0.5]]), ["a", "b"], ["a", "b"], font_size=20)
    fig.add_annotation(text="estimate f(62) = 112.5", x=0, y=0, showarrow=False)
    fig.add_annotation(text="0.75", x=1, y=0, showarrow=False)
    return fig


def test_numbers_hidden_and_the_shared_figure_untouched():
    fig = weights_figure()
    before = fig.to_json()
    hidden = export.without_numbers(fig)
    assert fig.to_json() == before  # the cached figure is shared: never modified
    trace = hidden.data[0]
    assert trace.text is None and trace.texttemplate is None
    assert "%{z" not in trace.hovertemplate
    assert [a.text for a in hidden.layout.annotations] == ["estimate f(62) = ?", ""]
    np.testing.assert_array_equal(np.asarray(trace.z), np.asarray(fig.data[0].z))  # colours stay
    assert trace.colorscale == fig.data[0].colorscale


def test_colours_hidden_too():
    hidden = export.without_numbers(weights_figure(), colours=True)
    trace = hidden.data[0]
    assert {c for _, c in trace.colorscale} == {export.HIDDEN_GREY}
    assert trace.showscale is False


def test_standalone_html_needs_no_server_and_no_network():
    fig = weights_figure()
    page = export.standalone_html(fig, "visattn <weights>", "zh")
    assert page.startswith("<!DOCTYPE html>") and '<html lang="zh">' in page
    assert "<title>visattn &lt;weights&gt;</title>" in page
    assert len(page) > 1_000_000  # plotly.js itself, inlined
    assert not re.search(r"<script[^>]+src=", page)  # nothing loaded from anywhere
    assert "Plotly.newPlot(" in page and '"type":"heatmap"' in page


def test_a_pages_zip_holds_every_figure_as_html_and_json():
    figures = {"visattn_a": weights_figure(), "visattn_b": temperature_heatmap_figure()}
    archive = zipfile.ZipFile(io.BytesIO(export.figures_zip(figures, "en")))
    assert sorted(archive.namelist()) == [
        "visattn_a.html",
        "visattn_a.json",
        "visattn_b.html",
        "visattn_b.json",
    ]
    back = go.Figure(json.loads(archive.read("visattn_b.json")))
    assert len(back.layout.sliders[0].steps) == len(figures["visattn_b"].layout.sliders[0].steps)


def temperature_heatmap_figure() -> go.Figure:
    """A figure with an in-figure slider: each position restyles the heatmap (no server)."""
    scores = np.array([[1.0, 2.0], [0.5, -1.0]])
    fig = heatmap(scores, ["a", "b"], ["a", "b"], weights=False)
    steps = [
        {"method": "restyle", "label": str(tau), "args": [{"z": [(scores / tau).tolist()]}]}
        for tau in (0.5, 1.0, 2.0)
    ]
    fig.update_layout(sliders=[{"active": 1, "steps": steps}])
    return fig
