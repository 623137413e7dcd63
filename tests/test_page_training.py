"""The training page through AppTest: the Train button and the room's one run per config and
seed, every part of a finished run, the checkpoints' slider and the links that hold it, two layers
with K-composition, the reader's own sequence, tampered URLs, the Chinese views, the background
jobs (stopped when nobody watches, queued behind the room's heavy work), a decoder read from a
checkpoint, and the decoder page's old links that carry training values."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import numpy as np
import pytest
from apptest_util import (
    FAMILY_IDS,
    FIXTURE_MODELS,
    ROOT,
    array,
    assert_clean,
    english_words,
    errors,
    figures,
    metrics,
    qp,
    run_page,
    texts,
    warnings,
)

from visattn.lessons import decoder as decoder_lesson
from visattn.lessons import training as lesson

QUICK = {"dec_tsteps": "100", "dec_tlayers": "1", "dec_tseed": "7"}  # seconds, not minutes


def trained(params: dict):
    """The page with ``params`` after its Train button, or as shown when the room already trained
    it (the button is then disabled: the run is kept)."""
    at = run_page("training", params)
    if not at.button(key="dec_train_main").disabled:
        at.button(key="dec_train_main").click().run(timeout=600)
    return at


def test_training_waits_for_the_button_and_its_controls_stay_out_of_a_clean_url():
    at = run_page("training")
    assert_clean(at)
    assert at.button(key="dec_train_main").label == "Train"
    assert not any(k.startswith("dec_t") for k in qp(at))
    assert "Phase change (step)" not in metrics(at)  # nothing trained, nothing shown


def test_train_button_trains_once_for_the_room_and_shows_every_part():
    at = run_page("training", QUICK | {"dec_tseed": "8"})  # a seed no other test trains
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
    other = run_page("training", QUICK | {"dec_tseed": "8"})
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
    at = run_page("training", QUICK | {"dec_tcheck": link})
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
    from ui.room import budget, jobs

    spec = cache_training.job(lesson.training_config(1, 2000), 123)
    jobs.start(spec, "session-a")
    job = jobs.stop(spec.key, most=120, session="session-a")  # the Stop button, the only watcher
    assert job.done and job.partial is not None and job.partial.stopped
    assert job.partial.run.steps_done < 2000
    assert jobs.kept(spec.key) is None  # not kept as the run of (config, 123)
    assert budget.shared().held()[1] == 0  # nothing reserved any more


def test_two_layers_with_the_mlp_show_layer_one_feeding_layer_two():
    from ui.cache import training as cache_training
    from ui.room import jobs

    params = {"dec_tsteps": "100", "dec_tlayers": "2", "dec_tseed": "9", "dec_tmlp": "1"}
    at = trained(params)
    assert_clean(at)
    assert not errors(at)
    assert qp(at)["dec_tmlp"] == "1" and "MLP block: 64 → 256 → 64" in texts(at)
    assert "Layer 1 feeding layer 2: K-composition" in [h.value for h in at.subheader]
    (heat,) = [f for f in figures(at) if "K-composition" in json.dumps(f["data"][0])]
    config = lesson.training_config(2, 100, True)
    run = jobs.kept(cache_training.key_of(config, 9)).run
    expected = lesson.training.k_composition(run.params, config)  # (H, H)
    assert np.allclose(array(heat["data"][0]["z"]), expected, atol=1e-6)
    assert "The highest pair of all:" in texts(at)
    zh = run_page("training", {"lang": "zh"} | params)  # the room's kept run, in Chinese
    assert_clean(zh)
    assert english_words(zh) == {}
    assert "第 1 层喂给第 2 层：K 组合" in [h.value for h in zh.subheader]


def test_tampered_training_url_falls_back_to_the_defaults():
    params = {"dec_tlayers": "9", "dec_tsteps": "abc", "dec_tseed": "-1", "dec_tcheck": "-2"}
    at = run_page("training", params)
    assert_clean(at)
    (w,) = warnings(at)
    for name in params:
        assert name.replace("_", "\\_") in w
    assert not errors(at)


def test_trained_section_in_chinese_shows_no_english():
    # trained from an English session (a click on a zh page reads its options' labels in English:
    # CONTRIBUTING), then shown to a Chinese one from the room's kept run
    trained(QUICK)
    at = run_page("training", {"lang": "zh", "present": "1"} | QUICK)
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
    from ui.room import jobs

    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.5)
    config = lesson.training_config(1, 2000)
    spec = cache_training.job(config, 321)
    jobs.start(spec, "session-b")  # started, then never followed again
    job = jobs.wait(spec.key, most=120)
    assert job.done and job.partial is not None and job.partial.stopped
    # a config the session moved away from is left at once (the page calls leave)
    again = cache_training.job(config, 322)
    jobs.start(again, "session-c")
    jobs.start(again, "session-d")  # two sessions watch it …
    jobs.leave(again.key, "session-c")
    assert jobs.state(again.key).running  # … one left: it goes on for the other
    jobs.leave(again.key, "session-d")
    stopped = jobs.wait(again.key, most=120)
    assert stopped.done and stopped.partial.stopped


def test_a_training_queues_behind_the_rooms_long_work_and_hears_its_place():
    import threading

    from ui.cache import training as cache_training
    from ui.room import budget, jobs

    holding, release = threading.Event(), threading.Event()

    def hold() -> str:
        holding.set()
        release.wait(120)
        return "held"

    def heavy() -> None:  # another session's training, say: the long lane's one slot
        budget.shared().get(("test_page_training", "held"), 1_000_000, hold, lane=budget.LONG)

    threading.Thread(target=heavy, daemon=True).start()
    assert holding.wait(30)
    spec = cache_training.job(lesson.training_config(1, 2000), 555)
    jobs.start(spec, "session-e")
    following = jobs.follow(spec.key, "session-e")  # the page's loop: "waiting, n ahead of you"
    job = next(following)
    while not job.ahead:
        job = next(following)
    assert job.ahead == 1 and job.progress is None  # queued, not started
    release.set()
    while job.ahead is not None:
        job = next(following)
    assert job.ahead is None  # admitted once the slot is free
    assert jobs.stop(spec.key, most=120, session="session-e").done


# ── 2. a decoder from a checkpoint (tests/fixtures/models) generating, its induction heads ─────


def test_without_a_decoder_the_section_says_how_to_get_one(monkeypatch):
    from ui.cache import models as cache_models

    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_MODELS / "no-hub-here"))
    monkeypatch.delenv("VISATTN_MODELS", raising=False)
    cache_models.available.clear()
    at = run_page("training")
    cache_models.available.clear()
    assert not at.exception and not errors(at)
    assert any("no decoder checkpoint" in str(c.value) for c in at.caption)


def test_a_loaded_decoder_generates_with_its_cache_growing(fixture_models):
    from visattn.models import generation

    at = run_page("training", {"dec_model": "llama", "dec_new": "5", "dec_prompt": "the keys"})
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
    assert heads.iloc[:, 2].tolist() == [f"{h.layer}.{h.head}" for h in ranked]  # papers' names
    assert "from 1" in heads.columns[0] and "from 0" in heads.columns[2]


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
    at = run_page("training", {"dec_model": "gpt2-planted", "dec_prompt": "w5 w3 w7 w1 w3"})
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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoders_above_the_budget_are_named_with_the_budget_not_missing(
    fixture_models, monkeypatch, lang
):
    """Every decoder of the server over a budget small enough: the section names each with its
    size and the budget, once, instead of saying the server has none."""
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", "1kB")
    at = run_page("training", {"lang": lang})
    assert not at.exception and not errors(at)
    decoders = [s for s in fixture_models.available() if s.causal]
    assert decoders and not any(s.usable for s in decoders)
    (notice,) = [w for w in warnings(at) if "VISATTN_MODEL_BUDGET" in w]
    for source in decoders:
        assert (
            f"{source.name}" in notice and fixture_models.size_text(source.float32_bytes) in notice
        )
    assert "1.0 kB" in notice
    assert not any("no decoder checkpoint" in str(c.value) for c in at.caption)
    assert not any("没有解码器检查点" in str(c.value) for c in at.caption)


def test_a_link_to_a_decoder_above_the_budget_says_why_once(fixture_models, monkeypatch):
    from visattn.models import sources

    small = [s for s in fixture_models.available() if s.causal]
    smallest = min(small, key=lambda s: s.float32_bytes)
    largest = max(small, key=lambda s: s.float32_bytes)
    assert largest.float32_bytes > smallest.float32_bytes
    monkeypatch.setenv("VISATTN_MODEL_BUDGET", str(smallest.float32_bytes))
    fixture_models.available.clear()
    assert sources.budget_bytes() == smallest.float32_bytes
    at = run_page("training", {"dec_model": largest.id})
    assert not at.exception and not errors(at)
    (notice,) = warnings(at)
    assert largest.name in notice and "above this server's budget" in notice, notice
    assert "has no decoder" not in notice
    assert at.selectbox(key="dec_model").value != largest.id


def test_an_unknown_decoder_falls_back_with_a_notice_in_chinese(fixture_models):
    at = run_page("training", {"dec_model": "nope", "lang": "zh"})
    assert not at.exception and not errors(at)
    assert any("没有解码器“nope”" in w for w in warnings(at))
    assert at.selectbox(key="dec_model").value == "gpt2"


# ── the first screen and the decoder page's old links ─────────────────────────────────────────
def test_defaults_draw_the_curves_train_fills_before_any_step():
    """Nothing trained: the page's first chart is the training curves' axes over the run's steps,
    chance dotted, which Train fills live; the URL stays clean."""
    at = run_page("training")
    assert_clean(at)
    assert not errors(at) and not warnings(at) and not at.query_params
    (curves,) = figures(at)
    config = lesson.training_config(
        lesson.TRAIN_DEFAULT.n_layers, lesson.TRAIN_DEFAULT.steps, lesson.TRAIN_DEFAULT.mlp
    )
    (chance,) = [d for d in curves["data"] if d["name"] == "chance (1 / V)"]
    assert list(chance["x"]) == [0, config.steps] and list(chance["y"]) == [1 / config.vocab] * 2
    assert all(len(d["x"]) == 0 for d in curves["data"] if d is not chance)
    title = json.loads((ROOT / "ui" / "locales" / "en" / "training.json").read_text("utf-8"))
    assert [t.value for t in at.title] == [title["title"]]


def designed_and_training(params: dict) -> tuple[dict, dict]:
    """A decoder link's values split: (the designed decoder's and the frame's, the training's)."""
    trained = {k: v for k, v in params.items() if k in lesson.CONTROLS}
    return {k: v for k, v in params.items() if k not in trained}, trained


@pytest.mark.parametrize(
    "params",
    [
        {"dec_tcheck": "0", "dec_tsteps": "300", "dec_tseed": "4"},
        {"lang": "zh", "dec_tlayers": "1", "dec_prompt": "the keys"},
        {"dec_src": "text", "dec_ablate": "1", "dec_tmlp": "1", "present": "1", "hide": "1"},
    ],
)
def test_a_decoder_link_with_training_values_opens_this_page_with_them(params):
    """Links made when the training was the decoder page's sections 5–6: the decoder page sends
    them here with every value; the designed decoder's values in them are linked back to, and that
    link opens the decoder page with them."""
    at = run_page("decoder", params)
    assert_clean(at)
    assert not errors(at) and not warnings(at)
    designed, trained = designed_and_training(params)
    shown = {k: v for k, v in params.items() if k not in decoder_lesson.CONTROLS}
    assert qp(at) == shown and trained.items() <= qp(at).items()
    assert at.session_state["dec_tseed"] == int(params.get("dec_tseed", 0))
    back = [e.proto for e in at.get("page_link") if e.proto.icon == ":material/skip_previous:"]
    if not designed.keys() & decoder_lesson.CONTROLS.keys():
        assert not back  # nothing of the designed decoder's to link back to
        return
    (link,) = back
    query = dict(parse_qsl(link.query_string))
    assert link.page == "decoder" and query == designed | {"lang": at.session_state["lang"]}
    there = run_page("decoder", query)
    assert_clean(there)
    assert not warnings(there) and not errors(there)
    # the designed decoder's view, as the link set it (the language's default is left out)
    assert {k: v for k, v in qp(there).items() if k != "lang"} == {
        k: v for k, v in designed.items() if k != "lang"
    }


def test_an_untrained_page_in_chinese_shows_no_english():
    at = run_page("training", {"lang": "zh", "present": "1"})
    assert_clean(at)
    assert english_words(at) == {}
    assert "解码器学会复制" in texts(at)


@pytest.mark.parametrize("family", FAMILY_IDS)
def test_every_newer_family_generates_and_ranks_its_heads(every_model, family):
    """A decoder of each family generates (a base checkpoint says it needs its head) and its
    heads are ranked by the finder, numbered from 1 with papers' names beside them."""
    from visattn.models import generation

    model = every_model.load_checkpoint(family)
    at = run_page("training", {"dec_model": family, "dec_new": "3", "dec_prompt": "the keys"})
    assert not at.exception
    assert at.selectbox(key="dec_model").value == family
    if model.config.has_head:
        assert not errors(at), errors(at)
    else:  # attention only: generation refused in one message, the heads still ranked
        (refused,) = errors(at)
        assert "head" in refused, refused
    heads = at.dataframe[-1].value
    ranked = generation.prefix_matching(model, generation.fitted_length(model))
    ranked = ranked[: lesson.TOP_HEADS]
    assert heads.iloc[:, 0].tolist() == [f"L{h.layer + 1}·H{h.head + 1}" for h in ranked]
    assert heads.iloc[:, 2].tolist() == [f"{h.layer}.{h.head}" for h in ranked]


def test_the_maps_text_places_the_induction_stripe_where_the_probe_puts_it():
    """On the probe (its first k tokens repeated), row i of the second copy finds the current
    token's earlier copy at i − k and attends to the token after it, i − k + 1: the induction
    stripe is k − 1 left of the diagonal and k − 2 left of the previous-token stripe (at i − 1);
    both languages say so (zh once said k − 1 left of the previous-token stripe)."""
    from visattn import training

    tokens, k = training.probe_sequence(lesson.training_config(2, 800))
    rows = range(k, 2 * k)
    assert all(tokens[i] == tokens[i - k] for i in rows)
    from_diagonal = {i - (i - k + 1) for i in rows}
    from_previous = {(i - 1) - (i - k + 1) for i in rows}
    assert from_diagonal == {k - 1} and from_previous == {k - 2}
    en = json.loads((ROOT / "ui/locales/en/training.json").read_text())["maps_text"]
    zh = json.loads((ROOT / "ui/locales/zh/training.json").read_text())["maps_text"]
    assert "k − 1 steps left of the diagonal" in en and "k − 2 steps left of the previous" in en
    assert "对角线左侧 k − 1 格" in zh and "前一词元条纹左侧 k − 2 格" in zh
