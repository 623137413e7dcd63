"""visattn.reading and visattn.figures.reading: every expected value is computed another way here.

Rollout against a plain-loop version; flow against a hand-solved graph, a brute-force minimum cut
(max-flow = min-cut) and networkx on the full layered graph built with other node names; value norms
against Hugging Face's BertModel (tests/fixtures/reading_reference.npz, written by
tests/make_reading_fixtures.py with torch, which this venv never has); aggregation by its
properties."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from visattn import reading
from visattn.errors import InputError
from visattn.figures import reading as reading_figures
from visattn.figures.colour import colour_scale
from visattn.figures.lines import filtered_lines
from visattn.figures.matrices import head_grid, heatmap
from visattn.lessons import reading as lesson
from visattn.models import designed
from visattn.models.encoder import BertEncoder

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "reading_reference.npz"
TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."


def random_weights(shape, seed=0) -> np.ndarray:
    """Softmax-like weights: rows sum to 1."""
    return np.random.default_rng(seed).dirichlet(np.ones(shape[-1]), size=shape[:-1])


def validated(fig: go.Figure) -> go.Figure:
    return go.Figure(fig.to_dict())  # Plotly's own validation of every property the builder wrote


# ── independent references ───────────────────────────────────────────────────────────────────────
def loop_augmented(A, residual, fusion):
    """Ã_l by explicit loops: fuse heads, mix in the identity, renormalise each row."""
    L, H, T, _ = A.shape
    out = np.zeros((L, T, T))
    for layer in range(L):
        for i in range(T):
            row = []
            for j in range(T):
                vals = [A[layer, h, i, j] for h in range(H)]
                row.append(sum(vals) / H if fusion == "mean" else max(vals))
            if fusion == "max":
                s = sum(row)
                row = [v / s for v in row]
            row = [residual * (i == j) + (1 - residual) * v for j, v in enumerate(row)]
            s = sum(row)
            out[layer, i] = [v / s for v in row]
    return out


def loop_rollout(A, residual, fusion):
    At = loop_augmented(A, residual, fusion)
    L, T, _ = At.shape
    R = [At[0]]
    for layer in range(1, L):
        prev, cur = R[-1], At[layer]
        R.append(
            np.array(
                [
                    [sum(cur[i, k] * prev[k, j] for k in range(T)) for j in range(T)]
                    for i in range(T)
                ]
            )
        )
    return np.stack(R)


def brute_min_cut(At, s, t):
    """Minimum s–t cut of the full layered graph by trying every side for every other node."""
    L, T, _ = At.shape
    nodes = [(layer, i) for layer in range(L + 1) for i in range(T)]
    others = [n for n in nodes if n not in ((L, s), (0, t))]
    best = np.inf
    for bits in itertools.product((0, 1), repeat=len(others)):
        source_side = {(L, s)} | {n for n, b in zip(others, bits, strict=True) if b}
        cut = sum(
            At[layer, i, j]
            for layer in range(L)
            for i in range(T)
            for j in range(T)
            if (layer + 1, i) in source_side and (layer, j) not in source_side
        )
        best = min(best, cut)
    return best


def normalise(m):
    return m / m.sum(axis=-1, keepdims=True)


# ── heads combined ───────────────────────────────────────────────────────────────────────────────
@st.composite
def attention_stacks(draw):
    H, T = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    raw = draw(hnp.arrays(np.float64, (H, T, T), elements=st.floats(0.0, 1.0)))
    raw = raw + 1e-9
    return raw / raw.sum(axis=-1, keepdims=True)


@given(attention_stacks(), st.sampled_from(["mean", "max"]))
def test_aggregated_rows_sum_to_one_and_stay_within_the_heads(w, how):
    agg = reading.aggregate_heads(w, how)
    assert agg.shape == w.shape[1:]
    np.testing.assert_allclose(agg.sum(axis=-1), 1.0, atol=1e-9)
    assert (agg >= 0).all()
    if how == "mean":
        assert (agg <= w.max(axis=0) + 1e-12).all() and (agg >= w.min(axis=0) - 1e-12).all()


@given(st.integers(1, 6), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_one_hot_heads_mean_counts_the_heads_and_max_splits_evenly(H, T, seed):
    rng = np.random.default_rng(seed)
    target = rng.integers(0, T, size=(H, T))  # head h sends query i to key target[h, i]
    w = np.zeros((H, T, T))
    for h in range(H):
        w[h, np.arange(T), target[h]] = 1.0
    mean, mx = reading.aggregate_heads(w, "mean"), reading.aggregate_heads(w, "max")
    for i in range(T):
        for j in range(T):
            assert mean[i, j] == pytest.approx(np.count_nonzero(target[:, i] == j) / H)
            chosen = set(target[:, i].tolist())
            assert mx[i, j] == pytest.approx(1 / len(chosen) if j in chosen else 0.0)


def test_aggregation_over_layers_keeps_the_leading_axes():
    w = random_weights((3, 4, 5, 5))
    np.testing.assert_allclose(reading.aggregate_heads(w, "mean"), w.mean(axis=1))
    assert reading.aggregate_heads(w, "max").shape == (3, 5, 5)


# ── rollout ──────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "residual, fusion", [(0.5, "mean"), (0.3, "max"), (0.0, "mean"), (1.0, "max")]
)
def test_rollout_matches_a_plain_loop(residual, fusion):
    A = random_weights((4, 3, 5, 5), seed=1)
    got = reading.attention_rollout(A, residual=residual, head_fusion=fusion)
    np.testing.assert_allclose(got, loop_rollout(A, residual, fusion), atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, atol=1e-12)
    if residual == 1.0:
        np.testing.assert_allclose(got, np.broadcast_to(np.eye(5), got.shape))  # nothing mixes


def test_rollout_of_float32_model_weights_is_float64_and_first_entry_is_the_first_layer():
    A = random_weights((2, 2, 4, 4), seed=2).astype(np.float32)
    got = reading.attention_rollout(A)
    assert got.dtype == np.float64
    np.testing.assert_allclose(
        got[0], 0.5 * np.eye(4) + 0.5 * A[0].astype(np.float64).mean(axis=0), atol=1e-7
    )


# ── flow ─────────────────────────────────────────────────────────────────────────────────────────
def flow_atol(L: int, T: int) -> float:
    """SciPy's max flow takes capacities × 2³⁰ rounded: an entry moves by at most δ = L·T²·2⁻³¹
    before the rows are normalised; a row sums to at least 1 (the whole unit leaving a top token
    reaches the inputs), so the normalised entry moves by at most (T + 1)·δ."""
    return (T + 1) * L * T * T / 2**31


def test_flow_on_a_hand_solved_graph():
    # residual 0, one head: Ã = A. Two layers, two tokens: the paths (2,i)→(1,k)→(0,j) share no
    # edge, so the flow is Σ_k min(A_1[i,k], A_0[k,j]).
    A0 = np.array([[0.6, 0.4], [0.1, 0.9]])
    A1 = np.array([[0.7, 0.3], [0.2, 0.8]])
    flow = reading.attention_flow(np.stack([A0, A1])[:, None], residual=0.0)
    # row 0: min(.7,.6)+min(.3,.1) = 0.7 and min(.7,.4)+min(.3,.9) = 0.7; row 1: 0.2+0.1 = 0.3 and
    # 0.2+0.8 = 1.0
    np.testing.assert_allclose(flow, [[0.5, 0.5], [0.3 / 1.3, 1.0 / 1.3]], atol=flow_atol(2, 2))


@pytest.mark.parametrize("L, T, seed", [(3, 2, 0), (3, 3, 1), (2, 3, 2)])
def test_flow_equals_the_minimum_cut_found_by_brute_force(L, T, seed):
    A = random_weights((L, 2, T, T), seed=seed)
    At = loop_augmented(A, 0.5, "mean")
    want = normalise(np.array([[brute_min_cut(At, i, j) for j in range(T)] for i in range(T)]))
    np.testing.assert_allclose(reading.attention_flow(A), want, atol=flow_atol(L, T))


def test_flow_matches_networkx_on_the_full_layered_graph_with_other_node_names():
    A = random_weights((4, 3, 5, 5), seed=3)
    At = loop_augmented(A, 0.4, "max")
    L, T, _ = At.shape
    G = nx.DiGraph()
    for layer in range(L):
        for i in range(T):
            for j in range(T):
                G.add_edge(f"L{layer + 1}t{i}", f"L{layer}t{j}", capacity=At[layer, i, j])
    want = normalise(
        np.array(
            [[nx.maximum_flow_value(G, f"L{L}t{i}", f"L0t{j}") for j in range(T)] for i in range(T)]
        )
    )
    np.testing.assert_allclose(
        reading.attention_flow(A, residual=0.4, head_fusion="max"), want, atol=flow_atol(L, T)
    )


def test_flow_of_one_layer_is_its_augmented_attention():
    A = random_weights((1, 2, 4, 4), seed=4)
    np.testing.assert_allclose(
        reading.attention_flow(A), loop_augmented(A, 0.5, "mean")[0], atol=1e-12
    )


def test_flow_reports_progress_and_refuses_long_texts():
    calls = []
    reading.attention_flow(
        random_weights((2, 1, 4, 4)), progress=lambda done, total: calls.append((done, total))
    )
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(InputError) as err:
        reading.attention_flow(random_weights((2, 1, 5, 5)), max_tokens=4)
    assert err.value.code == "flow_tokens" and err.value.params == {"n": 5, "limit": 4}
    with pytest.raises(InputError) as err:
        reading.attention_flow(
            random_weights((1, 1, reading.FLOW_MAX_TOKENS + 1, reading.FLOW_MAX_TOKENS + 1))
        )
    assert err.value.code == "flow_tokens"


def test_reading_weights_gives_every_selector_option_as_a_4d_grid():
    A = random_weights((3, 2, 4, 4), seed=10)
    norms = np.random.default_rng(11).uniform(0.5, 2, size=(3, 2, 4))
    want = {
        "weights": A,
        "norm_weighted": normalise(A * norms[:, :, None, :]),
        "mean": A.mean(axis=1, keepdims=True),
        "max": normalise(A.max(axis=1, keepdims=True)),
        "rollout": loop_rollout(A, 0.5, "mean")[:, None],
    }
    for name, expected in want.items():
        got = reading.reading_weights(A, name, norms=norms)
        assert got.ndim == 4
        np.testing.assert_allclose(got, expected, atol=1e-12)
        np.testing.assert_allclose(got.sum(axis=-1), 1.0, atol=1e-12)
    flow = reading.reading_weights(A, "flow")
    assert flow.shape == (1, 1, 4, 4)
    np.testing.assert_allclose(flow[0, 0], reading.attention_flow(A))
    for name, kwargs, code in (
        ("norm_weighted", {}, "reading_norms"),
        ("flow", {"max_tokens": 3}, "flow_tokens"),
        ("grid", {}, "reading_choice"),
    ):
        with pytest.raises(InputError) as err:
            reading.reading_weights(A, name, **kwargs)
        assert err.value.code == code


# ── value norms ──────────────────────────────────────────────────────────────────────────────────
def test_value_norms_match_a_per_token_loop():
    rng = np.random.default_rng(5)
    T, D, H = 4, 6, 3
    X, W_V, b_V, W_O = (
        rng.normal(size=(T, D)),
        rng.normal(size=(D, D)),
        rng.normal(size=D),
        rng.normal(size=(D, 5)),
    )
    got = reading.value_norms(X, W_V, b_V, W_O, H)
    Dh = D // H
    for h in range(H):
        for j in range(T):
            f = sum(
                (X[j] @ W_V[:, h * Dh + c] + b_V[h * Dh + c]) * W_O[h * Dh + c] for c in range(Dh)
            )
            assert got[h, j] == pytest.approx(np.sqrt((f**2).sum()))
    np.testing.assert_allclose(
        reading.value_norms(X, W_V, None, W_O, H), reading.value_norms(X, W_V, np.zeros(D), W_O, H)
    )


def test_norm_weighted_scales_each_key_column_and_normalises_rows():
    w = random_weights((2, 3, 4, 4), seed=6)
    norms = np.random.default_rng(7).uniform(0.1, 3, size=(2, 3, 4))
    raw = reading.norm_weighted(w, norms)
    for layer, h, i, j in itertools.product(range(2), range(3), range(4), range(4)):
        assert raw[layer, h, i, j] == pytest.approx(w[layer, h, i, j] * norms[layer, h, j])
    np.testing.assert_allclose(reading.norm_weighted(w, norms, normalise=True), normalise(raw))
    zero = reading.norm_weighted(
        w[0, 0], np.zeros(4), normalise=True
    )  # a row of zeros stays zero, no NaN
    assert (zero == 0).all()


def test_key_share_averages_each_rows_share_on_the_named_keys():
    w = np.array([[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.2, 0.2, 0.6]])
    assert reading.key_share(w, [0, 2]) == pytest.approx((0.75 + 0.5 + 0.8) / 3)
    assert reading.key_share(2 * w, [0, -1]) == pytest.approx(
        (0.75 + 0.5 + 0.8) / 3
    )  # rows renormalised


def test_designed_value_norms_match_the_values_the_heads_computed():
    r = designed.run(TIRED)
    got = reading.designed_value_norms(r)
    Dh = designed.D_HEAD
    for layer, (tr, p) in enumerate(zip(r.layers, designed.DESIGNED_CONFIG.layers, strict=True)):
        for h in range(designed.N_HEADS):
            want = np.linalg.norm(
                tr.mha.V[h] @ p.W_o[h * Dh : (h + 1) * Dh], axis=-1
            )  # (T, Dh) x (Dh, D)
            np.testing.assert_allclose(got[layer, h], want, atol=1e-12)
    q, k = reading.block_queries_keys(r, 1, 0)
    e = np.exp(q @ k.T - (q @ k.T).max(-1, keepdims=True))
    np.testing.assert_allclose(
        e / e.sum(-1, keepdims=True), r.weights[1, 0], atol=1e-12
    )  # softmax(q·k) is the head


@pytest.fixture(scope="module")
def model() -> BertEncoder:
    return BertEncoder.load()


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as f:
        return {key: f[key] for key in f.files}


@pytest.mark.parametrize("name", ["tired", "wide"])
def test_minilm_value_norms_match_hugging_face(model, reference, name):
    text = str(reference[f"{name}_text"])
    result = model.run(text)
    np.testing.assert_array_equal(result.token_ids, reference[f"{name}_input_ids"])
    want = reference[f"{name}_value_norms"]
    for source in (result, text):
        got = reading.encoder_value_norms(model, source)
        assert got.shape == want.shape == (6, 12, result.n_tokens)
        assert np.abs(got / want - 1).max() <= 1e-4


def test_minilm_queries_and_keys_match_hugging_face(model, reference):
    layer = int(reference["qk_layer"])
    result = model.run(TIRED)
    for head in (0, 7):
        q, k = reading.encoder_queries_keys(model, result, layer, head)
        for got, want in (
            (q, reference["tired_queries"][head]),
            (k, reference["tired_keys"][head]),
        ):
            assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
        scores = q @ k.T
        w = np.exp(scores - scores.max(-1, keepdims=True))
        np.testing.assert_allclose(
            w / w.sum(-1, keepdims=True), result.attentions[layer, head], atol=1e-5
        )


def test_parked_heads_move_less_than_their_weights_say(model):
    """The page's claim on the tired sentence: [CLS] + [SEP] hold less of the norm-weighted
    attention."""
    result = model.run(TIRED)
    norms = reading.encoder_value_norms(model, result)
    special = [0, result.n_tokens - 1]
    by_weight = reading.key_share(result.attentions, special).mean()
    by_norm = reading.key_share(
        reading.norm_weighted(result.attentions, norms, normalise=True), special
    ).mean()
    assert by_norm < by_weight


# ── geometry, alignment, edges ───────────────────────────────────────────────────────────────────
def test_qk_projection_keeps_distances_of_planar_data_and_fixes_signs():
    rng = np.random.default_rng(8)
    basis = np.linalg.qr(rng.normal(size=(6, 2)))[0]  # a plane inside 6-D
    Q, K = rng.normal(size=(5, 2)) @ basis.T + 1.0, rng.normal(size=(4, 2)) @ basis.T + 1.0
    p = reading.qk_projection(Q, K)
    both, flat = np.vstack([Q, K]), np.vstack([p.queries, p.keys])
    dist = lambda Z: np.linalg.norm(Z[:, None] - Z[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(dist(flat), dist(both), atol=1e-9)
    assert p.explained.sum() == pytest.approx(1.0)
    assert (p.axes[np.abs(p.axes).argmax(axis=0), [0, 1]] > 0).all()
    again = reading.qk_projection(Q, K)
    np.testing.assert_array_equal(again.queries, p.queries)


def test_align_tokens():
    a = ["[CLS]", "the", "animal", "was", "too", "tired", ".", "[SEP]"]
    b = a[:5] + ["wide"] + a[6:]
    al = reading.align_tokens(a, b)
    assert al.aligned and al.differ == (5,) and (al.prefix, al.suffix) == (5, 2)
    other = reading.align_tokens(a, a[:5] + ["very", "wide"] + a[6:])
    assert not other.aligned and other.differ == () and (other.n_a, other.n_b) == (8, 9)
    assert (other.prefix, other.suffix) == (5, 2)
    with pytest.raises(InputError):
        reading.weight_difference(np.eye(3), np.eye(4))


def test_filter_edges_threshold_and_top_k():
    w = np.array([[0.5, 0.3, 0.15, 0.05], [0.25, 0.25, 0.25, 0.25]])
    np.testing.assert_array_equal(
        reading.filter_edges(w, threshold=0.1), [[0.5, 0.3, 0.15, 0], [0.25] * 4]
    )
    np.testing.assert_array_equal(
        reading.filter_edges(w, threshold=0.0, top_k=2), [[0.5, 0.3, 0, 0], [0.25, 0.25, 0, 0]]
    )
    assert (reading.filter_edges(w, top_k=10) == reading.filter_edges(w)).all()


@pytest.mark.parametrize(
    "call, code",
    [
        (lambda: reading.aggregate_heads(random_weights((2, 3, 3)), "median"), "reading_choice"),
        (lambda: reading.aggregate_heads(-random_weights((2, 3, 3)), "mean"), "reading_negative"),
        (lambda: reading.aggregate_heads(np.ones((3, 3)), "mean"), "reading_shape"),
        (
            lambda: reading.attention_rollout(random_weights((2, 2, 3, 3)), residual=1.5),
            "reading_share",
        ),
        (
            lambda: reading.attention_rollout(random_weights((2, 2, 3, 3)), residual="x"),
            "not_number",
        ),
        (lambda: reading.attention_rollout(2 * random_weights((2, 2, 3, 3))), "reading_rows"),
        (lambda: reading.attention_rollout(np.ones((2, 2, 3, 4)) / 4), "reading_square"),
        (lambda: reading.attention_rollout(random_weights((2, 3, 3))), "wrong_ndim"),
        (
            lambda: reading.attention_flow(random_weights((2, 1, 3, 3)), head_fusion="min"),
            "reading_choice",
        ),
        (
            lambda: reading.value_norms(np.ones((3, 4)), np.ones((5, 4)), None, np.ones((4, 4)), 2),
            "value_shapes",
        ),
        (
            lambda: reading.value_norms(
                np.ones((3, 4)), np.ones((4, 4)), np.ones(3), np.ones((4, 4)), 2
            ),
            "value_shapes",
        ),
        (
            lambda: reading.value_norms(np.ones((3, 4)), np.ones((4, 4)), None, np.ones((4, 4)), 0),
            "too_small",
        ),
        (lambda: reading.norm_weighted(random_weights((2, 3, 3)), np.ones((2, 4))), "norms_shape"),
        (
            lambda: reading.norm_weighted(random_weights((2, 3, 3)), -np.ones((2, 3))),
            "reading_negative",
        ),
        (lambda: reading.key_share(random_weights((3, 3)), [3]), "reading_index"),
        (lambda: reading.qk_projection(np.ones((3, 2)), np.ones((3, 4))), "qk_width"),
        (lambda: reading.align_tokens("abc", ["a"]), "reading_tokens"),
        (lambda: reading.filter_edges(random_weights((3, 3)), threshold=-1), "reading_threshold"),
        (lambda: reading.filter_edges(random_weights((3, 3)), top_k=0), "too_small"),
        (lambda: reading.block_queries_keys(designed.run(TIRED), 2, 0), "reading_index"),
        (lambda: reading.block_value_norms([], designed.DESIGNED_CONFIG.layers, 4), "value_layers"),
        (lambda: colour_scale(scale="cubic"), "reading_choice"),
        (lambda: colour_scale(scale="power", gamma=0), "not_positive"),
        (lambda: colour_scale(value_range="max"), "reading_values"),
        (
            lambda: reading_figures.comparison(np.eye(3), np.eye(3), ["a", "b"], ["a", "b", "c"]),
            "reading_labels",
        ),
    ],
)
def test_bad_input_raises_a_coded_error(call, code):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.code == code


def test_minilm_source_must_be_text_or_result(model):
    with pytest.raises(InputError) as err:
        reading.encoder_value_norms(model, 42)
    assert err.value.code == "reading_source"
    with pytest.raises(InputError) as err:
        reading.encoder_queries_keys(model, TIRED, 6, 0)
    assert err.value.code == "reading_index"


# ── figures ──────────────────────────────────────────────────────────────────────────────────────
def colour_at(stops, pos):
    """The stop colour at exactly ``pos`` (the warped scale has a stop there by construction)."""
    return next(c for p, c in stops if abs(p - pos) < 1e-12)


def test_colour_scales_warp_the_palette_not_the_data():
    from plotly.colors import sample_colorscale

    lin = colour_scale(palette="Viridis")
    assert (
        set(lin) == {"colorscale"}
        and lin["colorscale"][0][0] == 0
        and lin["colorscale"][-1][0] == 1
    )
    assert (
        heatmap(W[0, 0], **lin).data[0].text[0][0] == f"{W[0, 0, 0, 0]:.2f}"
    )  # still drawn as weights, 0…1
    power = colour_scale(scale="power", gamma=0.5, palette="Blues")
    # a value at 1/4 of the range takes the palette's colour at (1/4)^0.5 = 1/2
    assert colour_at(power["colorscale"], 0.25) == sample_colorscale("Blues", [0.5])[0]
    log = colour_scale(scale="log", decades=2, palette="Greys")
    assert (
        colour_at(log["colorscale"], 0.1) == sample_colorscale("Greys", [0.5])[0]
    )  # 1 + log10(0.1) / 2
    assert colour_at(log["colorscale"], 0.01) == sample_colorscale("Greys", [0.0])[0]
    top = colour_scale(np.array([[0.1, 0.4], [2.5, 0.0]]), value_range="max")
    assert (top["zmin"], top["zmax"]) == (0.0, 2.5)
    for scale in (lin, power, log, top):
        positions = [p for p, _ in scale["colorscale"]]
        assert positions == sorted(set(positions))


W = random_weights((2, 3, 6, 6), seed=9)
TOKENS = ["[CLS]", "it", "was", "too", "tired", "[SEP]"]

BUILDS = {
    "heatmap log Viridis": lambda: heatmap(
        W[0, 0], TOKENS, TOKENS, **colour_scale(scale="log", palette="Viridis")
    ),
    "head grid power Greys max": lambda: head_grid(
        W,
        TOKENS,
        TOKENS,
        **colour_scale(W, scale="power", gamma=0.4, palette="Greys", value_range="max"),
    ),
    "filtered lines": lambda: filtered_lines(
        W[0], TOKENS, threshold=0.1, top_k=2, head_names=["a", "b", "c"]
    ),
    "comparison aligned": lambda: reading_figures.comparison(
        W[0, 0],
        W[1, 0],
        TOKENS,
        TOKENS[:4] + ["wide", "[SEP]"],
        name="L1·H1",
        colour=colour_scale(palette="Viridis"),
    ),
    "comparison unaligned": lambda: reading_figures.comparison(
        W[0, 0], random_weights((7, 7)), TOKENS, TOKENS + ["."]
    ),
    "qk geometry": lambda: reading_figures.qk_geometry(
        reading.qk_projection(*np.random.default_rng(1).normal(size=(2, 6, 4))),
        TOKENS,
        W[0, 0],
        name="L1·H1",
    ),
    "qk geometry by position": lambda: reading_figures.qk_geometry(
        reading.qk_projection(*np.random.default_rng(2).normal(size=(2, 6, 4))),
        TOKENS,
        colour_by_position=True,
    ),
}


@pytest.mark.parametrize("name", BUILDS)
def test_figures_pass_plotly_validation(name):
    assert validated(BUILDS[name]()).data


def test_comparison_draws_the_difference_only_when_tokens_align():
    b_tokens = TOKENS[:4] + ["wide", "[SEP]"]
    words = replace(
        reading_figures.WORDS,
        sentence_a="A",
        sentence_b="B",
        difference_title="diff",
        unaligned="NOTE",
    )
    fig = reading_figures.comparison(W[0, 0], W[1, 0], TOKENS, b_tokens, words=words)
    assert [tr.name for tr in fig.data] == ["A", "B", "diff"]
    np.testing.assert_allclose(np.asarray(fig.data[2].z, dtype=float), W[1, 0] - W[0, 0], atol=1e-6)
    assert "tired / wide" in [x.rstrip("\u200b") for x in fig.data[2].x]
    assert fig.layout.coloraxis2.cmin == -fig.layout.coloraxis2.cmax
    assert "NOTE" not in [a.text for a in fig.layout.annotations]
    other = reading_figures.comparison(
        W[0, 0], random_weights((7, 7)), TOKENS, TOKENS + ["."], words=words
    )
    assert len(other.data) == 2 and "NOTE" in [a.text for a in other.layout.annotations]
    english = reading_figures.comparison(W[0, 0], W[1, 0], TOKENS, b_tokens, name="L1·H1")
    assert [tr.name for tr in english.data] == ["Sentence A", "Sentence B", "B − A"]
    assert english.layout.title.text == "weights: L1·H1"


def test_the_figures_name_rows_and_columns_by_the_reading():
    """Weights (and maps of them): queries and keys; rollout: output tokens after the map's layer
    (a grid: each map's own); flow: after the model's last layer, whatever map is named; an
    unnormalised map says so in its title, its cells and its lines."""
    words = replace(
        reading_figures.WORDS,
        query="Q",
        key="K",
        output_token="out@{layer}",
        output_token_grid="out@each",
        input_token="in",
        raw_title="{reading}!",
        raw_value="raw",
        raw_relative="raw/max",
        map_title="{reading}|{name}",
        lines_title="{name} q→k",
        lines_through_title="{name} out→in",
    )
    grid = W[0].reshape(1, 3, 6, 6)  # (R, C, T, T)
    maps = lesson.Maps(grid, ["L1·H1", "L1·H2", "L1·H3"], W[0, 1], "L1·H2")
    cases = {
        "weights": (("Q", "K"), ("Q", "K"), "{name} q→k"),
        "rollout": (("out@each", "in"), ("out@L1·H2", "in"), "{name} out→in"),
        "flow": (("out@L12", "in"), ("out@L12", "in"), "{name} out→in"),
    }
    for name, (grid_axes, cell_axes, lines_title) in cases.items():
        shown = reading_figures.Reading(name, name.upper(), "v", n_layers=12)
        fig = reading_figures.grid_figure(maps, TOKENS, shown, words=words)
        hover = fig.data[0].hovertemplate
        assert f"{grid_axes[0]}: %{{y}}" in hover and f"{grid_axes[1]}: %{{x}}" in hover
        assert fig.layout.title.text == name.upper() and "v: %{z" in hover
        cell = reading_figures.cell_figure(maps, TOKENS, shown, words=words)
        axes = (cell.layout.yaxis.title.text, cell.layout.xaxis.title.text)
        assert axes == cell_axes and cell.layout.title.text == f"{name.upper()}|L1·H2"
        lines = reading_figures.lines_figure(maps.cell, TOKENS, maps.name, shown, words=words)
        assert lines.layout.title.text == lines_title.format(name="L1·H2")
    raw = reading_figures.Reading("norm_weighted", "NW", "share", raw=True)
    cell = reading_figures.cell_figure(maps, TOKENS, raw, words=words)
    assert cell.layout.title.text == "NW!|L1·H2" and "raw: %{z" in cell.data[0].hovertemplate
    lines = reading_figures.lines_figure(maps.cell, TOKENS, maps.name, raw, words=words)
    assert any("raw/max: " in text for tr in lines.data if tr.text for text in tr.text if text)


def test_qk_geometry_hover_lists_a_querys_top_keys_and_every_word_is_a_parameter():
    proj = reading.qk_projection(*np.random.default_rng(3).normal(size=(2, 6, 4)))
    w = np.full((6, 6), 0.02)
    w[1, [4, 0, 2]] = [0.5, 0.3, 0.1]
    words = replace(
        reading_figures.WORDS,
        query="Q!",
        key="K!",
        position="P!",
        top_keys="TOP!",
        principal_axis="X{n}!{pct}",
        plane_title="<{name}>",
    )
    fig = reading_figures.qk_geometry(proj, TOKENS, w, name="L2·H3", top_k=2, words=words)
    hover = fig.data[0].customdata[1]
    assert hover.startswith("Q!: it") and "TOP!" in hover
    assert (
        hover.index("tired (P! 5): 0.500") < hover.index("[CLS] (P! 1): 0.300")
        and "was" not in hover
    )
    assert [tr.name for tr in fig.data] == ["Q!", "K!"] and fig.data[1].marker.symbol == "diamond"
    pct = [f"{100 * share:.0f}" for share in proj.explained]  # each axis's share, in percent
    axes = (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text)
    assert axes == (f"X1!{pct[0]}", f"X2!{pct[1]}") and fig.layout.title.text == "<L2·H3>"
    np.testing.assert_allclose(np.asarray(fig.data[1].x, dtype=float), proj.keys[:, 0], atol=1e-6)


def test_filtered_lines_draw_only_kept_edges():
    fig = filtered_lines(W[0, :1], TOKENS, top_k=1, threshold=0.0)
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    assert sum(len(tr.x) for tr in lines) // 3 == 6  # one edge per query


def test_reading_weights_holds_one_layer_at_a_time_beside_its_result():
    """A page's float32 reading of a long run costs the result and about one layer in float64, never
    a float64 copy of the whole run (at 512 tokens that copy alone is 151 MB,
    which a room's memory budget cannot afford per session)."""
    import tracemalloc

    A = random_weights((6, 4, 64, 64), seed=12).astype(np.float32)
    norms = np.random.default_rng(13).uniform(0.5, 2, size=(6, 4, 64)).astype(np.float32)
    one_layer = 4 * 64 * 64 * 8  # (H, T, T) float64
    for name in ("norm_weighted", "mean", "max", "rollout"):
        tracemalloc.start()
        got = reading.reading_weights(A, name, norms=norms, dtype=np.float32)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, reading.reading_weights(A, name, norms=norms), rtol=1e-6)
        assert peak <= got.nbytes + 4 * one_layer, (name, peak, got.nbytes)


def test_a_model_with_sinks_reads_rows_that_sum_to_less_than_one():
    """gpt-oss's learned sinks take part of each softmax: the weights reading keeps such rows as
    they are, the readings through layers renormalise them (the sink's share left out); without
    ``sinks`` they are refused, and with it a row above 1 still is."""
    rng = np.random.default_rng(0)
    full = rng.random((2, 3, 5, 5))
    full /= full.sum(axis=-1, keepdims=True)  # softmax-like rows
    kept = rng.uniform(0.3, 0.9, size=(2, 3, 5, 1))  # what each row left after its sink
    w = full * kept
    with pytest.raises(InputError):
        reading.reading_weights(w, "weights")
    np.testing.assert_array_equal(reading.reading_weights(w, "weights", sinks=True), w)
    rolled = reading.reading_weights(w, "rollout", sinks=True)
    np.testing.assert_allclose(rolled.sum(axis=-1), 1.0, atol=1e-12)
    # the first layer's rollout: residual·I + (1 − residual)·mean, each row divided by its sum
    step = 0.5 * np.eye(5) + 0.5 * w[0].mean(axis=0)
    np.testing.assert_allclose(rolled[0, 0], step / step.sum(axis=-1, keepdims=True), atol=1e-12)
    with pytest.raises(InputError):
        reading.reading_weights(w * 2.0, "weights", sinks=True)
