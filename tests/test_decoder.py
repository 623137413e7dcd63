"""The decoder lesson's compute: decode_steps against causal self-attention, the cost arithmetic,
and every claim of the designed induction circuit measured on 8 seeds with n = 20."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from apptest_util import ROOT, array
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import visattn
from visattn import decode
from visattn.errors import InputError
from visattn.lessons import decoder as lesson
from visattn.models import induction

SEEDS = range(8)
N = 20


# ── decode_steps ──────────────────────────────────────────────────────────────────────────────────
def plain_steps(X, W_q, W_k, W_v):
    """An independent loop: at step t, attend from x_t's query over the keys of x_0 … x_t (Python
    floats)."""
    X, W_q, W_k, W_v = (np.asarray(a, dtype=float).tolist() for a in (X, W_q, W_k, W_v))

    def row(x, W):
        return [sum(x[i] * W[i][j] for i in range(len(x))) for j in range(len(W[0]))]

    keys, values, out = [], [], []
    for x in X:
        q = row(x, W_q)
        keys.append(row(x, W_k))
        values.append(row(x, W_v))
        s = [sum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(len(q)) for k in keys]
        top = max(s)
        e = [math.exp(v - top) for v in s]
        w = [v / sum(e) for v in e]
        out.append(
            (w, [sum(w[j] * values[j][c] for j in range(len(w))) for c in range(len(values[0]))])
        )
    return out


def test_steps_match_an_independent_loop_and_causal_self_attention():
    rng = np.random.default_rng(3)
    X, W_q, W_k, W_v = (
        rng.normal(size=(7, 5)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(5, 2)),
    )
    steps = decode.decode_steps(X, W_q, W_k, W_v)
    ref = plain_steps(X, W_q, W_k, W_v)
    full = visattn.self_attention(X, W_q, W_k, W_v, causal=True)
    assert len(steps) == 7
    for s, (w, o) in zip(steps, ref, strict=True):
        assert (
            s.K.shape == (s.t + 1, 3)
            and s.V.shape == (s.t + 1, 2)
            and s.weights.shape == (s.t + 1,)
        )
        assert s.keys_read == s.t + 1
        np.testing.assert_allclose(s.weights, w, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(s.output, o, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(s.query, X[s.t] @ W_q, rtol=1e-13)
    np.testing.assert_allclose(decode.stack_weights(steps), full.weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        np.stack([s.output for s in steps]), full.output, rtol=1e-12, atol=1e-14
    )


finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@given(
    st.integers(1, 9).flatmap(
        lambda T: st.tuples(
            arrays(float, (T, 4), elements=finite),
            arrays(float, (4, 3), elements=finite),
            arrays(float, (4, 3), elements=finite),
            arrays(float, (4, 2), elements=finite),
        )
    )
)
def test_steps_are_causal_self_attention(args):
    X, W_q, W_k, W_v = args
    steps = decode.decode_steps(X, W_q, W_k, W_v)
    W = decode.stack_weights(steps)
    T = len(X)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert (W[future] == 0).all()  # exactly 0, not nearly
    for s in steps:
        assert abs(s.weights.sum() - 1) < 1e-12 and (s.weights >= 0).all()
        if s.t:  # the cache only grows: earlier rows never change
            np.testing.assert_array_equal(s.K[:-1], steps[s.t - 1].K)
            np.testing.assert_array_equal(s.V[:-1], steps[s.t - 1].V)
    full = visattn.self_attention(X, W_q, W_k, W_v, causal=True)
    assert (full.weights[future] == 0).all()
    np.testing.assert_allclose(W, full.weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        np.stack([s.output for s in steps]), full.output, rtol=1e-9, atol=1e-9
    )


def test_decode_steps_rejects_mismatched_widths():
    with pytest.raises(InputError) as e:
        decode.decode_steps(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2)))
    assert e.value.code == "wq_wk_width"
    with pytest.raises(InputError) as e:
        decode.decode_steps(np.ones((3, 4)), np.ones((5, 2)), np.ones((4, 2)), np.ones((4, 2)))
    assert e.value.code == "projection_rows"


# ── what the cache costs ──────────────────────────────────────────────────────────────────────────
def test_cost_sums_match_a_loop_over_steps():
    T, D, L = 37, 12, 3
    c = decode.decode_cost(T, D, L)
    cached = sum(
        L * (3 * D * D + 2 * D * n) for n in range(1, T + 1)
    )  # project 1 token, read n keys twice
    uncached = sum(
        L * (3 * D * D * n + 2 * D * n * n) for n in range(1, T + 1)
    )  # the whole prefix again
    assert c.total_cached == cached and c.total_uncached == uncached
    assert c.work_cached.sum() == cached and c.work_uncached.sum() == uncached
    assert list(c.keys_read) == list(range(1, T + 1))
    assert c.cache_bytes == 2 * L * T * D * 2


def test_cache_memory_of_gpt2_small_and_gpt3():
    # 2 (K and V) × layers × tokens × d_model × 2 bytes (fp16), by hand
    assert decode.shape_cost("gpt2_small_1k").cache_bytes == 2 * 12 * 1024 * 768 * 2 == 37_748_736
    assert decode.shape_cost("gpt3_2k").cache_bytes == 2 * 96 * 2048 * 12288 * 2 == 9_663_676_416
    assert decode.shape_cost("gpt3_8k").cache_bytes == 4 * 9_663_676_416
    s = lesson.cost_section("gpt3_8k")
    assert s.keys_last == 8192 and s.n_heads == 96 and round(s.cache_gb, 2) == 38.65
    assert s.saving > lesson.cost_section("gpt3_2k").saving > 1000  # the saving grows with T
    # the table: both models at 1k, 2k and 8k tokens (GPT-2 small's own context is 1,024)
    table = lesson.cost_section("gpt2_small_1k")
    assert table.memory_models == ("gpt2_small", "gpt3_175b") and table.memory_tokens == (
        1024,
        2048,
        8192,
    )
    by_hand = [
        [2 * L * n * d * 2 / 1e9 for n in (1024, 2048, 8192)] for d, L in ((768, 12), (12288, 96))
    ]
    np.testing.assert_allclose(table.memory_gb, by_hand, rtol=1e-15)
    with pytest.raises(InputError) as e:
        decode.shape_cost("gpt5")
    assert e.value.code == "decoder_shape"


def decimal_bytes(n: int) -> str:
    """An independent decimal formatter: the largest of kB = 10³, MB = 10⁶, GB = 10⁹ B that keeps
    the value ≥ 1, three significant digits."""
    for exponent, unit in ((9, "GB"), (6, "MB"), (3, "kB")):
        value = n / 10**exponent
        if value >= 1:
            whole = len(str(int(value)))  # digits before the point
            return f"{value:.{3 - whole}f} {unit}"
    return f"{n} B"


def test_cache_sizes_are_in_decimal_units_computed_from_the_configs():
    """The cache's size is what a reader can check by hand: layers × 2 (K and V) × d_model × 2
    bytes (fp16) × tokens, in decimal MB and GB ("4,719 KB" reads 4.72 MB)."""
    assert lesson.byte_size(4_718_592) == "4.72 MB"
    assert lesson.byte_size(999_999) == "1.00 MB" and lesson.byte_size(999) == "999 B"
    for shape, (model, T) in decode.SHAPES.items():
        s = lesson.cost_section(shape)
        per_token = model["n_layers"] * 2 * model["d_model"] * decode.BYTES_FP16
        assert s.per_token_text == decimal_bytes(per_token)
        assert s.cache_text == decimal_bytes(per_token * T)
    assert lesson.cost_section("gpt3_2k").per_token_text == "4.72 MB"
    assert lesson.cost_section("gpt2_small_1k").per_token_text == "36.9 kB"
    table = lesson.cost_section("gpt3_2k")
    for row, model in zip(table.memory_text, decode.MODELS.values(), strict=True):
        per_token = model["n_layers"] * 2 * model["d_model"] * decode.BYTES_FP16
        assert row == tuple(decimal_bytes(per_token * n) for n in lesson.MEMORY_TOKENS)


def test_lengths_beyond_the_models_own_context_are_marked():
    """GPT-2 small's own context is 1,024 tokens, GPT-3's 2,048 (Radford et al. 2019, Brown et al.
    2020): a longer length is flagged."""
    assert decode.GPT2_SMALL["context"] == 1024 and decode.GPT3_175B["context"] == 2048
    for shape, (model, T) in decode.SHAPES.items():
        s = lesson.cost_section(shape)
        assert s.context == model["context"] and s.beyond_context == (T > model["context"])
    assert lesson.cost_section("gpt3_8k").beyond_context
    assert not lesson.cost_section("gpt3_2k").beyond_context
    table = lesson.cost_section("gpt3_2k")
    expected = [[n > m["context"] for n in lesson.MEMORY_TOKENS] for m in decode.MODELS.values()]
    assert table.memory_beyond.tolist() == expected == [[False, True, True], [False, False, True]]


def test_power_of_ten():
    assert lesson.power_of_ten(9.401e13) == r"9.40 \times 10^{13}"
    assert lesson.power_of_ten(1234) == r"1.23 \times 10^{3}"


# ── the induction circuit, on 8 seeds with n = 20 ─────────────────────────────────────────────────
@pytest.fixture(scope="module")
def runs():
    out = []
    for seed in SEEDS:
        tokens = induction.repeated_sequence(N, seed)
        out.append((tokens, induction.run(tokens), induction.run(tokens, ablate="previous")))
    return out


def test_repeated_sequence():
    for seed in SEEDS:
        s = induction.repeated_sequence(N, seed)
        assert (
            len(s) == 2 * N
            and s[:N] == s[N:]
            and len(set(s[:N])) == N
            and set(s) <= set(induction.NONSENSE)
        )
        assert s == induction.repeated_sequence(N, seed)
    assert induction.repeated_sequence(N, 0) != induction.repeated_sequence(N, 1)


def test_heads_are_named_and_future_weights_are_exactly_zero(runs):
    for tokens, r, knocked in runs:
        assert r.head_names == (("previous",), ("induction",))
        T = len(tokens)
        assert (
            r.weights.shape == (2, 1, T, T)
            and r.logits.shape == (T, induction.N_VOCAB)
            and len(r.predictions) == T
        )
        future = np.triu(np.ones((T, T), dtype=bool), k=1)
        assert (r.weights[:, :, future] == 0).all() and (knocked.weights[:, :, future] == 0).all()
        np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0, atol=1e-12)


def test_previous_head_looks_one_back(runs):
    for _, r, _ in runs:
        prev = r.head("previous")
        on_previous = [prev[i, i - 1] for i in range(1, 2 * N)]
        assert min(on_previous) > 0.5
        assert min(on_previous) > 0.98  # measured: 0.995


def test_induction_head_looks_after_the_earlier_copy(runs):
    for _, r, _ in runs:
        ind = r.head("induction")
        on_target = [
            ind[i, i - N + 1] for i in range(N, 2 * N)
        ]  # the token after the earlier copy of token i
        assert min(on_target) > 0.5
        assert min(on_target) > 0.99  # measured: 0.998
        np.testing.assert_array_equal(
            induction.induction_targets(r)[N:], np.arange(N, 2 * N) - N + 1
        )


def test_second_copy_right_first_copy_at_chance(runs):
    for _, r, _ in runs:
        first, second = induction.copy_accuracy(r)
        assert second >= 0.9
        assert second == 1.0  # measured on every seed
        # the first copy cannot be predicted: a random guess is right 1 time in V (0.4 %); the model
        # is right at most 1 time in 20 (here never: with distinct tokens there is nothing to copy)
        assert first <= 1 / N
        assert r.seen_before.sum() == N - 1  # positions N … 2N − 2 have a next token to check
        # loss: near 0 on the second copy, about ln V on the first
        assert r.loss[r.seen_before].max() < 0.05
        assert r.loss[~r.seen_before][2:].mean() > 0.9 * math.log(induction.N_VOCAB)


def test_ablating_the_previous_head_breaks_the_copy(runs):
    for _, r, knocked in runs:
        assert knocked.ablated == ("previous",)
        ind = knocked.head("induction")
        assert (
            max(ind[i, i - N + 1] for i in range(N, 2 * N)) < 0.5
        )  # the induction head loses its target
        intact_second, knocked_second = (
            induction.copy_accuracy(r)[1],
            induction.copy_accuracy(knocked)[1],
        )
        assert knocked_second < intact_second
        assert knocked_second <= 0.1  # measured: 0 on every seed
        assert knocked.loss[knocked.seen_before].mean() > 3.0
    # knocking out the induction head itself leaves no next-token information at all
    tokens = runs[0][0]
    assert induction.copy_accuracy(induction.run(tokens, ablate=["induction"]))[1] <= 0.1


def test_harry_potter():
    r = induction.run_text(lesson.HARRY)
    assert r.tokens[-1] == "Harry" and r.predictions[-1] == "Potter"
    s = lesson.circuit_section(induction.tokens_of(lesson.HARRY), False)
    assert (
        s.last_guess == "Potter" and s.targets[-1] == 1
    )  # the last "Harry" looks at "Potter" (position 1)
    assert s.target_weight[-1] > 0.5


def reference_copy(ids):
    """Independent rule: after token w, predict what followed w earlier — when every earlier w was
    followed by the same token (else the copy is ambiguous and nothing is claimed)."""
    out = {}
    for i in range(1, len(ids)):
        followers = {ids[j + 1] for j in range(i) if ids[j] == ids[i]}
        if len(followers) == 1:
            out[i] = followers.pop()
    return out


@settings(max_examples=25)  # each run multiplies (T, 809) by four (809, 809) matrices per layer
@given(st.lists(st.integers(0, 5), min_size=2, max_size=30))
def test_predictions_follow_the_copy_rule(seq):
    words = [induction.NONSENSE[k] for k in seq]
    r = induction.run(words)
    ids = [induction.NONSENSE.index(w) for w in words]
    for i, want in reference_copy(ids).items():
        assert r.predictions[i] == induction.NONSENSE[want], (words, i)


def test_sections_of_the_lesson():
    tokens = induction.repeated_sequence(10, 0)
    m = lesson.mask_section(tokens)
    assert m.n_future == 20 * 19 // 2 and m.largest_future == 0.0
    c = lesson.kv_cache_section(tokens)
    assert c.max_difference < 1e-12 and len(c.by_step) == len(c.steps) == 20
    third = c.by_step[2]  # steps count from 1, as the page does
    assert third.step == 3 and third.cached_rows == 3 and (c.weights[2, 3:] == 0).all()
    assert third.new_token == tokens[2] and third.keys_read == c.steps[2].keys_read == 3
    assert lesson.shown_step(20, 99) == 20 and lesson.shown_step(20, 0) == 1  # 1 … T
    s = lesson.circuit_section(tokens, True)
    assert s.ablated and s.acc_second == s.knocked_second < s.intact_second == 1.0
    assert s.line_weights.shape == (1, 20, 20) and (s.line_weights[0, :10] == 0).all()
    assert (
        s.rows[0][:4] == (1, tokens[0], tokens[1], s.result.predictions[0]) and s.rows[-1][2] == ""
    )
    assert s.chance_loss == pytest.approx(math.log(induction.N_VOCAB))


def test_steps_count_from_1_from_the_lesson_to_the_figure():
    """Step s generates token s, reads s keys and leaves s rows in the cache; the figure opens on
    the frame named s, which shows s cached rows, and its slider's step there has the value s (the
    control dec_step's URL text): one numbering, the page's."""
    from visattn.figures import decoder as dfig

    tokens = induction.repeated_sequence(4, 2)
    T = len(tokens)
    c = lesson.kv_cache_section(tokens)
    for step in (1, 3, T):
        shown = c.by_step[step - 1]
        assert shown.step == shown.keys_read == shown.cached_rows == step
        assert shown.new_token == tokens[step - 1] and c.steps[step - 1].keys_read == step
        fig = json.loads(dfig.cache_animation(c.K, c.V, c.weights, tokens, step).to_json())
        slider = fig["layout"]["sliders"][0]
        active = slider["steps"][slider["active"]]
        assert slider["name"] == "dec_step"
        assert active["label"] == active["value"] == str(step) and active["args"][0] == [str(step)]
        drawn = array(fig["data"][0]["z"]).reshape(T, -1)
        assert np.isfinite(drawn[:step]).all() and np.isnan(drawn[step:]).all()
    assert (
        lesson.second_copy_start("repeat", 4) == 5 and lesson.second_copy_start("text", 4) is None
    )


# ── bad input ─────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "text, code",
    [
        ("", "text_empty"),
        ("   ", "text_empty"),
        ("Harry", "decoder_one_token"),
        ("bax " * 10_000, "too_many_tokens"),
        ("Harry met Voldemort and Voldemort fled", "decoder_unknown_words"),
    ],
)
def test_bad_sequences(text, code):
    with pytest.raises(InputError) as e:
        lesson.sequence("text", 5, 0, text)
    assert e.value.code == code
    if code == "too_many_tokens":
        assert e.value.params == {"n": 10_000, "limit": 64}
    if code == "decoder_unknown_words":
        assert e.value.params["words"] == "Voldemort, fled" and e.value.params["n"] == 2


def test_bad_arguments():
    for call, code in [
        (lambda: induction.repeated_sequence(0, 0), "too_small"),
        (lambda: induction.repeated_sequence(33, 0), "too_large"),
        (lambda: induction.repeated_sequence(5, -1), "decoder_seed"),
        (lambda: induction.run(["bax", "dep"], ablate="mlp"), "induction_head"),
        (lambda: induction.run("bax dep"), "decoder_tokens"),
        (lambda: lesson.sequence("file", 5, 0, ""), "decoder_source"),
    ]:
        with pytest.raises(InputError) as e:
            call()
        assert e.value.code == code


# ── the lesson's figures pass Plotly's validation (the builders skip it for speed) ────────────────
def test_figures_validate():
    import plotly.graph_objects as go

    from visattn.figures import decoder as dfig

    tokens = induction.repeated_sequence(4, 0)
    c = lesson.kv_cache_section(tokens)
    k = lesson.cost_section("gpt2_small_1k")
    s = lesson.circuit_section(tokens, False)
    m = lesson.mask_section(tokens)
    built = [
        dfig.cache_animation(c.K, c.V, c.weights, tokens, 3),
        dfig.loss_curves(
            range(1, 8), s.intact.loss, s.knocked_out.loss, second_start=5, chance=s.chance_loss
        ),
        dfig.cost_curves(k.cost.work_cached, k.cost.work_uncached),
        dfig.mask_map(m.weights, tokens, m.future, numbers=True),
        dfig.circuit_heads(s.heads, tokens),
        dfig.induction_lines(s.line_weights, tokens),
    ]
    for fig in built:
        go.Figure(fig.to_dict())
    anim = built[0]
    assert len(anim.frames) == 8 and anim.layout.sliders[0].active == 2
    z = np.asarray(anim.data[0].z, dtype=float)
    assert (
        np.isfinite(z[:3]).all() and np.isnan(z[3:]).all()
    )  # rows not cached yet are blank (grey)
    np.testing.assert_allclose(
        np.asarray(anim.data[2].x, dtype=float)[:3], c.steps[2].weights, atol=1e-6
    )


def test_cache_frames_hold_only_what_changes_and_match_each_step():
    from visattn.figures import decoder as dfig

    tokens = induction.repeated_sequence(5, 1)
    c = lesson.kv_cache_section(tokens)
    fig = json.loads(
        dfig.cache_animation(c.K, c.V, c.weights, tokens, 1).to_json()
    )  # as the browser receives it
    T = len(tokens)
    assert [f["name"] for f in fig["frames"]] == [str(t + 1) for t in range(T)]
    for t, frame in enumerate(fig["frames"]):
        k, v, bar = frame["data"]
        assert frame["traces"] == [0, 1, 2] and set(k) == set(v) == {
            "type",
            "z",
        }  # no colour scale, hover or axes again
        K, V = (array(a) for a in (k["z"], v["z"]))
        np.testing.assert_allclose(K[: t + 1], c.K[: t + 1], rtol=1e-6)  # rows 1 … t+1 are cached
        assert np.isnan(K[t + 1 :]).all() and np.isnan(V[t + 1 :]).all()
        np.testing.assert_allclose(array(bar["x"])[: t + 1], c.steps[t].weights, rtol=1e-6)
        assert bar["marker"]["color"][t] == dfig.NEW_ROW and bar["text"][t + 1 :] == [""] * (
            T - t - 1
        )
    base = fig["data"]
    assert base[0]["colorscale"] and base[0]["hovertemplate"] and base[2]["orientation"] == "h"


def test_cost_curves_draw_few_points_of_the_exact_work():
    from visattn.figures import decoder as dfig

    k = lesson.cost_section("gpt3_8k")
    fig = dfig.cost_curves(k.cost.work_cached, k.cost.work_uncached)
    for trace, work in zip(fig.data, (k.cost.work_cached, k.cost.work_uncached), strict=True):
        x = np.asarray(trace.x)
        assert x[0] == 1 and x[-1] == 8192 and len(x) <= dfig.COST_POINTS and (np.diff(x) > 0).all()
        d, L = 12288, 96  # GPT-3: work of step t (t + 1 keys) by the formula
        by_hand = [
            L * (3 * d * d + 2 * d * s)
            if work is k.cost.work_cached
            else L * (3 * d * d * s + 2 * d * s * s)
            for s in x
        ]
        np.testing.assert_allclose(np.asarray(trace.y, dtype=float), by_hand, rtol=1e-6)


# ── the first copy against chance, the Chinese example, the zh axis units ──────────────────────
def test_first_copy_is_predicted_uniformly(runs):
    """With no earlier match the induction head rests on the first position, whose key and value
    are exactly 0: the logits are flat, p(next) ≈ 1 / V and the loss ≈ ln V (V from the vocabulary,
    computed here, not read from the model's constants)."""
    V = len(set(induction.NONSENSE) | {w.lower() for w in induction.ENGLISH})
    assert V == induction.N_VOCAB == 248
    for tokens, r, _ in runs:
        new = ~r.seen_before
        p = r.probs[np.arange(len(tokens) - 1), r.ids[1:]][new]
        np.testing.assert_allclose(p, 1 / V, rtol=0.1)  # measured: within 6 %
        np.testing.assert_allclose(r.loss[new], math.log(V), atol=0.1)
        assert np.ptp(r.logits[0]) == 0  # the first position reads only the sink: exactly flat
        s = lesson.circuit_section(tokens, False, (r, induction.run(tokens, ablate="previous")))
        assert s.n_first == N and s.first_expected == N / V
        assert abs(s.first_p - 1 / V) < 0.02 / V and abs(s.first_loss - math.log(V)) < 0.02


def test_chinese_example_copies_like_the_english_one():
    tokens = induction.tokens_of(lesson.HARRY_ZH)
    assert tokens == "哈利 波特 去 商店 买了 牛奶 。 然后 哈利".split()
    r = induction.run(tokens)
    assert r.predictions[-1] == "波特"
    assert lesson.circuit_section(tokens, False).last_guess == "波特"
    sentence = "哈利·波特去商店买了牛奶。"
    repeated = induction.tokens_of(sentence + sentence)
    n = len(repeated) // 2
    assert repeated[:n] == repeated[n:] and len(set(repeated[:n])) == n
    assert induction.copy_accuracy(induction.run(repeated))[1] == 1.0
    # the Chinese words are spellings of English ids: V and the English example's numbers unchanged
    assert induction.N_VOCAB == len(induction.VOCAB) == 248
    english = induction.run(induction.tokens_of(lesson.HARRY))
    assert english.predictions[-1] == "Potter"
    zh_ids = induction.token_ids(tokens)
    en_ids = induction.token_ids("Harry Potter went shop bought milk . Then Harry".split())
    np.testing.assert_array_equal(zh_ids, en_ids)
    np.testing.assert_array_equal(
        induction.run(tokens).probs,
        induction.run_text("Harry Potter went shop bought milk . Then Harry").probs,
    )


def test_default_text_follows_the_language():
    assert lesson.controls_for("zh")["dec_text"].default == lesson.HARRY_ZH
    assert lesson.controls_for("en")["dec_text"].default == lesson.HARRY
    assert (lesson.text_for("en"), lesson.text_for("zh")) == (lesson.HARRY, lesson.HARRY_ZH)


def test_cost_axis_units_in_both_languages():
    from dataclasses import replace

    from visattn.figures import decoder as decoder_figures

    en = json.loads((ROOT / "ui/locales/en/figures_decoder.json").read_text(encoding="utf-8"))
    zh = json.loads((ROOT / "ui/locales/zh/figures_decoder.json").read_text(encoding="utf-8"))
    values, labels = decoder_figures.power_ticks(1e8, 1e13, zh["units"])
    # 万 = 10⁴, 亿 = 10⁸, 万亿 = 10¹²
    assert labels == ["1亿", "10亿", "100亿", "1000亿", "1万亿", "10万亿"]
    assert values == [10.0**e for e in range(8, 14)]
    assert decoder_figures.power_ticks(1e10, 1e12, en["units"])[1] == ["10B", "100B", "1T"]
    c = decode.shape_cost("gpt3_2k")
    chinese = replace(decoder_figures.WORDS, units=zh["units"])
    fig = decoder_figures.cost_curves(c.work_cached, c.work_uncached, words=chinese)
    assert not any(re.search("[A-Za-z]", text) for text in fig.layout.yaxis.ticktext)


def test_every_axis_of_the_decoder_figures_has_the_layouts_font_size():
    """No decoder figure leaves a tick label to Streamlit's 0.75 rem (too small on a projector)."""
    from visattn.figures import decoder as decoder_figures

    s = lesson.kv_cache_section(induction.repeated_sequence(4))
    c = decode.shape_cost("gpt2_small_1k")
    figs = [
        decoder_figures.cache_animation(s.K, s.V, s.weights, s.tokens, 2, font_size=21),
        decoder_figures.cost_curves(c.work_cached, c.work_uncached, font_size=21),
        decoder_figures.loss_curves([1, 2], [1.0, 2.0], [2.0, 1.0], font_size=21),
    ]
    for fig in figs:
        layout = fig.to_plotly_json()["layout"]
        axes = [a for k, a in layout.items() if k.startswith(("xaxis", "yaxis"))]
        assert axes and all(a["tickfont"]["size"] == 21 for a in axes)


def test_citations_and_terms_in_chinese():
    en = json.loads((ROOT / "ui/locales/en/decoder.json").read_text(encoding="utf-8"))
    zh = json.loads((ROOT / "ui/locales/zh/decoder.json").read_text(encoding="utf-8"))
    home_zh = (ROOT / "ui/locales/zh/home.json").read_text(encoding="utf-8")
    for key, text in en.items():
        if isinstance(text, str):
            for citation in re.findall(r"[A-Z][a-z]+ et al\. \d{4}", text):
                assert citation in zh[key], (key, citation)
    assert "Elhage et al. 2021" in zh["intro"] and "Olsson et al. 2022" in zh["intro"]
    figures_zh = json.loads((ROOT / "ui/locales/zh/figures_decoder.json").read_text("utf-8"))
    every_zh = json.dumps([zh, figures_zh], ensure_ascii=False) + home_zh
    assert "掩蔽" not in every_zh and "掩码" in zh["mask_h"] and "掩码" in figures_zh["mask_title"]


def test_home_path_names_every_lesson_page():
    from ui.registry import PAGES

    for lang in ("en", "zh"):
        home = json.loads((ROOT / f"ui/locales/{lang}/home.json").read_text(encoding="utf-8"))
        # the path names each page by its navigation name's subject, in the registry's order
        words = {
            "en": {"reading": "reading", "decoder": "decoders"},
            "zh": {"reading": "读懂", "decoder": "解码器"},
        }[lang]
        positions = [home["intro"].find(words[p.id]) for p in PAGES if p.id in words]
        assert all(x >= 0 for x in positions) and positions == sorted(positions), lang
