"""The multi-head lesson (articles 004, 003, 000) as data: what the page shows, section by section.

Article 004's picture: in "The animal didn't cross the street because it was too tired." one head
links it → animal (who "it" is), another it → tired (what state "it" is in). The designed
transformer (:mod:`visattn.models.designed`) shows it with weights whose every entry has a reason;
the same readings with seeded random weights (:mod:`visattn.models.random`) show what an untrained
head looks like. Then the pipeline with every shape, and the shape explorer for any size up to
GPT-3's 96 heads × 128 (article 000).

Sections: :func:`run` (text → a model run), :func:`layer_maps` (every head of one layer),
:func:`focus` (one token in every head) and :func:`focus_lines` (its lines), :func:`pipeline`
(one head's path through one layer, every matrix with its shape), :func:`explore` (the shape
explorer). Numbering shown to a reader is 1-based (tokens, heads, layers, columns); indices in these
dataclasses are 0-based. ``CONTROLS`` is every URL parameter of the page; ``LABELS`` names the label
tables of the values that are not controls (head names, pipeline steps, matrices …).

Axis letters: T tokens, D model width (d_model), H heads, Dh head width (D / H), L layers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import reading, reading_selector, shapes
from ..controls import Control, table
from ..errors import InputError
from ..models import designed
from ..models.designed import DesignedResult
from ..models.random import RandomResult, run_random
from ..shapes import GPT3, GPT3_LAYERS, MultiHeadShapes, multi_head_shapes
from ..text import MAX_SENTENCE_TOKENS, tokenize

SENTENCE = "The animal didn't cross the street because it was too tired."
SENTENCE_ZH = "动物没有穿过街道，因为它太累了。"  # the same sentence in Chinese
SENTENCES = {"en": SENTENCE, "zh": SENTENCE_ZH}  # the default sentence of each language
PRESETS_BY_LANG = {
    # the Winograd pair of article 004, then variants built from the designed lexicon
    "en": {
        "tired": SENTENCE,
        "wide": "The animal didn't cross the street because it was too wide.",
        "scared": "The dog didn't cross the river because it was too scared.",
        "high": "The cat didn't jump over the wall because it was too high.",
        "two_adjectives": "The horse didn't cross the wide road because it was tired.",
    },
    # the same pair in Chinese, article 001's 它 … 苹果, a variant, and the English original
    "zh": {
        "tired_zh": SENTENCE_ZH,
        "wide_zh": "动物没有穿过街道，因为它太宽了。",
        "apple": "我买了一个苹果，它很甜。",
        "high_zh": "猫没有跳过墙，因为它太高了。",
        "tired": SENTENCE,
    },
}
PRESET_NAMES = tuple(dict.fromkeys(name for p in PRESETS_BY_LANG.values() for name in p))
PRESETS = PRESETS_BY_LANG["en"]
# The words the head explanations name, in the sentence's language ({it}, {animal}, … in the
# locale's texts): the explanations name the words of the sentence on the screen.
EXAMPLE_WORDS = {
    "en": dict(
        it="it",
        animal="animal",
        street="street",
        tired="tired",
        wide="wide",
        too_tired="…too tired",
        too_wide="…too wide",
        it_was_too_tired="it was too tired",
        negation="didn't",
    ),
    "zh": dict(
        it="它",
        animal="动物",
        street="街道",
        tired="累",
        wide="宽",
        too_tired="……太累了",
        too_wide="……太宽了",
        it_was_too_tired="它太累了",
        negation="没有",
    ),
}
FOCUS_WORDS = ("it", "它")  # the focus token's default: this pronoun, else the first pronoun
UNIFORM_FACTOR = 1.5  # a row is near uniform when its largest weight is below 1.5 × its mean
SOURCES = ("designed", "random")
HEAD_NAMES = designed.HEAD_NAMES  # the designed heads, by what they do (random heads are numbered)
N_LAYERS = designed.N_LAYERS
LAYERS = tuple(range(1, N_LAYERS + 1))  # as the layer control counts them, from 1
MAX_RANDOM_D = 256
MAX_RANDOM_HEADS = 16
MAX_SEED = 999_999
BARS_UP_TO = 8  # heads: one bar chart each up to this many, else one heatmap of the focus row
GRID_COLS = 4  # heads per row of the grid (2 when there are at most 4)
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

Result = DesignedResult | RandomResult
Readings = reading.Readings  # text, reading, w: one reading of the attention (the reading selector)

# ── the page's controls ─────────────────────────────────────────────────────────────────────────
# The lines' switches, one per head (the random model has at most MAX_RANDOM_HEADS).
HEAD_VISIBLE = tuple(Control(f"mh_v{h}", True) for h in range(MAX_RANDOM_HEADS))
CONTROLS = table(
    # the run: which heads, which sentence, the random heads' sizes and seed
    Control("mh_src", "designed", options=SOURCES, labels="multi_head.sources"),
    Control("mh_text", SENTENCE),  # in Chinese SENTENCE_ZH: see controls_for
    Control("mh_d", 32, lo=2, hi=MAX_RANDOM_D),
    Control("mh_h", 4, lo=1, hi=MAX_RANDOM_HEADS),
    Control("mh_seed", 0, lo=0, hi=MAX_SEED),
    # which layer, and which reading of it (the reading selector: reading, colours, line filters)
    Control("mh_layer", N_LAYERS, options=LAYERS, labels="multi_head.layers"),
    reading_selector.controls("mh"),
    # token focus and the lines
    Control("mh_tok", 0, lo=0, hi=MAX_SENTENCE_TOKENS - 1),
    Control("mh_lfoc", True),
    HEAD_VISIBLE,
    # one head large, and its pipeline
    Control("mh_head", 0, lo=0, hi=MAX_RANDOM_HEADS - 1),
    Control("mh_pipe", False),
    # the shape explorer
    Control("mh_sT", GPT3["T"], lo=1, hi=shapes.MAX_SHAPE_TOKENS),
    Control("mh_sD", GPT3["d_model"], lo=1, hi=shapes.MAX_D_MODEL),
    Control("mh_sH", GPT3["n_heads"], lo=1, hi=shapes.MAX_D_MODEL),
)

# ── the values the page labels (each a locale table keyed by them) ──────────────────────────────
STEPS = ("x", "qkv", "attend", "concat", "norm")  # the pipeline's stages (Stage.title)
STEP_TEXTS = ("x_designed", "x_random", "x_next", "qkv", "attend", "concat", "norm")  # Stage.text
# How a pipeline matrix is titled (Panel.title) and what its rows and columns are: words of the
# figures (visattn.figures.multi_head.Words), not label tables
PANEL_TITLES = ("shape", "head", "concat", "mha")
AXES = ("token", "query", "key", "dimension", "position")
# the explorer's metrics (ShapesSection.numbers)
SHAPE_METRICS = ("dh", "total", "per_head", "weights")
SHAPE_COLUMNS = ("matrix", "shape", "entries", "learned", "what")  # the explorer's table
MATRICES = tuple(m.name for m in shapes.gpt3_shapes().matrices)  # every matrix of the block
WORDED_MATRICES = ("concat", "residual", "head_h")  # named in words; the others are symbols
LABELS = {
    "multi_head.presets": PRESET_NAMES,
    "multi_head.heads": HEAD_NAMES,
    "multi_head.head_why": HEAD_NAMES,
    "multi_head.steps": STEPS,
    "multi_head.step_texts": STEP_TEXTS,
    "multi_head.shape_metrics": SHAPE_METRICS,
    "multi_head.shape_columns": SHAPE_COLUMNS,
    "multi_head.matrix_what": MATRICES,
    "multi_head.matrix_names": WORDED_MATRICES,
}


def sentence_for(lang: str) -> str:
    """The default sentence of the page in ``lang`` (English for a language without its own)."""
    return SENTENCES.get(lang, SENTENCE)


def presets_for(lang: str) -> dict[str, str]:
    """The example sentences offered in ``lang``: {name: sentence}."""
    return PRESETS_BY_LANG.get(lang, PRESETS)


def controls_for(lang: str) -> Mapping[str, Control]:
    """``CONTROLS`` with ``lang``'s default sentence: bound so, a page in Chinese opens on the
    Chinese sentence and a link leaves it out (a link that names mh_text keeps its sentence)."""
    text = replace(CONTROLS["mh_text"], default=sentence_for(lang))
    return {**CONTROLS, "mh_text": text}


# ── the run ─────────────────────────────────────────────────────────────────────────────────────
def tokens_of(text: str) -> list[str]:
    """The tokens of ``text`` as the designed model cuts it
    (:func:`visattn.models.designed.segment`: English by words and marks, Chinese into the lexicon's
    longest words; a curly apostrophe counts as a straight one); InputError "text_empty",
    "text_no_tokens" or "too_many_tokens" (with the real count) otherwise."""
    text = (text or "").replace("\u2019", "'")
    tokenize(text, max_tokens=len(text) + 1)  # an empty text or one without tokens: its message
    words = designed.segment(text)
    if len(words) > MAX_SENTENCE_TOKENS:
        raise InputError(
            "too_many_tokens",
            f"The text has {len(words)} tokens; the limit here is {MAX_SENTENCE_TOKENS}. "
            "Shorten it.",
            n=len(words),
            limit=MAX_SENTENCE_TOKENS,
        )
    return words


def sentence_language(tokens: Sequence[str]) -> str:
    """ "zh" when a token has a Chinese character (the explanations then name the Chinese words),
    else "en"."""
    chinese = any("\u3400" <= c <= "\u9fff" for tok in tokens for c in tok)
    return "zh" if chinese else "en"


def example_words(r: Result) -> dict[str, str]:
    """The words the head explanations name ({it}, {animal}, …), in the language of the run's
    sentence."""
    return EXAMPLE_WORDS[sentence_language(r.tokens)]


def run(text: str, source: str, d_model: int, n_heads: int, seed: int) -> Result:
    """The designed model, or the random one of width ``d_model`` with ``n_heads`` heads (InputError
    "heads_divide" when n_heads does not divide d_model)."""
    tokens = tokens_of(text)
    if source == "designed":
        return designed.run_tokens(tokens)
    return run_random(tokens, d_model, n_heads, seed)


@dataclass(frozen=True)
class Inputs:
    """What one run is made of, as the page's controls give it (hashable: a cache keys on it). The
    designed heads use only ``text``; the random ones also their width, count and seed."""

    text: str
    source: str  # "designed" or "random"
    d_model: int
    n_heads: int
    seed: int

    @property
    def label(self) -> str:
        """These inputs in one string: what a :class:`Readings` of their run is labelled with."""
        return repr(self)


@dataclass(frozen=True)
class Run:
    """A model run with the inputs it was made of (a page keeps the last good one, and reads its
    readings from the same inputs)."""

    inputs: Inputs
    result: Result


def run_with(inputs: Inputs) -> Run:
    """:func:`run` on ``inputs``, kept together with them."""
    result = run(inputs.text, inputs.source, inputs.d_model, inputs.n_heads, inputs.seed)
    return Run(inputs, result)


def is_designed(r: Result) -> bool:
    return isinstance(r, DesignedResult)


def focus_default(tokens: list[str]) -> int:
    """The pronoun "it" (or 它), else the first pronoun, else the first token."""
    lowered = [tok.lower() for tok in tokens]
    for word in FOCUS_WORDS:
        if word in lowered:
            return lowered.index(word)
    return next((i for i, tok in enumerate(tokens) if "pronoun" in designed.word_features(tok)), 0)


def unknown_words(r: Result) -> list[str]:
    """Words the designed lexicons do not list and that have no features, sorted; none for the
    random model (a particle the Chinese lexicon lists without features, 了, is known)."""
    if not is_designed(r):
        return []
    listed = designed.LEXICON.keys() | designed.LEXICON_ZH.keys()
    return sorted(
        {tok for tok in r.tokens if tok.lower() not in listed and not designed.word_features(tok)},
        key=str.lower,
    )


def input_counts() -> designed.InputLayout:
    """How the designed model's input columns are used (they add up to d_model)."""
    return designed.input_layout()


# ── the reading: one selector of readings ───────────────────────────────────────────────────────
def value_norms(r: Result) -> np.ndarray:
    """(L, H, T) ‖f_h(x_j)‖ = ‖x_j W_V^h W_O^h‖ (Kobayashi et al. 2020) of the designed or random
    run (no biases)."""
    if is_designed(r):
        return reading.designed_value_norms(r)
    return reading.block_value_norms(r.layers, r.params, len(r.head_names))


def readings(r: Result, name: str, key: str = "") -> Readings:
    """The selector's reading ``name`` (:func:`visattn.reading.reading_weights`) of a run,
    labelled ``key`` (the page's inputs): (L, H, T, T) per head, (L, 1, T, T) mean / max / rollout
    over the layers, (1, 1, T, T) flow (refused above :data:`visattn.reading.FLOW_MAX_TOKENS`; two
    layers make it quick)."""
    norms = value_norms(r) if name == "norm_weighted" else None
    return reading.Readings(key, name, reading.reading_weights(r.weights, name, norms=norms))


def maps_of_layer(w: np.ndarray, layer: int) -> np.ndarray:
    """Layer ``layer``'s maps (H', T, T) of a reading (L', H', T, T): flow has one layer for all."""
    return w[min(layer, len(w) - 1)]


# ── 1. every head of one layer ──────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class LayerMaps:
    layer: int  # 0-based
    weights: np.ndarray  # (H, T, T): the heads' maps, or (1, T, T) one map merged over them
    per_head: bool  # one map per head (else the reading merged the heads into one)
    grid_cols: int  # heads per row of the grid
    row_max_mean: float  # largest weight of a row, averaged over rows and heads
    uniform: float  # 1/T: the same for uniform rows
    tag: str  # what the figures' file names carry: "L2", "L2_rollout"


def figure_tag(layer: int, name: str) -> str:
    """The layer (1-based) and, unless it is the plain weights, the reading: "L2", "L2_rollout"."""
    if name == "weights":
        return f"L{layer + 1}"
    return f"L{layer + 1}_{name}"


def layer_maps(
    r: Result, layer: int, reading_maps: np.ndarray | None = None, name: str = "weights"
) -> LayerMaps:
    """Every head of one layer (``reading_maps``: the :func:`readings` array of the reading
    ``name`` instead of the weights: its maps of that layer)."""
    w = maps_of_layer(r.weights if reading_maps is None else reading_maps, layer)  # (H, T, T)
    H, T, _ = w.shape
    return LayerMaps(
        layer=layer,
        weights=w,
        per_head=name in reading.PER_HEAD,
        grid_cols=2 if H <= 4 else GRID_COLS,
        row_max_mean=float(w.max(axis=-1).mean()),
        uniform=1.0 / T,
        tag=figure_tag(layer, name),
    )


# ── 2, 3. one token in every head; the lines ────────────────────────────────────────────────────
def near_uniform(row: np.ndarray) -> bool:
    """Whether a row of weights has no winner worth naming: its largest weight is below
    :data:`UNIFORM_FACTOR` (1.5) × the row's mean — for a row that sums to 1, below 1.5 / T, where
    1 / T is what every key gets in a uniform row. Defined from the row alone, so it holds for every
    reading."""
    row = np.asarray(row, dtype=float)
    return bool(row.max() < UNIFORM_FACTOR * row.mean())


@dataclass(frozen=True)
class Focus:
    token: int  # 0-based query position
    best: tuple[int, ...]  # (H,) the key each head attends to most
    top: tuple[float, ...]  # (H,) that weight
    low: tuple[float, ...]  # (H,) the row's smallest weight
    uniform: tuple[bool, ...]  # (H,) the row is near uniform (:func:`near_uniform`): no winner
    bars: bool  # one bar chart per head (else one heatmap of the focus row)
    per_row: int  # bar charts per row


def focus(r: Result, layer: int, token: int, reading_maps: np.ndarray | None = None) -> Focus:
    """Where ``token`` looks in every head of ``layer`` (in ``reading_maps``, else the weights)."""
    w = maps_of_layer(r.weights if reading_maps is None else reading_maps, layer)  # (H, T, T)
    rows = w[:, token, :]  # (H, T) the focus token's row in every head
    best = tuple(int(np.argmax(row)) for row in rows)
    return Focus(
        token=token,
        best=best,
        top=tuple(float(row[b]) for row, b in zip(rows, best, strict=True)),
        low=tuple(float(row.min()) for row in rows),
        uniform=tuple(near_uniform(row) for row in rows),
        bars=len(rows) <= BARS_UP_TO,
        per_row=2 if len(rows) <= 4 else 4,
    )


def focus_lines(
    r: Result, layer: int, token: int, only_focus: bool, reading_maps: np.ndarray | None = None
) -> np.ndarray:
    """(H, T, T) what the lines draw: the focus row of every head only, or every row."""
    w = maps_of_layer(r.weights if reading_maps is None else reading_maps, layer)  # (H, T, T)
    if not only_focus:
        return w
    lines = np.zeros_like(w)
    lines[:, token, :] = w[:, token, :]
    return lines


# ── 5. the pipeline ─────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Panel:
    """One matrix of the pipeline, titled ``name: (rows, columns)`` (or by its own title, which is
    translated)."""

    name: str  # "Q₁", "A₁", "W_O", …
    title: str  # which title (PANEL_TITLES): "shape" (name: shape), "head", "concat", "mha"
    sub: str  # the head's number as a subscript, "₁"
    m: np.ndarray
    rows: list[str]  # row labels
    cols: list[str]  # column labels
    row_axis: str  # what a row is: "token", "query" or "dimension"
    col_axis: str  # what a column is: "dimension", "position" or "key"
    png: str  # file name of the figure
    weights: bool = False  # on the shared 0…1 weight scale
    text: bool | None = None  # numbers in the cells (None: when they fit)
    row_px: int = 26  # height per row


@dataclass(frozen=True)
class Stage:
    title: str  # which step (STEPS): "x", "qkv", "attend", "concat", "norm"
    text: str  # which explanation (STEP_TEXTS): "x_designed", "x_random", "x_next", "qkv", …
    rows: tuple[tuple[Panel, ...], ...]  # panels side by side, row by row


@dataclass(frozen=True)
class Pipeline:
    layer: int  # 0-based
    head: int  # 0-based
    T: int
    D: int
    H: int
    Dh: int
    lo: int  # the head's first column of Q (1-based)
    hi: int  # its last column (1-based)
    steps: tuple[Stage, ...]
    last: bool  # the last layer (no "Z is the input of layer …")


def dims(n: int) -> list[str]:
    """Column labels 1 … n."""
    return [str(j + 1) for j in range(n)]


def denoise(m: np.ndarray) -> np.ndarray:
    """Float noise below 1e-9 (e.g. 4e-17 from a cancelled sum) drawn as the 0 it is."""
    m = np.asarray(m, dtype=float)
    return np.where(np.abs(m) < 1e-9, 0.0, m)


def pipeline(r: Result, layer: int, head: int) -> Pipeline:
    """Every matrix one head meets in ``layer``: X (and PE), Q/K/V of the head, its weights and
    output, concat, W_O, MHA(X), the residual and Z."""
    tr, tokens, h = r.layers[layer], r.tokens, head
    T, D = tr.X_in.shape  # (T, D)
    H, Dh = len(r.head_names), tr.mha.Q.shape[2]  # Q, K, V: (H, T, Dh), split by head
    n = str(h + 1).translate(SUB)
    dim_labels = list(r.dim_names) if is_designed(r) else dims(D)
    W_o = (designed.DESIGNED_CONFIG.layers[layer] if is_designed(r) else r.params[layer]).W_o

    def panel(
        name,
        m,
        cols,
        png,
        row_axis="token",
        col_axis="dimension",
        rows=tokens,
        title="shape",
        **kw,
    ):
        return Panel(
            name=name,
            title=title,
            sub=n,
            m=denoise(m),
            rows=list(rows),
            cols=list(cols),
            row_axis=row_axis,
            col_axis=col_axis,
            png=png,
            **kw,
        )

    x_rows: tuple[tuple[Panel, ...], ...] = ((panel("X", tr.X_in, dim_labels, "mh_pipe_x"),),)
    if layer == 0:
        x_rows += (
            (
                panel(
                    "PE", r.positions, dims(r.positions.shape[1]), "mh_pipe_pe", col_axis="position"
                ),
            ),
        )
    x_text = "x_next" if layer > 0 else "x_designed" if is_designed(r) else "x_random"
    steps = (
        Stage("x", x_text, x_rows),
        Stage(
            "qkv",
            "qkv",
            (
                tuple(
                    panel(name + n, m[h], dims(Dh), f"mh_pipe_{name.lower()}", text=False)
                    for name, m in (("Q", tr.mha.Q), ("K", tr.mha.K), ("V", tr.mha.V))
                ),
            ),
        ),
        Stage(
            "attend",
            "attend",
            (
                (
                    panel(
                        "A" + n,
                        tr.mha.weights[h],
                        tokens,
                        "mh_pipe_a",
                        row_axis="query",
                        col_axis="key",
                        weights=True,
                    ),
                    panel("head", tr.mha.heads[h], dims(Dh), "mh_pipe_head", title="head"),
                ),
            ),
        ),
        Stage(
            "concat",
            "concat",
            (
                (
                    panel("concat", tr.mha.concat, dims(D), "mh_pipe_concat", title="concat"),
                    panel(
                        "W_O",
                        W_o,
                        dims(D),
                        "mh_pipe_wo",
                        row_axis="dimension",
                        rows=dims(D),
                        row_px=int(max(6, min(26, 400 // D))),
                    ),
                ),
                (panel("MHA", tr.mha.output, dim_labels, "mh_pipe_mha", title="mha"),),
            ),
        ),
        Stage(
            "norm",
            "norm",
            (
                (
                    panel("X + MHA(X)", tr.residual, dim_labels, "mh_pipe_residual"),
                    panel("Z = LayerNorm", tr.Z, dim_labels, "mh_pipe_z"),
                ),
            ),
        ),
    )
    return Pipeline(
        layer=layer,
        head=h,
        T=T,
        D=D,
        H=H,
        Dh=Dh,
        lo=h * Dh + 1,
        hi=(h + 1) * Dh,
        steps=steps,
        last=layer + 1 == len(r.layers),
    )


# ── 6. the shape explorer ───────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ShapeRow:
    name: str  # "W_q", …
    shape: str  # "(12,288, 128)"
    entries: str  # "1,572,864"
    learned: bool


@dataclass(frozen=True)
class ShapesSection:
    s: MultiHeadShapes
    rows: tuple[ShapeRow, ...]
    # every number the prose and metrics show, formatted with thousands separators
    numbers: dict[str, str]
    gpt3: bool  # the explorer shows article 000's GPT-3 sizes

    def table(
        self,
        headers: Sequence[str],
        what: Mapping[str, str],
        names: Mapping[str, str] | None = None,
    ) -> pd.DataFrame:
        """The matrices as a table indexed by name (``names[name]`` where given): shape, entries,
        learned (✓), ``what[name]``; ``headers`` names the five columns (name first)."""
        names = names or {}
        return pd.DataFrame(
            {
                headers[1]: [x.shape for x in self.rows],
                headers[2]: [x.entries for x in self.rows],
                headers[3]: ["✓" if x.learned else "" for x in self.rows],
                headers[4]: [what[x.name] for x in self.rows],
            },
            index=pd.Index([names.get(x.name, x.name) for x in self.rows], name=headers[0]),
        )


def fmt_int(n: int) -> str:
    return f"{n:,}"


def explore(T: int, d_model: int, n_heads: int) -> ShapesSection:
    """Shapes and parameter counts for any size (InputError "heads_divide" and the size checks of
    :func:`visattn.shapes.multi_head_shapes`)."""
    s = multi_head_shapes(T, d_model, n_heads)
    rows = tuple(
        ShapeRow(
            m.name, "(" + ", ".join(fmt_int(x) for x in m.shape) + ")", fmt_int(m.size), m.learned
        )
        for m in s.matrices
    )
    numbers = dict(
        D=fmt_int(s.d_model),
        D2=fmt_int(s.d_model**2),
        total=fmt_int(s.params_per_layer),
        H=s.n_heads,
        dh=fmt_int(s.d_head),
        per_head=fmt_int(s.params_per_head),
        weights=fmt_int(s.weight_entries),
        bias=fmt_int(s.bias_params),
        ln=fmt_int(s.layer_norm_params),
        layers=GPT3_LAYERS,
        gpt3_total=fmt_int(GPT3_LAYERS * s.params_per_layer),
    )
    return ShapesSection(
        s=s, rows=rows, numbers=numbers, gpt3=(s.T, s.d_model, s.n_heads) == tuple(GPT3.values())
    )


def here(r: Result) -> tuple[int, int, int]:
    """(T, d_model, n_heads) of a run, for the explorer's "the model above"."""
    return len(r.tokens), int(r.X.shape[1]), len(r.head_names)
