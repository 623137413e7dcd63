"""Reading attention in any loaded model (the bundled MiniLM, a BERT
encoder, a GPT-2 or LLaMA-family decoder): one selector of readings, what the specials ([CLS]/[SEP],
or a decoder's first token) take, two sentences, q/k geometry.

Compute for pages/reading.py over :mod:`visattn.reading`. Every section returns a frozen dataclass
the page only draws. Numbering as on the pretrained page: names count from 1 ("L4·H2"), arrays and
URL parameters from 0. Texts are cut at MAX_READ_TOKENS tokens (the page draws a layer's heads and
whole-text maps at that size). A decoder's maps are causal (zero above the diagonal), and so are
rollout and flow made of them: an output token draws only on input tokens at or before it.

Axis letters: L layers, H heads, T tokens, R/C rows and columns of the grid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import reading, reading_selector
from ..controls import Control, table
from ..display import grid_rows, head_label, head_name, layer_name
from ..models import pieces, queries_keys, value_norms
from ..models.causal import Decoder, DecoderResult
from ..models.encoder import N_HEADS, N_LAYERS, BertEncoder, BertResult
from ..models.sources import MAX_HEADS, MAX_LAYERS, id_control
from ..text import PRESETS, SENTENCE, WIDE

__all__ = [
    "MAX_HEADS",
    "MAX_LAYERS",
    "N_HEADS",
    "N_LAYERS",
    "PRESETS",
    "SENTENCE",
    "WIDE",
    "head_label",
    "head_name",
    "layer_name",
    "MAX_READ_TOKENS",
    "CONTROLS",
    "LABELS",
    "READINGS",
    "PER_HEAD",
    "Run",
    "RUN_ARRAYS",
    "run",
    "Readings",
    "readings",
    "raw_readings",
    "shown",
    "split_characters",
    "raw_pair",
    "line_weights",
    "QK_TOP_KEYS",
    "focus_default",
    "preset_table",
    "Maps",
    "maps",
    "Share",
    "share",
    "sink_keys",
    "even_share",
    "Pair",
    "pair",
    "Geometry",
    "geometry",
]
MAX_READ_TOKENS = 64  # tokens read (the rest is cut, with a notice)
READINGS = reading.READINGS  # weights | norm_weighted | mean | max | rollout | flow
PER_HEAD = reading.PER_HEAD  # readings with one map per head (the others: one per layer, or one)
SPECIALS = ("[CLS]", "[SEP]")
# Every URL parameter of the page: the model (its id), the reading selector's (prefix "rd"), the
# layer and head it reads (the widgets offer the model's own), the text, the two sentences
# compared, and how the query/key plane is coloured.
CONTROLS = table(
    id_control("rd_model"),
    reading_selector.controls("rd"),
    Control("rd_layer", 3, options=range(MAX_LAYERS)),
    Control("rd_head", 1, options=range(MAX_HEADS)),
    Control("rd_text", SENTENCE),
    Control("rd_a", SENTENCE),
    Control("rd_b", WIDE),
    Control("rd_qkpos", False),
    Control("rd_raw", False),  # the norm-weighted reading unnormalised (Kobayashi et al. 2020)
    Control(
        "rd_qkfocus", 0, lo=0, hi=MAX_READ_TOKENS - 1
    ),  # the query the plane labels (and its keys)
)
QK_TOP_KEYS = 3  # keys the plane labels (and its hover lists) for the focus query
# the preset buttons' names, keyed as PRESETS: as MiniLM reads them, and as a model that reads
# Chinese does (preset_table)
LABELS = {"reading.presets": tuple(PRESETS), "reading.presets_read": tuple(PRESETS)}


@dataclass(frozen=True)
class Run:
    # the forward pass of the text cut at MAX_READ_TOKENS, with each layer's input
    result: BertResult | DecoderResult
    norms: np.ndarray  # (L, H, T) ‖f_h(x_j)‖, what token j adds through head h (Kobayashi 2020)
    model: str = ""  # the folder of the model that read it
    sinks: bool = False  # the model has learned sinks (gpt-oss): a row sums to at most 1

    @property
    def text(self) -> str:
        return self.result.text

    @property
    def tokens(self) -> list[str]:
        """T tokens as shown: an encoder's word pieces ([CLS] first, [SEP] last), a decoder's
        pieces with their bytes made readable."""
        return self.result.tokens

    @property
    def causal(self) -> bool:
        """A decoder's run: every map is zero above its diagonal."""
        return getattr(self.result, "causal", False)

    @property
    def n_layers(self) -> int:
        return self.result.attentions.shape[0]

    @property
    def attn(self) -> np.ndarray:
        """(L, H, T, T) attention weights."""
        return self.result.attentions

    @property
    def truncated(self) -> bool:
        """Whether the text had more than MAX_READ_TOKENS tokens (and was cut)."""
        return self.result.truncated

    @property
    def n_tokens_in(self) -> int:
        """Tokens of the text before the cut."""
        return self.result.n_tokens_in


RUN_ARRAYS = ("attentions", "hidden", "token_ids", "layer_inputs", "next_logits")  # of a result


def run(model: BertEncoder | Decoder, text: str) -> Run:
    """One forward pass of at most MAX_READ_TOKENS tokens and the value norms (InputError for text
    the model cannot read)."""
    result = model.run(text, max_tokens=MAX_READ_TOKENS)
    sinks = "sinks" in getattr(model.config, "mechanisms", ())
    return Run(result, value_norms(model, result), str(model.path), sinks)


Readings = reading.Readings  # text, reading, w


def readings(r: Run, name: str, progress: Callable[[int, int], object] | None = None) -> Readings:
    """The selector's reading of the whole text (:func:`visattn.reading.reading_weights`); flow
    refused above its cap."""
    weights = reading.reading_weights(r.attn, name, norms=r.norms, progress=progress, sinks=r.sinks)
    return Readings(r.text, name, weights)


def raw_readings(r: Run) -> Readings:
    """The norm-weighted reading unnormalised: α_ij·‖f_h(x_j)‖ itself, (L, H, T, T), as Kobayashi et
    al. 2020 report it (the selector's "norm_weighted" rescales each row to sum 1, this app's
    choice). Cheap (one product), so it is not stored."""
    return Readings(r.text, "norm_weighted", reading.norm_weighted(r.attn, r.norms))


def shown(r: Run, rd: Readings) -> tuple[list[str], Readings]:
    """The tokens and the reading as the page draws its maps: a decoder's pieces of one character
    merged into that character (:func:`visattn.models.pieces.merge_groups`, as the pretrained
    page's toggle merges them: the character receives the sum of the weights on its pieces and
    sends the mean of their rows). An encoder's run, or a decoder's whose pieces are all whole
    characters, as it is."""
    if not r.causal or not split_characters(r):
        return r.tokens, rd
    result = r.result
    merged = pieces.merge_groups(result.pieces, rd.w, result.byte_level, result.special)
    return merged.tokens, Readings(rd.text, rd.reading, merged.attn)


def split_characters(r: Run) -> bool:
    """Whether a decoder's run cut a character into several pieces (GPT-2's 中: three bytes)."""
    if not r.causal:
        return False
    return pieces.split_characters(r.result.pieces, r.result.byte_level, r.result.special)


def preset_table(model: BertEncoder | Decoder) -> str:
    """The preset buttons' label table for ``model``: "reading.presets" says the Chinese preset is
    mostly [UNK], as it is for MiniLM's English vocabulary; "reading.presets_read" for a model
    that reads most of its characters (a decoder's bytes, a Chinese BERT vocabulary)."""
    tokens = model.tokenize(PRESETS["chinese"])[0]
    words = [tok for tok in tokens if tok not in SPECIALS]
    return "reading.presets" if words.count("[UNK]") > len(words) / 2 else "reading.presets_read"


def focus_default(tokens: list[str], causal: bool = False) -> int:
    """The query the plane labels by default: "it" when the text has it, else the first word (a
    decoder's last: its first token has only itself to look at)."""
    if "it" in tokens:
        return tokens.index("it")
    words = [i for i, tok in enumerate(tokens) if tok not in SPECIALS]
    if not words:
        return 0
    return words[-1] if causal else words[0]


@dataclass(frozen=True)
class Maps:
    grid: np.ndarray  # (R, C, T, T) what the grid draws
    titles: list[str]  # R·C cell titles (symbols: "L4·H2", "L4", "L1–L6")
    cell: np.ndarray  # (T, T) the chosen cell, large (the heatmap, lines and CSV)
    name: str  # its title


def maps(rd: Readings, layer: int, head: int, n_layers: int = N_LAYERS) -> Maps:
    """What the grid draws, and its cell large. Per-head readings: layer ``layer``'s H heads
    (MiniLM's 12: 3 × 4), head ``head`` large; mean, max and rollout: one map per layer (MiniLM's
    6: 2 × 3), layer ``layer`` large; flow: one map (last of the model's ``n_layers`` → inputs)."""
    w, T = rd.w, rd.w.shape[-1]
    L, H = w.shape[:2]
    if rd.reading in PER_HEAD:
        return Maps(
            w[layer].reshape(grid_rows(H), -1, T, T),  # (H, T, T) -> (R, C, T, T)
            [head_name(layer, h) for h in range(H)],
            w[layer, head],
            head_name(layer, head),
        )
    if rd.reading != "flow":
        return Maps(
            w[:, 0].reshape(grid_rows(L), -1, T, T),  # (L, T, T) -> (R, C, T, T)
            [layer_name(l) for l in range(L)],
            w[layer, 0],
            layer_name(layer),
        )
    return Maps(w, [f"L1–L{n_layers}"], w[0, 0], f"L1–L{n_layers}")


@dataclass(frozen=True)
class Share:
    by_weight: float  # share of attention on the sink keys, all heads and queries, by weights
    by_norm: float  # … by norm-weighted weights α·‖f(x)‖
    head_weight: float  # the same for the chosen head
    head_norm: float
    head: str
    causal: bool  # a decoder's run: the sink is its first token, not [CLS] and [SEP]
    even: float  # the share a head spreading its weight evenly over what it can see would give


def sink_keys(r: Run) -> list[int]:
    """The keys where heads park their weight: [CLS] and [SEP] in an encoder; a decoder's first
    token (every query can see it, and the first query sees nothing else)."""
    if r.causal:
        return [0]
    return [i for i, tok in enumerate(r.tokens) if tok in SPECIALS]


def even_share(T: int, keys: list[int], causal: bool) -> float:
    """The share of ``keys`` for attention spread evenly: len(keys) / T for an encoder; a decoder's
    query i sees i + 1 tokens, so the first token gets the mean of 1 / (i + 1)."""
    if not causal:
        return len(keys) / T
    return float(np.mean(1.0 / np.arange(1, T + 1)))


def share(r: Run, layer: int, head: int) -> Share:
    """How much of the attention lands on the sink keys (:func:`sink_keys`), by weights and by what
    actually arrives."""
    keys = sink_keys(r)
    a = reading.key_share(r.attn, keys)  # (L, H)
    n = reading.key_share(reading.norm_weighted(r.attn, r.norms), keys)  # (L, H)
    return Share(
        float(a.mean()),
        float(n.mean()),
        float(a[layer, head]),
        float(n[layer, head]),
        head_name(layer, head),
        r.causal,
        even_share(len(r.tokens), keys, r.causal),
    )


@dataclass(frozen=True)
class Pair:
    a: np.ndarray  # (Ta, Ta) sentence A's chosen map
    b: np.ndarray  # (Tb, Tb) sentence B's
    tokens_a: list[str]
    tokens_b: list[str]
    alignment: reading.TokenAlignment
    name: str


def pair(a: Run, b: Run, ra: Readings, rb: Readings, layer: int, head: int) -> Pair:
    """The same head (or aggregate) of one reading for two texts (``ra``, ``rb``: :func:`readings`
    of ``a``, ``b``)."""
    (tokens_a, ra), (tokens_b, rb) = shown(a, ra), shown(b, rb)  # characters, not their pieces
    ma, mb = maps(ra, layer, head, a.n_layers), maps(rb, layer, head, b.n_layers)
    alignment = reading.align_tokens(tokens_a, tokens_b)
    return Pair(ma.cell, mb.cell, tokens_a, tokens_b, alignment, ma.name)


def raw_pair(a: Run, b: Run, layer: int, head: int) -> Pair:
    """:func:`pair` of the unnormalised norm-weighted maps (:func:`raw_readings`)."""
    return pair(a, b, raw_readings(a), raw_readings(b), layer, head)


def line_weights(cell: np.ndarray, raw: bool) -> np.ndarray:
    """What the lines draw of a (T, T) map: the map itself (rows sum to 1), or unnormalised
    α‖f(x)‖ divided by its largest entry (the lines draw weights in tenths up to 1)."""
    if not raw:
        return cell
    top = float(cell.max())
    return cell / top if top > 0 else cell


@dataclass(frozen=True)
class Geometry:
    projection: reading.QKProjection  # T queries and T keys in one plane
    tokens: list[str]  # T tokens: the run's, so the plane has as many points as the run tokens
    weights: np.ndarray  # (T, T) the head's attention (the hover's top keys)
    name: str
    rotary: bool  # RoPE: the points are the rotated queries and keys the scores use


def geometry(model: BertEncoder | Decoder, r: Run, layer: int, head: int) -> Geometry:
    """One head's queries and keys on the two principal axes of both together, for the tokens the
    run read (at most MAX_READ_TOKENS: the queries and keys come from the run's own layer inputs,
    never from the text tokenised again)."""
    q, k = queries_keys(model, r.result, layer, head)  # (T, Dh) each
    p = reading.qk_projection(q, k)
    return Geometry(
        projection=p,
        tokens=r.tokens,
        weights=np.array(r.attn[layer, head]),  # a copy: a view would keep the whole run alive
        name=head_name(layer, head),
        rotary=model.positions == "rotary",
    )
