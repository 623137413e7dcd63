"""The pretrained-model lesson (article 004): all-MiniLM-L6-v2's 72 heads on a text, and what they
measure.

Article 004 draws one head that links "it" to "animal". Here the same sentence goes through a
trained encoder: every head in a grid, a head finder that ranks all heads by how much a source token
attends to a target token, the Winograd twin ("…too tired." / "…too wide.") measured, and one head
large (heatmap, lines).

Numbering: layers, heads and tokens are counted from 1 wherever a name is shown (``head_name(3, 1)``
is "L4·H2", the fourth layer's second head); arrays and the app's URL parameters index them from 0,
as the weight files do.

Browser budget: the 6 × 12 grid is drawn only up to GRID_ALL_MAX tokens; longer texts show one
layer's 12 heads, pooled to at most GRID_POOL tokens a side (about 1 MB of figure JSON at 128
tokens); the large head is pooled above HEAD_POOL, and the lines draw a window of LINES_MAX tokens
around the source token.

Axis letters: L layers, H heads, T tokens, B pooled blocks, W window of the lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import reading, reading_selector
from ..controls import Control, table
from ..display import (
    LAYER_MECHANISMS,
    MAP_MECHANISMS,
    MAX_TEXT_CELLS,
    grid_rows,
    head_name,
    layer_name,
)
from ..errors import InputError
from ..models import pieces
from ..models.causal import AttentionMaps, Decoder, DecoderResult
from ..models.encoder import MAX_MODEL_TOKENS, N_LAYERS, BertEncoder, BertResult
from ..models.sources import MAX_HEADS, MAX_LAYERS, id_control
from ..shown_tokens import (
    SPECIAL_TOKENS,
    HeadWeight,
    drop_special,
    merge_word_pieces,
    pool,
    rank_heads,
)
from ..text import PRESETS, SENTENCE, WIDE

# Every URL parameter of the page: its own controls, the reading selector's (prefix "pt") and the
# finder's source and target positions (their default follows the sentence: ``default_pair``).
CONTROLS = table(
    id_control("pt_model"),  # a model's id (visattn.models.sources)
    Control("pt_text", SENTENCE),
    Control("pt_hide", False),
    Control("pt_merge", False),
    Control("pt_lfoc", False),
    Control("pt_glayer", 0, options=range(MAX_LAYERS)),
    Control("pt_layer", 3, options=range(MAX_LAYERS)),
    Control("pt_head", 1, options=range(MAX_HEADS)),
    Control("pt_src", 0, lo=0, hi=MAX_MODEL_TOKENS - 1),
    Control("pt_tgt", 0, lo=0, hi=MAX_MODEL_TOKENS - 1),
    reading_selector.controls("pt"),
)
LABELS = {
    "pretrained.presets": tuple(PRESETS),  # the preset buttons' names, keyed as PRESETS
    "models.families": ("bert", "gpt2", "llama", "gpt_oss"),  # the model picker's families
    "models.mechanisms": MAP_MECHANISMS,  # a sentence for each mechanism that changes the maps
    "models.layer_mechanisms": LAYER_MECHANISMS,  # … and for what changes one layer's maps
}
GRID_ALL_MAX = 40  # up to this many tokens, all 72 heads in one figure
GRID_POOL = 128  # one layer's grid: at most this many (pooled) tokens a side
HEAD_POOL = 256  # the large heatmap: at most this many (pooled) tokens a side
LINES_MAX = 64  # the lines: a window of this many tokens
TOP_BARS = 15  # bars in the head finder
STRONG = 0.5  # "a head links source → target" above this weight
TOKENS_SHOWN = 80  # tokens listed in the caption
UNK_SHOWN = 30  # unknown characters listed in the notice


def cell_name(layer: int, head: int, shape: tuple[int, ...], n_layers: int = N_LAYERS) -> str:
    """A cell of a reading of shape (L', H', …) as the page names it: a head "L4·H2" when the
    reading has heads, a layer "L4" when it has one map per layer (mean, max, rollout), "L1–L6"
    for flow's single map (of a model of ``n_layers``)."""
    if shape[1] > 1:
        return head_name(layer, head)
    return layer_name(layer) if shape[0] > 1 else f"L1–L{n_layers}"


def readings(
    model: BertEncoder,
    result: BertResult,
    name: str,
    progress: Callable[[int, int], object] | None = None,
) -> reading.Readings:
    """The selector's reading of a whole run (:func:`visattn.reading.reading_weights`, float32 like
    the weights; the weights themselves are not copied). Flow is refused above its cap (InputError
    "flow_tokens"); value norms reuse the run's layer inputs."""
    w = result.attentions
    if isinstance(w, AttentionMaps):  # a decoder's: the page draws them whole (its budget's cost)
        w = w.whole()
    if name != "weights":
        norms = None
        if name == "norm_weighted" and isinstance(model, Decoder):
            norms = model.value_norms(result)
        elif name == "norm_weighted":
            norms = reading.encoder_value_norms(model, result)
        sinks = "sinks" in getattr(model.config, "mechanisms", ())  # rows sum to at most 1
        w = reading.reading_weights(
            w, name, norms=norms, progress=progress, dtype=np.float32, sinks=sinks
        )
    return reading.Readings(result.text, name, w)


def indexed(tokens: list[str]) -> list[str]:
    """Labels "i: token" (i from 1) for long texts: unique without padding repeats, and a hover says
    where it is."""
    return [f"{i + 1}: {tok}" for i, tok in enumerate(tokens)]


def listed_tokens(tokens: list[str], sep: str = " · ") -> str:
    """The first TOKENS_SHOWN tokens joined, "…" when there are more."""
    return sep.join(tokens[:TOKENS_SHOWN]) + (f"{sep}…" if len(tokens) > TOKENS_SHOWN else "")


# ---- the text as the model reads it --------------------------------------------------------------


@dataclass(frozen=True)
class Unknown:
    n: int  # word pieces that became [UNK]
    chars: str  # the characters behind them, space-separated (at most UNK_SHOWN, then "…")
    every: bool  # every word piece of the text is [UNK]


def unknown(result: BertResult) -> Unknown | None:
    """Which characters became [UNK] (the model reads them all as one and the same token); None if
    none did."""
    unk = [i for i, tok in enumerate(result.tokens) if tok == "[UNK]"]
    if not unk:
        return None
    chars = list(
        dict.fromkeys(result.text[s:e] for s, e in (result.offsets[i] for i in unk) if e > s)
    )
    words = [tok for tok in result.tokens if tok not in SPECIAL_TOKENS]
    return Unknown(
        n=len(unk),
        chars=" ".join(chars[:UNK_SHOWN]) + (" …" if len(chars) > UNK_SHOWN else ""),
        every=len(unk) == len(words),
    )


@dataclass(frozen=True)
class Shown:
    """The tokens and weights as the page's toggles show them."""

    tokens: list[str]  # T' labels
    attn: np.ndarray  # (L, H, T', T') rows sum to 1
    kept_specials: bool  # hiding [CLS]/[SEP] was asked but would leave nothing, so they stay


def as_shown(result: BertResult, hide: bool, merge: bool, attn: np.ndarray | None = None) -> Shown:
    """The tokens and (L, H, T', T') weights as the toggles ask: specials dropped, word pieces
    merged. ``attn``: a reading of the run (:func:`readings`, any (L', H', T, T)) instead of its
    weights."""
    tokens, attn, kept = result.tokens, result.attentions if attn is None else attn, False
    if getattr(result, "causal", False):
        return _decoder_shown(result, hide, merge, attn)
    if hide:
        if all(
            tok in SPECIAL_TOKENS for tok in tokens
        ):  # the text was nothing but [CLS]/[SEP] typed in
            kept = True
        else:
            v = drop_special(tokens, attn)
            tokens, attn = v.tokens, v.attn
    if merge:
        v = merge_word_pieces(tokens, attn)
        tokens, attn = v.tokens, v.attn
    return Shown(tokens=tokens, attn=attn, kept_specials=kept)


def _decoder_shown(result, hide: bool, merge: bool, attn: np.ndarray) -> Shown:
    """A decoder's tokens: its special tokens ("<s>", "<|endoftext|>") hidden, byte pieces of a
    character merged (:func:`visattn.models.pieces.merge_groups`)."""
    raw, tokens, kept = list(result.pieces), list(result.tokens), False
    if hide:
        keep = [i for i, piece in enumerate(raw) if piece not in result.special]
        if not keep:
            kept = True
        elif len(keep) < len(raw):
            v = drop_special(raw, attn, special=result.special)
            raw, attn, tokens = v.tokens, v.attn, [tokens[i] for i in keep]
    if merge:
        v = pieces.merge_groups(raw, attn, result.byte_level, result.special)
        tokens, attn = v.tokens, v.attn
    return Shown(tokens=tokens, attn=attn, kept_specials=kept)


def split_characters(result: BertResult | DecoderResult) -> bool:
    """Whether a decoder's run cut a character into several pieces (shown as "中 1/3" … until the
    merge toggle merges them)."""
    if not getattr(result, "causal", False):
        return False
    return pieces.split_characters(result.pieces, result.byte_level, result.special)


def default_pair(tokens: list[str], causal: bool = False) -> tuple[int, int]:
    """Source "it" and target "animal" when present; else the first word and the word after it
    (``causal``: the last word and the first, since a decoder's token sees only those before
    it)."""
    words = [i for i, tok in enumerate(tokens) if tok not in SPECIAL_TOKENS] or list(
        range(len(tokens))
    )
    first = words[-1] if causal else words[0]
    src = tokens.index("it") if "it" in tokens else first
    if "animal" in tokens and tokens.index("animal") != src:
        return src, tokens.index("animal")
    others = [i for i in words if i != src]
    return src, (others[0] if others else src)


# ---- 1. every head -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Patterns:
    n_cls: int  # heads whose mean weight on [CLS] is above STRONG
    prev: tuple[str, ...]  # heads whose mean weight on the token before is above STRONG
    next: tuple[str, ...]  # … on the token after


def patterns(attn: np.ndarray) -> Patterns:
    """What the grid shows, measured on (L, H, T, T) raw weights: heads parked on [CLS],
    previous/next-token heads.

    Means over the queries that have such a neighbour (rows 2…T for "previous", 1…T−1 for
    "next"). A decoder's :class:`AttentionMaps` is read a block of rows at a time."""
    lazy = isinstance(attn, AttentionMaps)
    attn = attn if lazy else np.asarray(attn)
    if attn.ndim != 4 or attn.shape[-1] != attn.shape[-2] or attn.shape[-1] < 2:
        raise InputError(
            "attn_shape",
            f"attn has shape {attn.shape}; it must be (layers, heads, T, T) with T ≥ 2.",
            shape=" × ".join(map(str, attn.shape)),
            n=attn.shape[-1] if attn.ndim else 0,
        )
    if lazy:
        return _named_patterns(*_lazy_patterns(attn))
    i = np.arange(1, attn.shape[-1])
    on_cls = attn[..., :, 0].mean(axis=-1)  # (L, H) mean weight on [CLS]
    prev = attn[..., i, i - 1].mean(axis=-1)  # (L, H) mean weight on the token before
    nxt = attn[..., i - 1, i].mean(axis=-1)  # (L, H) mean weight on the token after
    return _named_patterns(on_cls, prev, nxt)


def _named_patterns(on_cls: np.ndarray, prev: np.ndarray, nxt: np.ndarray) -> Patterns:
    def names(w: np.ndarray) -> tuple[str, ...]:
        return tuple(
            head_name(int(l), int(h)) for l, h in zip(*np.nonzero(w > STRONG), strict=True)
        )

    return Patterns(n_cls=int((on_cls > STRONG).sum()), prev=names(prev), next=names(nxt))


def _lazy_patterns(maps: AttentionMaps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`patterns`' three (L, H) means from a decoder's maps in one pass over its blocks of
    rows: the weight on the first token, on the token before, on the token after."""
    L, H, T, _ = maps.shape
    sums = np.zeros((3, L, H))  # first token, previous, next: sums over the rows
    for layer in range(L):
        for a, b, w in maps.blocks(layer):  # w (H, b − a, S)
            r = np.arange(a, b)  # the block's rows
            sums[0, layer] += w[:, :, 0].sum(axis=-1, dtype=np.float64)
            before = r[r >= 1]
            sums[1, layer] += w[:, before - a, before - 1].sum(axis=-1, dtype=np.float64)
            after = r[r + 1 < T]
            sums[2, layer] += w[:, after - a, after + 1].sum(axis=-1, dtype=np.float64)
    return sums[0] / T, sums[1] / (T - 1), sums[2] / (T - 1)


@dataclass(frozen=True)
class Grid:
    w: (
        np.ndarray
    )  # (6, 12, T, T) all heads, or (3, 4, B, B) one layer's heads (pooled above GRID_POOL)
    labels: list[str]  # B tick labels
    titles: list[str]  # one per cell: "L1·H1" …
    layer: int | None  # the layer shown (0-based), None when every layer is
    n_tokens: int  # T before pooling
    block: int  # tokens per pooled block (1: not pooled)


def one_layer(T: int, attn: np.ndarray) -> bool:
    """Whether the grid draws one layer only (a reading with heads, above GRID_ALL_MAX tokens): the
    page asks which."""
    return T > GRID_ALL_MAX and attn.shape[1] > 1


def grid(tokens: list[str], attn: np.ndarray, layer: int) -> Grid:
    """All 72 heads for short texts; one layer's 12 heads (pooled to GRID_POOL a side if long)
    otherwise. A reading with one map per layer (L, 1, T, T) gives 2 × 3 maps, flow's (1, 1, T, T)
    one (pooled likewise)."""
    T, (L, H) = len(tokens), attn.shape[:2]
    if H == 1:
        v = pool(
            indexed(tokens) if T > GRID_ALL_MAX else tokens, attn[:, 0], GRID_POOL
        )  # (L, B, B)
        B = len(v.tokens)
        return Grid(
            w=v.attn.reshape(grid_rows(L), -1, B, B),
            labels=v.tokens,
            layer=None,
            n_tokens=T,
            block=len(v.groups[0]),
            titles=[cell_name(l, 0, attn.shape) for l in range(L)],
        )
    if T <= GRID_ALL_MAX:
        return Grid(
            w=attn,
            labels=list(tokens),
            layer=None,
            n_tokens=T,
            block=1,
            titles=[head_name(l, h) for l in range(L) for h in range(H)],
        )
    v = pool(indexed(tokens), attn[layer], GRID_POOL)  # (H, T, T) -> (H, B, B)
    B = len(v.tokens)
    return Grid(
        w=v.attn.reshape(grid_rows(H), -1, B, B),
        labels=v.tokens,
        layer=layer,
        n_tokens=T,
        block=len(v.groups[0]),
        titles=[head_name(layer, h) for h in range(H)],
    )


# ---- 2. the head finder --------------------------------------------------------------------------


@dataclass(frozen=True)
class Finder:
    top: tuple[HeadWeight, ...]  # the TOP_BARS strongest heads, strongest first
    strong: tuple[HeadWeight, ...]  # the heads above STRONG
    names: tuple[str, ...]  # bar labels: head_name of each of ``top``
    opened: int | None  # the bar of the open head, if it is among them

    @property
    def best(self) -> HeadWeight:
        return self.top[0]


def finder(
    attn: np.ndarray, src: int, tgt: int, open_head: tuple[int, int], n_layers: int = N_LAYERS
) -> Finder:
    """All heads ranked by the weight token ``src`` (query) puts on ``tgt`` (key); the strongest
    drawn as bars (flow's one map named after the model's ``n_layers``)."""
    ranked = rank_heads(attn, src, tgt)
    top = tuple(ranked[:TOP_BARS])
    opened = tuple(
        k if n > 1 else 0 for k, n in zip(open_head, attn.shape[:2], strict=True)
    )  # a layer's map: the open head's layer
    return Finder(
        top=top,
        strong=tuple(hw for hw in ranked if hw.weight > STRONG),
        names=tuple(cell_name(hw.layer, hw.head, attn.shape, n_layers) for hw in top),
        opened=next((i for i, hw in enumerate(top) if (hw.layer, hw.head) == opened), None),
    )


@dataclass(frozen=True)
class Winograd:
    tired_animal: HeadWeight  # the strongest it → animal head in "…too tired."
    tired_street: HeadWeight  # the strongest it → street head there
    wide_animal: HeadWeight  # … and in the twin "…too wide.", where "it" is the street
    wide_street: HeadWeight

    @property
    def switch(self) -> bool:
        """Whether in "…wide." some head favours street: its best it → street head reaches STRONG or
        beats the best it → animal head."""
        return not self.wide_street.weight < min(self.wide_animal.weight, STRONG)

    def cells(self) -> dict[str, str]:
        """The measured sentence's blanks: tired_a / tired_aw (head, weight of it → animal in
        "…tired."), tired_s / tired_sw (it → street), wide_a / wide_aw, wide_s / wide_sw; weights to
        2 decimals."""
        best = dict(
            tired_a=self.tired_animal,
            tired_s=self.tired_street,
            wide_a=self.wide_animal,
            wide_s=self.wide_street,
        )
        return {k: head_name(hw.layer, hw.head) for k, hw in best.items()} | {
            k + "w": f"{hw.weight:.2f}" for k, hw in best.items()
        }


def winograd(model: BertEncoder | Decoder) -> Winograd | None:
    """Article 004's pair, measured: the best it→animal and it→street heads in "…tired." and in
    "…wide."; None for a model whose tokenizer does not keep the three words whole."""
    best = {}
    for name, text in (("tired", SENTENCE), ("wide", WIDE)):
        r = model.run(text)
        if not {"it", "animal", "street"} <= set(r.tokens):
            return None
        it, animal, street = (r.tokens.index(w) for w in ("it", "animal", "street"))
        best[name] = (
            rank_heads(r.attentions, it, animal, top=1)[0],
            rank_heads(r.attentions, it, street, top=1)[0],
        )
    return Winograd(
        tired_animal=best["tired"][0],
        tired_street=best["tired"][1],
        wide_animal=best["wide"][0],
        wide_street=best["wide"][1],
    )


# ---- 3. one head, large --------------------------------------------------------------------------


@dataclass(frozen=True)
class OneHead:
    name: str  # "L4·H2"
    w: np.ndarray  # (T, T) the head's weights (the CSV)
    shown: np.ndarray  # (B, B) as drawn: pooled above HEAD_POOL tokens
    labels: list[str]  # B labels ("i: token" above GRID_ALL_MAX tokens)
    block: int  # tokens per pooled block (1: not pooled)
    hover_only: bool  # too many tokens for numbers in the cells: the weights are in the hover


def one_head(
    tokens: list[str], attn: np.ndarray, layer: int, head: int, n_layers: int = N_LAYERS
) -> OneHead:
    """Head (``layer``, ``head``) of a reading; a reading with one map per layer gives that
    layer's, flow its one map."""
    layer, head = min(layer, attn.shape[0] - 1), min(head, attn.shape[1] - 1)
    w = attn[layer, head]  # (T, T)
    v = pool(indexed(tokens) if len(tokens) > GRID_ALL_MAX else tokens, w, HEAD_POOL)
    return OneHead(
        name=cell_name(layer, head, attn.shape, n_layers),
        w=w,
        shown=v.attn,
        labels=v.tokens,
        block=len(v.groups[0]),
        hover_only=len(tokens) > MAX_TEXT_CELLS,
    )


@dataclass(frozen=True)
class Lines:
    w: np.ndarray  # (1, W, W) the window of the head drawn as lines
    tokens: list[str]  # W tokens of the window
    first: int  # the window is tokens first … last (0-based, last included)
    last: int


def lines(tokens: list[str], w: np.ndarray, src: int, only_src: bool) -> Lines:
    """A window of LINES_MAX tokens around ``src`` of one head (T, T); with ``only_src`` only that
    token's row."""
    T = len(tokens)
    start = int(np.clip(src - LINES_MAX // 2, 0, max(0, T - LINES_MAX)))
    stop = min(T, start + LINES_MAX)
    window = np.array(w[start:stop, start:stop])  # (W, W) a copy: the head itself stays as it is
    if only_src:
        keep = np.zeros_like(window)
        keep[src - start] = window[src - start]
        window = keep
    return Lines(w=window[None], tokens=tokens[start:stop], first=start, last=stop - 1)
