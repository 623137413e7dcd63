"""The modern-attention page through AppTest: each section's defaults and numbers, its controls in
the URL, bad inputs in English and Chinese (H not divisible by G, window 0, block size > T), a
tampered URL, presenter mode, and the Chinese views."""

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
    metrics,
    open_section,
    open_tab_index,
    panel,
    qp,
    run_page,
    texts,
    unescape,
    warnings,
)
from streamlit.testing.v1 import AppTest

from ui.frame import panel_rule
from visattn import modern_attention
from visattn.lessons import modern_attention as lesson


def tab(at, sec: str):
    """The panel of section ``sec``."""
    return panel(at, "modern_attention", sec)


def test_every_tab_is_drawn_the_open_one_shows_and_the_url_opens_one():
    at = run_page("modern_attention")
    assert_clean(at)
    assert [box.label for box in at.tabs] == [
        "Grouped-query attention",
        "The KV cache of real models",
        "Sliding windows",
        "FlashAttention",
    ]
    # every section is drawn, each in its panel; a style rule hides the panels not open
    assert [len(figures(tab(at, sec))) for sec in lesson.SECTIONS] == [2, 1, 2, 2]
    assert open_section(at, "modern_attention") == "gqa"
    # one rule for the browser: tab i not selected hides option i's panel (tests/test_browser)
    rule = panel_rule(lesson.CONTROLS["mo_sec"])
    assert [e.proto.body for e in at.get("html")].count(rule) == 1
    pairs = re.findall(r"nth-child\((\d) of .*?_panel_(\w+)\)", rule)
    assert pairs == [(str(i), sec) for i, sec in enumerate(lesson.SECTIONS, start=1)]
    # a tab opened (the tabs' on_change sets the control): the URL holds it
    at.session_state["mo_sec"] = "window"
    at.run()
    assert open_section(at, "modern_attention") == "window" and qp(at) == {"mo_sec": "window"}
    for sec in lesson.SECTIONS:
        opened = run_page("modern_attention", {"mo_sec": sec})
        assert open_section(opened, "modern_attention") == sec
        assert qp(opened) == ({} if sec == "gqa" else {"mo_sec": sec})
    # the handout prints every section, one after another, each under its tab's name
    handout = run_page("modern_attention", {"handout": "1"})
    assert not handout.tabs and not [e for e in handout.get("html") if "_panel_" in e.proto.body]
    titles = [tab(handout, sec).subheader[0].value for sec in lesson.SECTIONS]
    assert titles == [box.label for box in at.tabs]


def tab_opened_script() -> None:
    """A run in which the browser reports a tab opened: its label (``opened``) is the tabs' state
    in Streamlit, as the frontend sends it, when their callback runs."""
    import streamlit as st

    from ui import frame
    from visattn.lessons import modern_attention as lesson

    control = lesson.CONTROLS["mo_sec"]
    st.session_state.setdefault(control.key, "cache")
    st.session_state["mo_sec_tab"] = st.session_state["opened"]
    labels = ["GQA", "Cache", "Window", "Flash"]
    frame._tab_opened(control, "mo_sec_tab", labels)
    st.write(st.session_state[control.key])


@pytest.mark.parametrize(
    ("opened", "section"),
    [
        ("Window", "window"),
        ("Flash", "flash"),
        ("<img src=x onerror=alert(1)>", "cache"),
        ("", "cache"),
    ],
)
def test_a_tab_opened_sets_the_section_and_a_label_no_tab_has_changes_nothing(opened, section):
    at = AppTest.from_function(tab_opened_script)
    at.session_state["opened"] = opened
    at.run()
    assert not at.exception
    assert at.markdown[0].value == section


def untile(fig: dict, z: np.ndarray, H: int, columns: int = 4) -> np.ndarray:
    """(H, T, T) the heads' maps in a tiled heatmap ``z``: each tile starts where its axes' ticks
    number position 1 (the tick texts say so)."""
    x, y = fig["layout"]["xaxis"], fig["layout"]["yaxis"]
    T = len(x["ticktext"]) // min(columns, H)
    x0 = [int(v) for v, text in zip(x["tickvals"], x["ticktext"], strict=True) if text == "1"]
    y0 = [int(v) for v, text in zip(y["tickvals"], y["ticktext"], strict=True) if text == "1"]
    return np.stack(
        [
            z[y0[h // columns] : y0[h // columns] + T, x0[h % columns] : x0[h % columns] + T]
            for h in range(H)
        ]
    )


def test_defaults_grouped_query_attention():
    at = run_page("modern_attention")
    assert_clean(at)
    assert not errors(at) and not warnings(at) and not at.query_params
    grouping, maps = figures(tab(at, "gqa"))
    # the grouping: a line from each of the 8 query heads to its K/V head, then the two rows
    lines = [d for d in grouping["data"] if d["mode"] == "lines"]
    assert len(lines) == 8
    assert [line["x"][0] for line in lines] == list(range(8))
    assert [d["text"] for d in grouping["data"][-2:]] == [
        [str(h) for h in range(1, 9)],
        ["1", "2"],
    ]
    # the maps: every query head's weights, equal to grouped-query attention of the same inputs
    rng_q = np.random.default_rng(lesson.SEED).standard_normal((8, 6, lesson.GQA_DH))
    rng_k = np.random.default_rng(lesson.SEED + 1).standard_normal((2, 6, lesson.GQA_DH))
    rng_v = np.random.default_rng(lesson.SEED + 2).standard_normal((2, 6, lesson.GQA_DH))
    expected = modern_attention.grouped_query_attention(rng_q, rng_k, rng_v, causal=True).weights
    (tiles,) = maps["data"]  # one heatmap, a tile per head, read where its axes number 1 … 6
    cells = untile(maps, array(tiles["z"]), 8)
    np.testing.assert_allclose(cells, expected, atol=1e-6)
    assert np.isnan(array(tiles["z"])).sum() > 0  # the blank rows and columns between the tiles
    titles = [a["text"] for a in maps["layout"]["annotations"]]
    assert titles[0] == "query head 1 · K/V head 1" and titles[7] == "query head 8 · K/V head 2"
    # one control: the grouping's slider tries every G dividing 8, starting at mo_g's default 2;
    # the maps follow it (a hidden slider of the same control)
    (shown,), (followed,) = grouping["layout"]["sliders"], maps["layout"]["sliders"]
    assert shown["name"] == followed["name"] == "mo_g" and followed["visible"] is False
    for slider in (shown, followed):
        assert [step["value"] for step in slider["steps"]] == ["1", "2", "4", "8"]
        assert slider["active"] == 1
    assert [step["label"] for step in shown["steps"]] == ["1", "2", "4", "8"]
    for G, step in zip((1, 2, 4, 8), followed["steps"], strict=True):
        K = np.random.default_rng(lesson.SEED + 1).standard_normal((G, 6, lesson.GQA_DH))
        V = np.random.default_rng(lesson.SEED + 2).standard_normal((G, 6, lesson.GQA_DH))
        weights = modern_attention.grouped_query_attention(rng_q, K, V, causal=True).weights
        (z,) = step["args"][0]["z"]
        sent = untile(maps, array(z), 8)
        np.testing.assert_allclose(sent, weights, atol=1e-6)
        layout = step["args"][1]
        assert (
            layout["annotations[7].text"] == f"query head 8 · K/V head {7 * G // 8 + 1}"
        )  # h // (H / G)
    mqa = shown["steps"][0]["args"][0]  # G = 1: every line ends at the one K/V head
    assert all(x[1] == 3.5 for x in mqa["x"][:8])
    # what the grouping is, in the figure's title at each G (no sentence of the page says it)
    titles = [step["args"][1]["title.text"].split("<br>")[1] for step in shown["steps"]]
    assert titles == [
        "8 query heads share 1 key/value heads: multi-query attention, query heads per group: 8",
        "8 query heads share 2 key/value heads: grouped-query attention, query heads per group: 4",
        "8 query heads share 4 key/value heads: grouped-query attention, query heads per group: 2",
        "8 query heads share 8 key/value heads: multi-head attention, query heads per group: 1",
    ]
    assert grouping["layout"]["title"]["text"].endswith(titles[1])
    assert "key/value heads" not in texts(tab(at, "gqa")).replace("key/value head each", "")
    costs = at.table[0].value
    assert list(costs["G"]) == [64, 32, 16, 8, 4, 2, 1]
    row = costs[costs["G"] == 8].iloc[0]
    assert row["W_k, W_v of one layer (millions)"] == f"{2 * 8192 * 8 * 128 / 1e6:.1f}" == "16.8"
    assert row["W_q, W_k, W_v, W_o of one layer (millions)"] == "151"  # 2 · 8192² + 16.8 M
    # the cache columns cover all 80 layers, and say so (the parameters are one layer's)
    L = lesson.MODELS[lesson.COST_MODEL].n_layers
    assert row[f"cache per token ({L} layers)"] == "328 kB"
    assert row[f"cache of 4,096 tokens ({L} layers)"] == "1.34 GB"
    assert f"Parameters of one layer; caches of all {L} layers" in texts(tab(at, "gqa"))


def grouping_title(at) -> str:
    return figures(tab(at, "gqa"))[0]["layout"]["title"]["text"]


def test_a_link_opens_the_figures_at_its_g_and_keeps_it():
    """G is the grouping figure's slider (the browser moves it and writes it into the URL:
    tests/test_browser_live); a link that holds it opens both figures there."""
    at = run_page("modern_attention", {"mo_h": "4", "mo_g": "1"})
    assert_clean(at)
    assert "multi-query attention" in grouping_title(at) and qp(at)["mo_g"] == "1"
    at = run_page("modern_attention", {"mo_h": "4", "mo_g": "4"})
    assert "multi-head attention" in grouping_title(at) and qp(at)["mo_g"] == "4"
    grouping, maps = figures(tab(at, "gqa"))
    assert grouping["layout"]["sliders"][0]["active"] == maps["layout"]["sliders"][0]["active"] == 2
    assert len(maps["layout"]["annotations"]) == 4  # a titled tile per head
    assert not [w for w in at.get("slider") if w.key == "mo_g"]  # no widget of the page moves G


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_whose_g_does_not_divide_h_is_reported_and_shows_one_that_does(lang):
    at = run_page("modern_attention", {"mo_g": "3", "lang": lang})
    assert_clean(at)
    (w,) = warnings(at)
    assert "mo\\_g" in w and not errors(at)
    assert qp(at) == ({"lang": lang} if lang == "zh" else {})  # G = 2, the default
    assert figures(tab(at, "gqa"))[0]["layout"]["sliders"][0]["active"] == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_whose_g_does_not_divide_h_says_which_g_it_shows(lang):
    """G = 5 of H = 8: the page shows the largest divisor below it, 4, and says so (not "reset to
    the default": the default is 2)."""
    at = run_page("modern_attention", {"mo_g": "5", "lang": lang})
    assert_clean(at)
    (w,) = map(unescape, warnings(at))
    assert "mo_g = 4" in w and ("default" not in w if lang == "en" else "默认" not in w)
    assert qp(at)["mo_g"] == "4"
    assert "8 query heads share 4 key/value heads" in grouping_title(at) or lang == "zh"


def test_a_g_that_h_no_longer_divides_becomes_one_that_does():
    at = run_page("modern_attention", {"mo_g": "4"})
    at.slider(key="mo_h").set_value(6).run()
    assert_clean(at)
    assert not warnings(at) and not errors(at)  # no link asked for it: nothing to report
    assert qp(at) == {"mo_h": "6", "mo_g": "3"}  # the largest divisor of 6 below 4
    assert "6 query heads share 3 key/value heads" in grouping_title(at)


def test_cache_section_numbers():
    at = run_page("modern_attention", {"mo_sec": "cache"})
    assert_clean(at)
    m = metrics(at)
    assert m["Cache per token"] == "328 kB"  # Llama 2 70B: 2 · 80 · 8 · 128 · 2 B
    assert m["Cache of one sequence of 4,096 tokens"] == "1.34 GB"
    assert m["Per token with multi-head attention (bf16)"] == "2.62 MB"
    shapes, table = (frame.value for frame in tab(at, "cache").table)
    assert (
        list(shapes["model"])
        == list(table["model"])
        == [
            "GPT-2 small",
            "GPT-3 175B",
            "Llama 2 7B",
            "Llama 2 70B",
            "Llama 3 8B",
            "Llama 3 70B",
            "Mistral 7B",
            "DeepSeek-V2",
            "DeepSeek-V3",
        ]
    )
    by_model = table.set_index("model")
    assert by_model.loc["GPT-3 175B", "per token: bf16 / fp8"] == "4.72 MB / 2.36 MB"
    assert by_model.loc["DeepSeek-V3", "one sequence: bf16 / fp8"] == "9.21 GB / 4.61 GB"
    by_shape = shapes.set_index("model")
    assert by_shape.loc["DeepSeek-V2", "cached per layer"] == "latent 512 + RoPE key 64"
    assert by_shape.loc["Llama 3 8B", "cached per layer"] == "2 × 8 × 128 (32 query heads)"
    assert by_model.loc["Mistral 7B", "own context (tokens)"] == "8,192 (cache: 4,096)"
    (chart,) = figures(tab(at, "cache"))
    assert [d["name"] for d in chart["data"]] == list(table["model"])
    assert chart["layout"]["xaxis"]["type"] == "log"
    assert "1 kB = 1,000 B" in texts(at)
    assert (  # lesson.coinciding_lines, tested there
        "Lines that lie on one another (closer than 5 %; their dashes differ): Llama 2 70B and "
        "Llama 3 70B from 512 to 4,096 tokens (both 328 kB per token in bf16); Llama 3 8B and "
        "Mistral 7B from 512 to 4,096 tokens (both 131 kB per token in bf16); DeepSeek-V2 and "
        "DeepSeek-V3 from 512 to 131,072 tokens (69.1 kB and 70.3 kB per token in bf16)."
    ) in [caption.value for caption in tab(at, "cache").caption]
    sources = [e.value for e in tab(at, "cache").expander[0].markdown]
    assert len(sources) == 9 and "kv_lora_rank 512" in sources[-1]


def test_which_models_window_and_mistrals_rolling_cache():
    """The intro counts the models with full attention in every layer; Mistral's sequence metric
    names its rolling cache of one window."""
    full, n = lesson.full_attention_models()
    assert full == sum(1 for m in lesson.MODELS.values() if not m.local) and n == 9
    assert {k: m.local for k, m in lesson.MODELS.items() if m.local} == {
        "gpt3_175b": "alternating",
        "mistral_7b": "window",
    }
    at = run_page("modern_attention", {"mo_sec": "cache", "mo_model": "mistral_7b"})
    assert_clean(at)
    assert f"Of the {n} models below, {full} use full attention in every layer" in texts(at)
    assert "v0.2 dropped the window" in texts(at)
    mistral = lesson.MODELS["mistral_7b"]
    label = f"Rolling cache: {mistral.window:,} of {mistral.context:,} tokens"
    row = next(r for r in lesson.model_rows() if r.id == "mistral_7b")
    assert metrics(at)[label] == lesson.byte_size(row.bytes_token["bf16"] * mistral.window)
    zh = run_page("modern_attention", {"mo_sec": "cache", "mo_model": "mistral_7b", "lang": "zh"})
    assert f"下面的 {n} 个模型中，{full} 个在每一层都用完整注意力" in texts(zh)
    assert f"滚动缓存：{mistral.context:,} 个词元中的 {mistral.window:,} 个" in metrics(zh)


def test_cache_dtype_and_model_in_the_url():
    at = run_page(
        "modern_attention", {"mo_sec": "cache", "mo_dtype": "fp8", "mo_model": "gpt2_small"}
    )
    assert_clean(at)
    assert metrics(at)["Cache per token"] == f"{2 * 12 * 12 * 64 / 1e3:.1f} kB" == "18.4 kB"
    (chart,) = figures(tab(at, "cache"))
    gpt3 = chart["data"][1]
    assert array(gpt3["y"])[-1] == pytest.approx(4_718_592 / 2 * 2048 / 1e9, rel=1e-6)


def test_a_link_opens_the_window_figures_at_its_sinks_and_layer():
    at = run_page("modern_attention", {"mo_sec": "window", "mo_sinks": "3", "mo_wl": "2"})
    assert_clean(at)
    mask_fig, reach_fig = figures(tab(at, "window"))
    assert mask_fig["layout"]["sliders"][0]["active"] == 3
    assert [shape["visible"] for shape in mask_fig["layout"]["shapes"]] == [True] * 3 + [False]
    assert reach_fig["layout"]["sliders"][0]["active"] == 1
    assert "after 2 layers: 7 of 20" in reach_fig["layout"]["title"]["text"]
    assert qp(at) == {"mo_sec": "window", "mo_sinks": "3", "mo_wl": "2"}


def test_window_section():
    at = run_page("modern_attention", {"mo_sec": "window"})
    assert_clean(at)
    mask_fig, reach_fig = figures(tab(at, "window"))
    T, W = 20, 4
    mask = array(mask_fig["data"][0]["z"]).reshape(T, T)
    expected = [[(j <= i) and (i - j < W) for j in range(T)] for i in range(T)]
    np.testing.assert_array_equal(mask == 1, expected)
    # one slider, over the sinks kept, 0 to 4, starting at none; W is the widget's
    (sinks,) = mask_fig["layout"]["sliders"]
    assert sinks["name"] == "mo_sinks" and len(sinks["steps"]) == 5 and sinks["active"] == 0
    assert mask_fig["layout"]["title"]["text"].startswith("Sliding-window causal mask, W = 4 ")
    # the reach of every layer up to 8, each adding W − 1 = 3 positions, how many beside each
    reach = array(reach_fig["data"][0]["z"]).reshape(8, T)
    assert list(reach.sum(axis=1)) == [4, 7, 10, 13, 16, 19, 20, 20]
    assert list(reach_fig["data"][0]["y"])[2:4] == ["after layer 3: 10", "after layer 4: 13"]
    # its slider writes one layer out (mo_wl: the last by default), framed, beside the formula
    (layers,) = reach_fig["layout"]["sliders"]
    assert layers["name"] == "mo_wl" and layers["active"] == 7
    written = [step["args"][1]["title.text"].split("<br>")[1] for step in layers["steps"]]
    assert written[2] == "after 3 layers: 10 of 20 positions; L(W − 1) + 1 = 10"
    assert written[7] == "after 8 layers: 20 of 20 positions; L(W − 1) + 1 = 25"
    frames = [
        (step["args"][1]["shapes[0].y0"], step["args"][1]["shapes[0].y1"])
        for step in layers["steps"]
    ]
    assert frames == [(k - 0.5, k + 0.5) for k in range(8)]
    prose = texts(at)
    assert "at most **4** keys of its window, plus one for each sink kept (at most T = 20" in prose
    span = lesson.mistral_span()
    assert f"**{span.positions:,}** positions" in prose
    # the paper's W + 1 keys i − W … i make its W × L exact: the page says the conventions differ
    assert f"$W \\times L$ = {span.paper_back:,}" in prose
    assert f"({span.paper_positions:,} positions)" in prose
    assert f"W + 1 = {span.window + 1:,} keys" in prose and "differ by one key" in prose
    assert "miscount" not in prose and "each layer adds W − 1 new ones" not in prose


@pytest.mark.parametrize("lang,phrase", [("en", "at least 1 key"), ("zh", "至少要包含 1 个键")])
def test_window_zero(lang, phrase):
    at = run_page("modern_attention", {"mo_sec": "window", "mo_w": "0", "lang": lang})
    assert_clean(at)
    (message,) = errors(at)
    assert phrase in message


def test_flash_section():
    at = run_page("modern_attention", {"mo_sec": "flash"})
    assert_clean(at)
    flash_fig, traffic_fig = figures(tab(at, "flash"))
    (slider,) = flash_fig["layout"]["sliders"]
    # ⌈10 / 4⌉ query blocks × ⌈10 / 3⌉ key blocks; it opens on the first query block's last
    assert len(slider["steps"]) == 12 and slider["active"] == 3
    assert [s["label"] for s in slider["steps"][3:5]] == ["1·4", "2·1"]
    section = lesson.flash_section(10, 4, 3, False)
    # each step sends m, ℓ, Õ of that step, on its query block's rows
    for step, spec in zip(section.steps, slider["steps"], strict=True):
        data, layout, traces = spec["args"]  # restyle, relayout, the traces restyled
        m, ell, acc = (traces.index(k) for k in (1, 2, 3))
        np.testing.assert_allclose(np.ravel(data["z"][m]), step.m, rtol=1e-5)
        np.testing.assert_allclose(np.ravel(data["z"][ell]), step.ell, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(data["z"][acc]), step.acc, rtol=1e-5, atol=1e-6)
        r0, r1 = step.rows
        np.testing.assert_array_equal(array(data["y"][m]), np.arange(r0 + 1, r1 + 1))
        np.testing.assert_array_equal(array(layout["yaxis2.range"]), [r0 + 4.5, r0 + 0.5])
    assert "**3 × 4 tiles**" in texts(at)  # ⌈10 / 4⌉ query blocks × ⌈10 / 3⌉ key blocks
    (err,) = re.findall(r"computed at once by at most \*\*(\S+)\*\*", texts(at))
    assert float(err) < 1e-12
    assert metrics(at)["Standard ÷ flash"] == f"{68_157_440 / 17_653_760:.1f} ×"
    assert "not the point is speed" in texts(at) and "not written to be fast" in texts(at)
    assert [d["name"] for d in traffic_fig["data"]] == ["standard (Algorithm 0)", "FlashAttention"]


def test_the_page_says_when_flash_makes_more_hbm_accesses():
    # d = 256, 100 kB: M = 50,000 fp16 numbers, M / d² = 50,000 / 65,536 = 0.76, and Algorithm 1's
    # count is above Algorithm 0's (ratio 0.55 at N = 4,096)
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fd": "256"})
    assert_clean(at)
    assert float(metrics(at)["Standard ÷ flash"].rstrip(" ×")) < 1
    assert "$M / d^2$ = 0.76 ($d^2$ = 65,536, $M$ = 50,000)" in texts(at)
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fd": "256", "lang": "zh"})
    assert "$M / d^2$ = 0.76（$d^2$ = 65,536，$M$ = 50,000）" in texts(at)
    at = run_page(
        "modern_attention", {"mo_sec": "flash"}
    )  # d = 64: M / d² = 12.2, and flash reads less
    assert "M / d^2" not in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_says_why_flash_barely_saves_at_d_128(lang):
    """d = 128 with the paper's 100 kB: the counts are nearly equal (ratio → 4B_c/(3d + 4) ≈
    M/(3d²) ≈ 1); the page says why, and that the paper's speed-ups come from its kernels."""
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fd": "128", "lang": lang})
    assert_clean(at)
    section = lesson.traffic_section(4096, 128, 100)
    assert 1 < section.ratio < lesson.NEAR_RATIO
    paper = lesson.paper_m_over_d2()
    prose = texts(at)
    assert f"= {section.limit:.2f}" in prose and f"{section.ratio:.2f}" in prose
    assert f"{paper[64]:.1f}" in prose and f"{paper[128]:.2f}" in prose
    near, speed = {
        "en": (
            "does not even halve the HBM accesses",
            "come from its GPU kernels, not from this count",
        ),
        "zh": ("省下的 HBM 访问还不到一半", "来自它在 GPU 上的内核"),
    }[lang]
    assert near in prose and speed in prose
    # every Llama, Mistral and GPT-3 model of the page has this head width, as the note says
    widths = {
        m.head_dim for k, m in lesson.MODELS.items() if k.startswith(("llama", "mis", "gpt3"))
    }
    assert widths == {128}


def test_on_chip_memory_in_kib_for_nvidia():
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fm": "192"})
    assert_clean(at)
    section = lesson.traffic_section(4096, 64, 192)
    assert f"M = 192 KiB = {192 * 1024:,} B holds {section.sram_numbers:,} fp16 numbers" in (
        texts(at)
    )
    _, traffic = figures(tab(at, "flash"))
    assert traffic["layout"]["title"]["text"].endswith("(d = 64, M = 192 KiB)")


def test_a_link_opens_the_flash_figure_at_its_step():
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fstep": "6"})
    assert_clean(at)
    (slider,) = figures(tab(at, "flash"))[0]["layout"]["sliders"]
    assert slider["name"] == "mo_fstep" and slider["active"] == 5
    assert [step["value"] for step in slider["steps"]] == [str(n) for n in range(1, 13)]
    assert slider["steps"][5]["label"] == "2·2" and qp(at) == {"mo_sec": "flash", "mo_fstep": "6"}
    # step 13 of 12 tiles: reported, and the figure opens where the lesson does
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fstep": "13"})
    (w,) = warnings(at)
    assert "mo\\_fstep" in w and "mo_fstep" not in at.query_params
    assert figures(tab(at, "flash"))[0]["layout"]["sliders"][0]["active"] == 3
    # blocks of 10 rows leave 4 steps: a step past them opens on the lesson's, unreported
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fstep": "6"})
    at.number_input(key="mo_fbq").set_value(10).run()
    assert not warnings(at) and "mo_fstep" not in at.query_params


def test_flash_controls_in_the_url():
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fcausal": "true", "mo_fbq": "10"})
    assert_clean(at)
    assert qp(at)["mo_fcausal"] == "1" and qp(at)["mo_fbq"] == "10"  # the URL keeps its choices
    (slider,) = figures(tab(at, "flash"))[0]["layout"]["sliders"]
    assert len(slider["steps"]) == 4  # one query block of all 10 rows × 4 key blocks
    assert "skipped" not in slider["steps"][-1]["args"][1]["title.text"]  # rows 1–10 see key 10
    assert "**1 × 4 tiles**" in texts(at)


@pytest.mark.parametrize(
    "lang,phrase", [("en", "larger than the 10 rows"), ("zh", "超过了要切分的 10 行")]
)
def test_block_larger_than_t(lang, phrase):
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fbk": "12", "lang": lang})
    assert_clean(at)
    (message,) = errors(at)
    assert phrase in message
    assert len(figures(tab(at, "flash"))) == 1  # the traffic arithmetic does not need blocks


def test_tampered_url():
    at = run_page(
        "modern_attention",
        {
            "mo_sec": "bogus",
            "mo_h": "999",
            "mo_causal": "maybe",
            "mo_model": "gpt9",
            "mo_fn": "7",
            "mo_wl": "9",  # past the reach figure's 8 layers
            "mo_sinks": "-1",
            "mo_g": "1.5",
            "mo_fstep": "x",
        },
    )
    assert_clean(at)
    (w,) = warnings(at)
    names = ("mo_sec", "mo_h", "mo_causal", "mo_model", "mo_fn", "mo_wl", "mo_sinks", "mo_g")
    for name in (*names, "mo_fstep"):
        assert name.replace("_", "\\_") in w
        assert name not in at.query_params
    assert not errors(at) and open_tab_index(at) == 0  # the defaults: the first tab
    assert [len(figures(tab(at, sec))) for sec in lesson.SECTIONS] == [2, 1, 2, 2]


def test_each_section_holds_its_own_controls():
    """Every control but the section choice is read inside the one section it redraws."""
    tree = ast.parse((ROOT / "pages" / "modern_attention.py").read_text(encoding="utf-8"))
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    sections = {
        name
        for name, f in functions.items()
        if any(getattr(d, "id", None) == "section" for d in f.decorator_list)
    }
    assert sections == {
        "gqa_example",  # inside section_gqa, which draws the cost table once per full run
        "cache_of_a_model",  # inside section_cache, which draws the tables and sources
        "window_example",  # inside section_window, which draws the heading
        "flash_example",  # inside section_flash, which draws the heading and the recurrence
        "flash_traffic",  # beside flash_example: N, d and M redraw the arithmetic alone
    }

    def keys(f):
        return {
            n.slice.value
            for n in ast.walk(f)
            if isinstance(n, ast.Subscript) and getattr(n.value, "id", None) == "CONTROLS"
        }

    assert keys(functions["flash_traffic"]) == {"mo_fn", "mo_fd", "mo_fm"}
    assert keys(functions["gqa_example"]) == {"mo_gt", "mo_h", "mo_g", "mo_causal"}
    assert keys(functions["cache_of_a_model"]) == {"mo_dtype", "mo_model"}
    for name in ("section_gqa", "section_cache", "section_window", "section_flash"):
        assert not keys(functions[name]), name
    assert keys(functions["window_example"]) == {"mo_wt", "mo_w", "mo_sinks", "mo_wl"}
    assert keys(functions["flash_example"]) == {"mo_ft", "mo_fbq", "mo_fbk", "mo_fcausal"}
    assert keys(functions["flash_steps"]) == {"mo_fstep"}  # drawn by flash_example


@pytest.mark.parametrize("sec", lesson.SECTIONS)
def test_presenter_mode_draws_the_same_figures(sec):
    at = run_page("modern_attention", {"mo_sec": sec, "present": "1"})
    assert_clean(at)
    normal = run_page("modern_attention", {"mo_sec": sec})
    assert len(figures(at)) == len(figures(normal)) > 0
    assert figures(at)[0]["layout"]["font"]["size"] > figures(normal)[0]["layout"]["font"]["size"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"mo_g": "1"},
        {"mo_sec": "cache", "mo_model": "deepseek_v2"},
        {"mo_sec": "window", "mo_w": "6"},
        {"mo_sec": "flash", "mo_fcausal": "1", "present": "1"},
        {"mo_sec": "flash", "mo_fd": "256"},
    ],
)
def test_chinese_views_show_no_english(params):
    at = run_page("modern_attention", {"lang": "zh"} | params)
    assert_clean(at)
    assert english_words(at) == {}
    assert at.tabs[0].label == "分组查询注意力"  # d2l-zh's term, whichever tab is open


def test_one_chinese_term_for_attention_sink_glossed_once():
    """注意力汇点 is the attention sink on every page; 注意力汇聚 stays d2l-zh's attention pooling
    (kernel regression); the sink is glossed against it once, where this page defines it. An MLP
    is 多层感知机（MLP） where it is named first."""
    import json

    zh = {
        path.stem: path.read_text("utf-8")
        for path in (ROOT / "ui" / "locales" / "zh").glob("*.json")
    }
    assert not [name for name, text in zh.items() if "汇聚点" in text]
    sinks = [name for name, text in zh.items() if "汇点" in text]
    assert "modern_attention" in sinks and "figures_modern_attention" in sinks
    glossed = [name for name, text in zh.items() if "attention sink" in text]
    assert glossed == ["modern_attention"]
    window = json.loads(zh["modern_attention"])["window_intro"]
    assert window.index("注意力汇点") < window.index("注意力汇聚") and "attention pooling" in window
    training = json.loads(zh["training"])
    assert training["mlp"] == "多层感知机（MLP）" and "多层感知机（MLP）" in training["mlp_help"]


def test_chinese_lists_use_the_full_width_semicolon():
    """A list joined in prose takes common.list_sep: ； in Chinese (the decoder's contexts too)."""
    zh = run_page("decoder", {"lang": "zh"})
    assert_clean(zh)
    contexts = [c for c in texts(zh).split("\n") if "GPT-3" in c and "2,048" in c]
    assert contexts and all("; " not in c for c in contexts), contexts
    assert any("；" in c for c in contexts)
