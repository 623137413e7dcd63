"""Positional encodings: the sinusoidal formula, relative position, order blindness, RoPE and ALiBi.

Expected values are computed independently of the code under test: math.sin / math.cos in plain
loops, slopes written out by hand from the ALiBi paper's rule."""

import dataclasses
import json
import math
import time

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_util import array
from hypothesis import given
from hypothesis import strategies as st

from visattn import positional_encoding, self_attention, sinusoidal_encoding
from visattn.errors import InputError
from visattn.figures import positional_encoding as positional_encoding_figures
from visattn.lessons import positional_encoding as lesson

even_d = st.integers(1, 64).map(lambda h: 2 * h)
positions = st.integers(0, 3000)
offsets = st.integers(-500, 500)


# ---------------------------------------------------------------- the table


@pytest.mark.parametrize("d", [2, 4, 6, 10, 64, 512])
def test_table_matches_the_formula(d):
    pe = sinusoidal_encoding(130, d)
    assert pe.shape == (130, d)
    for pos in (0, 1, 2, 7, 50, 129):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


def test_first_row_and_base():
    assert np.array_equal(sinusoidal_encoding(1, 8)[0], [0, 1] * 4)  # sin 0, cos 0
    pe = sinusoidal_encoding(5, 4, base=100.0)
    assert pe[3, 2] == pytest.approx(math.sin(3 / 100 ** (2 / 4)))


@given(d=even_d, data=st.data())
def test_sinusoidal_at_agrees_with_table_and_picks_columns(d, data):
    pe = sinusoidal_encoding(40, d)
    dims = data.draw(st.lists(st.integers(0, d - 1), min_size=1, max_size=6))
    assert np.allclose(positional_encoding.sinusoidal_at(np.arange(40), d), pe, atol=1e-12)
    assert np.allclose(
        positional_encoding.sinusoidal_at(np.arange(40), d, dims=dims), pe[:, dims], atol=1e-12
    )


def test_wavelengths():
    d = 16
    wl = positional_encoding.wavelengths(d)
    assert wl.shape == (8,)
    for i in range(8):
        assert wl[i] == pytest.approx(2 * math.pi * 10000 ** (2 * i / d))
    # one wavelength on, each pair is back where it was
    for i in (0, 3, 7):
        a = positional_encoding.sinusoidal_at([5.0, 5.0 + wl[i]], d, dims=[2 * i, 2 * i + 1])
        assert np.allclose(a[0], a[1], atol=1e-9)


def test_pair_columns_keep_sines_with_their_cosines():
    cols = positional_encoding.pair_columns(2048, 128)
    assert len(cols) <= 128
    assert np.array_equal(cols[1::2], cols[0::2] + 1) and np.all(cols[0::2] % 2 == 0)
    assert np.array_equal(positional_encoding.pair_columns(64, 128), np.arange(64))


@pytest.mark.parametrize(
    "n,d,words",
    [
        (10, 7, "odd"),
        (0, 64, "at least one position"),
        (10, 0, "at least 2"),
        (100_000, 64, "limit is 4096"),
        (10, 10_000, "limit is 2048"),
        (4097, 2, "4096"),
        (3, 2049, "2048"),
    ],
)
def test_bad_table_sizes_fail_fast_with_a_clear_message(n, d, words):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=words):
        sinusoidal_encoding(n, d)
    assert time.perf_counter() - start < 0.05  # checked before anything is allocated


def test_largest_table_is_allowed():
    assert positional_encoding.check_table(4096, 2048) == (4096, 2048)


# ---------------------------------------------------------------- relative position


@given(d=even_d, p1=positions, p2=positions, k=offsets)
def test_dot_product_depends_on_the_offset_only(d, p1, p2, k):
    a = positional_encoding.sinusoidal_at([p1, p1 + k, p2, p2 + k], d)
    expected = sum(math.cos(k / 10000 ** (2 * i / d)) for i in range(d // 2))
    assert a[0] @ a[1] == pytest.approx(expected, abs=1e-8)
    assert a[2] @ a[3] == pytest.approx(expected, abs=1e-8)
    assert positional_encoding.offset_dot([k], d)[0] == pytest.approx(expected, abs=1e-9)


def test_dot_matrix_is_constant_along_diagonals():
    pe = sinusoidal_encoding(60, 32)
    dots = pe @ pe.T
    for k in range(-59, 60):
        assert np.ptp(np.diagonal(dots, k)) < 1e-9


@given(d=even_d, p=positions, k=st.integers(0, 500), data=st.data())
def test_rotation_moves_each_pair_k_positions(d, p, k, data):
    i = data.draw(st.integers(0, d // 2 - 1))
    M = positional_encoding.rotation_matrix(k, i, d)

    def angle(pos: int) -> float:
        return pos / 10000 ** (2 * i / d)

    before = np.array([math.sin(angle(p)), math.cos(angle(p))])
    after = np.array([math.sin(angle(p + k)), math.cos(angle(p + k))])
    assert np.allclose(M @ before, after, atol=1e-9)
    assert np.allclose(M @ M.T, np.eye(2), atol=1e-12)  # a rotation
    assert np.allclose(M, positional_encoding.rotation_matrix(k, i, d))  # the same M whatever p is


def test_rotation_for_every_pair_of_a_table():
    d, k = 12, 5
    pe = sinusoidal_encoding(40, d)
    for i in range(d // 2):
        M = positional_encoding.rotation_matrix(k, i, d)
        for p in range(35):
            assert np.allclose(
                M @ pe[p, 2 * i : 2 * i + 2], pe[p + k, 2 * i : 2 * i + 2], atol=1e-12
            )
    with pytest.raises(ValueError, match="pair=6"):
        positional_encoding.rotation_matrix(1, 6, d)


# ---------------------------------------------------------------- why attention needs positions


def weights(d, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((d, d)) for _ in range(3)]


@given(T=st.integers(2, 9), d=st.integers(1, 8), seed=st.integers(0, 10_000), data=st.data())
def test_self_attention_without_positions_is_permutation_equivariant(T, d, seed, data):
    X = np.random.default_rng(seed).standard_normal((T, d))
    perm = np.array(data.draw(st.permutations(range(T))))
    W_q, W_k, W_v = weights(d, seed)
    a, b = self_attention(X, W_q, W_k, W_v), self_attention(X[perm], W_q, W_k, W_v)
    assert np.allclose(b.output, a.output[perm], atol=1e-10)
    assert np.allclose(b.weights, a.weights[np.ix_(perm, perm)], atol=1e-12)


def test_adding_positions_breaks_the_symmetry():
    T, d = 6, 8
    X = np.random.default_rng(3).standard_normal((T, d))
    perm = np.array([5, 4, 3, 2, 1, 0])
    pe = sinusoidal_encoding(T, d)
    W_q, W_k, W_v = weights(d)
    a, b = self_attention(X + pe, W_q, W_k, W_v), self_attention(X[perm] + pe, W_q, W_k, W_v)
    assert np.abs(b.output - a.output[perm]).max() > 1e-2


def test_token_permutation_handles_repeats():
    a = "the dog bit the man".split()
    b = "the man bit the dog".split()
    perm = positional_encoding.token_permutation(a, b)
    assert [a[j] for j in perm] == b
    assert sorted(perm.tolist()) == list(range(5))
    assert positional_encoding.token_permutation(
        list("小明喜欢吃苹果"), list("苹果喜欢吃小明")
    ).tolist() == [
        5,
        6,
        2,
        3,
        4,
        0,
        1,
    ]
    assert positional_encoding.token_permutation(list("aab"), list("aba")).tolist() == [0, 2, 1]
    with pytest.raises(ValueError, match="not reorderings"):
        positional_encoding.token_permutation(list("abc"), list("abd"))
    with pytest.raises(ValueError, match="not reorderings"):
        positional_encoding.token_permutation(list("aab"), list("abb"))


@pytest.mark.parametrize(
    "a,b", [("小明喜欢吃苹果", "苹果喜欢吃小明"), ("the dog bit the man", "the man bit the dog")]
)
def test_word_order_example(a, b):
    plain = positional_encoding.word_order(a, b, 16, positions=False)
    assert plain.max_difference < 1e-12
    assert np.abs(plain.weight_difference).max() < 1e-12
    with_pe = positional_encoding.word_order(a, b, 16, positions=True)
    assert with_pe.max_difference > 0.05
    assert plain.tokens_a == (list(a) if " " not in a else a.split())
    # the tokens whose position did not change still differ once positions are in: their context
    # moved
    assert np.abs(with_pe.difference).max() > 1e3 * np.abs(plain.difference).max()


def test_word_order_rejects_non_permutations():
    with pytest.raises(ValueError, match="not reorderings"):
        positional_encoding.word_order("小明喜欢吃苹果", "小红喜欢吃苹果", positions=False)


# ---------------------------------------------------------------- RoPE


def rope_by_hand(x, pos, base=10000.0):
    d = len(x)
    out = []
    for i in range(d // 2):
        th = pos * base ** (-2 * i / d)
        out += [
            x[2 * i] * math.cos(th) - x[2 * i + 1] * math.sin(th),
            x[2 * i] * math.sin(th) + x[2 * i + 1] * math.cos(th),
        ]
    return np.array(out)


@given(d=even_d, m=positions, n=positions, shift=st.integers(-300, 300), seed=st.integers(0, 1000))
def test_rope_score_depends_on_the_offset_only(d, m, n, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    s = positional_encoding.rotary(q, [m]) @ positional_encoding.rotary(k, [n])
    s_shifted = positional_encoding.rotary(q, [m + shift]) @ positional_encoding.rotary(
        k, [n + shift]
    )
    assert s == pytest.approx(s_shifted, abs=1e-8 * (1 + abs(s)) * d)
    assert s == pytest.approx(q @ positional_encoding.rotary(k, [n - m]), abs=1e-8 * d)


def test_rope_matches_the_loop_and_keeps_lengths():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6))
    pos = np.array([0, 1, 2, 10, 999])
    out = positional_encoding.rotary(x, pos)
    assert out.shape == (5, 6)
    for t in range(5):
        assert np.allclose(out[t], rope_by_hand(x[t], pos[t]), atol=1e-12)
    assert np.allclose(np.linalg.norm(out, axis=1), np.linalg.norm(x, axis=1))
    assert np.allclose(out[0], x[0])  # position 0 is the identity


def test_rope_bad_inputs():
    with pytest.raises(ValueError, match="odd"):
        positional_encoding.rotary(np.ones((2, 5)), [0, 1])
    with pytest.raises(ValueError, match="one position per row"):
        positional_encoding.rotary(np.ones((2, 4)), [0, 1, 2])


def test_distance_scores():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal(16), rng.standard_normal(16)
    dist = np.arange(50)
    a, b = (
        positional_encoding.distance_scores(q, k, 0, dist, slope=0.25),
        positional_encoding.distance_scores(q, k, 300, dist, slope=0.25),
    )
    assert np.allclose(a.rope, b.rope, atol=1e-10)  # RoPE: offset only
    assert np.abs(a.sinusoidal - b.sinusoidal).max() > 0.1  # added sinusoids: not so
    assert np.allclose(a.alibi, q @ k / 4 - 0.25 * dist)
    pe = sinusoidal_encoding(400, 16)
    assert b.sinusoidal[7] == pytest.approx((q + pe[300]) @ (k + pe[307]) / 4)


# ---------------------------------------------------------------- ALiBi


def test_alibi_slopes_for_eight_heads():
    assert positional_encoding.alibi_slopes(8).tolist() == [
        1 / 2,
        1 / 4,
        1 / 8,
        1 / 16,
        1 / 32,
        1 / 64,
        1 / 128,
        1 / 256,
    ]


@pytest.mark.parametrize("n", [1, 2, 4, 16, 32])
def test_alibi_slopes_for_powers_of_two(n):
    assert np.allclose(
        positional_encoding.alibi_slopes(n), [2 ** (-8 * (h + 1) / n) for h in range(n)]
    )


def test_alibi_slopes_between_powers_of_two():
    # the paper's rule: slopes for 4 heads (2^-2, 2^-4, 2^-6, 2^-8), then every other slope for 8
    # heads (2^-1, 2^-3)
    assert np.allclose(
        positional_encoding.alibi_slopes(6), [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3]
    )
    # 12 heads: the 8-head slopes, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 from the 16-head ones
    assert np.allclose(
        positional_encoding.alibi_slopes(12),
        [2 ** -(h + 1) for h in range(8)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
    )
    assert np.allclose(positional_encoding.alibi_slopes(3), [2**-4, 2**-8, 2**-2])
    for n in range(1, 40):
        s = positional_encoding.alibi_slopes(n)
        assert len(s) == n and len(set(s.tolist())) == n and np.all((s > 0) & (s < 1))


def test_alibi_bias():
    b = positional_encoding.alibi_bias(8, 5)
    assert b.shape == (8, 5, 5)
    for h, m in enumerate(positional_encoding.alibi_slopes(8)):
        for i in range(5):
            for j in range(5):
                assert b[h, i, j] == -m * abs(i - j)
    with pytest.raises(ValueError):
        positional_encoding.alibi_bias(0, 5)
    with pytest.raises(ValueError):
        positional_encoding.alibi_bias(8, 0)


# ------------------------------------------------------------ coded errors and the lesson's data


@pytest.mark.parametrize(
    "n,d,code",
    [
        (0, 64, "pe_positions_few"),
        (-3, 64, "pe_positions_few"),
        (4097, 64, "pe_positions_many"),
        (10, 0, "pe_width_small"),
        (10, 1, "pe_width_small"),
        (10, 2050, "pe_width_big"),
        (10, 7, "pe_width_odd"),
        (2.5, 8, "not_whole"),
    ],
)
def test_table_errors_are_coded(n, d, code):
    with pytest.raises(InputError) as e:
        positional_encoding.check_table(n, d)
    assert e.value.code == code


def test_parse_dims():
    assert positional_encoding.parse_dims("0, 1，20 999", 64) == (
        [0, 1, 20],
        [999],
    )  # commas, a full-width comma, spaces
    assert positional_encoding.parse_dims("5, 5, 3", 8) == (
        [5, 3],
        [],
    )  # repeats once, in the order typed
    assert positional_encoding.parse_dims("100, -1", 8) == (
        [0, 1],
        [100, -1],
    )  # nothing left: the first pair
    for text, code in (
        ("zero", "pe_dims"),
        ("", "pe_dims"),
        ("1.5", "pe_dims"),
        ("1 2 3 4 5 6 7 8 9", "pe_dims_many"),
    ):
        with pytest.raises(InputError) as e:
            positional_encoding.parse_dims(text, 64)
        assert e.value.code == code
    with pytest.raises(InputError) as e:
        positional_encoding.parse_dims("![t](http://127.0.0.1:9/p.png)", 64)
    assert (
        e.value.params["text"] == "![t](http://127.0.0.1:9/p.png)"
    )  # the text goes out as a parameter (escaped by the app)


def test_lesson_table_downsamples_by_whole_pairs():
    tab = lesson.table(4096, 2048)
    assert (
        tab.downsampled and tab.rstep == 8 and tab.cstep == 8
    )  # 4096/512 positions, 1024/128 pairs
    assert tab.shown.shape == (512, 256)
    r, c = 3, 5  # row 3·8, shown pair 2 = pair 16: its cosine
    assert tab.rows[r] == 24 and tab.cols[c] == 2 * 16 + 1
    assert tab.shown[r, c] == pytest.approx(math.cos(24 / 10000 ** (32 / 2048)), abs=1e-12)
    small = lesson.table(64, 128)
    assert not small.downsampled and small.rstep == 1 and small.cstep == 1
    first_slow = next(i for i in range(64) if 2 * math.pi * 10000 ** (2 * i / 128) > 64)
    assert small.slow == first_slow
    assert small.shortest == f"{2 * math.pi:.4g}"


def test_lesson_curves_and_fmt():
    cur = lesson.curves(50, 16, "3, 4, 99")
    assert (
        cur.dims == [3, 4] and cur.dropped == [99] and cur.kind(0) == "cos" and cur.kind(1) == "sin"
    )
    assert cur.values[7, 0] == pytest.approx(math.cos(7 / 10000 ** (2 / 16)))
    assert [lesson.fmt(v) for v in (0, 1234.5678, 2.5e-7, 3e7)] == [
        "0",
        "1235",
        "2.50e-07",
        "3.00e+07",
    ]
    assert lesson.fmt(1.1102e-16, 2) == "1.1e-16"


def test_lesson_relative_and_rotation():
    rel = lesson.relative(8, 12)
    assert rel.dots[0, 0] == pytest.approx(4.0)  # d/2 ones on the diagonal
    assert sorted(rel.markers) == [0, 4, 8]
    assert float(rel.spread) < 1e-12
    rot = lesson.rotation(16, 1, 4, 3, 40)
    omega = 10000 ** (-2 / 16)
    assert rot.ks == tuple(range(lesson.LIVE_K + 1)) and rot.k == 4 and rot.ks[rot.active] == 4
    now = rot.latex[rot.active]
    assert f"{omega:.4g}" in now and f"{math.cos(4 * omega):.4g}" in now and "PE(7)" in now
    assert rot.start == pytest.approx([math.sin(3 * omega), math.cos(3 * omega)])
    assert rot.points[rot.active] == pytest.approx([math.sin(7 * omega), math.cos(7 * omega)])
    assert len(rot.circle) == 3 + lesson.LIVE_K + 1  # every step's point on it
    for j, k in enumerate(rot.ks):  # every offset of the slider: its own numbers
        assert rf"M_{{{k}}}\,PE(3)" in rot.latex[j] and f"PE({3 + k}) = " in rot.latex[j]
        assert rot.angles[j] == f"{k * omega:.4g}" and float(rot.errs[j]) < 1e-12
        assert rot.points[j] == pytest.approx(
            [math.sin((3 + k) * omega), math.cos((3 + k) * omega)]
        )
    far = lesson.rotation(16, 1, 200, 3, 40)  # a link's k beyond LIVE_K: put in, circle long enough
    assert far.ks == (*range(lesson.LIVE_K + 1), 200) and far.k == 200
    assert len(far.circle) == 3 + 200 + 1
    assert r" \\ PE(203)" in lesson.rotation(16, 1, 200, 3, 40, narrow=True).latex[far.active]


def test_lesson_order_rows():
    res = lesson.order("小明喜欢吃苹果", "苹果喜欢吃小明", 16)
    assert res.glued and res.joined(["小", "明"]) == "小明"
    assert [r.source for r in res.rows] == [5, 6, 2, 3, 4, 0, 1] and [
        r.target for r in res.rows
    ] == list(range(7))
    assert max(r.without for r in res.rows) < 1e-12 and min(r.with_pe for r in res.rows) > 1e-3
    assert not lesson.order("the dog bit the man", "the man bit the dog", 16).glued
    with pytest.raises(InputError) as e:
        lesson.order("", "", 16)
    assert e.value.code == "text_empty"


def test_lesson_beyond_and_alibi():
    bey = lesson.beyond(32, 200, 50, "random")
    assert float(bey.rope_gap) < 1e-9 and float(bey.sin_gap) > 0.1
    ali = lesson.alibi(6, 5, bey)
    assert ali.slopes == ("1/4", "1/16", "1/64", "1/256", "1/2", "1/8")
    assert ali.lines[0][10] == pytest.approx(bey.q @ bey.k / math.sqrt(32) - 10 / 4)
    g = ali.grid(4)
    assert g.shape == (2, 4, 5, 5) and np.isnan(g[1, 2:]).all() and g[1, 1, 0, 3] == -3 / 8
    assert lesson.slope_text(2**-0.5) == "2^(−0.5)"


def test_beyond_latex_breaks_for_a_projector():
    wide, narrow = lesson.beyond_latex(), lesson.beyond_latex(narrow=True)
    assert wide.count(r"\\") < narrow.count(r"\\")
    assert (
        r"\theta_i = 10000^{-2i/d}" in narrow.split(r"\end{pmatrix} \\")[-1]
    )  # θᵢ on a line of its own


# ---------------------------------------------------------------- the lesson's figures


def marked_words() -> positional_encoding_figures.Words:
    """Every word of the figures marked (‹field›, then the English text, its placeholders kept)."""
    english = dataclasses.asdict(positional_encoding_figures.WORDS)
    return positional_encoding_figures.Words(
        **{name: f"‹{name}›{text}" for name, text in english.items()}
    )


def shown_words(fig: go.Figure) -> list[str]:
    """Titles, axis titles, legend names, cell titles, hover templates and slider prefixes."""
    spec = json.loads(fig.to_json())
    layout = spec["layout"]
    out = [layout["title"]["text"]]
    out += [v["title"]["text"] for k, v in layout.items() if k[1:5] == "axis" and "title" in v]
    out += [a["text"] for a in layout.get("annotations", [])]
    out += [s["currentvalue"]["prefix"] for s in layout.get("sliders", []) if s.get("visible", 1)]
    out += [t.get("name", "") for t in spec["data"]] + [
        t.get("hovertemplate", "") for t in spec["data"]
    ]
    return out


def test_figures_pass_plotly_validation_and_carry_the_words():
    tab, rel, rot = lesson.table(64, 128), lesson.relative(8, 12), lesson.rotation(8, 1, 2, 3, 12)
    bey = lesson.beyond(16, 10, 20, "same")
    ali = lesson.alibi(3, 4, bey)
    order = lesson.order("小明喜欢吃苹果", "苹果喜欢吃小明", 16)
    w = marked_words()
    # (figure, the fields it shows)
    built = [
        (
            positional_encoding_figures.table_heatmap(tab, words=w),
            ("table_title", "dimension", "position"),
        ),
        (
            positional_encoding_figures.dimension_curves(lesson.curves(64, 128, "0, 3"), words=w),
            (
                "curves_title",
                "curve_name",
                "position",
            ),
        ),
        (
            positional_encoding_figures.wavelength_plot(tab, words=w),
            (
                "wave_title",
                "wave_name",
                "wave_n",
                "pair_axis",
                "wave_axis",
            ),
        ),
        (
            positional_encoding_figures.dot_matrix(rel, words=w, font_size=20),
            ("dot_title", "pos_p", "pos_q"),
        ),
        (
            positional_encoding_figures.offset_curve(rel, words=w),
            (
                "offset_title",
                "offset_axis",
                "formula_curve",
                "row_p",
            ),
        ),
        (
            positional_encoding_figures.rotation_live(rot, words=w),
            (
                "circle_title",
                "circle_name",
                "circle_x",
                "circle_y",
                "k_prefix",
            ),
        ),
        (
            positional_encoding_figures.order_weights(order, "with", "B", words=w),
            (
                "weights_title",
                "key",
                "query",
                "weight",
            ),
        ),
        (
            positional_encoding_figures.score_live(bey, lesson.beyond_steps(bey), words=w),
            (
                "score_title",
                "score_gaps",
                "s_sin",
                "s_rope",
                "distance_axis",
                "score_axis",
                "p_prefix",
            ),
        ),
        (
            positional_encoding_figures.alibi_lines(bey, ali, words=w),
            (
                "alibi_score_title",
                "s_alibi",
                "distance_axis",
                "score_axis",
            ),
        ),
        (
            positional_encoding_figures.alibi_grid(ali, 2, words=w),
            (
                "alibi_title",
                "head_slope",
                "bias",
                "query",
                "key",
            ),
        ),
    ]
    every = set()
    for fig, fields in built:
        go.Figure(fig.to_dict())  # Plotly's full validation
        words = " ".join(shown_words(fig))
        assert fig.layout.title.text.startswith("‹")
        for field in fields:
            assert f"‹{field}›" in words, (fig.layout.title.text, field)
        every |= set(fields)
    assert every == {
        f.name for f in dataclasses.fields(positional_encoding_figures.Words)
    }  # all used
    table, curves, wave, dots, offsets, circle, weights, score, lines, grid = [f for f, _ in built]
    assert (
        table.layout.title.text == "‹table_title›Sinusoidal position encoding: 64 positions ×"
        " d_model = 128"
    )
    assert table.data[0].hovertemplate.startswith("‹position›position: %{y}<br>‹dimension›")
    assert len(table.layout.xaxis.tickvals) <= 24 and table.layout.xaxis.tickangle == 0
    assert [d.name for d in curves.data] == [
        "‹curve_name›dimension 0 (sin, pair 0)",
        "‹curve_name›dimension 3 (cos, pair 1)",
    ]
    assert wave.layout.yaxis.type == "log" and list(wave.data[1].y) == [64, 64]
    assert wave.data[1].name == "‹wave_n›n = 64 positions"
    assert [d.name for d in offsets.data][1:] == [f"‹row_p›row p = {p}" for p in (0, 4, 8)]
    assert circle.layout.yaxis.scaleanchor == "x"
    assert circle.layout.xaxis.title.text == "‹circle_x›PE[position, 2] = sin"
    assert weights.layout.title.text == "‹weights_title›Weights, sentence B: 苹果喜欢吃小明"
    assert [d.line.dash for d in score.data] == ["solid", "dot", "solid", "dash"]
    assert [d.name for d in lines.data] == [
        f"‹s_alibi›ALiBi head {h} (m = {m})" for h, m in ((1, "1/16"), (2, "1/256"), (3, "1/4"))
    ]
    assert [a.text for a in grid.layout.annotations] == [
        f"‹head_slope›head {h}: m = {m}" for h, m in ((1, "1/16"), (2, "1/256"), (3, "1/4"))
    ]
    assert "‹query›query: %{y}" in grid.data[0].hovertemplate and grid.layout.coloraxis.cmax == 0.0
    # without words: English (a notebook)
    assert positional_encoding_figures.wavelength_plot(tab).layout.title.text == (
        "Wavelength of each pair (d_model = 128)"
    )


@given(
    d=even_d,
    m=positions,
    shift=st.integers(-300, 300),
    offset=st.integers(-200, 200),
    seed=st.integers(0, 1000),
)
def test_rope_score_depends_on_content_and_on_position_only_through_the_offset(
    d, m, shift, offset, seed
):
    """The page's claim: R(m)q·R(n)k changes with q and k, and with the positions only through n −
    m."""
    rng = np.random.default_rng(seed)
    q, k, other = rng.standard_normal((3, d))
    s = positional_encoding.rotary(q, [m]) @ positional_encoding.rotary(k, [m + offset])
    assert s == pytest.approx(
        positional_encoding.rotary(q, [m + shift])
        @ positional_encoding.rotary(k, [m + shift + offset]),
        abs=1e-8 * d,
    )  # same offset
    assert s == pytest.approx(q @ positional_encoding.rotary(k, [offset]), abs=1e-8 * d)
    # by hand: Σ over pairs of |q_i||k_i| cos(angle_k − angle_q + offset·θ_i), a function of content
    # and offset
    th = 10000.0 ** (-np.arange(0, d, 2) / d)
    zq, zk = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    assert s == pytest.approx(
        float(np.real(np.conj(zq) * zk * np.exp(1j * offset * th)).sum()), abs=1e-8 * d
    )
    s_other = positional_encoding.rotary(q, [m]) @ positional_encoding.rotary(other, [m + offset])
    assert s_other == pytest.approx(
        float(
            np.real(np.conj(zq) * (other[0::2] + 1j * other[1::2]) * np.exp(1j * offset * th)).sum()
        ),
        abs=1e-8 * d,
    )  # another key at the same positions: its own score


# --- the in-figure sliders: every step against the formulas, computed here -----------------


def one_slider(fig) -> dict:
    (s,) = json.loads(fig.to_json())["layout"]["sliders"]
    return s


def pe(pos: float, j: int, d: int) -> float:
    """Column j of the sinusoidal table at position pos, from the article's formula."""
    angle = pos / 10000 ** (2 * (j // 2) / d)
    return math.sin(angle) if j % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("d, i, k, p", [(16, 1, 4, 3), (32, 2, 0, 5), (8, 0, 200, 17)])
def test_rotation_slider_moves_pe_p_plus_k_for_each_k(d, i, k, p):
    rot = lesson.rotation(d, i, k, p, 12)
    words = dataclasses.replace(
        positional_encoding_figures.WORDS, circle_title="i={i} k={k} theta={theta}", k_prefix="K "
    )
    fig = positional_encoding_figures.rotation_live(rot, words=words)
    s = one_slider(fig)
    assert s["name"] == "pe_rk" and s["currentvalue"]["prefix"] == "K "  # the control it moves
    ks = [int(st_["value"]) for st_ in s["steps"]]
    assert ks == sorted(set(range(lesson.LIVE_K + 1)) | {k}) and ks[s["active"]] == k
    omega = 10000 ** (-2 * i / d)
    for kk, step in zip(ks, s["steps"], strict=True):
        data, layout, traces = step["args"]
        assert traces == [2]
        x, y = array(data["x"][0])[0], array(data["y"][0])[0]
        assert (x, y) == (
            pytest.approx(pe(p + kk, 2 * i, d), abs=1e-5),
            pytest.approx(pe(p + kk, 2 * i + 1, d), abs=1e-5),
        )
        # the same point as PE(p) turned by θ = k·ω (the lesson's claim), and its name and angle in
        # the figure
        sp, cp, th = pe(p, 2 * i, d), pe(p, 2 * i + 1, d), kk * omega
        assert x == pytest.approx(sp * math.cos(th) + cp * math.sin(th), abs=1e-5)
        assert y == pytest.approx(cp * math.cos(th) - sp * math.sin(th), abs=1e-5)
        assert data["name"][0] == f"PE({p + kk})"
        assert layout["title.text"] == f"i={i} k={kk} theta={lesson.fmt(th)}"
    drawn = json.loads(fig.to_json())["data"]
    assert len(drawn) == 3 and array(drawn[2]["x"])[0] == pytest.approx(
        pe(p + k, 2 * i, d), abs=1e-6
    )
    assert [t["name"] for t in drawn[1:]] == [f"PE({p})", f"PE({p + k})" + "\u200b" * (k == 0)]


@pytest.mark.parametrize(
    "p, far, qk", [(200, 160, "same"), (0, 1000, "random"), (333, 40, "random")]
)
def test_score_slider_redraws_the_query_at_p_curves(p, far, qk):
    d = 16
    bey = lesson.beyond(d, p, far, qk)
    steps = lesson.beyond_steps(bey)
    words = dataclasses.replace(
        positional_encoding_figures.WORDS,
        s_sin="sin {p}",
        s_rope="rope {p}",
        score_title="T",
        score_gaps="at {p}: {rope} / {sin}",
    )
    fig = positional_encoding_figures.score_live(bey, steps, words=words)
    s = one_slider(fig)
    assert s["name"] == "pe_bp"  # the control it moves
    ps = [int(st_["value"]) for st_ in s["steps"]]
    assert (
        ps[0] == 0
        and ps[-1] == 1000
        and ps[s["active"]] == p
        and len(ps) * (far + 1) <= lesson.LIVE_NUMBERS + 2 * (far + 1)
    )
    q, k = bey.q, bey.k
    for at, step in zip(ps[::4], s["steps"][::4], strict=True):
        data, layout, traces = step["args"]
        assert traces == [1, 3] and data["name"] == [f"sin {at}", f"rope {at}"]
        sin_curve, rope_curve = array(data["y"][0]), array(data["y"][1])
        for delta in (0, 1, far // 2, far):
            want = sum(
                (q[j] + pe(at, j, d)) * (k[j] + pe(at + delta, j, d)) for j in range(d)
            ) / math.sqrt(d)
            assert sin_curve[delta] == pytest.approx(want, rel=1e-3, abs=1e-3)
        np.testing.assert_allclose(
            rope_curve, bey.at0.rope, rtol=1e-3, atol=1e-3
        )  # RoPE: the same curve wherever the query is
        assert layout["title.text"].startswith("T<br><sup>at " + str(at) + ": ")


@pytest.mark.parametrize("p, far, qk", [(200, 40, "same"), (0, 30, "random"), (333, 20, "random")])
def test_every_steps_gaps_are_the_largest_differences_from_the_query_at_0(p, far, qk):
    """The gaps the score figure's title and the page's notes print at each position of p."""
    d = 8
    bey = lesson.beyond(d, p, far, qk)
    steps = lesson.beyond_steps(bey)
    q, k = bey.q, bey.k

    def added(at: int, delta: int) -> float:
        return sum((q[j] + pe(at, j, d)) * (k[j] + pe(at + delta, j, d)) for j in range(d)) / (
            math.sqrt(d)
        )

    for at, rope, sin in list(zip(steps.ps, steps.rope_gap, steps.sin_gap, strict=True))[::5]:
        want = max(abs(added(at, delta) - added(0, delta)) for delta in range(far + 1))
        assert float(sin) == pytest.approx(want, rel=5e-3, abs=1e-12), at  # 3 digits printed
        assert float(rope) < 1e-9, at
    assert (
        steps.rope_gap[steps.active] == bey.rope_gap and steps.sin_gap[steps.active] == bey.sin_gap
    )
