"""ui.charts.figure_json: a figure's JSON made once per figure object, forgotten with it."""

import gc
import json

import plotly.graph_objects as go
import plotly.io

from ui import charts


def bars(values: list[float]) -> go.Figure:
    return go.Figure(go.Bar(x=["a", "b", "c"], y=values))


def test_same_json_as_plotly():
    fig = bars([1.5, 2.0, 3.25])
    assert json.loads(charts.figure_json(fig)) == json.loads(plotly.io.to_json(fig))


def test_made_once_per_figure(monkeypatch):
    made = []
    real = plotly.io.to_json

    def counting(fig, **kwargs):
        made.append(id(fig))
        return real(fig, **kwargs)

    monkeypatch.setattr(plotly.io, "to_json", counting)
    first, second = bars([1, 2, 3]), bars([4, 5, 6])
    texts = [charts.figure_json(f) for f in (first, second, first, second, first)]
    assert made == [id(first), id(second)]
    assert texts[0] == texts[2] == texts[4] != texts[1] == texts[3]
    assert json.loads(texts[1])["data"][0]["y"] == [4, 5, 6]


def test_forgotten_with_the_figure():
    gc.collect()  # the figures of the tests before
    before = len(charts._JSON)
    for k in range(50):
        fig = bars([k, k + 1, k + 2])
        # a figure made where an earlier one was (the same id) gets its own JSON
        assert json.loads(charts.figure_json(fig))["data"][0]["y"] == [k, k + 1, k + 2]
        del fig
        gc.collect()
    assert len(charts._JSON) == before
