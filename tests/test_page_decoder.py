"""The decoder page through AppTest: defaults, the cache animation (its step the figure's own
slider, the numbers under it following), the cost panel, the induction circuit and its ablation,
examples, bad input in English and Chinese, a tampered URL, the trained decoder and its
checkpoints' slider, and the Chinese views."""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest
from apptest_util import (
    FIXTURE_MODELS,
    ROOT,
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    followers,
    run_page,
    shown,
    texts,
    warnings,
)

from visattn.lessons import decoder as lesson
from visattn.models import induction

CJK = re.compile(r"[\u4e00-\u9fff]")


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


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


def qp(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


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
    """Point 8 of issue 20: the sequence's controls share one section with everything that reads
    the sequence, and the step, the model and the ablation each sit in a section of their own
    inside it, so a control reruns no more than it changes."""
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
    assert keys(outer) == {"dec_src", "dec_n", "dec_seed", "dec_text"}
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
    assert acc.value == "0 %" and acc.proto.delta == "-100 %"
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


# ── 5. the trained decoder (issue 23) ─────────────────────────────────────────────────────────
QUICK = {"dec_tsteps": "100", "dec_tlayers": "1", "dec_tseed": "7"}  # seconds, not minutes


def trained(params: dict):
    """The page with ``params`` after its Train button, or as shown when the room already trained
    it (the button is then disabled: the run is kept)."""
    at = run_page("decoder", params)
    if not at.button(key="dec_train_main").disabled:
        at.button(key="dec_train_main").click().run(timeout=600)
    return at


def test_training_waits_for_the_button_and_its_controls_stay_out_of_a_clean_url():
    at = run_page("decoder")
    assert_clean(at)
    assert at.button(key="dec_train_main").label == "Train"
    assert not any(k.startswith("dec_t") for k in qp(at))
    assert "Phase change (step)" not in metrics(at)  # nothing trained, nothing shown


def test_train_button_trains_once_for_the_room_and_shows_every_part():
    at = run_page("decoder", QUICK | {"dec_tseed": "8"})  # a seed no other test trains
    at.button(key="dec_train_main").click().run(timeout=600)
    assert_clean(at)
    assert not errors(at)
    m = metrics(at)
    V = lesson.TRAIN_DEFAULT.vocab
    assert m["Chance (1 / V)"] == f"{100 / V:.2f} %" and "Accuracy on repeated tokens" in m
    checkpoints = lesson.training.checkpoint_steps(lesson.training_config(1, 100), 100)
    assert checkpoints == [0, 20, 40, 60, 80, 100]  # every eval_every = 20 steps
    grid, slider = checkpoint_slider(at)
    labels = [s["label"] for s in slider["steps"]]
    assert labels == [str(s) for s in checkpoints] and len(grid["data"]) == 4  # 1 layer × 4 heads
    # the slider is the control dec_tcheck, each step's value its training step; it opens on the
    # last checkpoint, the control's default, which the URL leaves out
    assert [s["value"] for s in slider["steps"]] == labels and slider["active"] == 5
    assert "dec_tcheck" not in qp(at)
    assert "checkpoints kept" in texts(at)
    # another session with the same config and seed is shown the run kept by the room at once
    other = run_page("decoder", QUICK | {"dec_tseed": "8"})
    assert_clean(other)
    assert other.button(key="dec_train_main").disabled
    assert metrics(other)["Accuracy on repeated tokens"] == m["Accuracy on repeated tokens"]


def checkpoint_slider(at) -> tuple[dict, dict]:
    """The trained heads' maps and their own slider (the control dec_tcheck)."""
    (grid,) = [
        f
        for f in figures(at)
        if [s.get("name") for s in f["layout"].get("sliders", [])] == ["dec_tcheck"]
    ]
    return grid, grid["layout"]["sliders"][0]


@pytest.mark.parametrize(
    ("link", "opens", "reported"),
    [
        ("40", 2, False),  # a checkpoint: itself
        ("0", 0, False),  # the untrained heads
        ("50", 3, True),  # between 40 and 60: the later of the two
        ("1000", 5, True),  # past the run's 100 steps: its last
    ],
)
def test_a_link_opens_the_maps_at_its_checkpoint(link, opens, reported):
    """The checkpoint is the maps' own slider: a link that holds it opens them there (checkpoints
    0, 20 … 100); a step that is no checkpoint is reported and shows the nearest one."""
    trained(QUICK)  # kept by the room: the link's first run draws the maps
    at = run_page("decoder", QUICK | {"dec_tcheck": link})
    assert_clean(at)
    grid, slider = checkpoint_slider(at)
    assert slider["active"] == opens
    shown_step = str(20 * opens)
    assert qp(at)["dec_tcheck"] == shown_step
    assert bool(warnings(at)) == reported and not errors(at)
    if reported:
        assert "dec\\_tcheck" in warnings(at)[0]
    # the maps as drawn are those of that checkpoint: its step's z, every head
    step_z = [array(z) for z in slider["steps"][opens]["args"][0]["z"]]
    drawn = [array(trace["z"]).reshape(step_z[0].shape) for trace in grid["data"]]
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(step_z, drawn, strict=True))


def test_a_job_nobody_watches_stops_and_stop_is_kept_apart_from_the_whole_run():
    from ui.cache import training as cache_training
    from ui.room import budget

    config = lesson.training_config(1, 2000)
    job = cache_training.start(config, 123, "session-a")
    cache_training.leave(config, 123, "session-a")  # the Stop button, the only watcher
    cache_training.wait_for_stop(job, most=120)
    assert job.done and job.section is not None and job.section.stopped
    assert job.section.run.steps_done < 2000
    assert cache_training.result(config, 123) is None  # not kept as the run of (config, 123)
    assert budget.shared().held()[1] == 0  # nothing reserved any more


def test_two_layers_with_the_mlp_show_layer_one_feeding_layer_two():
    from ui.cache import training as cache_training

    params = {"dec_tsteps": "100", "dec_tlayers": "2", "dec_tseed": "9", "dec_tmlp": "1"}
    at = trained(params)
    assert_clean(at)
    assert not errors(at)
    assert qp(at)["dec_tmlp"] == "1" and "MLP block: 64 → 256 → 64" in texts(at)
    assert "Layer 1 feeding layer 2: K-composition" in [h.value for h in at.subheader]
    (heat,) = [f for f in figures(at) if "K-composition" in json.dumps(f["data"][0])]
    config = lesson.training_config(2, 100, True)
    run = cache_training.result(config, 9).run
    expected = lesson.training.k_composition(run.params, config)  # (H, H)
    assert np.allclose(array(heat["data"][0]["z"]), expected, atol=1e-6)
    assert "The highest pair of all:" in texts(at)
    zh = run_page("decoder", {"lang": "zh"} | params)  # the room's kept run, in Chinese
    assert_clean(zh)
    assert english_words(zh) == {}
    assert "第 1 层喂给第 2 层：K 组合" in [h.value for h in zh.subheader]


def test_tampered_training_url_falls_back_to_the_defaults():
    params = {"dec_tlayers": "9", "dec_tsteps": "abc", "dec_tseed": "-1", "dec_tcheck": "-2"}
    at = run_page("decoder", params)
    assert_clean(at)
    (w,) = warnings(at)
    for name in params:
        assert name.replace("_", "\\_") in w
    assert not errors(at)


def test_trained_section_in_chinese_shows_no_english():
    # trained from an English session (a click on a zh page reads its options' labels in English:
    # CONTRIBUTING), then shown to a Chinese one from the room's kept run
    trained(QUICK)
    at = run_page("decoder", {"lang": "zh", "present": "1"} | QUICK)
    assert_clean(at)
    assert not errors(at)
    assert english_words(at) == {}
    assert "相变（步）" in metrics(at)


def test_own_sequence_on_the_trained_model_and_a_bad_one():
    at = trained(QUICK)
    assert "Your own sequence" in [h.value for h in at.subheader]
    at.text_input(key="dec_tprobe").set_value("1 2 99").run(timeout=600)
    assert_clean(at)
    assert any(f"from 0 to {lesson.TRAIN_DEFAULT.vocab - 1}" in e for e in errors(at))
    assert qp(at)["dec_tprobe"] == "1 2 99"


def test_a_session_that_stops_polling_lets_its_training_stop(monkeypatch):
    from ui.cache import training as cache_training

    monkeypatch.setattr(cache_training, "HEARTBEAT_SECONDS", 0.5)
    config = lesson.training_config(1, 2000)
    job = cache_training.start(config, 321, "session-b")  # started, then never polled again
    cache_training.wait_for_stop(job, most=120)
    assert job.done and job.section is not None and job.section.stopped
    # a config the session moved away from is left at once (the page calls leave)
    again = cache_training.start(config, 322, "session-c")
    again.seen("session-d")  # two sessions watch it …
    cache_training.leave(config, 322, "session-c")
    assert not again.cancelled  # … one left: it goes on for the other
    cache_training.leave(config, 322, "session-d")
    cache_training.wait_for_stop(again, most=120)
    assert again.done and again.section.stopped


def test_a_training_queues_behind_the_rooms_heavy_work_and_hears_its_place():
    import threading
    import time

    from ui.cache import training as cache_training
    from ui.room import budget

    holding, release = threading.Event(), threading.Event()

    def heavy() -> None:
        with budget.shared().reserve(100_000_000):  # another session's long text, say
            holding.set()
            release.wait(120)

    threading.Thread(target=heavy, daemon=True).start()
    assert holding.wait(30)
    config = lesson.training_config(1, 2000)
    job = cache_training.start(config, 555, "session-e")
    deadline = time.monotonic() + 60
    while not job.ahead and time.monotonic() < deadline:
        job.seen("session-e")  # the page's poll: "waiting, n ahead of you"
        time.sleep(0.1)
    assert job.ahead == 1 and job.history is None  # queued, not started
    release.set()
    while job.ahead is not None and time.monotonic() < deadline:
        job.seen("session-e")
        time.sleep(0.1)
    assert job.ahead is None  # admitted once the slot is free
    cache_training.leave(config, 555, "session-e")
    cache_training.wait_for_stop(job, most=120)
    assert job.done


# ---- issue 25: a decoder from a checkpoint (tests/fixtures/models) generating, its induction heads


def test_without_a_decoder_the_section_says_how_to_get_one(monkeypatch):
    from ui.cache import models as cache_models

    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_MODELS / "no-hub-here"))
    monkeypatch.delenv("VISATTN_MODELS", raising=False)
    cache_models.available.clear()
    at = run_page("decoder")
    cache_models.available.clear()
    assert not at.exception and not errors(at)
    assert any("no decoder checkpoint" in str(c.value) for c in at.caption)


def test_a_loaded_decoder_generates_with_its_cache_growing(fixture_models):
    from visattn.models import generation

    at = run_page("decoder", {"dec_model": "llama", "dec_new": "5", "dec_prompt": "the keys"})
    assert not at.exception and not errors(at)
    model = fixture_models.load_checkpoint("llama")
    ids = model.tokenize("the keys")[1]
    expected = generation.steps(model, ids, 5)
    table = at.dataframe[-2].value
    assert table.iloc[:, 1].tolist() == [s.token for s in expected]
    assert table.iloc[:, 3].tolist() == list(range(len(ids), len(ids) + 5))
    np.testing.assert_allclose(table.iloc[:, 2], [s.top_probabilities[0] for s in expected])
    heads = at.dataframe[-1].value
    ranked = generation.prefix_matching(model, generation.fitted_length(model))
    assert heads.iloc[:, 0].tolist() == [f"L{h.layer + 1}·H{h.head + 1}" for h in ranked]
    np.testing.assert_allclose(heads.iloc[:, 1], [h.weight for h in ranked])


def test_the_page_finds_the_induction_head_of_a_gpt2_checkpoint(monkeypatch, tmp_path):
    """A GPT-2-format checkpoint with an induction head planted at L2·H1
    (tests/induction_checkpoint.py): the section's table ranks it first, every score as an
    independent torch forward pass computes it."""
    import induction_checkpoint

    from ui.cache import models as cache_models
    from visattn.models import generation, load

    folder = induction_checkpoint.write(tmp_path / "gpt2-planted", induction=0)
    monkeypatch.setenv("VISATTN_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub-here"))
    cache_models.available.clear()
    at = run_page("decoder", {"dec_model": "gpt2-planted", "dec_prompt": "w5 w3 w7 w1 w3"})
    cache_models.available.clear()
    assert not at.exception and not errors(at)
    assert at.selectbox(key="dec_model").value == "gpt2-planted"
    model = load(folder)
    length = generation.fitted_length(model)
    ids, start = generation.repeated_sequence(model, length)
    expected = induction_checkpoint.reference_scores(folder, ids, start, length)  # (L, H)
    heads = at.dataframe[-1].value
    assert heads.iloc[0, 0] == "L2·H1" and heads.iloc[0, 1] > 0.99
    for name, score in zip(heads.iloc[:, 0], heads.iloc[:, 1], strict=True):
        layer, head = (int(part) - 1 for part in name[1:].split("·H"))
        assert score == pytest.approx(expected[layer, head], abs=1e-5)
    assert at.dataframe[-2].value.iloc[:, 1].tolist()[:2] == ["w7", "w1"]  # it copies, too


def test_an_unknown_decoder_falls_back_with_a_notice_in_chinese(fixture_models):
    at = run_page("decoder", {"dec_model": "nope", "lang": "zh"})
    assert not at.exception and not errors(at)
    assert any("没有解码器“nope”" in w for w in warnings(at))
    assert at.selectbox(key="dec_model").value == "gpt2"


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
