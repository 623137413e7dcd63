"""Fuzzing the public API: valid inputs give finite distributions; anything else is a ValueError.

Inputs are drawn from a wide space on purpose — text, None, NaN, ±inf, 1e308, ragged lists, wrong
shapes, zero and negative sizes — and no other exception type (TypeError, IndexError, overflow
warnings turned into NaN…) may escape.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import visattn

JUNK_SCALARS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(1e308),
    st.just(-1e308),
    st.text(max_size=3),
    st.none(),
    st.integers(-5, 5),
)
JUNK = st.one_of(
    JUNK_SCALARS,
    st.lists(JUNK_SCALARS, max_size=4),
    st.lists(st.lists(JUNK_SCALARS, max_size=4), max_size=4),
    arrays(
        np.float64,
        st.tuples(st.integers(0, 4), st.integers(0, 4)),
        elements=st.floats(allow_nan=True, allow_infinity=True),
    ),
)
GOOD = st.floats(-1e3, 1e3, allow_nan=False)


def matrix(rows, cols):
    return arrays(np.float64, (rows, cols), elements=GOOD)


def assert_distribution(w):
    w = np.asarray(w)
    assert np.isfinite(w).all() and (w >= 0).all()
    assert np.allclose(w.sum(-1), 1.0)


def only_value_errors(fn, *args, **kwargs):
    """Call fn; a ValueError is fine, any other exception fails the test. Returns the result or
    None."""
    with np.errstate(
        over="raise", invalid="raise", divide="raise"
    ):  # an overflow inside compute would be a silent NaN; make it loud
        try:
            return fn(*args, **kwargs)
        except ValueError as exc:
            assert str(exc), "a ValueError must say what is wrong"
            return None


@given(
    st.data(),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 5),
    st.booleans(),
    st.floats(0.05, 20),
)
def test_attention_valid(data, tq, tk, d, scale, temp):
    Q, K, V = data.draw(matrix(tq, d)), data.draw(matrix(tk, d)), data.draw(matrix(tk, 3))
    r = visattn.attention(Q, K, V, scale=scale, temperature=temp)
    assert_distribution(r.weights)
    assert np.isfinite(r.output).all()


@given(JUNK, JUNK, JUNK)
def test_attention_junk(Q, K, V):
    r = only_value_errors(visattn.attention, Q, K, V)
    if r is not None:
        assert_distribution(r.weights)


@given(
    st.data(), st.integers(1, 6), st.sampled_from([(4, 1), (4, 2), (6, 3), (8, 4)]), st.booleans()
)
def test_multi_head_valid(data, T, dh, causal):
    D, H = dh
    X = data.draw(matrix(T, D))
    Ws = [data.draw(matrix(D, D)) for _ in range(4)]
    r = visattn.multi_head_attention(X, *Ws, H, causal=causal)
    assert_distribution(r.weights)


@given(
    JUNK,
    JUNK,
    st.one_of(st.integers(-3, 12), st.floats(allow_nan=True), st.text(max_size=2), st.none()),
)
def test_multi_head_junk(X, W, H):
    r = only_value_errors(visattn.multi_head_attention, X, W, W, W, W, H)
    if r is not None:
        assert_distribution(r.weights)


@given(
    JUNK,
    JUNK,
    JUNK,
    st.sampled_from(["gaussian", "laplace", "boxcar", "epanechnikov", "cosine", ""]),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2), st.none()),
)
def test_kernel_regression_junk(q, k, v, kernel, bw):
    r = only_value_errors(visattn.nadaraya_watson, q, k, v, kernel=kernel, bandwidth=bw)
    if r is not None:
        ok = r.supported
        assert_distribution(r.weights[ok])
        assert (r.weights[~ok] == 0).all()


@given(
    st.one_of(st.integers(-10, 5000), st.floats(allow_nan=True), st.text(max_size=2)),
    st.one_of(st.integers(-10, 3000), st.floats(allow_nan=True), st.none()),
)
def test_sinusoid_junk(n, d):
    pe = only_value_errors(visattn.sinusoidal_encoding, n, d)
    if pe is not None:
        assert np.isfinite(pe).all() and np.abs(pe).max() <= 1.0


@given(st.text(max_size=200))
def test_tokenize_any_text(text):
    toks = only_value_errors(visattn.tokenize, text)
    if toks is not None:
        assert 1 <= len(toks) <= visattn.text.MAX_SENTENCE_TOKENS
        assert all(tok.strip() for tok in toks)


@pytest.mark.parametrize("x", [[1e308, 1e308], [-1e308, 0.0], [1e300, -1e300]])
def test_softmax_extreme_scores_stay_finite(x):
    assert_distribution(visattn.softmax(np.array(x)))


@given(st.integers(1, 4), st.sampled_from([(4, 2), (8, 4)]), st.integers(0, 2**32 - 1))
def test_largest_allowed_entries_stay_finite(T, dh, seed):
    D, H = dh
    rng = np.random.default_rng(seed)
    big = visattn.checks.MAX_MAGNITUDE
    X = rng.choice([-big, big], size=(T, D))
    Ws = [rng.choice([-big, big], size=(D, D)) for _ in range(4)]
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        r = visattn.multi_head_attention(X, *Ws, H)
    assert_distribution(r.weights)
    assert np.isfinite(r.output).all()
