"""The public compute API (`visattn`: softmax, attention, multi-head, positions): exact values,
errors and properties."""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import visattn
from visattn import (
    attention,
    multi_head_attention,
    nadaraya_watson,
    self_attention,
    sinusoidal_encoding,
    softmax,
)

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def test_import_does_not_pull_streamlit():
    code = "import sys, visattn, visattn.figures; print('streamlit' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


# ---- softmax -------------------------------------------------------------------------------------


def test_softmax_by_hand():
    w = softmax([1.0, 2.0, 3.0])
    e = [math.exp(1), math.exp(2), math.exp(3)]
    assert np.allclose(w, [x / sum(e) for x in e], atol=1e-15)


def test_softmax_finite_on_scores_around_1e4():
    # Article 002's multi-dimensional waist/weight example without scaling: Q Kᵀ entries are about
    # 1.2e4.
    Q = np.array([[64, 85], [61, 80]], float)
    K = np.array([[68, 91], [60, 87], [64, 88]], float)
    scores = Q @ K.T
    assert scores[0, 0] == 64 * 68 + 85 * 91 == 12087
    w = softmax(scores)
    assert np.isfinite(w).all() and np.allclose(w.sum(1), 1)
    # the largest score wins by a margin of ≥ 100 (e^-100 ≈ 4e-44): one-hot to machine precision
    assert np.allclose(w, np.eye(3)[scores.argmax(1)], atol=1e-40)


def test_softmax_mask_zero_and_full_row_error():
    w = softmax(np.zeros((2, 3)), mask=np.array([[True, False, True], [True, True, True]]))
    assert w[0, 1] == 0.0 and np.allclose(w[0], [0.5, 0, 0.5]) and np.allclose(w[1], 1 / 3)
    with pytest.raises(ValueError, match="no allowed position"):
        softmax(np.zeros((2, 2)), mask=np.array([[False, False], [True, True]]))
    with pytest.raises(ValueError, match="boolean"):
        softmax(np.zeros((1, 2)), mask=np.array([[1, 0]]))


@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 6), st.integers(1, 8)), elements=st.floats(-1e6, 1e6)
    )
)
def test_softmax_rows_are_distributions(x):
    w = softmax(x)
    assert np.isfinite(w).all() and (w >= 0).all()
    assert np.allclose(w.sum(-1), 1)


# ---- attention -----------------------------------------------------------------------------------

THINKING_X = [[1, 0, 1, 0], [0, 2, 0, 2]]
W_Q = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
W_V = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]


def test_thinking_machines_by_hand():
    # q1 = x1·W^Q = row0 + row2 = [2,0,1,1]; k1 = [0,1,2,1]; q2 = 2·(row1 + row3) = [0,4,2,2]; k2 =
    # [4,2,0,2]
    tr = self_attention(THINKING_X, W_Q, W_K, W_V)
    assert tr.Q.tolist() == [[2, 0, 1, 1], [0, 4, 2, 2]]
    assert tr.K.tolist() == [[0, 1, 2, 1], [4, 2, 0, 2]]
    assert tr.V.tolist() == [[1, 1, 1, 1], [2, 2, 2, 2]]
    assert tr.raw_scores.tolist() == [[3, 10], [10, 12]]
    assert tr.scores.tolist() == [[1.5, 5], [5, 6]]
    w11 = 1 / (1 + math.exp(3.5))
    assert np.allclose(tr.weights[0], [w11, 1 - w11], atol=1e-15)
    assert np.allclose(tr.output[0], [w11 * 1 + (1 - w11) * 2] * 4)


def test_attention_shapes_and_errors():
    r = attention(np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)))
    assert r.weights.shape == (3, 5) and r.output.shape == (3, 2) and r.scores.shape == (3, 5)
    with pytest.raises(ValueError, match="same width"):
        attention(np.ones((3, 4)), np.ones((5, 3)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="one value row"):
        attention(np.ones((3, 4)), np.ones((5, 4)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="numbers only"):
        attention([["a", 1]], [[1, 1]], [[1]])
    with pytest.raises(ValueError, match="NaN"):
        attention([[np.nan, 1]], [[1, 1]], [[1]])
    with pytest.raises(ValueError, match="temperature"):
        attention([[1.0]], [[1.0]], [[1.0]], temperature=0)


@given(st.integers(1, 7), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_causal_weights_upper_triangle_zero(T, d, seed):
    rng = np.random.default_rng(seed)
    X, Wq, Wk, Wv = (
        rng.normal(size=(T, d)),
        rng.normal(size=(d, d)),
        rng.normal(size=(d, d)),
        rng.normal(size=(d, d)),
    )
    tr = self_attention(X, Wq, Wk, Wv, causal=True)
    assert (tr.weights[np.triu_indices(T, 1)] == 0).all()
    assert np.allclose(tr.weights.sum(1), 1)


# ---- multi-head ----------------------------------------------------------------------------------

# multi_head_attention against an independent per-head loop and the concat-then-W_O formula:
# test_multi_head.py


def test_multi_head_indivisible_names_both_numbers():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=4"):
        multi_head_attention(np.ones((3, 10)), *[np.eye(10)] * 4, 4)


@given(st.integers(1, 5), st.sampled_from([1, 2, 3, 4, 6]), st.integers(1, 4), st.integers(0, 999))
def test_split_merge_round_trip(T, H, dh, seed):
    x = np.random.default_rng(seed).normal(size=(T, H * dh))
    s = visattn.split_heads(x, H)
    assert s.shape == (H, T, dh)
    assert np.array_equal(s[1 % H], x[:, (1 % H) * dh : (1 % H + 1) * dh])
    assert np.array_equal(visattn.merge_heads(s), x)


# ---- kernel regression, positions, tokens --------------------------------------------------------


def test_waist_62_gives_112_5():
    r = nadaraya_watson(62, [68, 60, 64], [126, 110, 115])
    # Gaussian scores -(q-k)²/2: -18, -2, -2 → weights e^-18 : e^-2 : e^-2
    z = math.exp(-18) + 2 * math.exp(-2)
    assert np.allclose(r.weights[0], [math.exp(-18) / z, math.exp(-2) / z, math.exp(-2) / z])
    assert abs(r.estimates[0] - 112.5) < 1e-5


def test_sinusoid_by_hand():
    pe = sinusoidal_encoding(5, 6)
    for pos in range(5):
        for i in range(3):
            angle = pos / 10000 ** (2 * i / 6)
            assert math.isclose(pe[pos, 2 * i], math.sin(angle), abs_tol=1e-12)
            assert math.isclose(pe[pos, 2 * i + 1], math.cos(angle), abs_tol=1e-12)
    with pytest.raises(ValueError, match="odd"):
        sinusoidal_encoding(5, 7)


def test_tokenize():
    assert visattn.tokenize("小明喜欢吃苹果") == list("小明喜欢吃苹果")
    assert visattn.tokenize("it was too tired.")[-1] == "."
    with pytest.raises(ValueError, match="empty"):
        visattn.tokenize("   ")
    with pytest.raises(ValueError, match="limit"):
        visattn.tokenize("a " * 65)
    e1 = visattn.seeded_embedding(["it", "was"], 8)
    e2 = visattn.seeded_embedding(["the", "it"], 8)
    assert np.array_equal(e1[0], e2[1])
