"""Kernel regression and the scoring functions: article numbers by hand, properties, fit σ against brute force."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import visattn
from visattn.kernel_regression import (
    KERNELS,
    PRESETS,
    InputError,
    check_bandwidth,
    duplicate_keys,
    explain_query,
    fit_bandwidth,
    key_value_table,
    nadaraya_watson,
    noisy_samples,
)
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


# ---- the waist example ------------------------------------------------------------------------------------------

def test_waist_62_by_hand():
    keys, values = key_value_table(PRESETS["waist"].table)
    assert keys[:, 0].tolist() == [68, 60, 64] and values.tolist() == [126, 110, 115]
    b = explain_query(62, keys, values, "gaussian", 1.0)
    # scores −(62 − k)²/2 = −18, −2, −2; e^−18 = 1.523e−8 and e^−2 = 0.1353 (the article's GS values)
    assert b.scores.tolist() == [-18.0, -2.0, -2.0]
    assert np.allclose(b.exp_scores, [math.exp(-18), math.exp(-2), math.exp(-2)], rtol=1e-12)
    z = math.exp(-18) + 2 * math.exp(-2)
    assert np.allclose(b.weights, [math.exp(-18) / z, math.exp(-2) / z, math.exp(-2) / z], rtol=1e-12)
    assert b.weights[0] < 1e-7 and abs(b.weights[1] - 0.5) < 1e-7 and abs(b.weights[2] - 0.5) < 1e-7
    assert abs(b.contributions.sum() - b.estimate) < 1e-12
    assert abs(b.estimate - 112.5) < 1e-5 and b.supported


def test_game_presets_have_the_newcomer():
    k1, _ = key_value_table(PRESETS["game_strength"].table)
    k2, _ = key_value_table(PRESETS["game_both"].table)
    assert k1.shape[1] == 1 and k2.shape[1] == 2
    assert PRESETS["game_strength"].query == (207.0,) and PRESETS["game_both"].query == (207.0, 289.0)
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


# ---- kernels: properties ----------------------------------------------------------------------------------------

def reference_kernel(kernel, u):
    """K(u) written out independently (unnormalised; constant factors cancel)."""
    return {"gaussian": np.exp(-u**2 / 2), "laplace": np.exp(-u), "boxcar": (u <= 1).astype(float),
            "epanechnikov": np.clip(1 - u**2, 0, None)}[kernel]


keys_1d = st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=20)


@given(keys=keys_1d, q=st.floats(-1e4, 1e4, allow_nan=False), sigma=st.floats(1e-3, 100), kernel=st.sampled_from(KERNELS))
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


@given(keys=keys_1d, q=st.floats(-150, 150), sigma=st.floats(5, 100), kernel=st.sampled_from(KERNELS))
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
        ref = np.exp(-np.array([0.0, 8.0, 4.0]))            # Laplace: e^{−u} relative to the nearest key
        if kernel == "gaussian":
            ref = np.array([1.0, 0.0, 0.0])                # the others are e^{−7488} and e^{−3728} times it: 0
        assert np.allclose(b.weights, ref / ref.sum(), atol=1e-12)
        assert np.all(b.exp_scores == 0)            # e^{score} underflows, the shifted softmax does not


@given(pts=st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=2, max_size=12),
       q=st.tuples(st.floats(-500, 500), st.floats(-500, 500)), kernel=st.sampled_from(KERNELS))
@settings(max_examples=40)
def test_two_dimensional_keys(pts, q, kernel):
    r = nadaraya_watson([q], pts, np.ones(len(pts)), kernel, 10.0)
    assert np.all(r.weights >= 0)
    assert (abs(r.weights.sum() - 1) < 1e-9) if r.supported[0] else np.all(r.weights == 0)


# ---- choosing σ by leave-one-out ----------------------------------------------------------------------------------

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


# ---- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table,code", [([[1, 2]], "table_rows"), ([[1], [2]], "table_columns"),
                                        ([[1, 2, 3, 4], [5, 6, 7, 8]], "table_columns")])
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


# ---- scoring: additive, dot, scaled dot -----------------------------------------------------------------------------

def test_dot_scores_by_hand():
    d = dot_scores(Q, K)
    assert d.scores[0, 0] == 64 * 68 + 85 * 91 == 12087      # the article's q1·k1
    assert d.scores[1, 2] == 61 * 64 + 80 * 88
    s = scaled_dot_scores(Q, K)
    assert s.scale == pytest.approx(math.sqrt(2)) and np.allclose(s.scores, d.raw / math.sqrt(2))


def test_additive_against_a_loop():
    W_q, W_k, w_v = seeded_additive_weights(2, 2, 3, seed=4)
    a = additive_scores(Q, K, W_q, W_k, w_v)
    for i in range(2):
        for j in range(3):
            h = [math.tanh(sum(W_q[r, c] * Q[i][c] + W_k[r, c] * K[j][c] for c in range(2))) for r in range(3)]
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
        assert raw.weights.max(axis=1).min() > 0.999            # score gaps of hundreds: one-hot
        std = score_attention(Q, K, V, method, standardized=True)
        assert std.weights.max(axis=1).min() < 0.99
    sa = score_attention(X, X, X, "scaled_dot")
    assert np.allclose(sa.weights.sum(1), 1)


def test_standardize_by_hand():
    qs, ks = standardize(Q, K)
    k = np.array(K, float)
    assert np.allclose(ks.mean(0), 0) and np.allclose(ks.std(0), 1)
    assert np.allclose(qs, (np.array(Q, float) - k.mean(0)) / k.std(0))
    qs, ks = standardize([[1, 5]], [[2, 5], [4, 5]])              # constant feature: centred, not divided by 0
    assert np.allclose(ks, [[-1, 0], [1, 0]]) and np.allclose(qs, [[-2, 0]])


mats = st.integers(1, 4).flatmap(lambda d: st.tuples(
    st.lists(st.lists(st.floats(-100, 100), min_size=d, max_size=d), min_size=1, max_size=4),
    st.lists(st.lists(st.floats(-100, 100), min_size=d, max_size=d), min_size=1, max_size=4)))


@given(qk=mats, method=st.sampled_from(SCORINGS), standardized=st.booleans())
@example(qk=([[0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.2765392173213557e-34, 0.0]]), method="additive",
         standardized=True)  # a key feature with a spread of 1e-34: standardising once blew the query up to 1e34
@settings(max_examples=50)
def test_scored_weights_are_distributions(qk, method, standardized):
    q, k = qk
    d = len(q[0])
    W_q, W_k, w_v = seeded_additive_weights(d, d, 2)
    r = score_attention(q, k, np.ones((len(k), 1)), method, W_q=W_q, W_k=W_k, w_v=w_v, standardized=standardized)
    assert r.weights.shape == (len(q), len(k))
    assert np.all(r.weights >= 0) and np.allclose(r.weights.sum(1), 1)
    assert np.allclose(r.output, 1)


@pytest.mark.parametrize("call,code", [
    (lambda: score_attention([[1, 2, 3]], K, V, "dot"), "qk_width"),
    (lambda: score_attention(Q, K, V[:2], "dot"), "kv_rows"),
    (lambda: score_attention(Q, K, V, "cosine"), "method"),
    (lambda: additive_scores(Q, K, [[1, 2, 3]], [[1, 2]], [1]), "wq_shape"),
    (lambda: additive_scores(Q, K, [[1, 2]], [[1, 2, 3]], [1]), "wk_shape"),
    (lambda: additive_scores(Q, K, [[1, 2]], [[1, 2], [3, 4]], [1]), "hidden"),
])
def test_scoring_shape_errors(call, code):
    with pytest.raises(InputError) as e:
        call()
    assert e.value.code == code
