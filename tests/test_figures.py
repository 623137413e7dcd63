"""Figure builders: their output passes Plotly's full validation, and their labels and numbers are
right.

The builders skip validation for speed (``visattn.figures._figure``); these tests validate every
builder's output once, over the options the pages use."""

import numpy as np
import plotly.graph_objects as go
import pytest

from visattn import figures

TOKENS = ["The", "cat", "saw", "the", "cat", "."]
W = np.random.default_rng(0).dirichlet(np.ones(6), size=(2, 3, 6))  # (2, 3, 6, 6) rows sum to 1


def validated(fig: go.Figure) -> go.Figure:
    """Plotly's own validation of everything the builder wrote (raises ValueError on a bad
    property)."""
    return go.Figure(fig.to_dict())


BUILDS = {
    "heatmap weights": lambda: figures.heatmap(
        W[0, 0], TOKENS, TOKENS, title="t", x_title="key", y_title="query"
    ),
    "heatmap signed": lambda: figures.heatmap(
        W[0, 0] - 0.2, TOKENS, TOKENS, weights=False, value_name="score"
    ),
    "heatmap masked": lambda: figures.heatmap(
        W[0, 0], TOKENS, TOKENS, masked=~np.tril(np.ones((6, 6), bool))
    ),
    "heatmap large": lambda: figures.heatmap(
        np.random.default_rng(1).random((60, 50)), weights=False
    ),
    "head grid": lambda: figures.head_grid(
        W, TOKENS, TOKENS, row_titles=["L0", "L1"], col_titles=["a", "b", "c"]
    ),
    "head grid custom scale": lambda: figures.head_grid(
        -W, zmin=-1, zmax=0, colorscale="Blues_r", title="bias"
    ),
    "token lines": lambda: figures.token_lines(
        W[0], TOKENS, head_names=["a", "b", "c"], visible=[0, 2], title="l"
    ),
    "bars": lambda: figures.bars(
        TOKENS, W[0, 0, 1], highlight=2, ymax=1.1, fixed=True, label_min=0.05
    ),
    "curves": lambda: figures.curves(
        np.arange(5), {"a": np.arange(5) ** 2}, markers={"q": ([2], [4])}, title="c"
    ),
}


@pytest.mark.parametrize("name", BUILDS)
def test_builder_output_passes_plotly_validation(name):
    fig = validated(BUILDS[name]())
    assert fig.data


def test_repeated_tokens_stay_distinct_and_read_the_same():
    fig = figures.heatmap(W[0, 0], TOKENS, TOKENS)
    xs = list(fig.data[0].x)
    assert len(set(xs)) == 6 and [x.rstrip("\u200b") for x in xs] == TOKENS


def test_weights_read_as_fixed_decimals_and_masked_cells_are_veiled():
    m = np.array([[0.9973, 0.0027], [0.5, 0.5]])
    fig = figures.heatmap(m, masked=np.array([[False, True], [False, False]]))
    assert fig.data[0].text[0][0] == "1.00" and list(fig.data[0].text[1]) == ["0.50", "0.50"]
    assert fig.data[0].text[0][1] == "✕"
    veil = np.asarray(fig.data[1].z, dtype=float)
    assert veil[0, 1] == 1 and np.isnan(veil[0, 0])
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_head_grid_leaves_padding_cells_blank():
    w = np.full((2, 2, 3, 3), np.nan)
    w[0] = 1 / 3
    w[1, 0] = 1 / 3
    fig = figures.head_grid(w, cell_titles=["h1", "h2", "h3", ""])
    assert [tr.name for tr in fig.data] == ["h1", "h2", "h3"]
    assert fig.layout.xaxis4.visible is False
    assert (
        fig.layout.xaxis2.showticklabels is True
    )  # the cell below head 2 is blank: head 2 is the bottom row


def test_arrays_go_to_the_browser_as_float32_unless_they_would_overflow():
    assert figures.compact([1.0, 2.0]).dtype == np.float32
    assert figures.compact([1.0, 1e308]).dtype == np.float64


def test_token_lines_legend_is_full_colour_and_labels_stand_clear():
    """Each head's legend swatch at full colour (not the faint opacity of its weakest
    lines), once per head; the tokens start beyond the lines' ends."""
    w = np.full((3, 4, 4), 0.25)  # every line at opacity 0.3
    fig = figures.token_lines(w, ["a", "b", "c", "d"], head_names=["H1", "H2", "H3"]).to_dict()
    legend = [d for d in fig["data"] if d.get("showlegend", True) and d.get("mode") == "lines"]
    assert [d["name"] for d in legend] == ["H1", "H2", "H3"]
    assert all(d.get("opacity", 1) == 1 and d["line"]["color"] for d in legend)
    lines = [d for d in fig["data"] if d.get("mode") == "lines" and d not in legend]
    assert lines and all(d["opacity"] < 1 for d in lines)
    ends = [x for d in lines for x in d["x"] if x is not None]
    labels = [d for d in fig["data"] if d.get("mode") == "text"]
    left, right = (set(d["x"]) for d in labels)
    assert max(left) < min(ends) and min(right) > max(ends)


@pytest.mark.parametrize("name", BUILDS)
def test_every_figure_carries_its_own_look(name, monkeypatch):
    """The figures look the same wherever they are drawn (app, notebook, exported file): their own
    template, whatever default Plotly has (Streamlit sets its own on import)."""
    import plotly.io as pio

    monkeypatch.setattr(pio.templates, "default", "plotly")
    layout = validated(BUILDS[name]()).layout
    assert layout.template.layout.font.family == '"Source Sans", sans-serif'
    assert layout.template.layout.paper_bgcolor == "#FFFFFF"
    assert layout.template.layout.colorway[0] == "#0068c9"


@pytest.mark.parametrize("name", BUILDS)
def test_the_hover_label_is_as_large_as_the_figure_text(name):
    """On a projector (text at 20 px) a hover label at the template's 12 px cannot be read from
    the back of the room: every figure's hover label takes the figure's font size."""
    layout = validated(BUILDS[name]()).layout
    assert layout.font.size
    assert layout.hoverlabel.font.size == layout.font.size


def test_the_app_draws_figures_in_their_own_look():
    """Every ``st.plotly_chart`` of the app passes ``theme=None``: Streamlit's chart theme would
    re-theme each figure's JSON in the browser on every redraw (benchmarks/README.md, interact.py)
    and the figures already carry that look."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    calls = []
    for path in [*root.glob("pages/*.py"), *root.glob("ui/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "plotly_chart":
                theme = [k.value for k in node.keywords if k.arg == "theme"]
                calls.append((path.name, len(theme) == 1 and ast.literal_eval(theme[0]) is None))
    assert calls and all(ok for _, ok in calls), calls


def test_label_room_is_estimated_per_character_and_for_each_script():
    from visattn.figures.core import _bottom_margin, _label_px, _left_margin

    # "the": t narrow (0.32 em), h and e 0.56 em; Chinese characters one em; repeat markers none
    assert _label_px(["the"], 10) == pytest.approx(14.4)
    assert _label_px(["注意力", "a"], 14) == pytest.approx(42.0)
    assert _label_px(["the\u200b\u200b"], 10) == _label_px(["the"], 10)
    # the room: 24 + font/2 beyond the labels, and 18 + font for an axis title beside them
    assert _left_margin(["注意力"], 14, title=False) == int(24 + 7 + 42)
    assert _left_margin(["注意力"], 14, title=True) == int(24 + 7 + 42 + 32)
    # slanted 60° below: the label's width × sin 60° plus its line height × cos 60°
    assert _bottom_margin(["注意力"], 14, 60) == int(31 + 4.2 + 42 * 3**0.5 / 2 + 1.2 * 14 / 2)


def test_a_heatmap_leaves_room_for_its_row_labels_before_plotly_measures_them():
    short = figures.heatmap(np.eye(2), ["a", "b"], ["a", "b"], font_size=14)
    long = figures.heatmap(np.eye(2), ["a", "b"], ["注意力机制", "b"], font_size=14)
    assert long.layout.margin.l - short.layout.margin.l == int(24 + 7 + 70 + 32) - int(
        24 + 7 + 0.56 * 14 + 32
    )
    grid = figures.head_grid(np.eye(2)[None, None], ["注意力", "b"], ["注意力", "b"], font_size=14)
    assert grid.layout.margin.l == int(24 + 7 + 42)
