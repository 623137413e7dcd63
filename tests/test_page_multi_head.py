"""Multi-head page through AppTest: the designed heads in every view, random heads, bad input, URL, Chinese."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_util import array, assert_clean, errors, figures, run_page, texts, warnings

from visattn.models import designed

TOKENS = "The animal didn't cross the street because it was too tired .".split()
WIDE = "The animal didn't cross the street because it was too wide."


def title(fig: dict) -> str:
    t = fig["layout"].get("title")
    return (t.get("text") if isinstance(t, dict) else t) or ""


def bar_figs(at) -> dict[str, np.ndarray]:
    """Focus bars by title ("Coreference: it → animal (0.96)") → the weights drawn."""
    return {title(f): array(f["data"][0]["y"]) for f in figures(at) if f["data"] and f["data"][0]["type"] == "bar"}


def focus_weights(at, head: str) -> np.ndarray:
    (w,) = [y for name, y in bar_figs(at).items() if name.startswith(head)]
    return w


def grid_fig(at) -> dict:
    (fig,) = [f for f in figures(at) if f["data"] and f["data"][0]["type"] == "heatmap" and len(f["data"]) > 1]
    return fig


@pytest.fixture(scope="module")
def default_page():
    at = run_page("multi_head")
    assert_clean(at)
    return at


def test_defaults_show_it_animal_and_it_tired(default_page):
    at = default_page
    assert not errors(at) and not warnings(at)
    it, animal, tired = TOKENS.index("it"), TOKENS.index("animal"), TOKENS.index("tired")
    # the grid: all four heads of layer 2 on one 0…1 colour axis
    grid = grid_fig(at)
    assert len(grid["data"]) == 4 and {d.get("coloraxis") for d in grid["data"]} == {"coloraxis"}
    assert grid["layout"]["coloraxis"]["cmin"] == 0 and grid["layout"]["coloraxis"]["cmax"] == 1
    assert [a["text"] for a in grid["layout"]["annotations"]] == ["Coreference", "State", "Previous token", "Broad"]
    coref = array(grid["data"][0]["z"]).reshape(len(TOKENS), len(TOKENS))
    assert coref[it, animal] >= 0.5
    # token focus: "it" in every head; coreference → animal, state → tired, both clearly
    assert at.selectbox(key="mh_tok").value == it
    bars = bar_figs(at)
    assert len(bars) == 4
    assert focus_weights(at, "Coreference")[animal] >= 0.5
    assert focus_weights(at, "State")[tired] >= 0.5
    assert any(name.startswith("Coreference: it → animal") for name in bars)
    assert any(name.startswith("State: it → tired") for name in bars)
    # and the numbers are the designed model's, layer 2
    r = designed.run(" ".join(TOKENS))
    np.testing.assert_allclose(focus_weights(at, "State"), r.head(1, "state")[it], atol=1e-6)
    # the line view: one colour per head, lines of "it" only by default
    (lines,) = [f for f in figures(at) if any(d.get("mode") == "lines" for d in f["data"])]
    assert {d["name"] for d in lines["data"] if d.get("mode") == "lines"} == {"Coreference", "State", "Previous token",
                                                                               "Broad"}
    assert all(y in (it, None) for d in lines["data"] if d.get("mode") == "lines" for y in d["y"][0::3])
    # one head large, with its CSV
    assert at.selectbox(key="mh_head").value == 0
    assert at.get("download_button")
    assert "Coreference" in texts(at) and "tired → needs something animate" in texts(at)


def test_shape_explorer_shows_gpt3(default_page):
    metrics = {m.label: m.value for m in default_page.metric}
    assert metrics["d_head"] == "128"
    assert metrics["Parameters per layer (attention)"] == "603,979,776"
    assert "4 × 12,288² = 4 × 150,994,944 = 603,979,776" in texts(default_page)
    assert "96 blocks of (12,288, 128)" in texts(default_page)
    table = default_page.table[0].value
    shapes = dict(zip(table.index, table.iloc[:, 0]))
    assert list(table.index)[-4:] == ["W_o", "MHA", "residual", "Z"]     # every row of the block, none hidden
    assert shapes["W_q_h"] == "(12,288, 128)" and shapes["A"] == "(96, 50, 50)"


def test_wide_preset_moves_coreference_to_street_in_layer_2():
    at = run_page("multi_head")
    at.button(key="mh_text__preset_wide").click().run()
    assert_clean(at)
    assert at.text_input(key="mh_text").value == WIDE
    tokens = WIDE.replace(".", " .").split()
    assert focus_weights(at, "Coreference")[tokens.index("street")] >= 0.5
    assert focus_weights(at, "State")[tokens.index("wide")] >= 0.5
    at.radio(key="mh_layer").set_value(1).run()          # layer 1 has not read the adjective's demand yet
    assert focus_weights(at, "Coreference")[tokens.index("animal")] >= 0.5
    assert at.query_params["mh_layer"] == ["1"] or at.query_params["mh_layer"] == "1"


@pytest.mark.parametrize("text, expected", [
    ("", "empty"),
    ("   ", "empty"),
    (" ".join(["word"] * 300), "300 tokens"),
])
def test_bad_text_gives_a_clear_message(text, expected):
    at = run_page("multi_head")
    at.text_input(key="mh_text").input(text).run()
    assert_clean(at)
    (err,) = errors(at)
    assert expected in err
    assert "Showing the last view that worked" in texts(at)   # the previous good view stays, marked


def test_bad_text_on_first_load_still_renders_the_page():
    at = run_page("multi_head", {"mh_text": " ".join(["word"] * 300)})
    assert_clean(at)
    assert any("300 tokens" in e and "64" in e for e in errors(at))
    assert not bar_figs(at)
    assert {m.label: m.value for m in at.metric}["d_head"] == "128"   # the shape explorer still works


def test_unknown_words_are_listed():
    at = run_page("multi_head", {"mh_text": "The zebra didn't cross the street because it was too cold."})
    assert_clean(at)
    (note,) = [str(i.value) for i in at.info]
    assert "zebra" in note and "cold" in note and "street" not in note


def test_random_heads_and_indivisible_heads():
    at = run_page("multi_head", {"mh_src": "random"})
    assert_clean(at)
    assert not errors(at)
    bars = bar_figs(at)
    assert len(bars) == 4 and all(w.max() < 0.5 for w in bars.values())   # untrained heads are diffuse
    assert "Random heads have no reason" in texts(at)
    at.number_input(key="mh_d").set_value(30).run()
    assert_clean(at)
    (err,) = errors(at)
    assert "d_model = 30" in err and "n_heads = 4" in err and "not divisible" in err and "1, 2, 3, 5, 6, 10, 15, 30" in err
    at.number_input(key="mh_h").set_value(5).run()
    assert not errors(at)
    assert len(bar_figs(at)) == 5
    at.number_input(key="mh_h").set_value(10).run()       # more than 8 heads: one heatmap of "it" per head
    assert not errors(at) and not bar_figs(at)
    assert any(title(f).startswith("Weights of “it”") for f in figures(at))


def test_shape_explorer_refuses_indivisible_heads():
    at = run_page("multi_head", {"mh_sH": "97"})
    assert_clean(at)
    (err,) = errors(at)
    assert "d_model = 12288" in err and "n_heads = 97" in err and "not divisible" in err
    at.button(key="mh_shapes_gpt3").click().run()
    assert not errors(at) and {m.label: m.value for m in at.metric}["d_head"] == "128"
    at.button(key="mh_shapes_here").click().run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["d_head"] == "8" and metrics["Parameters per layer (attention)"] == f"{4 * 32 ** 2:,}"


def test_pipeline_shows_every_step_with_its_shape():
    at = run_page("multi_head", {"mh_pipe": "1", "mh_layer": "1"})
    assert_clean(at)
    titles = [title(f) for f in figures(at)]
    for want in ("X: (12, 32)", "PE: (12, 8)", "Q₁: (12, 8)", "K₁: (12, 8)", "V₁: (12, 8)", "A₁: (12, 12)",
                 "head₁ = A₁V₁: (12, 8)", "concat: (12, 32)", "W_O: (32, 32)", "MHA(X) = concat · W_O: (12, 32)",
                 "X + MHA(X): (12, 32)", "Z = LayerNorm: (12, 32)"):
        assert want in titles, want


def test_url_round_trip():
    at = run_page("multi_head")
    at.button(key="mh_text__preset_high").click().run()
    at.radio(key="mh_layer").set_value(1).run()
    at.selectbox(key="mh_head").set_value(1).run()
    at.selectbox(key="mh_tok").set_value(1).run()
    at.checkbox(key="mh_v3").uncheck().run()
    at.toggle(key="mh_lfoc").set_value(False).run()
    at.number_input(key="mh_sT").set_value(7).run()
    assert_clean(at)
    params = {k: at.query_params[k] for k in at.query_params}
    params = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
    assert params["mh_text"].startswith("The cat") and params["mh_layer"] == "1" and params["mh_head"] == "1"
    assert params["mh_tok"] == "1" and params["mh_v3"] == "0" and params["mh_lfoc"] == "0" and params["mh_sT"] == "7"
    again = run_page("multi_head", params)
    assert_clean(again)
    assert not warnings(again)
    assert again.text_input(key="mh_text").value == at.text_input(key="mh_text").value
    assert again.selectbox(key="mh_tok").value == 1 and again.selectbox(key="mh_head").value == 1
    assert again.checkbox(key="mh_v3").value is False
    assert [title(f) for f in figures(again)] == [title(f) for f in figures(at)]
    assert bar_figs(again).keys() == bar_figs(at).keys()


def test_focus_returns_to_the_pronoun_when_the_sentence_changes():
    at = run_page("multi_head", {"mh_tok": "2"})
    assert at.selectbox(key="mh_tok").value == 2
    at.text_input(key="mh_text").input("The dog saw the cat because it was hungry.").run()
    assert at.selectbox(key="mh_tok").value == 6           # "it"
    assert "mh_tok" not in at.query_params


def test_tampered_url_falls_back_with_a_warning():
    at = run_page("multi_head", {"mh_src": "evil", "mh_layer": "7", "mh_d": "abc", "mh_tok": "99",
                                 "mh_sD": "-5", "mh_zzz": "1"})
    assert_clean(at)
    (w,) = warnings(at)
    w = w.replace("\\_", "_")                               # names are markdown-escaped
    for name in ("mh_src", "mh_layer", "mh_d", "mh_tok", "mh_sD", "mh_zzz"):
        assert name in w
    assert not errors(at)
    assert at.radio(key="mh_src").value == "designed" and at.radio(key="mh_layer").value == 2
    assert at.selectbox(key="mh_tok").value == TOKENS.index("it")
    assert focus_weights(at, "Coreference")[TOKENS.index("animal")] >= 0.5


def test_chinese():
    at = run_page("multi_head", {"lang": "zh", "mh_src": "random", "mh_d": "30"})
    assert_clean(at)
    assert at.title[0].value == "多头注意力"
    (err,) = errors(at)
    assert "不能被 n_heads = 4 整除" in err
    at = run_page("multi_head", {"lang": "zh"})
    assert_clean(at)
    assert "指代" in texts(at) and "状态" in texts(at)
    assert any(name.startswith("指代：it → animal") for name in bar_figs(at))
    assert any(name.startswith("状态：it → tired") for name in bar_figs(at))
    assert "每层参数量（注意力）" in {m.label for m in at.metric}
