"""visattn.figures.live (and the grids of visattn.display): the in-figure slider's structure, each
step checked against values computed here."""

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from visattn.controls import Control
from visattn.display import even_grid, log_grid, with_value
from visattn.figures.live import SliderStep, add_slider, live, packed, plain, rounded


def test_with_value_inserts_the_value_exactly():
    assert with_value([1.0, 2.0, 3.0], 2.0) == ((1.0, 2.0, 3.0), 1)
    assert with_value([3.0, 1.0, 2.0], 2.25) == ((1.0, 2.0, 2.25, 3.0), 2)
    assert with_value([1.0, 2.0], 0.5) == ((0.5, 1.0, 2.0), 0)


def test_even_grid_takes_slider_values():
    assert even_grid(50.0, 80.0, 0.5, most=101) == tuple(50.0 + 0.5 * k for k in range(61))
    # no 0.15000000000000002
    assert even_grid(0.0, 0.3, 0.05) == (
        0.0,
        0.05,
        0.1,
        0.15,
        0.2,
        0.25,
        0.3,
    )
    g = even_grid(0.0, 10.0, 0.05, most=11)
    assert g == tuple(float(k) for k in range(11))
    # 220 steps, every 2.2nd
    assert even_grid(100.0, 320.0, 1.0, most=101) == tuple(
        100.0 + round(220 * j / 100) for j in range(101)
    )


def test_log_grid_is_geometric_and_on_step():
    g = log_grid(0.1, 10.0, 0.1, most=5)  # 0.1, 0.316, 1, 3.16, 10 → rounded to 0.1
    assert g == (0.1, 0.3, 1.0, 3.2, 10.0)


def test_plain_rounds_and_gaps():
    assert plain(np.array([1 / 3, np.nan, np.inf]), 3) == [0.333, None, None]
    assert plain(np.array([1 / 3, 2.0]), 3).tolist() == [0.333, 2.0]
    assert plain(np.float32(0.1), 6) == 0.1
    assert plain(["a", 2.0]) == ["a", 2.0]
    assert plain(["a", "b"]).tolist() == ["a", "b"]


def _figure(q: float) -> go.Figure:
    keys = np.array([60.0, 64.0, 68.0])
    s = -((q - keys) ** 2) / 2
    w = np.exp(s - s.max())
    w = w / w.sum()
    return go.Figure(
        [
            go.Bar(x=["60", "64", "68"], y=w, marker=dict(color=["blue"] * 3)),
            go.Scatter(x=[q], y=[1.0]),
        ],
        layout=dict(
            title=dict(text=f"q = {q:g}"),
            annotations=[dict(text=f"f = {w @ [110, 115, 126]:.4f}", x=0, y=1)],
        ),
    )


def _step(q: float) -> SliderStep:
    keys = np.array([60.0, 64.0, 68.0])
    s = -((q - keys) ** 2) / 2
    w = np.exp(s - s.max())
    w = w / w.sum()
    return SliderStep(
        {0: {"y": w}, 1: {"x": [q]}},
        {"title.text": f"q = {q:g}", "annotations[0].text": f"f = {w @ [110, 115, 126]:.4f}"},
    )


QUERY = Control("t_q", 62.0, lo=50.0, hi=80.0, step=0.5, in_figure=True)
SIGMA = Control("t_sigma", 1.0, lo=0.1, hi=5.0, step=0.1, in_figure=True)


def test_steps_carry_each_values_own_numbers():
    fig = live(
        _figure(62.0),
        QUERY,
        label="query = ",
        grid=[50.0, 60.0, 70.0, 80.0],
        value=62.0,
        step=_step,
    )
    spec = json.loads(fig.to_json())  # what the browser gets
    (slider,) = spec["layout"]["sliders"]
    assert slider["active"] == 2  # 50, 60, 62, 70, 80: the current value is the third
    assert [s["label"] for s in slider["steps"]] == ["50", "60", "62", "70", "80"]
    assert slider["currentvalue"]["prefix"] == "query = "
    assert slider["name"] == "t_q"  # the browser finds the control's slider by its URL key
    # each step's value is what the address holds at that position
    assert [s["value"] for s in slider["steps"]] == ["50", "60", "62", "70", "80"]
    for q, s in zip([50.0, 60.0, 62.0, 70.0, 80.0], slider["steps"], strict=True):
        data, layout, traces = s["args"]
        assert s["method"] == "update" and traces == [0, 1]
        # by hand: weights of the waist example at q, σ = 1
        d = [(q - k) ** 2 / 2 for k in (60.0, 64.0, 68.0)]
        e = [math.exp(-(x - min(d))) for x in d]
        want = [x / sum(e) for x in e]
        np.testing.assert_allclose(data["y"][0], want, rtol=1e-5, atol=1e-12)
        assert data["x"][1] == [q]
        assert data["y"][1] == [1.0]  # trace 1's y is not in the step: the figure's own
        assert data["x"][0] == ["60", "64", "68"]  # trace 0's x likewise
        assert layout["title.text"] == f"q = {q:g}"
        assert (
            layout["annotations[0].text"]
            == f"f = {sum(a * b for a, b in zip(want, (110, 115, 126), strict=True)):.4f}"
        )
    # the active step shows what the figure shows
    assert slider["steps"][2]["args"][1]["title.text"] == spec["layout"]["title"]["text"]


def test_hidden_tick_labels_and_room_below():
    fig = _figure(62.0)
    fig.update_layout(height=300, margin=dict(b=20))
    fig = add_slider(
        fig, SIGMA, label="σ = ", values=[1.0], steps=[_step(1.0)], active=0, margin=80
    )
    assert fig.layout.height == 380 and fig.layout.margin.b == 100
    assert fig.layout.sliders[0].font.color == "rgba(0,0,0,0)"
    assert fig.layout.sliders[0].currentvalue.font.color != "rgba(0,0,0,0)"


def test_a_widget_of_the_page_is_no_figure_slider():
    widget = Control("t_w", 1.0, lo=0.0, hi=2.0)
    with pytest.raises(ValueError, match="widget of the page"):
        add_slider(_figure(62.0), widget, label="", values=[1.0], steps=[_step(1.0)], active=0)


def test_steps_must_agree():
    with pytest.raises(ValueError):
        add_slider(
            _figure(62.0),
            SIGMA,
            label="",
            values=[1.0, 2.0],
            steps=[_step(1.0), SliderStep({0: {"y": [1, 2, 3]}})],
            active=0,
        )
    with pytest.raises(ValueError):
        add_slider(_figure(62.0), SIGMA, label="", values=[1.0], steps=[_step(1.0)], active=1)
    with pytest.raises(ValueError):
        add_slider(_figure(62.0), SIGMA, label="", values=[1.0, 2.0], steps=[_step(1.0)], active=0)


def test_rounded_prints_short():
    rng = np.random.default_rng(0)
    a = np.concatenate(
        [rng.normal(0, 1, 500) * 10.0 ** rng.integers(-12, 12, 500), [0.0, 112.5, -3e-7, 1e20]]
    )
    r = rounded(a, 6)
    for x, y in zip(a, r, strict=True):
        # the same number as formatting with 6 digits, printed as short
        assert repr(float(y)) == repr(float(f"{x:.6g}"))


def test_packed_is_plotlys_typed_array():
    import base64

    a = np.array([[1.5, np.nan, -2.0], [0.1, 3.0, 4.0]])
    spec = packed(a)
    assert spec["dtype"] == "f4" and spec["shape"] == "2, 3"
    back = np.frombuffer(base64.b64decode(spec["bdata"]), dtype="<f4").reshape(2, 3)
    np.testing.assert_array_equal(back, a.astype(np.float32))
    assert "shape" not in packed([1.0, 2.0]) and plain(spec) is spec  # passed through as it is
