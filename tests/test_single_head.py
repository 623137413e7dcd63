"""The single-head lesson's numbers: article 001's worked example, attention properties, and why
√d_k.

The worked example is recomputed here with plain Python loops (no visattn, no NumPy) and every
matrix the page shows is compared with visattn.self_attention."""

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_util import array
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import visattn
from visattn import scaling
from visattn.attention import SelfAttentionTrace
from visattn.figures import single_head as single_head_figures
from visattn.lessons import single_head as lesson

# Article 001 ("Thinking Machines"), as printed there.
X = [[1, 0, 1, 0], [0, 2, 0, 2]]
W_Q = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
W_V = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]


# --- an independent implementation: lists and loops only ------------------------------------------
def matmul(A, B):
    return [
        [sum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))]
        for i in range(len(A))
    ]


def transpose(A):
    return [[A[i][j] for i in range(len(A))] for j in range(len(A[0]))]


def softmax_row(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def reference(X, W_q, W_k, W_v, scale=True):
    Q, K, V = matmul(X, W_q), matmul(X, W_k), matmul(X, W_v)
    raw = matmul(Q, transpose(K))
    d_k = len(W_q[0])
    scores = [[v / math.sqrt(d_k) for v in row] for row in raw] if scale else raw
    weights = [softmax_row(row) for row in scores]
    Z = matmul(weights, V)
    return dict(Q=Q, K=K, V=V, raw=raw, scores=scores, weights=weights, Z=Z)


REF = reference(X, W_Q, W_K, W_V)


def test_reference_by_hand():
    """The loops agree with a hand calculation (x₁ = [1,0,1,0] adds rows 1 and 3 of each W)."""
    assert REF["Q"] == [[2, 0, 1, 1], [0, 4, 2, 2]]
    assert REF["K"] == [[0, 1, 2, 1], [4, 2, 0, 2]]
    assert REF["V"] == [[1, 1, 1, 1], [2, 2, 2, 2]]
    assert REF["raw"] == [[3, 10], [10, 12]]
    assert REF["scores"] == [[1.5, 5.0], [5.0, 6.0]]
    e = math.exp(-3.5)
    assert REF["weights"][0] == pytest.approx([e / (1 + e), 1 / (1 + e)], abs=1e-15)
    assert REF["weights"][0][0] == pytest.approx(0.0293, abs=5e-5)
    assert REF["Z"][0] == pytest.approx([1 + 1 / (1 + e)] * 4, abs=1e-12)  # ≈ 1.9707


def test_worked_example_every_matrix():
    tr = visattn.self_attention(X, W_Q, W_K, W_V)
    for name, got in (
        ("Q", tr.Q),
        ("K", tr.K),
        ("V", tr.V),
        ("raw", tr.raw_scores),
        ("scores", tr.scores),
        ("weights", tr.weights),
        ("Z", tr.output),
    ):
        np.testing.assert_allclose(
            got, np.array(REF[name], dtype=float), rtol=0, atol=1e-12, err_msg=name
        )
    np.testing.assert_allclose(tr.X, X)


def test_worked_example_unscaled():
    tr = visattn.self_attention(X, W_Q, W_K, W_V, scale=False)
    ref = reference(X, W_Q, W_K, W_V, scale=False)
    np.testing.assert_allclose(tr.scores, ref["raw"])
    np.testing.assert_allclose(tr.weights, ref["weights"], atol=1e-12)
    np.testing.assert_allclose(tr.output, ref["Z"], atol=1e-12)


def test_printed_numbers_do_not_follow():
    """Article 001 prints q₁ = [2,0,2,0] and softmax([2,8]) ≈ [0.012, 0.988]; neither is what the
    maths gives."""
    assert REF["Q"][0] != [2, 0, 2, 0]
    assert softmax_row([2, 8])[0] == pytest.approx(0.00247, abs=1e-5)
    assert 0.012 * 1 + 0.988 * 2 == pytest.approx(1.988)


# --- properties (acceptance 2) --------------------------------------------------------------------
finite = st.floats(-3, 3, allow_nan=False, width=64)


@st.composite
def head(draw):
    T = draw(st.integers(1, 7))
    D = draw(st.integers(1, 6))
    d_k = draw(st.integers(1, 6))
    Xs = draw(arrays(np.float64, (T, D), elements=finite))
    Ws = [draw(arrays(np.float64, (D, d_k), elements=finite)) for _ in range(3)]
    return Xs, Ws


@given(head(), st.floats(0.05, 5.0))
def test_causal_zero_above_diagonal_rows_sum_to_one(h, temperature):
    Xs, (Wq, Wk, Wv) = h
    tr = visattn.self_attention(Xs, Wq, Wk, Wv, causal=True, temperature=temperature)
    T = Xs.shape[0]
    for i in range(T):
        for j in range(i + 1, T):
            assert tr.weights[i, j] == 0.0  # exactly, not approximately
    np.testing.assert_allclose(tr.weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.array_equal(tr.mask, np.tril(np.ones((T, T), dtype=bool)))


@given(head(), st.booleans())
def test_low_temperature_is_one_hot_on_largest_score(h, scale):
    Xs, (Wq, Wk, Wv) = h
    base = visattn.self_attention(Xs, Wq, Wk, Wv, scale=scale)
    s = base.scores
    top2 = np.sort(s, axis=1)[:, -2:] if s.shape[1] > 1 else None
    assume(top2 is None or (top2[:, 1] - top2[:, 0]).min() > 1e-3)  # a unique largest score per row
    prev = None
    for tau in (1.0, 0.1, 1e-2, 1e-4, 1e-6):
        w = visattn.self_attention(Xs, Wq, Wk, Wv, scale=scale, temperature=tau).weights
        at_max = w[np.arange(len(w)), s.argmax(axis=1)]
        if prev is not None:
            assert (at_max >= prev - 1e-12).all()  # sharpens monotonically as τ falls
        prev = at_max
    one_hot = np.eye(s.shape[1])[s.argmax(axis=1)]
    np.testing.assert_allclose(w, one_hot, atol=1e-6)


@given(head(), st.floats(0.05, 5.0))
def test_scaling_off_scores_are_qkt(h, temperature):
    Xs, (Wq, Wk, Wv) = h
    tr = visattn.self_attention(Xs, Wq, Wk, Wv, scale=False, temperature=temperature)
    Q, K = matmul(Xs.tolist(), Wq.tolist()), matmul(Xs.tolist(), Wk.tolist())
    np.testing.assert_allclose(tr.scores, matmul(Q, transpose(K)), atol=1e-9)
    on = visattn.self_attention(Xs, Wq, Wk, Wv, scale=True, temperature=temperature)
    np.testing.assert_allclose(on.scores, tr.scores / np.sqrt(Wq.shape[1]), atol=1e-9)
    np.testing.assert_allclose(on.raw_scores, tr.scores, atol=1e-9)


def test_scores_stay_scaled_when_temperature_equals_sqrt_dk():
    """τ = √d_k cancels the scale in the logits but the trace's scores are still QKᵀ/√d_k."""
    tr = visattn.self_attention(X, W_Q, W_K, W_V, temperature=2.0)
    np.testing.assert_allclose(tr.scores, REF["scores"])
    np.testing.assert_allclose(
        tr.weights, [softmax_row([v / 2 for v in row]) for row in REF["scores"]], atol=1e-12
    )


# --- why √d_k (acceptance 3) ----------------------------------------------------------------------
@pytest.mark.parametrize("d_k", [1, 2, 8, 64, 256, 1024])
def test_measured_variance_near_theory(d_k):
    s = scaling.sample_dot_products(d_k, seed=0)  # the sample size the page uses
    n = len(s.raw)
    assert n == min(
        20_000, 2**22 // (2 * d_k)
    )  # 20 000 pairs, fewer where 2·d_k draws a pair pass 2²² draws
    assert abs(s.raw_var / d_k - 1) < 0.10
    assert abs(s.scaled_var - 1) < 0.10
    # mean 0 (not 1, as article 004 prints): within 5 standard errors
    assert abs(s.raw_mean) < 5 * math.sqrt(d_k / n)
    assert abs(s.scaled_mean) < 5 * math.sqrt(1 / n)
    np.testing.assert_allclose(s.scaled, s.raw / math.sqrt(d_k))


def test_sampling_is_reproducible_and_seeded():
    a, b, c = (scaling.sample_dot_products(16, seed=s) for s in (3, 3, 4))
    assert np.array_equal(a.raw, b.raw) and not np.array_equal(a.raw, c.raw)


def test_peakedness_grows_without_scaling_only():
    p = scaling.softmax_peakedness([1, 16, 256, 1024], n_keys=16, seed=0)
    assert (np.diff(p.max_weight_raw) > 0).all() and p.max_weight_raw[-1] > 0.9
    assert (np.diff(p.entropy_raw) < 0).all()
    assert np.ptp(p.max_weight_scaled) < 0.1  # about the same for every d_k
    assert np.ptp(p.entropy_scaled) < 0.2 and p.entropy_scaled.max() <= math.log(16) + 1e-9
    assert p.max_weight_raw[0] == p.max_weight_scaled[0]  # d_k = 1: scaling is the identity


def test_density_histogram_integrates_to_share_inside():
    x = np.random.default_rng(0).standard_normal(10_000)
    centres, dens = scaling.density_histogram(x, bins=50, lo=-4, hi=4)
    assert centres.shape == dens.shape == (50,)
    assert dens.sum() * (8 / 50) == pytest.approx(np.mean(np.abs(x) <= 4), abs=1e-9)
    assert scaling.normal_pdf(0.0, 4.0) == pytest.approx(1 / math.sqrt(2 * math.pi * 4))


@pytest.mark.parametrize(
    "call",
    [
        lambda: scaling.sample_dot_products(0),
        lambda: scaling.sample_dot_products(1025),
        lambda: scaling.sample_dot_products(2.5),
        lambda: scaling.sample_dot_products(4, n_samples=10),
        lambda: scaling.softmax_peakedness([0, 4]),
        lambda: scaling.softmax_peakedness([4], n_keys=1),
        lambda: scaling.softmax_peakedness([]),
        lambda: scaling.density_histogram([1.0, 1.0], lo=1, hi=1),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_lesson_figures_are_valid_plotly():
    """The lesson's builders skip Plotly's validation for speed; every property they write must
    still be valid."""
    words = single_head_figures.Words()  # English, as a notebook gets them
    tr = lesson.worked(causal=True)
    figs = [
        f
        for _, _, row in single_head_figures.pipeline(
            tr, list(lesson.TOKENS), words, inputs=(lesson.W_Q, lesson.W_K, lesson.W_V)
        )
        for _, f in row
    ]
    s = lesson.sentence("the cat sat on the mat because it was tired", "seeded", 8, 4, causal=True)
    figs += [
        f
        for _, f in single_head_figures.sentence(
            s.trace, s.tokens, words, side=True, show_text=True
        )
    ]
    positions = lesson.sqrt_positions(lesson.why_sqrt(4), lesson.sqrt_steps(0))
    figs += [
        f for _, f in single_head_figures.why_sqrt(positions, lesson.DK_CHOICES.index(4), words)
    ] + [f for _, f in single_head_figures.peaks(lesson.peakedness(4), words)]
    assert len(figs) == 11 + 2 + 4
    for f in figs:
        go.Figure(f.to_dict())  # raises on any invalid property
    masked = [f for f in figs if len(f.data) == 2 and f.data[1].type == "heatmap"]
    assert masked and all(
        sum(c == "✕" for row in f.data[0].text for c in row) == 1 for f in masked[:3]
    )  # one ✕, one veil


# --- the in-figure sliders: every step against values computed here -------------------------------


def slider(fig) -> dict:
    """The figure's one in-figure slider, as the browser receives it."""
    (s,) = json.loads(fig.to_json())["layout"]["sliders"]
    return s


WORDS = single_head_figures.Words(
    dimension="dim", fig_weights="weights", fig_weights_tau="softmax(s / {tau})"
)


def weights_figure(tr, tg) -> dict:
    """The pipeline's live weights panel, as the browser receives it."""
    (figs,) = [
        f
        for step, _, f in single_head_figures.pipeline(
            tr, list(lesson.TOKENS), WORDS, temperature=tg
        )
        if step == "scores"
    ]
    return json.loads(dict(figs)["weights"].to_json())


def test_z_follows_tau_each_position_the_weights_times_v():
    tr = lesson.worked(True, False, 0.5)
    tg = lesson.temperature_grid(tr, 0.5)
    (z,) = [
        f
        for step, _, f in single_head_figures.pipeline(
            tr, list(lesson.TOKENS), WORDS, temperature=tg
        )
        if step == "out"
    ]
    followed = json.loads(dict(z)["z"].to_json())["layout"]["sliders"][0]
    assert followed["name"] == "sh_temp" and followed["visible"] is False
    V = np.array(REF["V"], dtype=float)
    for tau, step in zip(tg.grid, followed["steps"], strict=True):
        weights = [softmax_row([v / tau for v in row]) for row in REF["scores"]]
        np.testing.assert_allclose(array(step["args"][0]["z"][0]), weights @ V, rtol=1e-5)
    np.testing.assert_allclose(tg.outputs, tg.weights @ tr.V)
    at = lesson.at_temperature(tr, tg, 0)  # τ = 0.05: the trace at that τ, the rest unchanged
    np.testing.assert_array_equal(at.weights, tg.weights[0])
    np.testing.assert_array_equal(at.output, tg.outputs[0])
    assert at.before_softmax() == tr.before_softmax()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("temperature", [1.0, 0.35, 0.123, 5.0])
def test_live_weights_steps_are_the_softmax_at_each_temperature(temperature, causal):
    tr = lesson.worked(True, causal, temperature)
    fig = weights_figure(tr, lesson.temperature_grid(tr, temperature))
    (s,) = fig["layout"]["sliders"]
    assert s["name"] == "sh_temp"  # the control τ, drawn in this figure
    taus = [float(st_["value"]) for st_ in s["steps"]]
    assert (
        taus == sorted(taus) and taus[0] == pytest.approx(0.05) and taus[-1] == pytest.approx(5.0)
    )
    assert len(taus) == len(set(taus)) >= 100  # the control's 0.05 grid, its value once
    assert taus[s["active"]] == pytest.approx(
        temperature, abs=1e-9
    )  # the slider starts at the control's value

    def by_hand(tau):  # softmax of the reference's scaled scores / τ
        want = np.zeros((2, 2))
        for i in range(2):
            allowed = [j for j in range(2) if not causal or j <= i]
            row = softmax_row([REF["scores"][i][j] / tau for j in allowed])
            for j, w in zip(allowed, row, strict=True):
                want[i, j] = w
        return want

    for tau, step in zip(taus, s["steps"], strict=True):
        data, layout, traces = step["args"]
        assert traces == [0] and step["method"] == "update"
        want = by_hand(tau)
        np.testing.assert_allclose(array(data["z"][0]), want, rtol=1e-5, atol=1e-7)
        text = [
            [
                "✕" if causal and j > i else f"{want[i, j]:.4f}".rstrip("0").rstrip(".")
                for j in range(2)
            ]
            for i in range(2)
        ]
        assert [list(r) for r in data["text"][0]] == [
            [("0" if x in ("", "-0") else x) for x in r] for r in text
        ]
        assert layout["title.text"] == (
            "weights" if tau == 1 else f"softmax(s / {lesson.short_number(tau)})"
        )
    # the figure as drawn is the active step: the page's own weights at the control's τ, and its
    # title
    np.testing.assert_allclose(array(fig["data"][0]["z"]), tr.weights, rtol=1e-6)
    assert fig["layout"]["title"]["text"] == s["steps"][s["active"]]["args"][1]["title.text"]


@pytest.mark.parametrize("n_tokens", [2, 12, 40, 64])
def test_temperature_grid_is_bounded_and_keeps_the_control_value(n_tokens):
    rng = np.random.default_rng(n_tokens)
    X = rng.normal(size=(n_tokens, 8))
    W = [rng.normal(size=(8, 4)) for _ in range(3)]
    tr = visattn.self_attention(X, *W, causal=True, temperature=0.73)
    tg = lesson.temperature_grid(tr, 0.73)
    G = len(tg.grid)
    assert tg.grid[tg.active] == pytest.approx(0.73) and tg.weights.shape == (G, n_tokens, n_tokens)
    assert 10 <= G <= 101 and (G * n_tokens**2 <= lesson.LIVE_NUMBERS or G <= 11)
    np.testing.assert_allclose(tg.weights[tg.active], tr.weights, atol=1e-12)
    np.testing.assert_allclose(tg.weights.sum(axis=-1), 1.0, atol=1e-12)  # each row a distribution
    assert (np.triu(tg.weights, k=1) == 0).all()  # causal: nothing on the future


def test_sqrt_steps_histograms_follow_each_d_k():
    w, steps = lesson.why_sqrt(16, seed=3), lesson.sqrt_steps(3)
    positions = lesson.sqrt_positions(w, steps)
    assert [p.d_k for p in positions] == list(lesson.DK_CHOICES)
    for p, d_k in zip(positions, lesson.DK_CHOICES, strict=True):  # its own sample at 16
        assert p.n == (len(w.sample.raw) if d_k == 16 else lesson.LIVE_PAIRS)
    active = lesson.DK_CHOICES.index(16)
    raw, scaled = single_head_figures.why_sqrt(
        positions, active, single_head_figures.Words(density="d", measured="m")
    )
    assert slider(raw[1]).get("visible", True) and slider(scaled[1])["visible"] is False
    for (name, fig), title in (
        (raw, "q·k, d<sub>k</sub> = "),
        (scaled, "q·k / √d<sub>k</sub>, d<sub>k</sub> = "),
    ):
        s = slider(fig)
        d_ks = [int(st_["value"]) for st_ in s["steps"]]
        assert d_ks == list(lesson.DK_CHOICES) and d_ks[s["active"]] == 16
        for d_k, step in zip(d_ks, s["steps"], strict=True):
            data, layout, _ = step["args"]
            var = d_k if name == "sqrt_hist_raw" else 1.0
            x = array(data["x"][1])
            normal = [
                math.exp(-v * v / (2 * var)) / math.sqrt(2 * math.pi * var) for v in x
            ]  # N(0, var) by hand
            np.testing.assert_allclose(
                array(data["y"][1]), normal, rtol=1e-4, atol=1e-9
            )  # x sent with 6 digits
            assert x.max() == pytest.approx(
                4.5 * math.sqrt(var) * 60 / 61, rel=1e-4
            )  # 61 bins over ±4.5 s.d.
            density, centres = array(data["y"][0]), array(data["x"][0])
            assert density.sum() * (centres[1] - centres[0]) == pytest.approx(
                1.0, abs=0.01
            )  # a density
            measured = float(layout["title.text"].split("σ̂² = ")[1])
            assert layout["title.text"].startswith(f"{title}{d_k}:") and measured == pytest.approx(
                var, rel=0.12
            )
        active = s["steps"][s["active"]]["args"][0]
        mine = (
            w.raw if name == "sqrt_hist_raw" else w.scaled
        )  # the active step shows the page's own sample
        np.testing.assert_allclose(array(active["y"][0]), mine.density, rtol=1e-5)


def test_prefix_dot_products_have_variance_d_k_and_are_seeded():
    grid = [1, 4, 64, 256]
    a = scaling.prefix_dot_products(grid, 4000, seed=5)
    assert a.shape == (4000, 4)
    np.testing.assert_array_equal(a, scaling.prefix_dot_products(grid, 4000, seed=5))
    for g, d in enumerate(grid):
        assert a[:, g].mean() == pytest.approx(0.0, abs=4 * math.sqrt(d / 4000))
        assert a[:, g].var(ddof=1) == pytest.approx(d, rel=0.1)
    # nested: the extra coordinates from 64 to 256 add a part independent of the first 64
    # (covariance = 64)
    assert np.cov(a[:, 2], a[:, 3])[0, 1] == pytest.approx(64, rel=0.15)


# --- what τ changes: the figures of the steps before softmax are cached on the rest -------------
def test_the_steps_before_softmax_do_not_depend_on_temperature():
    """``SelfAttentionTrace.before_softmax`` identifies the figures of the steps up to the scores
    (ui.cache.single_head keys them on it): equal at every τ, and so are those figures; the weights
    and Z are not."""
    cool, warm = lesson.worked(True, True, 0.35), lesson.worked(True, True, 2.5)
    for a, b in zip(cool.before_softmax(), warm.before_softmax(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert [f.name for f in SelfAttentionTrace.__dataclass_fields__.values()] == [
        "X",
        "Q",
        "K",
        "V",
        "raw_scores",
        "scores",
        "weights",
        "output",
        "mask",
    ]  # a new field must be sorted into before_softmax or not
    inputs = (lesson.W_Q, lesson.W_K, lesson.W_V)

    def drawn(tr) -> list[str]:
        rows = single_head_figures.before_softmax(tr, list(lesson.TOKENS), WORDS, inputs=inputs)
        return [f.to_json() for _, _, named in rows for _, f in named]

    assert drawn(cool) == drawn(warm)
    after = [
        single_head_figures.after_softmax(tr, list(lesson.TOKENS), WORDS) for tr in (cool, warm)
    ]
    assert after[0]["weights"].to_json() != after[1]["weights"].to_json()


def test_the_pipeline_draws_the_lesson_steps_in_order():
    tr = lesson.worked()
    inputs = (lesson.W_Q, lesson.W_K, lesson.W_V)
    rows = single_head_figures.pipeline(tr, list(lesson.TOKENS), WORDS, inputs=inputs)
    assert tuple(step for step, _, _ in rows) == lesson.STEPS
    names = [name for _, _, named in rows for name, _ in named]
    assert names == ["x", "wq", "wk", "wv", "q", "k", "v", "raw", "scores", "weights", "z"]


# --- the pipeline's matrices share a colour scale a step ----------------------------------------
def flat(*matrices):
    return [v for m in matrices for row in m for v in row]


def test_worked_example_colour_ranges_by_hand():
    tr = lesson.worked()
    ranges = lesson.colour_ranges(tr, (lesson.W_Q, lesson.W_K, lesson.W_V))
    # no negative entry anywhere in the worked example: 0 (white) … the step's largest entry
    assert (ranges["inputs"].zmin, ranges["inputs"].zmax) == (0, max(flat(X, W_Q, W_K, W_V)))
    top = max(flat(REF["Q"], REF["K"], REF["V"], REF["Z"]))
    assert top == 4
    for step in ("qkv", "out"):
        assert (ranges[step].zmin, ranges[step].zmax, ranges[step].zmid) == (0, top, None)
    assert ranges["scores"].zmax == max(flat(REF["raw"], REF["scores"])) == 12
    # Z's two values sit close together on the shared scale, not at its two ends
    z1, z2 = REF["Z"][0][0], REF["Z"][1][0]
    assert (z1 - z2) / top == pytest.approx((1 / (1 + math.exp(-3.5)) - 1 / (1 + math.exp(-1))) / 4)
    assert (z1 - z2) / top < 0.1


def test_colour_range_diverges_around_zero_with_negative_entries():
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((2, 5)) + 0.5
    r = lesson.colour_range(A, B)
    bound = max(abs(v) for v in flat(A.tolist(), B.tolist()))
    assert (r.zmin, r.zmax, r.zmid) == (-bound, bound, 0) and r.diverging
    r = lesson.colour_range(np.abs(A), [[0.0, 0.0]])
    assert (r.zmin, r.zmax, r.zmid) == (0, float(np.abs(A).max()), None)
    assert lesson.colour_range([[0.0, 0.0]]).zmax == 1  # all zeros: any range, white


def test_the_scores_scale_leaves_out_masked_cells():
    # q₁·k₂ = 5 is the largest raw score, but the causal mask hides it
    Xm, Wq, Wk = [[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 0], [5, 0]]
    tr = visattn.self_attention(Xm, Wq, Wk, Wq, causal=True)
    ref = reference(Xm, Wq, Wk, Wq)
    kept = [(i, j) for i in range(2) for j in range(2) if j <= i]
    want = max(max(ref["raw"][i][j], ref["scores"][i][j]) for i, j in kept)
    assert ref["raw"][0][1] == 5 and want == 1
    assert lesson.colour_ranges(tr)["scores"].zmax == want


@given(
    arrays(np.float64, (4, 3), elements=st.floats(-3, 3)),
    st.floats(0.05, 5),
    st.booleans(),
)
def test_z_stays_inside_the_scale_of_q_k_v(X_, temperature, causal):
    W = np.eye(3)
    tr = visattn.self_attention(X_, W, W, W, causal=causal, temperature=temperature)
    r = lesson.colour_ranges(tr)["out"]
    assert r.zmin - 1e-9 <= tr.output.min() and tr.output.max() <= r.zmax + 1e-9
