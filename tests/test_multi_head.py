"""Multi-head attention against independent implementations, the shape explorer's numbers, random
heads.

Acceptance 2: ``multi_head_attention`` equals a plain per-head loop and the concat-then-W_O formula,
both written out here without any visattn helper. Acceptance 3: GPT-3's 4 × 12288² = 603,979,776
attention parameters per layer and 12288 / 96 = 128 per head."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import visattn
from visattn import shapes
from visattn.errors import InputError
from visattn.models import designed
from visattn.models.random import random_params, run_random

SENTENCE = "The animal didn't cross the street because it was too tired."


# ── independent references ────────────────────────────────────────────────────────────────────────
def _softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def per_head_loop(X, W_q, W_k, W_v, W_o, n_heads, causal=False):
    """Each head on its own columns, its output projected by its own rows of W_o, the projections
    summed.

    MHA(X) = Σ_h softmax(X W_q^h (X W_k^h)ᵀ / √Dh) X W_v^h · W_o^h, with W_*^h = columns h·Dh …
    (h+1)·Dh and W_o^h = rows h·Dh … (h+1)·Dh — never forming the concatenation."""
    T, D = X.shape
    Dh = D // n_heads
    out = np.zeros((T, D))
    weights, heads = [], []
    for h in range(n_heads):
        cols = slice(h * Dh, (h + 1) * Dh)
        q, k, v = X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols]  # (T, Dh) each
        s = np.empty((T, T))
        for i in range(T):  # scores one pair at a time
            for j in range(T):
                s[i, j] = sum(q[i, c] * k[j, c] for c in range(Dh)) / np.sqrt(Dh)
                if causal and j > i:
                    s[i, j] = -np.inf
        a = _softmax_rows(s)
        head = a @ v
        weights.append(a)
        heads.append(head)
        out += head @ W_o[cols, :]  # (T, Dh) x (Dh, D)
    return np.array(weights), np.array(heads), out


def concat_then_wo(X, W_q, W_k, W_v, W_o, n_heads):
    """The formula as written in the paper: Concat(head_1, …, head_H) W_o, head_h = Attention(Q_h,
    K_h, V_h)."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    parts = np.split(np.arange(X.shape[1]), n_heads)
    heads = [_softmax_rows(Q[:, c] @ K[:, c].T / np.sqrt(len(c))) @ V[:, c] for c in parts]
    concat = np.concatenate(heads, axis=1)  # (T, H·Dh) = (T, D)
    return concat, concat @ W_o


@st.composite
def mha_inputs(draw):
    T = draw(st.integers(1, 7))
    H = draw(st.integers(1, 4))
    Dh = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([0.1, 1.0, 3.0]))
    rng = np.random.default_rng(seed)
    D = H * Dh
    X = rng.standard_normal((T, D)) * scale
    Ws = [rng.standard_normal((D, D)) / np.sqrt(D) for _ in range(4)]
    return X, Ws, H


# ── acceptance 2 ──────────────────────────────────────────────────────────────────────────────────
@given(mha_inputs(), st.booleans())
def test_multi_head_equals_a_per_head_loop(inputs, causal):
    X, (W_q, W_k, W_v, W_o), H = inputs
    r = visattn.multi_head_attention(X, W_q, W_k, W_v, W_o, H, causal=causal)
    weights, heads, out = per_head_loop(X, W_q, W_k, W_v, W_o, H, causal=causal)
    T, D = X.shape
    assert (
        r.weights.shape == (H, T, T)
        and r.heads.shape == (H, T, D // H)
        and r.output.shape == (T, D)
    )
    np.testing.assert_allclose(r.weights, weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.heads, heads, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.output, out, rtol=1e-9, atol=1e-10)


@given(mha_inputs())
def test_multi_head_equals_concat_then_wo(inputs):
    X, (W_q, W_k, W_v, W_o), H = inputs
    r = visattn.multi_head_attention(X, W_q, W_k, W_v, W_o, H)
    concat, out = concat_then_wo(X, W_q, W_k, W_v, W_o, H)
    np.testing.assert_allclose(r.concat, concat, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.output, out, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(visattn.merge_heads(r.heads), r.concat)
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0)


def test_one_head_is_single_head_self_attention():
    rng = np.random.default_rng(1)
    X, W_q, W_k, W_v, W_o = (
        rng.standard_normal((5, 6)),
        *(rng.standard_normal((6, 6)) for _ in range(4)),
    )
    r = visattn.multi_head_attention(X, W_q, W_k, W_v, W_o, 1)
    s = visattn.self_attention(X, W_q, W_k, W_v)
    np.testing.assert_allclose(r.weights[0], s.weights)
    np.testing.assert_allclose(r.output, s.output @ W_o)


def test_designed_layer_is_the_formula_written_out():
    """The designed model's first layer, recomputed by the reference: X → MHA → residual →
    LayerNorm."""
    r = designed.run(SENTENCE)
    p, tr = designed.DESIGNED_CONFIG.layers[0], r.layers[0]
    concat, out = concat_then_wo(r.X, p.W_q, p.W_k, p.W_v, p.W_o, designed.N_HEADS)
    np.testing.assert_allclose(tr.mha.output, out, atol=1e-12)
    res = r.X + out
    z = (res - res.mean(axis=1, keepdims=True)) / np.sqrt(res.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(tr.Z, z, atol=1e-12)


# ── acceptance 3: the shape explorer ──────────────────────────────────────────────────────────────
def test_gpt3_numbers():
    s = shapes.gpt3_shapes()
    assert (s.T, s.d_model, s.n_heads) == (50, 12288, 96)
    assert s.d_head == 128 == 12288 // 96
    assert s.params == {name: 12288**2 for name in ("W_q", "W_k", "W_v", "W_o")}
    assert s.params_per_layer == 4 * 12288**2 == 603_979_776
    assert type(s.params_per_layer) is int
    assert s.params_per_head == 4 * 12288 * 128 and s.params_per_head * 96 == s.params_per_layer
    assert s.weight_entries == 96 * 50 * 50
    assert s.bias_params == 4 * 12288 and s.layer_norm_params == 2 * 12288
    want = {
        "X": (50, 12288),
        "W_q": (12288, 12288),
        "W_k": (12288, 12288),
        "W_v": (12288, 12288),
        "W_q_h": (12288, 128),
        "Q": (50, 12288),
        "K": (50, 12288),
        "V": (50, 12288),
        "Q_h": (50, 128),
        "K_h": (50, 128),
        "V_h": (50, 128),
        "A_h": (50, 50),
        "A": (96, 50, 50),
        "head_h": (50, 128),
        "concat": (50, 12288),
        "W_o": (12288, 12288),
        "MHA": (50, 12288),
        "residual": (50, 12288),
        "Z": (50, 12288),
    }
    assert {m.name: m.shape for m in s.matrices} == want
    assert {m.name for m in s.matrices if m.learned} == {"W_q", "W_k", "W_v", "W_o"}
    assert s.matrix("W_q_h").size == 12288 * 128


def test_huge_sizes_are_exact_and_allocate_nothing():
    s = shapes.multi_head_shapes(10**6, 10**6, 1000)  # 4·10¹² parameters: arithmetic only
    assert s.params_per_layer == 4 * 10**12 and s.d_head == 1000
    assert s.matrix("A").size == 1000 * 10**12


@pytest.mark.parametrize("d_model, n_heads", [(12288, 97), (30, 4), (10, 20)])
def test_heads_must_divide_d_model(d_model, n_heads):
    with pytest.raises(ValueError, match=f"d_model={d_model}.*n_heads={n_heads}|n_heads={n_heads}"):
        shapes.multi_head_shapes(50, d_model, n_heads)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "12", None])
def test_sizes_must_be_whole_positive(bad):
    with pytest.raises(ValueError):
        shapes.multi_head_shapes(bad, 12, 3)
    with pytest.raises(ValueError):
        shapes.multi_head_shapes(5, bad, 3)


@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 4))
def test_shapes_match_a_real_run(T, H, Dh):
    """The explorer's shapes are the shapes multi_head_attention actually produces."""
    D = H * Dh
    s = shapes.multi_head_shapes(T, D, H)
    rng = np.random.default_rng(T * 100 + H * 10 + Dh)
    X, *Ws = (rng.standard_normal(shape) for shape in [(T, D)] + [(D, D)] * 4)
    r = visattn.multi_head_attention(X, *Ws, H)
    assert r.Q.shape == (H, *s.matrix("Q_h").shape) == r.K.shape == r.V.shape
    assert r.weights.shape == s.matrix("A").shape and r.weights.shape[1:] == s.matrix("A_h").shape
    assert r.heads.shape[1:] == s.matrix("head_h").shape
    assert r.concat.shape == s.matrix("concat").shape == r.output.shape == s.matrix("MHA").shape
    assert sum(W.size for W in Ws) == s.params_per_layer


# ── random heads ──────────────────────────────────────────────────────────────────────────────────
def test_random_heads_are_seeded_and_diffuse():
    tokens = visattn.tokenize(SENTENCE)
    a, b = run_random(tokens, 32, 4, seed=0), run_random(tokens, 32, 4, seed=0)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not np.allclose(a.weights, run_random(tokens, 32, 4, seed=1).weights)
    T = len(tokens)
    assert a.weights.shape == (designed.N_LAYERS, 4, T, T)
    np.testing.assert_allclose(a.weights.sum(axis=-1), 1.0)
    np.testing.assert_allclose(a.X, a.embedding + a.positions)
    # untrained: no row comes close to one-hot, and on average a row's top weight is within 3×
    # uniform
    for seed in range(5):
        w = run_random(tokens, 64, 8, seed=seed).weights
        assert w.max() < 0.7 and w.max(axis=-1).mean() < 3 / T
    # while the designed heads are sharp
    assert designed.run(SENTENCE).weights.max(axis=-1).mean() > 4 / T


def test_random_init_bounds_follow_pytorch():
    (p,) = random_params(48, seed=3, n_layers=1)
    b_in, b_out = np.sqrt(6 / (4 * 48)), 1 / np.sqrt(48)
    for W in (p.W_q, p.W_k, p.W_v):
        assert np.abs(W).max() <= b_in and np.abs(W).max() > 0.9 * b_in
    assert np.abs(p.W_o).max() <= b_out


def test_random_heads_refuse_indivisible_heads_and_allow_odd_width():
    tokens = visattn.tokenize(SENTENCE)
    with pytest.raises(ValueError, match="not divisible"):
        run_random(tokens, 30, 4, seed=0)
    r = run_random(tokens, 15, 5, seed=0)  # odd d_model: positions drop their last cosine column
    assert r.X.shape == (len(tokens), 15) and r.layers[0].mha.Q.shape == (5, len(tokens), 3)


def test_random_layers_are_the_formula_written_out():
    """The random model runs the same post-LN block: each layer recomputed here from its own
    weights."""
    tokens = visattn.tokenize(SENTENCE)
    r = run_random(tokens, 24, 3, seed=7)
    x = r.X
    for p, tr in zip(r.params, r.layers, strict=True):
        _, out = concat_then_wo(x, p.W_q, p.W_k, p.W_v, p.W_o, 3)
        res = x + out
        z = (res - res.mean(axis=1, keepdims=True)) / np.sqrt(res.var(axis=1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(tr.residual, res, atol=1e-12)
        np.testing.assert_allclose(tr.Z, z, atol=1e-12)
        x = z


# ── the lesson ────────────────────────────────────────────────────────────────────────────────────
def test_lesson_counts_every_token_of_a_long_text():
    """A text far over the limit is refused with its real token count (it used to say "the sentence
    is empty")."""
    from visattn.errors import InputError
    from visattn.lessons import multi_head as lesson

    with pytest.raises(InputError) as e:
        lesson.run("w " * 150_000, "designed", 32, 4, 0)
    assert e.value.code == "too_many_tokens" and e.value.params == {"n": 150_000, "limit": 64}
    with pytest.raises(InputError) as e:
        lesson.run("   ", "designed", 32, 4, 0)
    assert e.value.code == "text_empty"
    with pytest.raises(InputError) as e:
        lesson.run(SENTENCE, "random", 30, 4, 0)
    assert (
        e.value.code == "heads_divide" and e.value.params["divisors"] == "1, 2, 3, 5, 6, 10, 15, 30"
    )


def test_lesson_focus_and_layer_maps():
    from visattn.lessons import multi_head as lesson

    r = lesson.run(SENTENCE, "designed", 32, 4, 0)
    it = r.tokens.index("it")
    assert lesson.focus_default(r.tokens) == it
    f = lesson.focus(r, 1, it)
    lines = lesson.focus_lines(r, 1, it, only_focus=True)
    w = r.weights[1]
    assert f.best == tuple(
        max(range(len(r.tokens)), key=lambda j, h=h: w[h, it, j]) for h in range(4)
    )
    assert r.tokens[f.best[0]] == "animal" and r.tokens[f.best[1]] == "tired"
    assert lines[:, it].tolist() == w[:, it].tolist() and not np.delete(lines, it, axis=1).any()
    v = lesson.layer_maps(r, 1)
    assert v.row_max_mean == pytest.approx(
        sum(max(row) for head in w for row in head) / (4 * len(r.tokens))
    )
    assert v.uniform == 1 / len(r.tokens)


def test_lesson_pipeline_panels_are_the_run():
    from visattn.lessons import multi_head as lesson

    r = lesson.run(SENTENCE, "random", 16, 2, 3)
    p = lesson.pipeline(r, 1, 1)
    assert (p.D, p.H, p.Dh, p.lo, p.hi) == (16, 2, 8, 9, 16)
    panels = {m.png: m for step in p.steps for row in step.rows for m in row}
    assert "mh_pipe_pe" not in panels  # positions belong to layer 1 only
    tr = r.layers[1]
    np.testing.assert_allclose(panels["mh_pipe_q"].m, (tr.X_in @ r.params[1].W_q)[:, 8:], atol=1e-9)
    np.testing.assert_allclose(panels["mh_pipe_wo"].m, r.params[1].W_o)
    assert panels["mh_pipe_a"].weights and panels["mh_pipe_a"].m.shape == (len(r.tokens),) * 2


def test_lesson_explorer_numbers():
    from visattn.lessons import multi_head as lesson

    v = lesson.explore(50, 12288, 96)
    assert v.gpt3 and v.numbers["total"] == "603,979,776" and v.numbers["dh"] == "128"
    assert v.numbers["gpt3_total"] == f"{96 * 4 * 12288**2:,}"
    table = v.table(
        ["m", "shape", "n", "learned", "what"],
        {name: name.lower() for name in (m.name for m in v.s.matrices)},
    )
    assert (
        list(table.index) == [m.name for m in v.s.matrices] and table.loc["W_o", "learned"] == "✓"
    )
    assert table.loc["A", "shape"] == "(96, 50, 50)" and table.loc["A", "n"] == f"{96 * 50 * 50:,}"


def test_designed_input_layout_adds_up():
    lay = designed.input_layout()
    assert (lay.features, lay.positions, lay.slots, lay.zero, lay.unused) == (15, 8, 6, 1, 2)
    assert (
        lay.features + lay.positions + lay.slots + lay.zero + lay.unused
        == lay.d_model
        == designed.D_MODEL
    )
    assert lay.d_model % lay.n_heads == 0 and lay.d_head == lay.d_model // lay.n_heads
    assert (
        lay.d_model - lay.unused
    ) % lay.n_heads != 0  # why the padding: 30 columns do not split into 4 heads


# ── the lesson's figures pass Plotly's full validation (the builders skip it for speed) ───────────
def test_lesson_figures_pass_plotly_validation():
    import plotly.graph_objects as go

    from visattn.figures import multi_head as mh_fig
    from visattn.lessons import multi_head as lesson

    r = lesson.run(SENTENCE, "random", 12, 3, 0)
    grid = mh_fig.layer_grid(r.weights[0], r.tokens, ["a", "b", "c"], 2, value_name="w")
    assert len(go.Figure(grid.to_dict()).data) == 3  # the fourth cell is blank padding
    it = r.tokens.index("it")
    focus = lesson.focus(r, 0, it)
    for per_row in (2, 4):
        bars = go.Figure(
            mh_fig.focus_bars(
                r.tokens, r.weights[0, 0, it], replace(focus, per_row=per_row), 0, "a"
            ).to_dict()
        )
        assert bars.layout.height == 320 and (bars.data[0].text is None) == (per_row > 2)
    for fig in (
        mh_fig.focus_heatmap(r.weights[0][:, it, :], r.tokens, ["a", "b", "c"], it),
        mh_fig.lines_figure(r.weights[0], r.tokens, 0, ["a", "b", "c"], [0, 2]),
        mh_fig.head_figure(r.weights[0, 1], r.tokens, "b", 0),
    ):
        assert go.Figure(fig.to_dict()).data
    p = lesson.pipeline(r, 0, 2)
    for step in p.steps:
        for row in step.rows:
            for panel in row:
                fig = go.Figure(mh_fig.step_matrix(panel, font_size=20).to_dict())
                assert fig.data[0].z is not None


def test_every_word_of_the_figures_is_a_field_of_words():
    """Titles, axis titles and hover names come from ``words``, templates filled with the data
    (layers counted from 1, weights to two decimals); nothing passed: English."""
    from visattn.figures import multi_head as mh_fig
    from visattn.lessons import multi_head as lesson

    r = lesson.run(SENTENCE, "designed", 32, 4, 0)
    it = r.tokens.index("it")
    words = mh_fig.Words(
        query="Q!",
        key="K!",
        head="H!",
        weight="W!",
        value="V!",
        token="T!",
        dimension="D!",
        position="P!",
        focus_title="{head}|{token}|{target}|{w}",
        focus_uniform_title="{head}|{token}|~|{lo}|{hi}",
        focus_heat_title="<{token}>",
        lines_title="lines {layer}",
        one_title="{head} @ {layer}",
        panel_shape="S {name} {T}x{c}",
        panel_head="H {n} {T}x{c}",
        panel_concat="C {T}x{c}",
        panel_mha="M {T}x{c}",
    )
    grid = mh_fig.layer_grid(r.weights[1], r.tokens, ["a", "b", "c", "d"], 2, words=words)
    assert "Q!: %{y}" in grid.data[0].hovertemplate and "K!: %{x}" in grid.data[0].hovertemplate
    focus = lesson.focus(r, 1, it)
    row = r.weights[1, 0, it]  # the coreference head's row: "it" → "animal"
    best = int(np.argmax(row))
    bars = mh_fig.focus_bars(r.tokens, row, focus, 0, "coref", value_name="v", words=words)
    assert bars.layout.title.text == f"coref|it|{r.tokens[best]}|{row[best]:.2f}"
    assert bars.layout.yaxis.title.text == "v"
    uniform = replace(focus, uniform=(True,) * 4)
    bars = mh_fig.focus_bars(r.tokens, row, uniform, 0, "coref", words=words)
    assert bars.layout.title.text == f"coref|it|~|{row.min():.2f}|{row.max():.2f}"
    heat = mh_fig.focus_heatmap(r.weights[1][:, it, :], r.tokens, list("abcd"), it, words=words)
    assert (heat.layout.title.text, heat.layout.xaxis.title.text) == ("<it>", "K!")
    assert heat.layout.yaxis.title.text == "H!"
    lines = mh_fig.lines_figure(r.weights[1], r.tokens, 1, list("abcd"), [0], words=words)
    assert lines.layout.title.text == "lines 2"
    one = mh_fig.head_figure(r.weights[1, 0], r.tokens, "coref", 1, words=words)
    assert (one.layout.title.text, one.layout.yaxis.title.text) == ("coref @ 2", "Q!")
    p = lesson.pipeline(r, 1, 0)
    panels = {panel.name: panel for step in p.steps for row in step.rows for panel in row}
    T = len(r.tokens)
    q = mh_fig.step_matrix(panels["Q₁"], words=words)
    assert q.layout.title.text == f"S Q₁ {T}x8" and q.layout.yaxis.title.text == "T!"
    assert "V!" in q.data[0].hovertemplate
    a = mh_fig.step_matrix(panels["A₁"], words=words)
    assert (a.layout.yaxis.title.text, a.layout.xaxis.title.text) == ("Q!", "K!")
    assert "W!" in a.data[0].hovertemplate
    english = mh_fig.step_matrix(panels["A₁"])
    assert english.layout.title.text == f"A₁: ({T}, {T})"
    assert english.layout.xaxis.title.text == "key"


# ── value norms and the readings of the designed and random models ──────────────────────────────
def _loop_norms(r, params, H):
    """‖x_j W_V^h W_O^h‖ by loops over layers, heads and tokens, from each layer's traced input."""
    out = np.zeros((len(params), H, len(r.tokens)))
    for layer, p in enumerate(params):
        dh = p.W_v.shape[1] // H
        for h in range(H):
            for j in range(len(r.tokens)):
                v = sum(
                    r.layers[layer].X_in[j, d] * p.W_v[d, h * dh : (h + 1) * dh]
                    for d in range(p.W_v.shape[0])
                )
                out[layer, h, j] = np.sqrt(sum(x * x for x in v @ p.W_o[h * dh : (h + 1) * dh]))
    return out


def test_value_norms_of_both_models_match_a_loop():
    from visattn.lessons import multi_head as mh

    r = designed.run("The animal didn't cross the street because it was too tired.")
    np.testing.assert_allclose(
        mh.value_norms(r), _loop_norms(r, designed.DESIGNED_CONFIG.layers, 4), rtol=1e-9
    )
    q = run_random("a cat sat on the mat".split(), 12, 3, 5)
    np.testing.assert_allclose(mh.value_norms(q), _loop_norms(q, q.params, 3), rtol=1e-9)


def test_readings_of_the_designed_model_cover_every_layer():
    from visattn.lessons import multi_head as mh

    r = designed.run("The animal didn't cross the street because it was too tired.")
    A, T = r.weights.astype(np.float64), len(r.tokens)
    roll = mh.readings(r, "rollout", "k")
    assert (
        roll.text == "k"
        and roll.reading == "rollout"
        and roll.w.shape == (designed.N_LAYERS, 1, T, T)
    )
    first = 0.5 * np.eye(T) + 0.5 * A[0].mean(axis=0)
    second = 0.5 * np.eye(T) + 0.5 * A[1].mean(axis=0)
    np.testing.assert_allclose(
        roll.w[:, 0], [first, second @ first], atol=1e-12
    )  # rows of each already sum to 1
    flow = mh.readings(r, "flow").w
    assert flow.shape == (1, 1, T, T)
    # flow: one map for every layer
    np.testing.assert_array_equal(mh.maps_of_layer(flow, 1), flow[0])
    np.testing.assert_allclose(
        mh.layer_maps(r, 1, mh.readings(r, "mean").w).weights, A[1].mean(axis=0)[None], atol=1e-12
    )


# ── near-uniform rows, Chinese sentences ────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    ("row", "uniform"),
    [
        ([1 / 12] * 12, True),  # uniform: every key 1/T
        ([0.37, 0.21, 0.21, 0.21], True),  # 0.37 < 1.5 / 4 = 0.375
        ([0.38, 0.62 / 3, 0.62 / 3, 0.62 / 3], False),  # 0.38 ≥ 0.375: a winner
        ([0.07] * 6 + [0.09] * 4 + [0.08] * 2, True),  # the broad head's 0.07–0.09 over T = 12
        ([2.0, 2.0, 2.0, 2.9], True),  # a row not summing to 1: 2.9 < 1.5 × mean 2.225
        ([0.0, 0.0, 1.0], False),
    ],
)
def test_near_uniform_rule_on_rows_by_hand(row, uniform):
    from visattn.lessons import multi_head as lesson

    assert lesson.near_uniform(np.array(row)) is uniform


def test_focus_marks_the_broad_head_near_uniform():
    from visattn.lessons import multi_head as lesson

    for text, it in ((SENTENCE, "it"), (lesson.SENTENCE_ZH, "它")):
        r = lesson.run(text, "designed", 32, 4, 0)
        q = r.tokens.index(it)
        f = lesson.focus(r, 1, q)
        T = len(r.tokens)
        by_hand = tuple(bool(max(r.weights[1, h, q]) < 1.5 / T) for h in range(4))
        assert f.uniform == by_hand == (False, False, False, True)
        assert f.low[3] == pytest.approx(min(r.weights[1, 3, q]))


def test_chinese_text_is_cut_by_the_lexicon_for_both_models():
    from visattn.lessons import multi_head as lesson

    words = "动物 没有 穿过 街道 ， 因为 它 太 累 了 。".split()
    assert lesson.tokens_of(lesson.SENTENCE_ZH) == words
    assert lesson.run(lesson.SENTENCE_ZH, "random", 32, 4, 0).tokens == words
    assert lesson.tokens_of(SENTENCE) == visattn.tokenize(SENTENCE)  # English as before
    with pytest.raises(InputError) as e:
        lesson.run("动物" * 65, "designed", 32, 4, 0)  # 130 characters, 65 words
    assert e.value.params == {"n": 65, "limit": 64}
    assert lesson.run("动物" * 64, "designed", 32, 4, 0).tokens == ["动物"] * 64


def test_focus_defaults_to_it_or_ta_and_words_follow_the_sentence():
    from visattn.lessons import multi_head as lesson

    apple = lesson.tokens_of(lesson.PRESETS_BY_LANG["zh"]["apple"])
    assert apple[0] == "我" and lesson.focus_default(apple) == apple.index("它")
    assert lesson.focus_default(["He", "ran", "."]) == 0  # no it: the first pronoun
    zh = lesson.run(lesson.SENTENCE_ZH, "designed", 32, 4, 0)
    en = lesson.run(SENTENCE, "designed", 32, 4, 0)
    for r in (zh, en):
        words = lesson.example_words(r)
        for name in ("it", "animal", "tired", "negation"):
            assert words[name] in r.tokens  # every word the explanations name is in the sentence
    assert lesson.unknown_words(zh) == []  # 了 is a listed particle
    assert lesson.controls_for("zh")["mh_text"].default == lesson.SENTENCE_ZH
    assert lesson.controls_for("en")["mh_text"] == lesson.CONTROLS["mh_text"]
