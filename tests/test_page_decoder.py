"""The decoder page through AppTest: defaults, the cache animation (its step the figure's own
slider, the numbers under it following), the cost panel, the induction circuit and its ablation,
examples, bad input in English and Chinese, a tampered URL, and the Chinese views. The decoder that
learns is the training page's (tests/test_page_training.py, which also opens this page's old links
that carry training values)."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from apptest_util import (
    ROOT,
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    followers,
    metrics,
    qp,
    run_page,
    shown,
    texts,
    warnings,
)

from visattn.lessons import decoder as lesson
from visattn.models import induction

CJK = re.compile(r"[\u4e00-\u9fff]")


def step_numbers(at) -> dict[str, str]:
    """The numbers under the KV-cache animation as the server drew them: the elements that follow
    its step, each at the server's step."""
    versions = [shown(data) for data in followers(at).values() if data["control"] == "dec_step"]
    return {version["metric"]["label"]: version["metric"]["value"] for version in versions}


def step_slider(at) -> dict:
    """The KV-cache animation's own slider (the control dec_step)."""
    (anim,) = [f for f in figures(at) if f.get("frames")]
    (slider,) = anim["layout"]["sliders"]
    return slider


def by_kind(at):
    figs = figures(at)
    grid = [
        f
        for f in figs
        if len(f["data"]) == 2 and all(d.get("coloraxis") == "coloraxis" for d in f["data"])
    ]
    anim = [f for f in figs if f.get("frames")]
    return figs, grid, anim


def test_defaults_show_every_section():
    at = run_page("decoder")
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    assert not at.query_params  # defaults leave the URL clean
    tokens = induction.repeated_sequence(lesson.DEFAULT_N, lesson.DEFAULT_SEED)
    T = len(tokens)
    figs, (grid,), (anim,) = by_kind(at)
    # the causal mask: weights 0 above the diagonal, the future veiled
    causal = array(figs[0]["data"][0]["z"]).reshape(T, T)
    assert (causal[np.triu_indices(T, 1)] == 0).all() and len(figs[0]["data"]) == 2
    # the cache animation: one frame per step, starting at step 5 with 5 cached rows
    assert len(anim["frames"]) == T and anim["layout"]["sliders"][0]["active"] == 4
    k = array(anim["data"][0]["z"]).reshape(T, -1)
    assert np.isfinite(k[:5]).all() and np.isnan(k[5:]).all()
    numbers = step_numbers(at)
    assert (
        numbers["Keys read by this step's query"] == "5"
        and numbers["Rows in the cache"] == f"5 / {T}"
    )
    m = metrics(at)
    # cost panel: GPT-3 at 2,048 tokens by default; 2 · 96 · 2048 · 12288 · 2 bytes = 9.66 GB
    assert m["KV cache of one sequence"] == "9.66 GB" and m["Keys read at the last step"] == "2,048"
    memory = at.dataframe[0].value
    assert list(memory.index) == ["GPT-2 small", "GPT-3 175B"] and list(memory.columns) == [
        "1,024 tokens",
        "2,048 tokens",
        "8,192 tokens",
    ]
    # decimal units (1 GB = 10⁹ B), † where the length is beyond the model's own context
    assert memory.iloc[1, 2] == f"{2 * 96 * 8192 * 12288 * 2 / 1e9:.1f} GB †" == "38.7 GB †"
    assert memory.iloc[0, 0] == f"{2 * 12 * 1024 * 768 * 2 / 1e6:.1f} MB" == "37.7 MB"
    assert memory.iloc[0, 1].endswith("†") and not memory.iloc[1, 1].endswith("†")
    assert m["Cache added per token"] == f"{96 * 2 * 12288 * 2 / 1e6:.2f} MB" == "4.72 MB"
    assert not warnings(at) and not at.info  # 2,048 tokens is GPT-3's own context
    # the circuit: both heads on the 0…1 scale, equal to the model's weights
    r = induction.run(tokens)
    assert [a["text"] for a in grid["layout"]["annotations"]] == [
        "layer 1 · previous-token head",
        "layer 2 · induction head",
    ]
    np.testing.assert_allclose(
        array(grid["data"][1]["z"]).reshape(T, T), r.head("induction"), atol=1e-6
    )
    assert m["Right: second copy"] == "100 %" and m["Right: first copy"] == "0 %"
    assert m["Guess after the last token"] == f"“{r.predictions[-1]}”"
    assert at.get("download_button") and at.dataframe
    assert "Measured: the previous-token head puts at least 1.00" in texts(at)


def test_induction_lines_are_drawn_while_their_expander_is_open():
    """The induction head as lines: not drawn (nor redrawn by a new sequence) while closed."""

    def line_charts(at) -> int:  # figures of scatter traces only: the loss curves, the lines
        return sum({d["type"] for d in f["data"]} == {"scatter"} for f in figures(at))

    at = run_page("decoder")
    total, closed = len(figures(at)), line_charts(at)
    at.session_state["dec_lines_open"] = True
    at.run()
    assert_clean(at)
    assert (len(figures(at)), line_charts(at)) == (total + 1, closed + 1)
    at.session_state["dec_lines_open"] = False
    at.run()
    assert (len(figures(at)), line_charts(at)) == (total, closed)


def test_a_link_opens_the_animation_and_its_numbers_at_its_step():
    """The step is the animation's own slider (and play button): the browser moves it and writes it
    into the URL (tests/test_browser_decoder.py); a link that holds it opens the figure and the
    numbers under it there, and no widget of the page draws it."""
    at = run_page("decoder", {"dec_step": "12", "dec_shape": "gpt2_small_1k"})
    assert_clean(at)
    assert not warnings(at) and qp(at) == {"dec_step": "12", "dec_shape": "gpt2_small_1k"}
    T = 2 * lesson.DEFAULT_N
    slider = step_slider(at)
    assert slider["name"] == "dec_step" and slider["active"] == 11
    # one step per token, its value the step's URL text and its frame the one of that name
    assert [step["value"] for step in slider["steps"]] == [str(s) for s in range(1, T + 1)]
    assert [step["args"][0] for step in slider["steps"]] == [[str(s)] for s in range(1, T + 1)]
    assert step_numbers(at)["Keys read by this step's query"] == "12"
    assert not [w for w in at.get("slider") if w.key == "dec_step"]
    m = metrics(at)
    assert m["KV cache of one sequence"] == "37.7 MB" and m["Keys read at the last step"] == "1,024"


def test_the_numbers_under_the_animation_have_a_version_at_every_step():
    """Step s reads s keys, leaves s of the T rows in the cache and generates the s-th token: each
    number follows the slider with one version per step (what the play button walks through)."""
    at = run_page("decoder", {"dec_n": "3", "dec_seed": "4"})
    tokens = induction.repeated_sequence(3, 4)
    T = len(tokens)
    following = [data for data in followers(at).values() if data["control"] == "dec_step"]
    assert len(following) == 3
    keys_read, rows, new_token = (
        {k: v["metric"] for k, v in data["variants"].items()} for data in following
    )
    assert set(keys_read) == set(rows) == set(new_token) == {str(s) for s in range(1, T + 1)}
    for s in range(1, T + 1):
        assert keys_read[str(s)] == {"label": "Keys read by this step's query", "value": str(s)}
        assert rows[str(s)]["value"] == f"{s} / {T}"
        assert new_token[str(s)]["value"] == f"“{tokens[s - 1]}”"


def test_a_step_past_the_sequence_is_its_last_token():
    """A link's step past a shorter sequence is reported and shows its last token; a sequence made
    shorter than the step shown moves the step to its last token, with nothing to report."""
    at = run_page("decoder", {"dec_step": "40", "dec_n": "4"})
    assert_clean(at)
    (w,) = warnings(at)
    assert "dec\\_step" in w and not errors(at)
    assert step_numbers(at)["Keys read by this step's query"] == "8" and qp(at)["dec_step"] == "8"
    assert step_slider(at)["active"] == 7
    at = run_page("decoder", {"dec_step": "12"})
    serial = followers(at)["decoder_keys_read"]["server"][1]
    at.slider(key="dec_n").set_value(4).run()
    assert_clean(at)
    assert not warnings(at) and qp(at) == {"dec_step": "8", "dec_n": "4"}
    server = followers(at)["decoder_keys_read"]["server"]
    assert server[0] == "8" and server[1] > serial  # newer than any position the browser kept
    assert step_slider(at)["active"] == 7


def test_a_length_beyond_the_models_context_says_so():
    at = run_page("decoder", {"dec_shape": "gpt3_8k"})
    assert_clean(at)
    assert not warnings(at)  # a note, not a problem with the link
    (w,) = [i.value for i in at.info]
    context = lesson.decode.GPT3_175B["context"]
    assert f"beyond GPT-3 175B's own context of {context:,} tokens" in w
    at = run_page("decoder", {"dec_shape": "gpt3_8k", "lang": "zh"})
    (w,) = [i.value for i in at.info]
    assert "超出了 GPT-3 175B 自身的上下文长度（2,048 个词元）" in w


def test_one_step_numbering_from_the_slider_to_the_figure():
    """The slider's step s is the numbers' s keys, the s-th token and the figure's frame "s"."""
    at = run_page("decoder", {"dec_step": "12"})
    tokens = induction.repeated_sequence(lesson.DEFAULT_N, lesson.DEFAULT_SEED)
    numbers = step_numbers(at)
    assert numbers["Keys read by this step's query"] == "12"
    assert numbers["New token"] == f"“{tokens[11]}”"
    slider = step_slider(at)
    active = slider["steps"][slider["active"]]
    assert active["label"] == active["value"] == "12" and active["args"][0] == ["12"]


def test_each_control_lives_in_the_section_it_redraws():
    """A control reruns no more than it changes: the sequence's controls share one section with
    everything that reads the sequence, and the step, the model and the ablation each sit in a
    section of their own inside it."""
    tree = ast.parse((ROOT / "pages" / "decoder.py").read_text(encoding="utf-8"))
    sections = {
        f.name: f
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        and any(getattr(d, "id", None) == "section" for d in f.decorator_list)
    }

    def keys(f):
        return {
            n.slice.value
            for n in ast.walk(f)
            if isinstance(n, ast.Subscript) and getattr(n.value, "id", None) == "CONTROLS"
        }

    def calls(f):
        return {getattr(n.func, "id", None) for n in ast.walk(f) if isinstance(n, ast.Call)}

    outer = sections["sequence_and_sections"]
    # the reader's own words are drawn by a plain function it calls, folded (no section of theirs)
    (own_words,) = [f for f in tree.body if getattr(f, "name", None) == "own_words"]
    assert "own_words" in calls(outer) and "own_words" not in sections
    assert keys(outer) | keys(own_words) == {"dec_src", "dec_n", "dec_seed", "dec_text"}
    assert {"causal_mask", "generation", "cache_cost", "induction_circuit"} <= calls(outer)
    # the step is the animation's own slider: no widget, nothing the server reruns
    assert keys(sections["generation"]) == set() and lesson.CONTROLS["dec_step"].in_figure
    assert keys(sections["cache_cost"]) == {"dec_shape"}
    assert keys(sections["induction_circuit"]) == {"dec_ablate"}


def test_ablation_is_shown_not_just_said():
    at = run_page("decoder", {"dec_n": "20", "dec_seed": "3"})
    assert metrics(at)["Right: second copy"] == "100 %"
    at.toggle(key="dec_ablate").set_value(True).run()
    assert_clean(at)
    assert qp(at)["dec_ablate"] == "1"
    (acc,) = [x for x in at.metric if x.label == "Right: second copy"]
    assert acc.value == "0 %" and acc.proto.delta == "-100 pp"  # percentage points
    _, (grid,), _ = by_kind(at)
    ind = array(grid["data"][1]["z"]).reshape(40, 40)
    assert max(ind[i, i - 19] for i in range(20, 40)) < 0.5  # the induction head lost its target
    assert "knocked out" in texts(at)


def test_harry_potter_example_button():
    at = run_page("decoder")
    at.button(key="dec_ex_harry").click().run()
    assert_clean(at)
    assert qp(at)["dec_src"] == "text" and "dec_text" not in qp(
        at
    )  # the default text is the Harry example
    assert metrics(at)["Guess after the last token"] == "“Potter”"
    assert "After the last token “Harry” the model predicts “Potter”." in texts(at)


BAD = [
    ("", "text_empty"),
    ("Harry", "decoder_one_token"),
    ("Harry met Voldemort", "decoder_unknown_words"),
    ("bax " * 1250, "too_many_tokens"),  # 5 000 characters, 1 250 tokens
]


@pytest.mark.parametrize("text, code", BAD)
def test_bad_text_in_english(text, code):
    at = run_page("decoder", {"dec_src": "text", "dec_text": text})
    assert_clean(at)
    (msg,) = errors(at)
    expected = {
        "text_empty": "The text is empty",
        "decoder_one_token": "has 1 token(s)",
        "decoder_unknown_words": "lacks 1 of these words: Voldemort",
        "too_many_tokens": "1250 tokens",
    }[code]
    assert expected in msg
    assert not figures(at)  # nothing to draw on a first run with bad input


@pytest.mark.parametrize("text, code", BAD)
def test_bad_text_in_chinese(text, code):
    at = run_page("decoder", {"lang": "zh", "dec_src": "text", "dec_text": text})
    assert_clean(at)
    (msg,) = errors(at)
    assert CJK.search(msg)
    assert english_words(at) == {}


def test_bad_text_keeps_the_last_good_view():
    at = run_page("decoder", {"dec_src": "text"})
    at.text_input(key="dec_text").set_value("Harry Potter met Voldemort").run()
    assert_clean(at)
    assert "Voldemort" in errors(at)[0] and figures(at)  # the Harry view stays, under the message


def test_tampered_url():
    at = run_page(
        "decoder",
        {
            "dec_n": "999",
            "dec_src": "file",
            "dec_step": "abc",
            "dec_shape": "gpt9",
            "dec_ablate": "maybe",
            "dec_text": "x" * 20_000,
            "dec_seed": "-4",
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    for name in ("dec_n", "dec_src", "dec_step", "dec_shape", "dec_ablate", "dec_text", "dec_seed"):
        assert name.replace("_", "\\_") in w
    assert not errors(at) and metrics(at)["Right: second copy"] == "100 %"  # the defaults


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"dec_src": "text"},
        {"dec_ablate": "1", "dec_shape": "gpt2_small_1k"},
        {"dec_src": "text", "dec_text": lesson.EXAMPLES["owl"], "present": "1"},
    ],
)
def test_chinese_views_show_no_english(params):
    at = run_page("decoder", {"lang": "zh"} | params)
    assert_clean(at)
    assert not errors(at)
    assert english_words(at) == {}
    assert "解码器" in texts(at)


def test_chinese_page_opens_on_the_chinese_example_and_compares_with_chance():
    at = run_page("decoder", {"lang": "zh", "dec_src": "text"})
    assert_clean(at)
    assert "dec_text" not in qp(at)  # the language's default text is left out of the link
    assert metrics(at)["最后一个词元之后的预测"] == "“波特”"
    at = run_page("decoder")
    V = len(induction.VOCAB)
    assert metrics(at)["Chance (1 / V)"] == f"{100 / V:.2f} %" == "0.40 %"
    assert f"ln V = ln {V} = {np.log(V):.2f}" in texts(at) and "= 5.51" in texts(at)


@pytest.mark.parametrize(("n", "numbers"), [(6, True), (10, False)])
def test_the_mask_prints_its_weights_up_to_mask_numbers_tokens(n, numbers):
    """2n tokens: 12 print every weight in its cell; the default 20 show the triangle, the weights
    in the hover, and say so."""
    at = run_page("decoder", {"dec_n": str(n)})
    assert_clean(at)
    mask = next(f for f in figures(at) if "future keys masked" in f["layout"]["title"]["text"])
    assert bool(mask["data"][0].get("texttemplate")) == numbers
    said = "hover over a cell to read its weight" in texts(at)
    assert said == (not numbers)


def test_the_training_is_the_next_pages():
    """The page teaches the designed decoder alone: no training control, no Train button, and its
    controls and the training page's are two sets (a link's key belongs to one page)."""
    from visattn.lessons import training

    at = run_page("decoder")
    assert_clean(at)
    assert not lesson.CONTROLS.keys() & training.CONTROLS.keys()
    assert not [b for b in at.button if b.key and b.key.startswith("dec_train")]
    drawn = {
        w.key for kind in ("slider", "number_input", "toggle", "text_input") for w in at.get(kind)
    }
    assert not drawn & training.CONTROLS.keys()


@pytest.mark.parametrize(
    ("params", "shown", "opened"),
    [({}, True, False), ({"handout": "1"}, True, True), ({"present": "1"}, False, False)],
)
def test_the_introduction_is_folded_open_on_paper_and_absent_on_a_projector(params, shown, opened):
    """The first screen reaches the causal mask: the introduction folds under the title, opens in
    the handout and, as every explanation, is left out in presenter mode."""
    at = run_page("decoder", params)
    assert_clean(at)
    intro = [e for e in at.expander if "What a decoder is" in e.label]
    assert bool(intro) == shown
    if shown:
        assert intro[0].proto.expanded == opened
        assert "induction head" in " ".join(m.value for m in intro[0].markdown)
