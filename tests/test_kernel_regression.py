"""Kernel regression and the scoring functions: article numbers by hand, properties, fit σ against
brute force."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import visattn
from visattn.kernel_regression import (
    KERNELS,
    InputError,
    check_bandwidth,
    duplicate_keys,
    explain_query,
    fit_bandwidth,
    key_value_table,
    nadaraya_watson,
)
from visattn.lessons import kernel_regression as lesson
from visattn.lessons.kernel_regression import PRESETS, noisy_samples
from visattn.scoring import (
    SCORINGS,
    additive_scores,
    dot_scores,
    scaled_dot_scores,
    score_attention,
    seeded_additive_weights,
    standardize,
)

# Article 002
Q = [[64, 85], [61, 80]]
K = [[68, 91], [60, 87], [64, 88]]
V = [[126, 180], [110, 172], [115, 170]]
X = [[67, 91], [60, 87], [64, 84]]


# ---- the waist example ---------------------------------------------------------------------------


def test_waist_62_by_hand():
    keys, values = key_value_table(PRESETS["waist"].table)
    assert keys[:, 0].tolist() == [68, 60, 64] and values.tolist() == [126, 110, 115]
    b = explain_query(62, keys, values, "gaussian", 1.0)
    # scores −(62 − k)²/2 = −18, −2, −2; e^−18 = 1.523e−8 and e^−2 = 0.1353 (the article's GS
    # values)
    assert b.scores.tolist() == [-18.0, -2.0, -2.0]
    assert np.allclose(b.exp_scores, [math.exp(-18), math.exp(-2), math.exp(-2)], rtol=1e-12)
    z = math.exp(-18) + 2 * math.exp(-2)
    assert np.allclose(
        b.weights, [math.exp(-18) / z, math.exp(-2) / z, math.exp(-2) / z], rtol=1e-12
    )
    assert b.weights[0] < 1e-7 and abs(b.weights[1] - 0.5) < 1e-7 and abs(b.weights[2] - 0.5) < 1e-7
    assert abs(b.contributions.sum() - b.estimate) < 1e-12
    assert abs(b.estimate - 112.5) < 1e-5 and b.supported


def test_game_presets_have_the_newcomer():
    k1, _ = key_value_table(PRESETS["game_strength"].table)
    k2, _ = key_value_table(PRESETS["game_both"].table)
    assert k1.shape[1] == 1 and k2.shape[1] == 2
    assert PRESETS["game_strength"].query == (207.0,) and PRESETS["game_both"].query == (
        207.0,
        289.0,
    )
    # 2-D: the weight falls with the Euclidean distance in the (strength, intelligence) plane
    keys, values = k2, key_value_table(PRESETS["game_both"].table)[1]
    b = explain_query([207, 289], keys, values, "gaussian", 20.0)
    d2 = ((keys - [207, 289]) ** 2).sum(1)
    ref = np.exp(-d2 / (2 * 20.0**2))
    assert np.allclose(b.weights, ref / ref.sum(), rtol=1e-10)
    assert np.argmax(b.weights) == int(np.argmin(d2))


def test_noisy_preset_is_fifty_rounded_samples():
    s = noisy_samples()
    assert s.shape == (50, 2) and np.all(np.diff(s[:, 0]) >= 0)
    assert np.array_equal(s, np.round(s, 2))
    assert np.array_equal(np.array(PRESETS["noisy"].table), s)


# ---- kernels: properties -------------------------------------------------------------------------


def reference_kernel(kernel, u):
    """K(u) written out independently (unnormalised; constant factors cancel)."""
    return {
        "gaussian": np.exp(-(u**2) / 2),
        "laplace": np.exp(-u),
        "boxcar": (u <= 1).astype(float),
        "epanechnikov": np.clip(1 - u**2, 0, None),
    }[kernel]


keys_1d = st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=20)


@given(
    keys=keys_1d,
    q=st.floats(-1e4, 1e4, allow_nan=False),
    sigma=st.floats(1e-3, 100),
    kernel=st.sampled_from(KERNELS),
)
@settings(max_examples=80)
def test_weights_nonnegative_and_sum_to_one(keys, q, sigma, kernel):
    values = np.arange(len(keys), dtype=float)
    r = nadaraya_watson([q], keys, values, kernel, sigma)
    w = r.weights[0]
    assert np.all(w >= 0) and np.all(np.isfinite(w))
    if r.supported[0]:
        assert abs(w.sum() - 1) < 1e-9
        assert values.min() - 1e-9 <= r.estimates[0] <= values.max() + 1e-9
    else:
        # only compact kernels can reach no key, and then nothing is divided by zero
        assert kernel in ("boxcar", "epanechnikov")
        assert np.all(w == 0) and math.isnan(r.estimates[0])
        assert np.all(np.abs(np.asarray(keys) - q) / sigma >= 1 - 1e-12)


@given(
    keys=keys_1d, q=st.floats(-150, 150), sigma=st.floats(5, 100), kernel=st.sampled_from(KERNELS)
)
@settings(max_examples=60)
def test_weights_match_the_kernel_written_out(keys, q, sigma, kernel):
    u = np.abs(np.asarray(keys) - q) / sigma
    ref = reference_kernel(kernel, u)
    r = nadaraya_watson([q], keys, np.ones(len(keys)), kernel, sigma)
    if ref.sum() == 0:
        assert not r.supported[0]
    else:
        assert np.allclose(r.weights[0], ref / ref.sum(), atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
def test_query_far_from_every_key(kernel):
    keys, values = key_value_table(PRESETS["waist"].table)
    b = explain_query(1000.0, keys, values, kernel, 1.0)
    assert np.all(b.weights >= 0)
    if kernel in ("boxcar", "epanechnikov"):
        assert not b.supported and np.all(b.weights == 0) and math.isnan(b.estimate)
        assert np.all(np.isneginf(b.scores))
    else:
        assert b.supported and abs(b.weights.sum() - 1) < 1e-12
        # distances 932, 940, 936 from the keys 68, 60, 64
        ref = np.exp(-np.array([0.0, 8.0, 4.0]))  # Laplace: e^{−u} relative to the nearest key
        if kernel == "gaussian":
            ref = np.array([1.0, 0.0, 0.0])  # the others are e^{−7488} and e^{−3728} times it: 0
        assert np.allclose(b.weights, ref / ref.sum(), atol=1e-12)
        assert np.all(b.exp_scores == 0)  # e^{score} underflows, the shifted softmax does not


@given(
    pts=st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=2, max_size=12),
    q=st.tuples(st.floats(-500, 500), st.floats(-500, 500)),
    kernel=st.sampled_from(KERNELS),
)
@settings(max_examples=40)
def test_two_dimensional_keys(pts, q, kernel):
    r = nadaraya_watson([q], pts, np.ones(len(pts)), kernel, 10.0)
    assert np.all(r.weights >= 0)
    assert (abs(r.weights.sum() - 1) < 1e-9) if r.supported[0] else np.all(r.weights == 0)


# ---- choosing σ by leave-one-out -----------------------------------------------------------------


def brute_loo(x, y, sigma, kernel):
    """Leave-one-out squared error, one point at a time, written without the library."""
    errs = []
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        w = reference_kernel(kernel, np.abs(x[others] - x[i]) / sigma)
        if w.sum() == 0:
            return math.inf
        errs.append(((w * y[others]).sum() / w.sum() - y[i]) ** 2)
    return float(np.mean(errs))


@pytest.mark.parametrize("kernel", ["gaussian", "laplace"])
def test_fit_bandwidth_minimises_loo_error(kernel):
    x, y = noisy_samples().T
    sigma, grid, errors = fit_bandwidth(x, y, kernel)
    assert grid.shape == errors.shape
    fitted = brute_loo(x, y, sigma, kernel)
    brute = min(brute_loo(x, y, s, kernel) for s in np.geomspace(0.01, 20, 1500))
    assert fitted <= brute + 1e-9 * max(1.0, brute)
    assert visattn.loo_error(x, y, [sigma], kernel)[0] == pytest.approx(fitted, rel=1e-9)


def test_fit_bandwidth_with_compact_kernel_never_leaves_a_point_alone():
    x, y = noisy_samples().T
    sigma, _, _ = fit_bandwidth(x, y, "boxcar")
    assert math.isfinite(brute_loo(x, y, sigma, "boxcar"))


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table,code",
    [
        ([[1, 2]], "table_rows"),
        ([[1], [2]], "table_columns"),
        ([[1, 2, 3, 4], [5, 6, 7, 8]], "table_columns"),
    ],
)
def test_table_shape_errors(table, code):
    with pytest.raises(InputError) as e:
        key_value_table(table)
    assert e.value.code == code and isinstance(e.value, ValueError)


@pytest.mark.parametrize("bad", [[[1, 2], [float("nan"), 3]], [], [[1, "x"], [2, 3]]])
def test_table_not_numbers(bad):
    with pytest.raises(ValueError):
        key_value_table(bad)


@pytest.mark.parametrize("sigma", [0, -1, float("nan"), float("inf"), "abc"])
def test_sigma_must_be_positive(sigma):
    with pytest.raises(InputError) as e:
        check_bandwidth(sigma)
    assert e.value.code == "sigma"
    with pytest.raises(ValueError):
        explain_query(62, [60, 64], [110, 115], "gaussian", sigma)


def test_duplicate_keys_named_with_rows():
    assert duplicate_keys([60, 64, 60, 68, 64, 60]) == [((60.0,), [0, 2, 5]), ((64.0,), [1, 4])]
    assert duplicate_keys([[1, 2], [1, 3], [1, 2]]) == [((1.0, 2.0), [0, 2])]
    assert duplicate_keys([1, 2, 3]) == []
    # duplicates are legal for the estimate, but each copy counts: 60 gets twice the say of 64
    b = explain_query(62, [60, 60, 64], [100, 120, 115], "gaussian", 1.0)
    assert b.weights[0] == b.weights[1] == b.weights[2]
    assert abs(b.estimate - (100 + 120 + 115) / 3) < 1e-9


def test_unknown_kernel_and_query_width():
    with pytest.raises(InputError) as e:
        explain_query(62, [60, 64], [1, 2], "cubic", 1.0)
    assert e.value.code == "kernel"
    with pytest.raises(InputError) as e:
        explain_query([1, 2], [60, 64], [1, 2], "gaussian", 1.0)
    assert e.value.code == "query_width"


# ---- scoring: additive, dot, scaled dot ----------------------------------------------------------


def test_dot_scores_by_hand():
    d = dot_scores(Q, K)
    assert d.scores[0, 0] == 64 * 68 + 85 * 91 == 12087  # the article's q1·k1
    assert d.scores[1, 2] == 61 * 64 + 80 * 88
    s = scaled_dot_scores(Q, K)
    assert s.scale == pytest.approx(math.sqrt(2)) and np.allclose(s.scores, d.raw / math.sqrt(2))


def test_additive_against_a_loop():
    W_q, W_k, w_v = seeded_additive_weights(2, 2, 3, seed=4)
    a = additive_scores(Q, K, W_q, W_k, w_v)
    for i in range(2):
        for j in range(3):
            h = [
                math.tanh(sum(W_q[r, c] * Q[i][c] + W_k[r, c] * K[j][c] for c in range(2)))
                for r in range(3)
            ]
            assert a.scores[i, j] == pytest.approx(sum(w_v[r] * h[r] for r in range(3)), abs=1e-12)
    assert a.hidden.shape == (2, 3, 3)


def test_scaled_dot_matches_attention():
    r = score_attention(Q, K, V, "scaled_dot")
    ref = visattn.attention(Q, K, V, scale=True)
    assert np.allclose(r.weights, ref.weights) and np.allclose(r.output, ref.output)


def test_raw_features_make_softmax_one_hot_and_standardising_softens_it():
    for method in ("dot", "scaled_dot"):
        raw = score_attention(Q, K, V, method)
        assert np.all(np.isfinite(raw.weights)) and np.all(np.isfinite(raw.output))
        assert raw.weights.max(axis=1).min() > 0.999  # score gaps of hundreds: one-hot
        std = score_attention(Q, K, V, method, standardized=True)
        assert std.weights.max(axis=1).min() < 0.99
    sa = score_attention(X, X, X, "scaled_dot")
    assert np.allclose(sa.weights.sum(1), 1)


def test_standardize_by_hand():
    qs, ks = standardize(Q, K)
    k = np.array(K, float)
    assert np.allclose(ks.mean(0), 0) and np.allclose(ks.std(0), 1)
    assert np.allclose(qs, (np.array(Q, float) - k.mean(0)) / k.std(0))
    qs, ks = standardize([[1, 5]], [[2, 5], [4, 5]])  # constant feature: centred, not divided by 0
    assert np.allclose(ks, [[-1, 0], [1, 0]]) and np.allclose(qs, [[-2, 0]])


mats = st.integers(1, 4).flatmap(
    lambda d: st.tuples(
        st.lists(st.lists(st.floats(-100, 100), min_size=d, max_size=d), min_size=1, max_size=4),
        st.lists(st.lists(st.floats(-100, 100), min_size=d, max_size=d), min_size=1, max_size=4),
    )
)


@given(qk=mats, method=st.sampled_from(SCORINGS), standardized=st.booleans())
@example(
    qk=([[0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.2765392173213557e-34, 0.0]]),
    method="additive",
    standardized=True,
)  # a key feature with a spread of 1e-34: standardising once blew the query up to 1e34
@settings(max_examples=50)
def test_scored_weights_are_distributions(qk, method, standardized):
    q, k = qk
    d = len(q[0])
    W_q, W_k, w_v = seeded_additive_weights(d, d, 2)
    r = score_attention(
        q, k, np.ones((len(k), 1)), method, W_q=W_q, W_k=W_k, w_v=w_v, standardized=standardized
    )
    assert r.weights.shape == (len(q), len(k))
    assert np.all(r.weights >= 0) and np.allclose(r.weights.sum(1), 1)
    assert np.allclose(r.output, 1)


@pytest.mark.parametrize(
    "call,code",
    [
        (lambda: score_attention([[1, 2, 3]], K, V, "dot"), "qk_width"),
        (lambda: score_attention(Q, K, V[:2], "dot"), "kv_rows"),
        (lambda: score_attention(Q, K, V, "cosine"), "method"),
        (lambda: additive_scores(Q, K, [[1, 2, 3]], [[1, 2]], [1]), "wq_shape"),
        (lambda: additive_scores(Q, K, [[1, 2]], [[1, 2, 3]], [1]), "wk_shape"),
        (lambda: additive_scores(Q, K, [[1, 2]], [[1, 2], [3, 4]], [1]), "hidden"),
    ],
)
def test_scoring_shape_errors(call, code):
    with pytest.raises(InputError) as e:
        call()
    assert e.value.code == code


# ---- the lesson module: what the page shows, checked against independent arithmetic --------------


def test_breakdown_table_and_formula_by_hand():
    keys, values = key_value_table(PRESETS["waist"].table)
    b = explain_query(62, keys, values, "gaussian", 1.0)
    df = lesson.breakdown_table(b, ["k", "v", "s", "e", "w", "c"])
    assert list(df.index) == ["1", "2", "3", "Σ"] and list(df.columns) == [
        "k",
        "v",
        "s",
        "e",
        "w",
        "c",
    ]
    assert (
        df.loc["1", "s"] == "-18"
        and df.loc["2", "w"] == "0.5000"
        and df.loc["Σ", "c"] == "112.5000"
    )
    f = lesson.formula(b, "gaussian", 1.0)
    # the heaviest key is 60 (row 2; ties go to the first): d = |62 − 60| = 2, s = −2²/2 = −2, α =
    # e^−2 / (e^−18 + 2e^−2)
    assert r"d_{2}=|62-60|=2" in f.lines[0] and r"s_{2}=-\frac{2^2}{2\cdot 1^2}=-2" in f.lines[0]
    assert f"{math.exp(-2):.4g}" in f.lines[1] and r"=0.5" in f.lines[1]
    assert f.lines[2].startswith("f(62)=0.5\\times 110+0.5\\times 115+") and f.lines[2].endswith(
        "=112.5"
    )
    assert f.more == 0 and not f.underflow and f.symbolic in f.latex


def test_formula_far_query_underflows_and_says_so():
    b = explain_query(1000.0, [60, 64, 68], [110, 115, 126], "gaussian", 1.0)
    f = lesson.formula(b, "gaussian", 1.0)
    assert (
        f.underflow and r"\max_j s_j" in f.lines[1]
    )  # e^s is 0 for every key: the shifted form is shown
    assert (
        lesson.latex_number(float("-inf")) == r"-\infty"
        and lesson.latex_number(2.5e-262) == r"2.5\times 10^{-262}"
    )


def test_sliders_and_query_ranges():
    c = lesson.sliders("waist", PRESETS["waist"].table)
    assert c.ranges == ((50.0, 80.0),) and c.steps[0] == 0.5  # the preset's own range and step
    wide = [[0, 1], [200, 2]]  # keys 0 … 200: the range widens by 10 % each side
    c = lesson.sliders("waist", wide)
    assert (
        c.ranges == ((-20.0, 220.0),) and c.steps[0] == 1.0
    )  # a power of ten near span / 100 = 2.4
    assert lesson.nice_step(240) == 1.0 and lesson.nice_step(0.5) == 0.001


def test_controls_are_every_parameter_with_the_data_sets_starts():
    assert set(lesson.CONTROLS) == {
        *("kr_tab", "kr_preset", "kr_data", "kr_q", "kr_q2", "kr_kernel", "kr_sigma"),
        *("kr_Q", "kr_K", "kr_V", "kr_score", "kr_std", "kr_Wq", "kr_Wk", "kr_wv"),
        *("kr_X", "kr_sa_score", "kr_sa_std"),
    }
    started = {"kr_data", "kr_q", "kr_q2", "kr_sigma"}  # what a data set gives a link
    for preset, p in PRESETS.items():
        controls = lesson.controls_for(preset)
        q1, q2, sigma = lesson.preset_start(preset)
        assert (controls["kr_q"].default, controls["kr_q2"].default) == (q1, q2)
        assert controls["kr_sigma"].default == sigma == p.sigma
        assert np.array_equal(controls["kr_data"].default, p.table)
        assert all(controls[k] == c for k, c in lesson.CONTROLS.items() if k not in started)
    assert lesson.controls_for("waist") == dict(lesson.CONTROLS)
    assert len(lesson.COLUMNS) == 7 and all(
        set(p.columns) <= set(lesson.COLUMNS) for p in PRESETS.values()
    )


def test_fit_reports_a_flat_error_curve():
    f = lesson.fit_sigma(
        PRESETS["waist"].table, "gaussian"
    )  # three pairs: the LOO error is lowest at the smallest σ
    assert f.flat_upto is not None and f.flat_upto >= f.grid[0]
    assert lesson.fit_sigma(PRESETS["noisy"].table, "gaussian").flat_upto is None


def test_table_row_limit():
    table = [[i, i] for i in range(lesson.MAX_TABLE_ROWS + 1)]
    with pytest.raises(InputError) as e:
        lesson.check_table(table)
    assert e.value.code == "table_too_long" and e.value.params == {"rows": 65, "limit": 64}
    assert lesson.check_table(table[:64]).shape == (64, 2)


def test_tiny_sigma_is_named_an_overflow_not_a_compact_kernel():
    regression = lesson.regression(
        PRESETS["waist"].table, (62.0, 0.0), "gaussian", 1e-200, ((50.0, 80.0),)
    )
    assert not regression.breakdown.supported and regression.unreachable == "overflow"
    assert regression.warnings() == ()  # no estimate is the σ's, said where σ is shown
    assert lesson.no_estimate(regression.breakdown.query, 1e-200, "overflow") == (
        ("overflow", {"q": "62", "sigma": "1e-200"}),
    )
    regression = lesson.regression(
        PRESETS["waist"].table, (200.0, 0.0), "boxcar", 1.0, ((50.0, 80.0),)
    )
    assert regression.unreachable == "compact"
    regression = lesson.regression(
        [[60, 1], [60, 2], [64, 3]], (62.0, 0.0), "gaussian", 1.0, ((50.0, 80.0),)
    )
    assert regression.warnings() == (
        ("duplicates", {"k": "60", "rows": "1, 2"}),
    )  # rows counted from 1


def test_float_facts_match_numpy():
    f = lesson.float_facts()
    with np.errstate(under="ignore"):
        assert f.exp_minus_300 == np.exp(-300.0) > 0  # e^−300 ≈ 5.1e-131: small, not 0
        assert np.exp(f.zero_below) > 0 and np.exp(np.nextafter(f.zero_below, -np.inf)) == 0
    assert (
        -746 < f.zero_below < -745
        and f.smallest == 5e-324
        and f.eps == 2.0**-52
        and f.lost_next_to_one
    )
    text = lesson.float_facts_text()
    assert text["e300"] == f"{np.exp(-300.0):.2g}" == "5.1e-131" and text["edge"] == "-745.13"


def test_article_002_printed_vs_computed():
    rows = {(r.what, r.note): r for r in lesson.article_002()}
    gs = rows[("GS(62, 68) = e^(−(62 − 68)²/2)", "")]
    assert (
        gs.printed == "1.52 × 10⁻⁸"
        and float(gs.computed) == pytest.approx(math.exp(-18), rel=1e-3)
        and gs.agrees
    )
    assert rows[("f(62)", "")].agrees and float(rows[("f(62)", "")].computed) == pytest.approx(
        112.5, abs=1e-4
    )
    score, weight = rows[("q₁ · k₁", "score")], rows[("α(q₁, k₁)", "weight")]
    assert float(score.computed) == 64 * 68 + 85 * 91 == 12087 and score.agrees
    # the article calls 12087 the weight α(q₁, k₁); softmax of the row (12087, 11235, 11576) gives
    # k₁ weight 1.000
    z = np.exp(np.array([12087, 11235, 11576]) - 12087.0)
    assert (
        float(weight.computed) == pytest.approx(z[0] / z.sum())
        and weight.printed.endswith("12087")
        and not weight.agrees
    )
    assert (
        not rows[("α(qᵢ, kᵢ)", "dot_model")].agrees
        and "√d" in rows[("α(qᵢ, kᵢ)", "dot_model")].printed
    )
    assert not rows[("α(qᵢ, kᵢ)", "additive_model")].agrees
    df = lesson.article_002_table(
        ["what", "printed", "computed", "ok"],
        {"score": "S", "weight": "W", "dot_model": "D", "additive_model": "A"},
    )
    assert df.shape == (11, 3) and list(df["ok"]).count("✗") == 3 and "α(q₁, k₁) — W" in df.index


def test_article_002_quotations_are_in_the_article():
    """The printed column quotes article 002 (checked against its text when shared/ is beside the
    checkout)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "002_d7fbc85a841e1126.txt"
    if not path.exists():
        pytest.skip("article 002 is not beside this checkout")
    text = path.read_text(encoding="utf-8").replace(" ", "")
    for quoted in (
        r"GS(62,68)=1.52\times10^{-8}",
        "GS(62,60)=0.135",
        r"\alpha(62,60)=0.5",
        "=4352+7735=12087",
        r"\alpha(q_i,k_i)=\frac{q_i\cdotk_i}{\sqrt{d}}",
        r"\text{softmax}(W_q{q}_i+W_k{k}_i+b)",
    ):
        assert quoted in text, quoted


def test_self_attention_and_top_pairs():
    r = lesson.self_attention(X, "dot", (None, None, None), False)
    raw = np.array(X, float) @ np.array(X, float).T
    assert r.names == ("x1", "x2", "x3") and np.allclose(r.result.scores, raw)
    assert lesson.top_pairs(r.result.weights, r.names, r.names) == tuple(
        f"x{i + 1} → x{int(j) + 1}" for i, j in enumerate(raw.argmax(1))
    )
    assert lesson.names(r.result) == (["k1", "k2", "k3"], ["q1", "q2", "q3"])


# ---- the lesson's figures: Plotly's full validation once, and the words they are given -----------


@pytest.mark.parametrize(
    "preset,kernel,query",
    [
        ("waist", "gaussian", (62.0, 0.0)),
        ("game_both", "laplace", (207.0, 289.0)),
        ("waist", "boxcar", (200.0, 0.0)),
    ],
)
def test_kernel_figures_validate_and_use_the_words(preset, kernel, query):
    import plotly.graph_objects as go

    from visattn.figures import kernel_regression as kernel_regression_figures

    p = PRESETS[preset]
    regression = lesson.regression(
        p.table, query, kernel, p.sigma, lesson.sliders(preset, p.table).ranges
    )
    labels = ("A", "B", "C")[: len(p.table[0])]
    words = kernel_regression_figures.Words(
        query="Q!", weight="W!", score="score!", bars_title="T {q}", keys_axis="K ({name})"
    )
    figs = kernel_regression_figures.regression_figures(regression, labels, words, 13) + (
        [(kernel_regression_figures.loo_figure(regression, words, 13), "kernel_loo_error")]
        if regression.fit
        else []
    )
    r = lesson.scored(Q, K, V, "dot", None, None, None, False)
    figs += [
        (f, kind)
        for f, kind in kernel_regression_figures.score_maps(
            r, lesson.names(r), ("S", "W"), words, 13
        )
    ]
    for fig, name in figs:
        go.Figure(fig.to_dict())  # raises on any bad property
        assert name
    spec = figs[0][0].to_dict()
    assert spec["layout"]["title"]["text"] == f"T {lesson.key_text(regression.breakdown.query)}"
    assert spec["layout"]["xaxis"]["title"]["text"] == "K (" + ", ".join(labels[:-1]) + ")"
    assert "W!" in spec["data"][0]["hovertemplate"]


def test_keys_at_the_magnitude_limit_keep_the_curve_within_it():
    table = [[1e12, 1.0], [-1e12, 2.0]]
    c = lesson.sliders("waist", table)
    assert c.ranges == ((-1e12, 1e12),)  # widened by 10 %, then held at ±1e12
    regression = lesson.regression(table, (0.0, 0.0), "gaussian", 1e12, c.ranges)
    assert (
        regression.breakdown.estimate == pytest.approx(1.5)
        and np.abs(regression.curve_x).max() <= 1e12
    )


# ---- live figures: the in-figure sliders' precomputed steps ------------------------------------


def _softmax_gaussian(q, keys, sigma):
    """By hand: weights of the Gaussian kernel, softmax of −‖q − k‖²/(2σ²) (max subtracted
    first)."""
    s = [-sum((a - b) ** 2 for a, b in zip(q, k, strict=True)) / (2 * sigma**2) for k in keys]
    e = [math.exp(x - max(s)) for x in s]
    return [x / sum(e) for x in e]


def _live(preset, kernel="gaussian", query=None, sigma=None):
    p = PRESETS[preset]
    start = lesson.preset_start(preset)
    q = query or start[:2]
    c = lesson.sliders(preset, p.table)
    return p, c, lesson.regression(p.table, q, kernel, sigma or start[2], c.ranges, c)


def test_the_sigma_sweep_is_the_query_key_by_key_at_each_sigma():
    p, c, regression = _live("waist", sigma=0.73)  # 0.73 is off the grid: put in exactly
    sw = regression.by_sigma
    assert sw.values[sw.active] == 0.73 and list(sw.values) == sorted(sw.values)
    keys, values = [k for k, _ in p.table], [v for _, v in p.table]
    for sigma, b, loo, why in zip(sw.values, sw.breakdowns, sw.loo, sw.unreachable, strict=True):
        want = _softmax_gaussian([62.0], [[k] for k in keys], sigma)
        assert np.allclose(b.weights, want, atol=1e-12) and why == ""
        assert b.estimate == pytest.approx(sum(a * v for a, v in zip(want, values, strict=True)))
        # leave-one-out by hand: each pair predicted from the two others
        errors = []
        for i, (k, v) in enumerate(p.table):
            rest = [row for j, row in enumerate(p.table) if j != i]
            w = _softmax_gaussian([k], [[r[0]] for r in rest], sigma)
            errors.append((sum(a * r[1] for a, r in zip(w, rest, strict=True)) - v) ** 2)
        assert loo == pytest.approx(np.mean(errors))
    np.testing.assert_allclose(sw.weights[sw.active], regression.breakdown.weights)
    # the heatmap's grid of queries over the sorted keys, at every σ
    assert sw.grid_weights.shape == (len(sw.values), lesson.N_HEATMAP_QUERIES, 3)
    order = regression.order
    for sigma, grid in zip(sw.values, sw.grid_weights, strict=True):
        for q, row in list(zip(regression.grid, grid, strict=True))[::5]:
            want = _softmax_gaussian([q], [[keys[i]] for i in order], sigma)
            assert np.allclose(row, want, atol=1e-12)
    np.testing.assert_allclose(sw.grid_weights[sw.active], regression.grid_weights)


def test_sigma_sweep_moves_the_curve_and_the_estimate():
    p, c, regression = _live("waist")
    sw = regression.by_sigma
    lo, hi = c.sigma_range
    assert sw.values[sw.active] == 1.0 and sw.values.min() >= lo and sw.values.max() <= max(hi, 1.0)
    assert (
        np.allclose(sw.values / c.sigma_step, np.round(sw.values / c.sigma_step))
        and (np.diff(sw.values) > 0).all()
    )
    ratio = (hi / lo) ** (
        1 / (lesson.N_LIVE_SIGMA - 1)
    )  # log-spaced: no gap wider than one geometric step
    assert (sw.values[1:] / sw.values[:-1]).max() <= ratio * (1 + c.sigma_step / lo) and len(
        sw.values
    ) >= 20
    keys, values = [k for k, _ in p.table], [v for _, v in p.table]
    for s, curve, est in zip(sw.values, sw.curves, sw.estimates, strict=True):
        for x, y in list(zip(regression.curve_x, curve, strict=True))[::50]:
            assert y == pytest.approx(
                sum(
                    a * b
                    for a, b in zip(
                        _softmax_gaussian([x], [[k] for k in keys], s), values, strict=True
                    )
                )
            )
        assert est == pytest.approx(
            sum(
                a * b
                for a, b in zip(
                    _softmax_gaussian([62.0], [[k] for k in keys], s), values, strict=True
                )
            )
        )
    assert np.allclose(sw.curves[sw.active], regression.curve_y)


def test_plane_sigma_sweep_in_two_dimensions():
    p, c, regression = _live("game_both")
    sw = regression.by_sigma
    assert (
        sw.curves.shape == (len(sw.values), lesson.N_PLANE, lesson.N_PLANE)
        and len(sw.values) <= lesson.N_LIVE_SIGMA_PLANE + 1
    )
    keys, values = [k[:2] for k in p.table], [k[2] for k in p.table]
    i = len(sw.values) // 3
    x, y = regression.curve_x[7], regression.plane_y[11]  # one cell: row follows the second feature
    want = sum(
        a * b for a, b in zip(_softmax_gaussian([x, y], keys, sw.values[i]), values, strict=True)
    )
    assert sw.curves[i][11, 7] == pytest.approx(want)
    assert np.allclose(sw.weights[i], _softmax_gaussian([207.0, 289.0], keys, sw.values[i]))


def _steps(fig):
    return fig.to_plotly_json()["layout"]["sliders"][0]


def _array(v):
    """A step's array: a plain list (None for a gap) or a typed-array spec (base64 float32)."""
    import base64

    if isinstance(v, dict):
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
        return a.reshape([int(n) for n in v["shape"].split(",")]) if "shape" in v else a
    return np.array([np.nan if x is None else x for x in v], dtype=float)


@pytest.mark.parametrize(
    "preset,kernel",
    [
        ("waist", "gaussian"),
        ("game_both", "laplace"),
        ("noisy", "boxcar"),
        ("game_strength", "epanechnikov"),
    ],
)
def test_live_figures_validate_and_steps_match_the_sweep(preset, kernel):
    """One slider of σ (the curve's, or the plane's); the bars, the heatmap and the leave-one-out
    error follow it, each position the sweep's numbers at that σ."""
    import plotly.graph_objects as go

    from visattn.figures import kernel_regression as kernel_regression_figures

    p, c, regression = _live(preset, kernel)
    labels = ("A", "B", "C")[: len(p.table[0])]
    words = kernel_regression_figures.Words(
        estimate_line="E {fq} = {value}",
        no_estimate="none at {q}",
        live_sigma="S = ",
        bars_title="T {q}",
        current_sigma="now {sigma}",
    )
    figs = {
        name: fig
        for fig, name in kernel_regression_figures.regression_figures(regression, labels, words, 13)
    }
    if regression.fit is not None:
        figs["kernel_loo_error"] = kernel_regression_figures.loo_figure(regression, words, 13)
    for fig in figs.values():
        go.Figure(fig.to_dict())  # raises on any bad property
    sw = regression.by_sigma
    shown = [name for name, fig in figs.items() if _steps(fig).get("visible", True)]
    assert shown == ["kernel_plane" if "kernel_plane" in figs else "kernel_fitted_curve"]
    for fig in figs.values():  # every slider is σ's, at the same positions
        slider = _steps(fig)
        assert slider["name"] == "kr_sigma" and slider["active"] == sw.active
        assert [float(s["value"]) for s in slider["steps"]] == list(sw.values)
    qt = lesson.key_text(regression.breakdown.query)
    fq = f"f{qt}" if qt[0] == "(" else f"f({qt})"
    bars = _steps(figs["kernel_weights_bars"])
    for b, step in zip(sw.breakdowns, bars["steps"], strict=True):
        data, layout, traces = step["args"]
        assert step["method"] == "update" and list(traces) == [0]
        assert np.allclose(_array(data["y"][0]), b.weights, rtol=1e-5, atol=1e-30)
        assert layout["annotations[0].text"] == (
            f"E {fq} = {b.estimate:.6g}" if b.supported else f"none at {qt}"
        )
        colours = list(data["marker.color"][0])
        assert colours.count(kernel_regression_figures.ORANGE) == (1 if b.supported else 0)
        if b.supported:
            assert colours.index(kernel_regression_figures.ORANGE) == int(np.argmax(b.weights))
    spec = figs["kernel_weights_bars"].to_plotly_json()
    assert spec["layout"]["title"]["text"] == f"T {qt}"  # the query is the page's, held
    assert (
        spec["layout"]["annotations"][0]["text"]
        == bars["steps"][bars["active"]]["args"][1]["annotations[0].text"]
    )
    curve = _steps(figs[shown[0]])
    assert curve["currentvalue"]["prefix"] == "S = "
    for k, step in enumerate(curve["steps"]):
        data, layout, traces = step["args"]
        got = _array(data["z"][0] if "z" in data else data["y"][0])
        assert np.allclose(got, sw.curves[k], rtol=1e-4, equal_nan=True)
        est = sw.breakdowns[k].estimate
        assert (
            (str(f"{est:.6g}") in layout["annotations[0].text"])
            if np.isfinite(est)
            else layout["annotations[0].text"].startswith("none at")
        )
    if "kernel_weights_heatmap" in figs:
        heat = _steps(figs["kernel_weights_heatmap"])
        for k, step in enumerate(heat["steps"]):
            z = _array(step["args"][0]["z"][0]).reshape(sw.grid_weights[k].shape)
            np.testing.assert_allclose(z, np.round(sw.grid_weights[k], 3), atol=1e-6)
    if "kernel_loo_error" in figs:
        loo = _steps(figs["kernel_loo_error"])
        for k, step in enumerate(loo["steps"]):
            data = step["args"][0]
            np.testing.assert_allclose(_array(data["x"][0]), [sw.values[k]], rtol=1e-5)
            error = sw.loo[k] if np.isfinite(sw.loo[k]) else np.nan
            np.testing.assert_allclose(_array(data["y"][0]), [error], rtol=1e-4)  # 5 digits
            assert data["name"][0] == f"now {sw.values[k]:.4g}"


def test_live_figure_sizes_stay_modest():
    from visattn.figures import kernel_regression as kernel_regression_figures

    for preset in PRESETS:
        p, c, regression = _live(preset)
        labels = ("A", "B", "C")[: len(p.table[0])]
        for fig, name in kernel_regression_figures.regression_figures(regression, labels):
            assert len(fig.to_json()) < 1_000_000, name
