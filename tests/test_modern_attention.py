"""visattn.modern_attention and its lesson: grouped-query attention against torch's SDPA
(enable_gqa), sliding windows against a mask built here, FlashAttention's online softmax against
softmax(QKᵀ/√d)V and step by step against its definitions, the KV cache of every model recomputed
from its published configuration, and Dao et al.'s traffic counts worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from apptest_util import array
from hypothesis import given, settings
from hypothesis import strategies as st

import visattn
from ui.i18n import catalogue
from visattn import modern_attention
from visattn.errors import InputError
from visattn.figures import modern_attention as modern_attention_figures
from visattn.lessons import modern_attention as lesson

SDPA = torch.nn.functional.scaled_dot_product_attention
TOL = 1e-12


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def bottom_right_causal(T: int, Tk: int) -> np.ndarray:
    """(T, Tk) query i at position Tk − T + i sees keys 0 … that position: built cell by cell."""
    return np.array([[j <= Tk - T + i for j in range(Tk)] for i in range(T)])


def torch_sdpa(Q, K, V, mask=None, is_causal=False) -> np.ndarray:
    args = [torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)]
    attn_mask = None if mask is None else torch.from_numpy(mask)
    out = SDPA(*args, attn_mask=attn_mask, is_causal=is_causal, enable_gqa=True)
    return out.numpy()


# ---------------------------------------------------------------- grouped-query attention


@settings(max_examples=40, deadline=None)
@given(
    G=st.integers(1, 4),
    per=st.integers(1, 4),
    T=st.integers(1, 7),
    extra=st.integers(0, 4),
    Dh=st.integers(1, 6),
    causal=st.booleans(),
    seed=st.integers(0, 10**6),
)
def test_gqa_equals_torch_sdpa_with_enable_gqa(G, per, T, extra, Dh, causal, seed):
    H, Tk = G * per, T + extra
    Q, K, V = rand((H, T, Dh), seed), rand((G, Tk, Dh), seed + 1), rand((G, Tk, Dh), seed + 2)
    result = visattn.grouped_query_attention(Q, K, V, causal=causal)
    if causal and Tk == T:
        expected = torch_sdpa(Q, K, V, is_causal=True)  # torch's own causal mask
    else:
        expected = torch_sdpa(Q, K, V, mask=bottom_right_causal(T, Tk) if causal else None)
    assert result.output.shape == (H, T, Dh) and result.weights.shape == (H, T, Tk)
    np.testing.assert_allclose(result.output, expected, atol=TOL, rtol=0)
    np.testing.assert_allclose(result.weights.sum(-1), 1.0, atol=TOL)
    # query head h reads K/V head h // (H / G): the groups are consecutive heads
    assert list(result.kv_head) == [h // per for h in range(H)]


def test_gqa_multi_head_and_multi_query_are_the_two_ends():
    H, T, Dh = 4, 5, 3
    Q = rand((H, T, Dh), 0)
    K, V = rand((H, T, Dh), 1), rand((H, T, Dh), 2)
    mha = visattn.grouped_query_attention(Q, K, V, causal=True)
    for h in range(H):  # G = H: every head its own keys and values
        one = visattn.attention(Q[h], K[h], V[h], mask=visattn.causal_mask(T))
        np.testing.assert_allclose(mha.output[h], one.output, atol=TOL)
    mqa = visattn.grouped_query_attention(Q, K[:1], V[:1])
    for h in range(H):  # G = 1: every head reads the one key/value head
        one = visattn.attention(Q[h], K[0], V[0])
        np.testing.assert_allclose(mqa.weights[h], one.weights, atol=TOL)


def test_gqa_refuses_a_g_that_does_not_divide_h():
    with pytest.raises(InputError) as err:
        visattn.grouped_query_attention(rand((6, 3, 2), 0), rand((4, 3, 2), 1), rand((4, 3, 2), 2))
    assert err.value.code == "gqa_groups" and err.value.params["allowed"] == "1, 2, 3, 6"
    with pytest.raises(InputError) as err:
        visattn.grouped_query_attention(
            rand((2, 5, 2), 0), rand((1, 3, 2), 1), rand((1, 3, 2), 2), causal=True
        )
    assert err.value.code == "causal_keys"


# ---------------------------------------------------------------- sliding windows


def test_window_mask_worked_example():
    """T = 6, W = 3, one sink, by hand: row i sees i − 2 … i and key 0."""
    expected = np.array(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 0, 1, 1, 1, 0],
            [1, 0, 0, 1, 1, 1],
        ],
        dtype=bool,
    )
    np.testing.assert_array_equal(modern_attention.window_mask(6, 3, sinks=1), expected)
    np.testing.assert_array_equal(
        modern_attention.window_mask(6, 3), np.tril(np.triu(np.ones((6, 6)), -2))
    )


@settings(max_examples=40, deadline=None)
@given(
    T=st.integers(1, 9),
    extra=st.integers(0, 3),
    W=st.integers(1, 10),
    sinks=st.integers(0, 3),
    per=st.integers(1, 3),
    seed=st.integers(0, 10**6),
)
def test_sliding_window_equals_a_masked_reference(T, extra, W, sinks, per, seed):
    G, Tk = 2, T + extra
    H, Dh = G * per, 3
    Q, K, V = rand((H, T, Dh), seed), rand((G, Tk, Dh), seed + 1), rand((G, Tk, Dh), seed + 2)
    result = modern_attention.grouped_query_attention(Q, K, V, causal=True, window=W, sinks=sinks)
    mask = np.array(  # built here from the definition, cell by cell
        [
            [(j <= Tk - T + i) and (Tk - T + i - j < W or j < sinks) for j in range(Tk)]
            for i in range(T)
        ]
    )
    np.testing.assert_allclose(result.output, torch_sdpa(Q, K, V, mask=mask), atol=TOL, rtol=0)
    assert (result.weights[:, ~mask] == 0).all()


@settings(max_examples=40, deadline=None)
@given(T=st.integers(2, 30), W=st.integers(1, 8), L=st.integers(1, 6))
def test_receptive_field_grows_by_w_minus_1_a_layer(T, W, L):
    reach = modern_attention.receptive_field(modern_attention.window_mask(T, W), L)  # (L, T, T)
    for layer in range(L):
        assert reach[layer, -1].sum() == min(T, modern_attention.window_span(W, layer + 1))
    # composition: layer l + 1 reaches what any key of layer l's reach reaches
    assert (reach[1:] >= reach[:-1]).all()


def test_mistral_span_under_both_conventions():
    assert modern_attention.window_span(4096, 32) == 32 * 4095 + 1 == 131_041
    span = lesson.mistral_span()
    W, L = span.window, span.layers
    assert (W, L) == (lesson.MODELS["mistral_7b"].window, lesson.MODELS["mistral_7b"].n_layers)
    assert span.positions == modern_attention.window_span(W, L) and span.back == L * (W - 1)
    # the paper's §2: position i attends to i − W … i (its reference code: triu(…, diagonal=−W)),
    # W + 1 keys: that is this page's window of W + 1, and W × L is then exact
    T, small = 12, 3
    paper_mask = np.triu(np.tril(np.ones((T, T), dtype=bool)), k=-small)
    assert (paper_mask == modern_attention.window_mask(T, small + 1)).all()
    assert span.paper_back == W * L and span.paper_positions == W * L + 1
    assert span.paper_positions - span.positions == L  # one key a layer
    section = lesson.window_section(20, 4)
    # each layer adds W − 1 = 3 positions until all 20 are reached (layer 7: 7·3 + 1 = 22 > 20)
    assert section.spans == (4, 7, 10, 13, 16, 19, 20, 20)
    assert section.keys_per_query == 4 and section.reference_difference < TOL
    with pytest.raises(InputError) as err:
        lesson.window_section(20, 0)
    assert err.value.code == "window_size"


# ---------------------------------------------------------------- FlashAttention


def softmax_reference(Q, K, V, causal) -> np.ndarray:
    """softmax(QKᵀ/√d)·V at once, in torch (float64)."""
    mask = bottom_right_causal(len(Q), len(K)) if causal else None
    args = [torch.from_numpy(a) for a in (Q, K, V)]
    return SDPA(*args, attn_mask=None if mask is None else torch.from_numpy(mask)).numpy()


@settings(max_examples=60, deadline=None)
@given(
    Tq=st.integers(1, 13),
    extra=st.integers(0, 5),
    d=st.integers(1, 6),
    bq=st.integers(1, 13),
    bk=st.integers(1, 18),
    causal=st.booleans(),
    seed=st.integers(0, 10**6),
)
def test_flash_equals_softmax_for_block_sizes_that_do_and_do_not_divide(
    Tq, extra, d, bq, bk, causal, seed
):
    Tk = Tq + extra
    bq, bk = min(bq, Tq), min(bk, Tk)
    Q, K, V = rand((Tq, d), seed), rand((Tk, d), seed + 1), rand((Tk, d), seed + 2) * 3
    result = visattn.flash_attention(Q, K, V, block_q=bq, block_k=bk, causal=causal)
    np.testing.assert_allclose(result.output, softmax_reference(Q, K, V, causal), atol=TOL, rtol=0)
    assert (result.n_q_blocks, result.n_k_blocks) == (math.ceil(Tq / bq), math.ceil(Tk / bk))
    assert len(result.steps) == result.n_q_blocks * result.n_k_blocks


@pytest.mark.parametrize("bq,bk", [(4, 3), (5, 5), (3, 10), (10, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_every_step_is_its_definition(bq, bk, causal):
    """After key block j, m is the row maximum over keys 0 … end of j, ℓ = Σ exp(s − m) and Õ =
    Σ exp(s − m)·v over those keys (computed here at once, not step by step)."""
    T, d = 10, 4
    Q, K, V = rand((T, d), 3), rand((T, d), 4), rand((T, d), 5)
    result = visattn.flash_attention(Q, K, V, block_q=bq, block_k=bk, causal=causal)
    S = Q @ K.T / math.sqrt(d)
    allowed = np.tril(np.ones((T, T), dtype=bool)) if causal else np.ones((T, T), dtype=bool)
    for step in result.steps:
        r0, r1 = step.rows
        seen = np.zeros((T, T), dtype=bool)
        seen[:, : step.cols[1]] = True
        keys = (allowed & seen)[r0:r1]  # (Bq, T)
        s = np.where(keys, S[r0:r1], -np.inf)
        m = s.max(axis=1)
        p = np.exp(s - m[:, None])
        np.testing.assert_allclose(step.m, m, atol=TOL)
        np.testing.assert_allclose(step.ell, p.sum(axis=1), atol=TOL)
        np.testing.assert_allclose(step.acc, p @ V, atol=TOL)
        assert step.skipped == (causal and step.cols[0] > r1 - 1)
    for i in range(result.n_q_blocks):  # m never falls within a query block
        ms = np.array([s.m for s in result.block(i)])
        assert (np.diff(ms, axis=0) >= 0).all()
    exact = visattn.attention(Q, K, V, mask=allowed)
    np.testing.assert_allclose(
        result.logsumexp, np.log(np.exp(np.where(allowed, S, -np.inf)).sum(1)), atol=TOL
    )
    np.testing.assert_allclose(result.output, exact.output, atol=TOL)


def test_flash_refuses_a_block_larger_than_t():
    Q = rand((5, 2), 0)
    with pytest.raises(InputError) as err:
        visattn.flash_attention(Q, Q, Q, block_q=6, block_k=2)
    assert err.value.code == "block_size" and err.value.params == {
        "name": "block_q",
        "value": 6,
        "n": 5,
    }
    with pytest.raises(InputError) as err:
        lesson.flash_section(10, 4, 11, False)
    assert err.value.params["name"] == "block_k"


def test_flash_section_numbers():
    section = lesson.flash_section(10, 4, 3, False)
    # ⌈10 / 4⌉ query blocks × ⌈10 / 3⌉ key blocks, query block by query block
    assert section.difference < TOL and len(section.steps) == 3 * 4
    assert [s.rows for s in section.steps[3:5]] == [(0, 4), (4, 8)]
    assert [s.cols for s in section.steps[3:5]] == [(9, 10), (0, 3)]
    # each query block's last step is its output; before it, the estimate is still off
    last = [section.errors[j] for j in (3, 7, 11)]
    assert max(last) < TOL and min(section.errors[j] for j in (0, 4, 8)) > 1e-3
    # a tile of 4 × 3 scores, Q_i and Õ (4 × 4 each), K_j and V_j (3 × 4 each), m and ℓ (4 each)
    assert section.tile_numbers == 12 + 16 + 16 + 12 + 12 + 8 == 76
    assert section.full_numbers == 100


def test_hbm_traffic_worked_by_hand():
    """N = 1024, d = 64, M = 100 kB of fp16 = 50,000 numbers."""
    t = lesson.traffic_section(1024, 64, 100).traffic
    assert t.M == 50_000 and t.block_k == 196 and t.block_q == 64 and t.n_k_blocks == 6
    assert t.standard == 4 * 1024 * 64 + 4 * 1024**2 == 4_456_448
    # O, ℓ, m set (Nd + 2N); K, V once (2Nd); 6 passes of Q, O read, O written, ℓ, m (3Nd + 4N)
    assert t.flash == 65_536 + 2_048 + 131_072 + 6 * (196_608 + 4_096) == 1_402_880
    assert lesson.traffic_section(1024, 64, 100).ratio == pytest.approx(4_456_448 / 1_402_880)
    assert lesson.traffic_section(1024, 64, 100).m_over_d2 == 50_000 / 4_096
    with pytest.raises(InputError) as err:
        modern_attention.hbm_traffic(1024, 64, 200)
    assert err.value.code == "sram_size"


def test_flash_traffic_is_theta_n2_d2_over_m():
    """For large N the count over N²d²/M settles near a constant (3 · 4 = 12)."""
    ratios = [
        modern_attention.hbm_traffic(N, 64, 50_000).flash / (N * N * 64 * 64 / 50_000)
        for N in (2**16, 2**18)
    ]
    assert ratios[0] == pytest.approx(12, rel=0.05) and ratios[1] == pytest.approx(12, rel=0.02)


# ---------------------------------------------------------------- the KV cache of real models

# The published configurations, written out here from the sources the page names: (layers, K/V
# heads, head width) or, for MLA, (layers, latent, RoPE key); and each model's own context.
PUBLISHED = {
    "gpt2_small": ((12, 12, 64), 1024),
    "gpt3_175b": ((96, 96, 128), 2048),
    "llama2_7b": ((32, 32, 128), 4096),
    "llama2_70b": ((80, 8, 128), 4096),
    "llama3_8b": ((32, 8, 128), 8192),
    "llama3_70b": ((80, 8, 128), 8192),
    "mistral_7b": ((32, 8, 128), 8192),
    "deepseek_v2": ((60, 512, 64), 131072),
    "deepseek_v3": ((61, 512, 64), 131072),
}
QUERY_HEADS = {  # (query heads, head width): what multi-head attention would cache
    "gpt2_small": (12, 64),
    "gpt3_175b": (96, 128),
    "llama2_7b": (32, 128),
    "llama2_70b": (64, 128),
    "llama3_8b": (32, 128),
    "llama3_70b": (64, 128),
    "mistral_7b": (32, 128),
    "deepseek_v2": (128, 128),
    "deepseek_v3": (128, 128),
}
# Read off by hand from the products (decimal units: 1 kB = 1000 B).
PER_TOKEN_BF16 = {
    "gpt2_small": "36.9 kB",  # 2 · 12 · 12 · 64 · 2 = 36,864 B
    "gpt3_175b": "4.72 MB",  # 2 · 96 · 96 · 128 · 2 = 4,718,592 B
    "llama2_7b": "524 kB",  # 524,288 B
    "llama2_70b": "328 kB",  # 327,680 B
    "llama3_8b": "131 kB",  # 131,072 B
    "llama3_70b": "328 kB",
    "mistral_7b": "131 kB",
    "deepseek_v2": "69.1 kB",  # 60 · 576 · 2 = 69,120 B
    "deepseek_v3": "70.3 kB",  # 61 · 576 · 2 = 70,272 B
}
SEQUENCE_BF16 = {
    "gpt2_small": "37.7 MB",
    "gpt3_175b": "9.66 GB",
    "llama2_7b": "2.15 GB",
    "llama2_70b": "1.34 GB",
    "llama3_8b": "1.07 GB",
    "llama3_70b": "2.68 GB",
    "mistral_7b": "537 MB",  # the rolling cache holds the 4,096-token window, not 8,192
    "deepseek_v2": "9.06 GB",
    "deepseek_v3": "9.21 GB",
}


def test_every_cache_figure_recomputed_from_the_published_config():
    section = lesson.cache_section("llama2_70b", "bf16")
    assert [row.id for row in section.rows] == list(PUBLISHED)
    for row in section.rows:
        (layers, a, b), context = PUBLISHED[row.id]
        mla = row.model.kind == "mla"
        per_layer = a + b if mla else 2 * a * b
        tokens = min(context, 4096) if row.id == "mistral_7b" else context
        assert row.model.context == context and row.model.n_layers == layers
        assert row.values_per_token == layers * per_layer
        for dtype, size in (("bf16", 2), ("fp8", 1)):
            assert row.bytes_token[dtype] == layers * per_layer * size
            assert row.bytes_sequence[dtype] == layers * per_layer * size * tokens
        assert lesson.byte_size(row.bytes_token["bf16"]) == PER_TOKEN_BF16[row.id]
        assert lesson.byte_size(row.bytes_sequence["bf16"]) == SEQUENCE_BF16[row.id]
        H, Dh = QUERY_HEADS[row.id]
        assert (row.model.n_heads, row.model.head_dim) == (H, Dh)
        assert row.mha_bytes_token == 2 * layers * H * Dh * 2  # a key and a value per query head
    # the chart: each line ends at the model's own context, Mistral's flat past its window
    x, gb = section.curves["mistral_7b"]
    assert x[-1] == 8192 and gb[-1] == gb[list(x).index(4096)] == 131_072 * 4096 / 1e9
    x, gb = section.curves["deepseek_v3"]
    assert x[-1] == 131_072 and gb[-1] == pytest.approx(9.210691584)


def test_the_cache_lines_that_lie_on_one_another():
    # Llama 2 70B and Llama 3 70B: both 80 · 2 · 8 · 128 · 2 = 327,680 B per token, until Llama 2's
    # own context (4,096) ends. Llama 3 8B and Mistral 7B: both 32 · 2 · 8 · 128 · 2 = 131,072 B,
    # until Mistral's window (4,096) holds its cache flat (at 8,192 tokens it is half of Llama's).
    # DeepSeek-V2 and V3: 69,120 and 70,272 B, 1.7 % apart, over the whole chart. Mistral meets
    # DeepSeek-V2 only at 8,192 tokens and 5.5 % apart (536.9 against 566.2 MB): not listed.
    pairs = {pair.ids: pair.contexts for pair in lesson.coinciding_lines()}
    assert pairs == {
        ("llama2_70b", "llama3_70b"): (512, 4096),
        ("llama3_8b", "mistral_7b"): (512, 4096),
        ("deepseek_v2", "deepseek_v3"): (512, 131_072),
    }


def test_the_cache_chart_keeps_its_y_axis_as_the_number_format_changes():
    # the least: GPT-2 small at 512 tokens in fp8, 12 · 2 · 12 · 64 · 1 B · 512 = 9,437,184 B;
    # the most: GPT-3 at its 2,048 tokens in bf16, 96 · 2 · 96 · 128 · 2 B · 2,048 = 9,663,676,416 B
    for dtype in lesson.DTYPES:
        section = lesson.cache_section("llama2_70b", dtype)
        assert section.gb_range == pytest.approx((0.009437184, 9.663676416))
        figure = modern_attention_figures.cache_curves(section.curves, gb_range=section.gb_range)
        lo, hi = figure.layout.yaxis.range
        for trace in figure.data:
            assert 10**lo < min(trace.y) and max(trace.y) < 10**hi
    # ticks written out at the drawn contexts, and at powers of ten of GB (not "5", "2", "10k")
    assert figure.layout.xaxis.tickvals == lesson.CONTEXTS == tuple(2**k for k in range(9, 18))
    assert figure.layout.xaxis.ticktext[:3] == ("512", "1,024", "2,048")
    assert figure.layout.xaxis.ticktext[-1] == "131,072" and figure.layout.yaxis.dtick == 1


def bytes_of(sram_kb: int) -> int:
    """The paper's "around 100KB" as decimal; NVIDIA's KB (A100, H100) are 1,024 B."""
    return sram_kb * (1000 if sram_kb == 100 else 1024)


def test_on_chip_memory_in_its_own_units():
    """100 kB is the paper's (decimal); 192 and 228 are NVIDIA's KB, that is KiB."""
    assert lesson.SRAM_BYTES == {kb: bytes_of(kb) for kb in lesson.SRAM_KB}
    assert [lesson.sram_text(kb) for kb in lesson.SRAM_KB] == ["100 kB", "192 KiB", "228 KiB"]
    section = lesson.traffic_section(4096, 64, 192)
    assert section.sram_numbers == 192 * 1024 // 2 == 98_304
    assert section.traffic.block_k == -(-98_304 // (4 * 64))


def test_the_ratio_near_one_at_d_128_and_why():
    """Standard ÷ flash tends to 4 B_c / (3d + 4) ≈ M / (3d²) as N grows: about 4 at d = 64 with
    the paper's 100 kB (M/d² ≈ 12), about 1 at d = 128 (M/d² ≈ 3); the page says why wherever
    the ratio is below NEAR_RATIO."""
    for d in lesson.FLASH_DH:
        for sram_kb in lesson.SRAM_KB:
            section = lesson.traffic_section(4096, d, sram_kb)
            M, Bc = section.sram_numbers, section.traffic.block_k
            far = modern_attention.hbm_traffic(Bc * 10**5, d, M)
            assert section.limit == pytest.approx(far.standard / far.flash, rel=1e-4)
            assert section.limit == pytest.approx(M / (3 * d * d), rel=0.05)
    paper = lesson.paper_m_over_d2()
    assert paper[64] == 50_000 / 64**2 and paper[128] == 50_000 / 128**2
    at_128 = lesson.traffic_section(4096, 128, 100)
    assert 1 < at_128.ratio < lesson.NEAR_RATIO and abs(at_128.limit - 1) < 0.05
    assert lesson.traffic_section(4096, 64, 100).ratio > lesson.NEAR_RATIO


def test_the_traffic_chart_keeps_its_y_axis_for_every_d_and_on_chip_size():
    lo, hi = lesson.traffic_range()
    counts = [
        count
        for d in lesson.FLASH_DH
        for sram_kb in lesson.SRAM_KB
        for N in lesson.FLASH_N
        for count in (
            modern_attention.hbm_traffic(N, d, bytes_of(sram_kb) // 2).standard,  # fp16 numbers
            modern_attention.hbm_traffic(N, d, bytes_of(sram_kb) // 2).flash,
        )
    ]
    assert (lo, hi) == (min(counts), max(counts))
    figure = modern_attention_figures.traffic_curves(
        lesson.FLASH_N, [lo], [hi], d=64, sram="100 kB", y_range=(lo, hi)
    )
    low, high = figure.layout.yaxis.range
    assert 10**low < lo and hi < 10**high
    # ticks as powers of ten in every language (Plotly's own "100M", "1B" are English), whole counts
    # in the hover
    assert figure.layout.yaxis.exponentformat == "power"
    # and each N drawn is a tick, written whole (Plotly's own log ticks read "2", "10k")
    assert list(figure.layout.xaxis.tickvals) == list(lesson.FLASH_N)
    assert figure.layout.xaxis.ticktext[-1] == "131,072"
    assert figure.data[0].hovertemplate == (
        "standard (Algorithm 0)<br>N = %{x:,}: %{y:,}<extra></extra>"
    )
    assert figure.layout.title.text == "HBM reads and writes of one head (d = 64, M = 100 kB)"


def test_cache_formula_and_gqa_costs():
    assert lesson.cache_section("llama2_70b", "bf16").formula.startswith(
        r"2 \times 80 \times 8 \times 128 \times 2 = 327{,}680"
    )
    assert lesson.cache_section("deepseek_v3", "fp8").formula.startswith(
        r"61 \times (512 + 64) \times 1 = 35{,}136"
    )
    section = lesson.gqa_section(6, 8, 2, True)
    assert section.kind == "gqa" and section.groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert section.repeat_difference < TOL
    by_g = {row.G: row for row in lesson.cost_rows(lesson.MODELS[lesson.COST_MODEL])}
    assert sorted(by_g) == [1, 2, 4, 8, 16, 32, 64]
    assert by_g[8].kv_params == 2 * 8192 * 8 * 128 == 16_777_216
    assert by_g[64].attention_params == 4 * 8192 * 8192
    assert (by_g[64].per_token, by_g[8].per_token, by_g[1].per_token) == (
        "2.62 MB",
        "328 kB",
        "41.0 kB",
    )
    assert by_g[8].per_sequence == "1.34 GB" and by_g[1].kind == "mqa" and by_g[64].kind == "mha"
    with pytest.raises(InputError):
        lesson.gqa_section(6, 8, 3, True)


def test_public_names_are_lazy_exports():
    for name in ("grouped_query_attention", "flash_attention", "GQAResult", "FlashResult"):
        assert getattr(visattn, name) is getattr(modern_attention, name)


def test_the_sinks_join_any_band_into_the_mask_of_visattn():
    section = lesson.window_section(20, 4)
    assert section.sink_cells.shape == (lesson.MAX_SINKS + 1, 20, 20)
    assert not section.sink_cells[0].any()
    for s, cells in enumerate(section.sink_cells):
        expected = [[j < s and j <= i for j in range(20)] for i in range(20)]
        np.testing.assert_array_equal(cells, expected)
        # the band of any window with these sinks over it is visattn's own mask with s sinks
        for w in range(1, 21):
            band = lesson.window_section(20, w).mask
            np.testing.assert_array_equal(
                band | cells, modern_attention.window_mask(20, w, sinks=s)
            )
    # the attention of visattn with 0 … 4 sinks equals a masked reference (each checked)
    assert section.reference_difference < TOL


def covered(shapes, visible, T) -> np.ndarray:
    """(T, T) the cells of a category heatmap that the visible rectangles cover."""
    cells = np.zeros((T, T), dtype=bool)
    for shape, shown in zip(shapes, visible, strict=True):
        if shown:
            rows = range(math.ceil(shape["y0"]), math.floor(shape["y1"]) + 1)
            columns = range(math.ceil(shape["x0"]), math.floor(shape["x1"]) + 1)
            cells[np.ix_(rows, columns)] = True
    return cells


def test_the_masks_slider_shows_the_sinks_over_the_band():
    fig = _figure_builds()["window live"].to_dict()
    (band,) = fig["data"]
    np.testing.assert_array_equal(
        array(band["z"]).reshape(20, 20), modern_attention.window_mask(20, 4)
    )
    assert fig["layout"]["title"]["text"].startswith("Sliding-window causal mask, W = 4 ")
    shapes = fig["layout"]["shapes"]
    assert len(shapes) == lesson.MAX_SINKS and not any(shape["visible"] for shape in shapes)
    (kept,) = fig["layout"]["sliders"]
    assert kept["name"] == "mo_sinks" and kept["active"] == 0
    assert [s["value"] for s in kept["steps"]] == ["0", "1", "2", "3", "4"]
    for s, step in enumerate(kept["steps"]):
        data, layout, traces = step["args"]
        assert traces == [] and data == {}  # the sinks alone: the band is the window's
        visible = [layout[f"shapes[{j}].visible"] for j in range(len(shapes))]
        expected = [[j < s and j <= i for j in range(20)] for i in range(20)]
        np.testing.assert_array_equal(covered(shapes, visible, 20), expected)
    # opened at a link's sinks: its shapes shown as built
    opened = modern_attention_figures.window_live(lesson.window_section(20, 4), 2).to_dict()
    assert opened["layout"]["sliders"][0]["active"] == 2
    assert [shape["visible"] for shape in opened["layout"]["shapes"]] == [True, True, False, False]
    # a sink past the last token is no choice: 3 tokens keep at most 3
    short = modern_attention_figures.window_live(lesson.window_section(3, 2), 4).to_dict()
    assert [s["value"] for s in short["layout"]["sliders"][0]["steps"]] == ["0", "1", "2", "3"]
    assert short["layout"]["sliders"][0]["active"] == 3


def test_the_reach_figure_draws_every_layers_staircase_and_frames_one():
    fig = _figure_builds()["reach live"].to_dict()
    (heat,) = fig["data"]
    z = array(heat["z"]).reshape(8, 20)
    # after layer l the last 3l + 1 positions of 20 (W = 4 adds W − 1 = 3 a layer), up to all 20
    for layer in range(8):
        np.testing.assert_array_equal(z[layer] == 1, [j >= 20 - (3 * layer + 4) for j in range(20)])
    spans = (4, 7, 10, 13, 16, 19, 20, 20)
    assert list(heat["y"]) == [f"after layer {k}: {n}" for k, n in enumerate(spans, start=1)]
    (layers,) = fig["layout"]["sliders"]
    assert layers["name"] == "mo_wl" and layers["active"] == 2  # built at layer 3
    (frame,) = fig["layout"]["shapes"]
    assert (frame["y0"], frame["y1"]) == (1.5, 2.5)  # row 3 of the category axis
    for k, step in enumerate(layers["steps"], start=1):
        layout = step["args"][1]
        assert (layout["shapes[0].y0"], layout["shapes[0].y1"]) == (k - 1.5, k - 0.5)
        bound = k * 3 + 1
        assert layout["title.text"].endswith(
            f"after {k} layers: {spans[k - 1]} of 20 positions; L(W − 1) + 1 = {bound}"
        )


# ---------------------------------------------------------------- figures


def _figure_builds():
    """Every builder of visattn.figures.modern_attention on the page's default inputs and an edge
    case, with the English words they default to."""
    gqa = lesson.gqa_section(6, 8, 2, True)
    cache = lesson.cache_section("deepseek_v3", "fp8")
    window = lesson.window_section(20, 4)
    flash = lesson.flash_section(10, 4, 3, True)
    traffic = [lesson.traffic_section(N, 64, 100).traffic for N in lesson.FLASH_N]
    steps = lesson.gqa_steps(6, 8, 2, True)
    return {
        "grouping": modern_attention_figures.grouping(gqa.result.kv_head),
        "grouping live": modern_attention_figures.grouping_live(lesson.grouping_steps(8, 2)),
        "maps live": modern_attention_figures.maps_live(steps),
        "maps, 6 heads of 2 tokens": modern_attention_figures.maps_live(
            lesson.gqa_steps(2, 6, 3, False)
        ),
        "grouping mqa": modern_attention_figures.grouping([0] * 16),
        "cache curves": modern_attention_figures.cache_curves(
            {key: xy for key, xy in cache.curves.items()}
        ),
        "traffic": modern_attention_figures.traffic_curves(
            lesson.FLASH_N,
            [t.standard for t in traffic],
            [t.flash for t in traffic],
            d=64,
            sram="100 kB",
        ),
        "window live": modern_attention_figures.window_live(window),
        "reach live": modern_attention_figures.reach_live(window, 3),
        "flash live": modern_attention_figures.flash_live(flash),
    }


@given(
    st.integers(1, 16), st.integers(1, 12), st.integers(1, 6), st.integers(1, 4), st.integers(0, 99)
)
def test_tiles_hold_every_head_in_its_place_and_blanks_between(H, T, columns, gap, seed):
    from visattn.figures.modern_attention import _tiles

    weights = np.random.default_rng(seed).random((H, T, T))
    tiles = _tiles(weights, columns, gap)
    C = min(columns, H)
    R = -(-H // C)
    assert tiles.shape == (R * (T + gap) - gap, C * (T + 1) - 1)
    for h in range(H):
        top, left = (h // C) * (T + gap), (h % C) * (T + 1)
        np.testing.assert_array_equal(tiles[top : top + T, left : left + T], weights[h])
    assert np.isnan(tiles).sum() == tiles.size - H * T * T  # the rest is blank


def test_every_figure_passes_plotly_validation():
    import plotly.graph_objects as go

    for name, fig in _figure_builds().items():
        assert go.Figure(fig.to_dict()).data, name


def numbered(text) -> list[int]:
    """How many cells of each row of a heatmap's text have a number."""
    return [sum(map(bool, row)) for row in text]


def test_the_flash_figure_numbers_s_on_the_query_block_and_shares_the_running_axes():
    fig = _figure_builds()["flash live"].to_dict()
    scores, *running = fig["data"]
    # causal, T = 10, opened on query block 1 (rows 1–4): query i has a number for each key j ≤ i,
    # the future has none, and neither have the other blocks' rows
    assert numbered(scores["text"]) == [1, 2, 3, 4] + [0] * 6
    expected = np.round(lesson.flash_section(10, 4, 3, True).scores[3, :4], 1)
    assert [float(v) for v in scores["text"][3][:4]] == pytest.approx(expected)
    assert all(len(row) == 10 for row in scores["text"])
    (slider,) = fig["layout"]["sliders"]
    data, _, traces = slider["steps"][-1]["args"]  # query block 3: rows 9 and 10
    assert numbered(data["text"][traces.index(0)]) == [0] * 8 + [9, 10]
    # m, ℓ, Õ and Õ/ℓ on one pair of axes, one column apart; Õ's d = 4 columns numbered 1 … 4
    assert {(t["xaxis"], t["yaxis"]) for t in running} == {("x2", "y2")}
    assert [list(t["x"]) for t in running] == [[1], [3], [5, 6, 7, 8], [10, 11, 12, 13]]
    axis = fig["layout"]["xaxis2"]
    assert list(axis["tickvals"]) == [5, 6, 7, 8, 10, 11, 12, 13]
    assert list(axis["ticktext"]) == ["1", "2", "3", "4"] * 2
    assert list(axis["range"]) == [0.5, 13.5]
    # each panel's title centred over its columns
    titles = {a["text"]: (a["xref"], a["x"]) for a in fig["layout"]["annotations"]}
    assert titles == {
        "scores S (never held whole)": ("x", 5.5),
        "m": ("x2", 1),
        "ℓ": ("x2", 3),
        "accumulator Õ": ("x2", 6.5),
        "Õ / ℓ so far": ("x2", 11.5),
    }


def test_the_flash_figure_walks_every_tile_and_opens_on_the_first_blocks_output():
    fig = _figure_builds()["flash live"].to_dict()
    (slider,) = fig["layout"]["sliders"]
    steps = slider["steps"]
    # 3 query blocks × 4 key blocks, causal; it opens on query block 1's last tile computed, key
    # block 2 (keys 4–6: query 4 sees key 4), not on the skipped blocks 3 and 4
    assert len(steps) == 12 and slider["active"] == 1
    layouts = [s["args"][1] for s in steps]
    # as built, the figure shows the active step: its band, tile and running rows
    band, tile = fig["layout"]["shapes"]
    assert (band["y0"], band["y1"], tile["x0"], tile["x1"]) == (0.5, 4.5, 3.5, 6.5)
    assert list(fig["layout"]["yaxis2"]["range"]) == [4.5, 0.5]
    # the tile outline over key block j: columns 3j + 1 … 3j + 3 (the last one shorter)
    assert [x["shapes[1].x0"] for x in layouts[:4]] == [0.5, 3.5, 6.5, 9.5]
    assert [x["shapes[1].x1"] for x in layouts[:4]] == [3.5, 6.5, 9.5, 10.5]
    # and the band and tile over query block i: rows 4i + 1 … 4i + 4 (the last one 9 and 10)
    assert [x["shapes[0].y0"] for x in layouts[::4]] == [0.5, 4.5, 8.5]
    assert [x["shapes[1].y1"] for x in layouts[::4]] == [4.5, 8.5, 10.5]
    # causal: a key block wholly after a query block is skipped (block 1 sees keys 1–4 only)
    skipped = ["skipped" in x["title.text"] for x in layouts]
    assert skipped == [False, False, True, True] + [False] * 3 + [True] + [False] * 4
    assert layouts[0]["title.text"].startswith("Query block 1, after key/value block 1 of 4: ")
    # the slider is the step control's: each step's value its number, its label "i·j"
    assert slider["name"] == "mo_fstep"
    assert [s["value"] for s in steps] == [str(n) for n in range(1, 13)]
    assert [s["label"] for s in steps[:5]] == ["1·1", "1·2", "1·3", "1·4", "2·1"]
    # a link's step opens the figure there; OPENING (0) and a step past the last, at the lesson's
    flash = lesson.flash_section(10, 4, 3, True)
    for value, active in ((7, 6), (0, 1), (13, 1)):
        built = modern_attention_figures.flash_live(flash, value).to_dict()
        assert built["layout"]["sliders"][0]["active"] == active
    assert [lesson.flash_step_shown(flash, v) for v in (0, 1, 12, 13)] == [0, 1, 12, 0]


def test_gqa_numbering_from_one():
    """Query head h reads K/V head ⌈h·G/H⌉, both counted from 1 as the figures count them (the
    0-based ⌊h·G/H⌋ of visattn.modern_attention, shifted by one), and the page writes it so."""
    for H in range(1, lesson.MAX_DEMO_HEADS + 1):
        for G in modern_attention.divisors(H):
            kv = modern_attention.kv_head_of(H, G) + 1
            assert list(kv) == [math.ceil(h * G / H) for h in range(1, H + 1)]
    for lang in ("en", "zh"):
        intro = catalogue(lang)["modern_attention.gqa_intro"]
        assert r"\lceil h \cdot G / H \rceil" in intro and "lfloor" not in intro


def test_the_demo_runs_flashattention_2s_loop_order_and_the_count_algorithm_1s():
    """The demo walks each query block over every key/value block (FlashAttention-2, Dao 2023);
    the traffic count makes Q and O pass once per key/value block (Dao et al. 2022's Algorithm 1,
    key/value blocks outside). The page credits each, and cuts K and V by rows (tokens)."""
    section = lesson.flash_section(10, 4, 3, False)
    order = [(s.i, s.j) for s in section.steps]
    assert order == sorted(order)  # query block outside, key/value block inside
    t = lesson.traffic_section(1024, 64, 100).traffic
    per_pass = 3 * t.N * t.d + 4 * t.N  # read Q, O, ℓ, m and write O, ℓ, m of every query block
    assert t.flash == t.N * t.d + 2 * t.N + 2 * t.N * t.d + t.n_k_blocks * per_pass
    en, zh = catalogue("en"), catalogue("zh")
    assert "FlashAttention-2's order (Dao 2023)" in en["modern_attention.flash_intro"]
    assert "Algorithm 1" in en["modern_attention.flash_intro"]
    assert "FlashAttention-2（Dao 2023）" in zh["modern_attention.flash_intro"]
    assert "按列切块" not in zh["modern_attention.flash_intro"]
    assert "按行（即按词元）切块" in zh["modern_attention.flash_intro"]
