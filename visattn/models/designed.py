"""A small *designed* transformer whose heads can be read: every weight is set by hand from word
features.

Why it exists. In "The animal didn't cross the street because it was too tired." article 004 shows
one head linking it → animal (who "it" is) and another linking it → tired (what state "it" is in).
Random weights cannot show this and a trained model hides *why*; here every number of W_q, W_k, W_v,
W_o has a reason that fits in one sentence, and each head's preference follows from the words'
features — no head ever names a word.

Axis letters: T tokens, Nf word features, P position columns, D model width (d_model), H heads,
Dh head width (D / H), L layers.

The residual stream (D = 32 named columns, :data:`DIM_NAMES`)::

    0 … 14   word features (Nf = 15, :data:`FEATURE_NAMES`): 0/1 values from the lexicon
    15 … 22  position (P = 8): 2 · sinusoidal_encoding(T, 8, base=10), concatenated rather than
             added, so a head can read positions apart from words (a trained model learns to keep
             them apart too); amplitude 2 so that positions dominate every row's norm and LayerNorm
             rescales rows alike
    23 … 28  slots that heads write into through W_v and W_o (all 0 in the input): wants_animate /
             wants_spatial — what the adjective describing this token requires of it, refers_animate
             / refers_spatial — what the noun this pronoun refers to is, after_determiner — the
             previous token is a determiner, negated — the sentence has a negation
    29       zero — 0 in the input and never written (W_o has no entry in it), so it carries nothing
             but the shift that LayerNorm's mean subtraction gives every column (−mean/σ). Every
             column of W_q, W_k, W_v sums to 0 (the "zero" row holds minus the others), so a head
             reads each column relative to "zero" and the mean drops out; only LayerNorm's rescaling
             remains
    30 … 31  unused (always 0): they pad the 30 named columns to D = 32 so that H = 4 heads get Dh =
             8 columns each (:func:`input_layout` counts every group)

Each layer is the post-LN block of "Attention Is All You Need" without the feed-forward part
(:func:`visattn.models.block.run_layers`, which the random model of :mod:`visattn.models.random`
runs too)::

    X_in ─► multi_head_attention(X_in, W_q, W_k, W_v, W_o, H=4) ─► residual = X_in + MHA
         ─► Z = LayerNorm(residual)

and Z is the next layer's X_in (LayerNorm with γ = 1, β = 0). Head h uses columns h·Dh … (h+1)·Dh of
W_q, W_k, W_v (Dh = 8), exactly as in :func:`visattn.multi_head_attention`. The heads, the same four
in both layers:

``coreference``  Query: a pronoun asks for a noun, a little more for an animate one (a prior), and —
                 much more strongly — for the kind its ``wants_*`` slots ask for. Key: noun,
                 animate, spatial. Value → ``refers_animate`` / ``refers_spatial``.
``state``        Query: a pronoun asks for an adjective; weaker, every token looks about 2.5 tokens
                 ahead (the two slowest sinusoids turned forward), which picks "tired" over "wide"
                 in "…the wide road because it was tired". Key: adjective, position. Value: an
                 adjective of *state* (tired, hungry) writes ``wants_animate`` (only animate things
                 get tired); an adjective of *extent* (wide, narrow) writes ``wants_spatial`` (only
                 places and things are wide).
``previous``     Query: the token's position turned back by one step (a sinusoid's shift is a
                 rotation); Key: the position. The dot product peaks at the previous token. Value →
                 ``after_determiner``.
``broad``        Query and key: the slowest sinusoid, weakly — a wide proximity kernel, nearly
                 uniform. Value → ``negated``.

Two layers resolve the Winograd pair. Layer 1's ``coreference`` has no ``wants_*`` yet, so "it" goes
to the animate noun by the prior in both "…too tired." and "…too wide.". Meanwhile layer 1's
``state`` head carries the adjective's requirement into "it" (through W_v, W_o and the residual).
Layer 2's ``coreference`` then matches that requirement against the nouns' features: "tired" →
wants_animate → animal; "wide" → wants_spatial → street. Swap the features (mark "street" animate
and "animal" spatial with ``overrides``) and the choice moves with them, the spelling unchanged.

Sharpness: scores are q·k / √Dh; W_q carries √Dh times a per-head sharpness (:data:`SHARPNESS`), so
the post-scaling score is sharpness × (how well the features match). Layer 2 has its own sharpness
because LayerNorm rescales every row to RMS 1 and the ``wants_*`` slots add to the coreference
score.

Measured (row "it", weights of the named key), "…because it was too tired." / "…too wide.":

    layer 1  coreference it→animal 0.86 / 0.86   state it→tired 0.82 / it→wide 0.82   previous
             it→because 0.88
    layer 2  coreference it→animal 0.96 / it→street 0.81   state 0.80 / 0.80          previous 0.95
    broad rows lie within 0.05 … 0.11 (uniform would be 1/12 ≈ 0.08).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..attention import check_heads
from ..errors import InputError
from ..positional_encoding import sinusoidal_encoding
from ..text import MAX_SENTENCE_TOKENS, tokenize
from .block import LayerParams, LayerTrace, run_layers, stack_weights

# ── Word features ────────────────────────────────────────────────────────────────────────────────
FEATURES: dict[str, str] = {
    "noun": "names a thing, animal, person or place",
    "animate": "alive: can get tired, hungry or scared (animal, cat, child)",
    "spatial": "a place or a thing with extent: can be wide, long or deep (street, river, bridge)",
    "pronoun": "stands for a noun said elsewhere (it, he, they)",
    "adjective": "describes a noun (tired, wide)",
    "state": "an adjective of state: what it describes must be animate (tired, hungry, sleepy)",
    "extent": (
        "an adjective of size or extent: what it describes must be spatial (wide, narrow, long)"
    ),
    "verb": "an action or auxiliary (cross, didn't)",
    "copula": "links a subject to its description (was, is)",
    "negation": "turns a statement negative (not, never, didn't)",
    "determiner": "opens a noun phrase (the, a, this)",
    "conjunction": "joins two clauses (because, and, but)",
    "preposition": "places a noun relative to another (across, over)",
    "adverb": "modifies an adjective or verb (too, very)",
    "punctuation": "a mark, not a word (. , ! ?)",
}
FEATURE_NAMES: tuple[str, ...] = tuple(FEATURES)
N_FEATURES = len(FEATURE_NAMES)  # Nf = 15


def _words(text: str, *features: str) -> dict[str, frozenset[str]]:
    return {w: frozenset(features) for w in text.split()}


LEXICON: dict[str, frozenset[str]] = {
    **_words("the a an this these those every each some my your our their its", "determiner"),
    **_words("no", "determiner", "negation"),
    **_words(
        "animal animals cat cats dog dogs child children boy girl man woman horse cow bird fox "
        "rabbit deer chicken duck sheep mouse turtle",
        "noun",
        "animate",
    ),
    **_words(
        "street streets road roads river rivers bridge lake field park wall fence path hill room "
        "house garden forest ocean sea stream highway valley ditch canyon tunnel track",
        "noun",
        "spatial",
    ),
    **_words("it he she they him her them", "pronoun"),
    **_words(
        "cross crossed crosses jump jumped walk walked swim swam go went run ran chase chased see "
        "saw climb climbed enter entered reach reached eat ate want wanted try tried did do does "
        "could would can will",
        "verb",
    ),
    **_words("was is were are be been am seemed seems felt feels looked looks", "verb", "copula"),
    **_words("not never", "negation"),
    **_words("didn't don't doesn't couldn't can't won't wouldn't", "verb", "negation"),
    **_words("wasn't isn't weren't aren't", "verb", "copula", "negation"),
    **_words(
        "tired hungry sleepy scared afraid weak lazy sick exhausted frightened angry happy sad "
        "thirsty nervous",
        "adjective",
        "state",
    ),
    **_words(
        "wide narrow long deep steep high far muddy icy crowded flooded slippery broad short",
        "adjective",
        "extent",
    ),
    **_words("big small red old new", "adjective"),
    **_words("too very so really quite rather", "adverb"),
    **_words("because and but or since as while although when", "conjunction"),
    **_words("across over into through at on in to of under near along from with", "preposition"),
}
# The same features for Chinese words. Chinese writes no spaces, so a text is cut into the longest
# words of this lexicon (:func:`segment`); a character it does not know is a token of its own, with
# no features (like an unknown English word). 了 and 的 are particles: no feature, as in English a
# word the lexicon does not know. Traditional forms are listed beside the simplified ones.
LEXICON_ZH: dict[str, frozenset[str]] = {
    **_words("这 那 这个 那个 这些 那些 每 每个 一个 一只 一条 某个", "determiner"),
    **_words(
        "动物 動物 猫 貓 狗 孩子 男孩 女孩 男人 女人 马 馬 牛 鸟 鳥 狐狸 兔子 鹿 鸡 雞 鸭 鴨 羊 "
        "老鼠 乌龟 烏龜 小猫 小貓 小狗 小明 小红",
        "noun",
        "animate",
    ),
    **_words(
        "街道 街 马路 馬路 道路 路 河 河流 桥 橋 湖 田野 公园 公園 墙 牆 篱笆 小路 山 房间 房間 "
        "房子 花园 花園 森林 海 大海 小溪 公路 山谷 沟 溝 峡谷 峽谷 隧道 桌子 桌",
        "noun",
        "spatial",
    ),
    **_words("苹果 蘋果 书 書 水 饭 飯 蛋糕 牛奶 面包 麵包", "noun"),
    **_words("它 他 她 它们 它們 他们 他們 她们 她們 我 你 我们 我們 你们 你們", "pronoun"),
    **_words(
        "穿过 穿過 过 過 跳 走 走过 走過 游 跑 追 看 看见 看見 爬 进 進 进入 進入 到 吃 想 要 "
        "买 買 喜欢 喜歡 做 能 会 會 可以",
        "verb",
    ),
    **_words("是 在 变得 變得 显得 顯得 看起来 看起來", "verb", "copula"),
    **_words("不 没 沒 从不 從不", "negation"),
    **_words("没有 沒有 没能 沒能 不能 不会 不會 不想", "verb", "negation"),
    **_words("不是", "verb", "copula", "negation"),
    **_words(
        "累 饿 餓 困 害怕 怕 虚弱 虛弱 懒 懶 病 疲惫 疲憊 "
        "生气 生氣 高兴 高興 难过 難過 渴 紧张 緊張",
        "adjective",
        "state",
    ),
    **_words(
        "宽 寬 窄 长 長 深 陡 高 远 遠 泥泞 泥濘 结冰 結冰 拥挤 擁擠 滑 宽阔 寬闊 短",
        "adjective",
        "extent",
    ),
    **_words("大 小 红 紅 旧 舊 新 甜", "adjective"),
    **_words("太 很 非常 真 挺 相当 相當", "adverb"),
    **_words("因为 因為 所以 和 但是 但 或者 而且 虽然 雖然 当 當", "conjunction"),
    **_words("上 里 裡 下 旁边 旁邊 对面 對面 从 從 沿着 沿著 向", "preposition"),
    **_words("。 ， ！ ？ ； ： 、 “ ” （ ）", "punctuation"),
    **_words("了 的 吗 嗎 呢 吧"),  # particles: listed (known), with no feature
}
_ZH_LONGEST = max(len(w) for w in LEXICON_ZH)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def segment(text: str) -> list[str]:
    """``text`` as the designed model's tokens: English words and marks as :func:`visattn.tokenize`
    cuts them; a run of Chinese characters cut into the longest words of :data:`LEXICON_ZH`, left to
    right (forward maximum matching), an unknown character a token of its own.

    “动物没有穿过街道，因为它太累了。” → 动物 没有 穿过 街道 ， 因为 它 太 累 了 。"""
    out: list[str] = []
    for token in tokenize(text, max_tokens=len(text) + 1):
        if out and _CJK.match(token) and _CJK.match(out[-1][-1]):
            out[-1] += token  # rejoin the run of characters that tokenize cut one by one
        else:
            out.append(token)
    words = []
    for token in out:
        if not _CJK.match(token):
            words.append(token)
            continue
        start = 0
        while start < len(token):
            for size in range(min(_ZH_LONGEST, len(token) - start), 0, -1):
                piece = token[start : start + size]
                if size == 1 or piece in LEXICON_ZH:
                    words.append(piece)
                    start += size
                    break
    return words


def word_features(word: str) -> frozenset[str]:
    """The features of one word (English case-insensitive, or Chinese); an unknown word has none (a
    neutral, all-zero vector)."""
    w = word.lower().replace("\u2019", "'")
    if w in LEXICON:
        return LEXICON[w]
    if w in LEXICON_ZH:
        return LEXICON_ZH[w]
    if w.endswith("n't"):  # any contracted negation is an auxiliary verb with a negation
        return frozenset({"verb", "negation"})
    if not any(c.isalnum() for c in w):
        return frozenset({"punctuation"})
    return frozenset()


def featurize(
    tokens: list[str], overrides: Mapping[int | str, Mapping[str, float]] | None = None
) -> np.ndarray:
    """(T, Nf) feature matrix of ``tokens``; ``overrides`` changes features without changing
    spelling.

    ``overrides`` maps a token index or a word (case-insensitive; every occurrence) to {feature
    name: new value}, e.g. ``{"street": {"animate": 1, "spatial": 0}}``; features not named keep
    their lexicon value."""
    if not isinstance(tokens, (list, tuple)) or not tokens:
        raise InputError(
            "tokens_list",
            "tokens must be a non-empty list of strings; use visattn.tokenize(text) to get one.",
        )
    if len(tokens) > MAX_SENTENCE_TOKENS:
        raise InputError(
            "too_many_tokens",
            f"The text has {len(tokens)} tokens; the designed model has positions for "
            f"{MAX_SENTENCE_TOKENS}. Shorten it.",
            n=len(tokens),
            limit=MAX_SENTENCE_TOKENS,
        )
    # (T, Nf)
    feats = np.array(
        [[float(name in word_features(str(tok))) for name in FEATURE_NAMES] for tok in tokens]
    )
    lowered = [str(tok).lower() for tok in tokens]
    for key, changes in (overrides or {}).items():
        if isinstance(key, str):
            rows = [i for i, tok in enumerate(lowered) if tok == key.lower()]
            if not rows:
                raise InputError(
                    "override_word",
                    f"overrides names the word {key!r}, which is not among the tokens "
                    f"{list(tokens)}; use one of them or a token index.",
                    word=key,
                )
        elif (
            isinstance(key, (int, np.integer))
            and not isinstance(key, bool)
            and -len(tokens) <= key < len(tokens)
        ):
            rows = [int(key)]
        else:
            raise InputError(
                "override_key",
                f"overrides key {key!r} is neither a token nor an index in 0…{len(tokens) - 1}.",
                key=str(key),
                last=len(tokens) - 1,
            )
        if not isinstance(changes, Mapping):
            raise InputError(
                "override_map",
                f"overrides[{key!r}] must map feature names to values, e.g. {{'animate': 1}}.",
                key=str(key),
            )
        for name, value in changes.items():
            if name not in FEATURE_NAMES:
                raise InputError(
                    "override_feature",
                    f"overrides[{key!r}] names the feature {name!r}; the features are "
                    f"{FEATURE_NAMES}.",
                    key=str(key),
                    feature=str(name),
                    features=", ".join(FEATURE_NAMES),
                )
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = float("nan")
            if not np.isfinite(value):
                raise InputError(
                    "override_value",
                    f"overrides[{key!r}][{name!r}] must be a finite number, got {changes[name]!r}.",
                    key=str(key),
                    feature=str(name),
                    value=str(changes[name]),
                )
            feats[rows, FEATURE_NAMES.index(name)] = value
    return feats


# ── The residual stream's columns ────────────────────────────────────────────────────────────────
N_POSITIONS = 8  # P: four sine/cosine pairs
# frequencies 1, 0.56, 0.32, 0.18 rad/token: one clear peak for every offset up to ±63
POSITION_BASE = 10.0
# positions outweigh the 0/1 features in a row's norm, so LayerNorm scales rows alike
POSITION_SCALE = 2.0
SLOT_NAMES: tuple[str, ...] = (
    "wants_animate",
    "wants_spatial",
    "refers_animate",
    "refers_spatial",
    "after_determiner",
    "negated",
)
D_MODEL = 32
N_HEADS = 4
D_HEAD = check_heads(D_MODEL, N_HEADS)  # Dh = 8
N_LAYERS = 2
HEAD_NAMES: tuple[str, ...] = ("coreference", "state", "previous", "broad")
DIM_NAMES: tuple[str, ...] = (
    FEATURE_NAMES
    + tuple(f"pos_{'sin' if i % 2 == 0 else 'cos'}{i // 2}" for i in range(N_POSITIONS))
    + SLOT_NAMES
    + ("zero",)
)
DIM_NAMES = DIM_NAMES + tuple(f"unused{i}" for i in range(D_MODEL - len(DIM_NAMES)))
_POS0 = N_FEATURES  # first position column


@dataclass(frozen=True)
class InputLayout:
    """How the D columns of the input X are used, counted from :data:`DIM_NAMES`."""

    features: int  # Nf word features (0/1 from the lexicon)
    positions: int  # P sinusoidal position columns
    slots: int  # columns heads write into (0 in the input)
    zero: int  # the "zero" column (never written)
    unused: int  # padding up to D so that H divides it
    d_model: int  # D = the sum of the above
    n_heads: int  # H
    d_head: int  # Dh = D / H


def input_layout() -> InputLayout:
    """The column groups of the residual stream; they add up to ``d_model``."""
    unused = sum(name.startswith("unused") for name in DIM_NAMES)
    return InputLayout(
        features=N_FEATURES,
        positions=N_POSITIONS,
        slots=len(SLOT_NAMES),
        zero=DIM_NAMES.count("zero"),
        unused=unused,
        d_model=len(DIM_NAMES),
        n_heads=N_HEADS,
        d_head=D_HEAD,
    )


_DIM = {name: i for i, name in enumerate(DIM_NAMES)}
_FREQS = POSITION_BASE ** (-np.arange(0, N_POSITIONS, 2) / N_POSITIONS)  # (P/2,) rad per token


# The numbers a reader may want to change. Weights are clear (≥ 0.5 on the target) but not one-hot.
PRONOUN_ASKS_NOUN = 1.0  # coreference: any noun
ANIMATE_PRIOR = 0.5  # coreference: a pronoun with no other clue prefers an animate noun
REQUIREMENT_WEIGHT = 3.0  # coreference: what the adjective requires (wants_*) outweighs the prior
STATE_NEARBY = 0.4  # state: preference for an adjective about STATE_OFFSET tokens after the pronoun
STATE_OFFSET = 2.5  # "it was tired" is 2 tokens on, "it was too tired" 3
# state head: how strongly the adjective's requirement is written into the pronoun
REQUIREMENT_WRITE = 1.0
SHARPNESS: Mapping[str, tuple[float, float]] = MappingProxyType(
    {  # per head, (layer 1, layer 2)
        "coreference": (4.0, 0.7),
        "state": (3.0, 1.6),
        "previous": (4.0, 2.4),
        "broad": (0.5, 0.2),
    }
)


@dataclass(frozen=True)
class DesignedConfig:
    d_model: int
    n_heads: int
    d_head: int
    head_names: tuple[str, ...]  # (H,)
    feature_names: tuple[str, ...]  # (Nf,)
    dim_names: tuple[str, ...]  # (D,) what each residual-stream column holds
    layers: tuple[LayerParams, ...]  # (L,)


def _rotation(W_q: np.ndarray, W_k: np.ndarray, row: int, col: int, angle: float, s: float) -> None:
    """Make one sine/cosine pair (rows ``row``, ``row + 1``) score s·cos(ω(j − i) − angle) between
    query i and key j.

    The key is the pair itself; the query is the pair turned by ``angle`` (a shift of position is a
    rotation): [sin ωi, cos ωi] @ [[cos θ, −sin θ], [sin θ, cos θ]] = [sin(ωi + θ), cos(ωi + θ)].
    Divided by POSITION_SCALE² so that s is in units of cosines whatever the amplitude of the
    positions."""
    g = s / POSITION_SCALE**2
    W_q[row, col], W_q[row, col + 1] = g * np.cos(angle), -g * np.sin(angle)
    W_q[row + 1, col], W_q[row + 1, col + 1] = g * np.sin(angle), g * np.cos(angle)
    W_k[row, col], W_k[row + 1, col + 1] = 1.0, 1.0


def _layer_params(layer: int) -> LayerParams:
    """The four heads' blocks of W_q, W_k, W_v, W_o for ``layer`` (0-based), written feature by
    feature."""
    D, Dh, d = D_MODEL, D_HEAD, _DIM
    W_q, W_k, W_v, W_o = (np.zeros((D, D)) for _ in range(4))
    c = {name: h * Dh for h, name in enumerate(HEAD_NAMES)}  # first column of each head's block
    root = np.sqrt(Dh)  # multi_head_attention divides scores by √Dh; W_q multiplies it back

    # coreference: score(pronoun → noun) = s·(1·noun + prior·animate + wants_animate·animate +
    # wants_spatial·spatial)
    s, h = SHARPNESS["coreference"][layer] * root, c["coreference"]
    W_q[d["pronoun"], h + 0], W_k[d["noun"], h + 0] = s * PRONOUN_ASKS_NOUN, 1.0
    W_q[d["pronoun"], h + 1], W_k[d["animate"], h + 1] = s * ANIMATE_PRIOR, 1.0
    W_q[d["wants_animate"], h + 1] = s * REQUIREMENT_WEIGHT
    W_q[d["wants_spatial"], h + 2], W_k[d["spatial"], h + 2] = s * REQUIREMENT_WEIGHT, 1.0
    W_v[d["animate"], h + 0], W_o[h + 0, d["refers_animate"]] = 1.0, 1.0
    W_v[d["spatial"], h + 1], W_o[h + 1, d["refers_spatial"]] = 1.0, 1.0

    # state: score(pronoun → adjective) = s·adjective; the value carries the adjective's requirement
    s, h = SHARPNESS["state"][layer] * root, c["state"]
    W_q[d["pronoun"], h], W_k[d["adjective"], h] = s, 1.0
    # … and, less strongly, the adjective just after it ("it was too tired"): the two slowest
    # sinusoids turned forward by STATE_OFFSET steps, so this part of the score is s·STATE_NEARBY·Σ
    # cos(ω(j − i − STATE_OFFSET))
    for k, f in enumerate(range(len(_FREQS) - 2, len(_FREQS))):
        _rotation(
            W_q, W_k, _POS0 + 2 * f, h + 2 + 2 * k, _FREQS[f] * STATE_OFFSET, s * STATE_NEARBY
        )
    W_v[d["state"], h + 0], W_o[h + 0, d["wants_animate"]] = 1.0, REQUIREMENT_WRITE
    W_v[d["extent"], h + 1], W_o[h + 1, d["wants_spatial"]] = 1.0, REQUIREMENT_WRITE

    # previous: q_i = position i turned back one step, k_j = position j, so q_i·k_j = s·Σ
    # cos(ω(i−1−j))
    s, h = SHARPNESS["previous"][layer] * root, c["previous"]
    for f, w in enumerate(_FREQS):
        _rotation(W_q, W_k, _POS0 + 2 * f, h + 2 * f, -w, s)
    W_v[d["determiner"], h], W_o[h, d["after_determiner"]] = 1.0, 1.0

    # broad: the slowest sinusoid only, weakly: score = s·cos(ω₃(i−j)), a wide and gentle proximity
    # kernel
    s, h = SHARPNESS["broad"][layer] * root, c["broad"]
    _rotation(W_q, W_k, _POS0 + N_POSITIONS - 2, h, 0.0, s)
    W_v[d["negation"], h], W_o[h, d["negated"]] = 1.0, 1.0

    # LayerNorm subtracts each row's mean: read every column relative to "zero" (never written, so
    # it holds only that shift), i.e. make each column of W_q, W_k, W_v sum to 0, and the mean drops
    # out
    for W in (W_q, W_k, W_v):
        W[d["zero"]] = -W.sum(axis=0)
    for W in (W_q, W_k, W_v, W_o):
        W.flags.writeable = False
    return LayerParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)


def designed_config() -> DesignedConfig:
    """The designed model's parameters (a fresh copy is not needed: the arrays are read-only)."""
    return DESIGNED_CONFIG


DESIGNED_CONFIG = DesignedConfig(
    d_model=D_MODEL,
    n_heads=N_HEADS,
    d_head=D_HEAD,
    head_names=HEAD_NAMES,
    feature_names=FEATURE_NAMES,
    dim_names=DIM_NAMES,
    layers=tuple(_layer_params(layer) for layer in range(N_LAYERS)),
)


# ── Running it ───────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class DesignedResult:
    """Everything a page shows: tokens, their features, the input X, each layer's trace, all
    weights."""

    tokens: list[str]
    head_names: tuple[str, ...]  # (H,)
    feature_names: tuple[str, ...]  # (Nf,)
    dim_names: tuple[str, ...]  # (D,)
    features: np.ndarray  # (T, Nf) 0/1 from the lexicon, after overrides
    positions: np.ndarray  # (T, P) sinusoidal
    X: np.ndarray  # (T, D) [features | positions | slots, zero, unused: all 0]
    layers: tuple[LayerTrace, ...]  # (L,)
    weights: np.ndarray  # (L, H, T, T) rows sum to 1

    def head(self, layer: int, name: str) -> np.ndarray:
        """(T, T) weights of the head called ``name`` in ``layer`` (0-based)."""
        if name not in self.head_names:
            raise InputError(
                "designed_head",
                f"No head called {name!r}; the heads are {self.head_names}.",
                head=str(name),
                heads=", ".join(self.head_names),
            )
        if not 0 <= layer < len(self.layers):
            raise InputError(
                "designed_layer",
                f"layer={layer} does not exist; layers are numbered 0 … {len(self.layers) - 1}.",
                layer=str(layer),
                last=len(self.layers) - 1,
            )
        return self.weights[layer, self.head_names.index(name)]


def embed(features: np.ndarray) -> np.ndarray:
    """(T, Nf) features → (T, D) input: features, then sinusoidal positions, then zeros for the
    slots."""
    T = features.shape[0]
    X = np.zeros((T, D_MODEL))
    X[:, :N_FEATURES] = features
    X[:, _POS0 : _POS0 + N_POSITIONS] = POSITION_SCALE * sinusoidal_encoding(
        T, N_POSITIONS, base=POSITION_BASE
    )
    return X


def run_tokens(
    tokens: list[str],
    overrides: Mapping[int | str, Mapping[str, float]] | None = None,
    config: DesignedConfig = DESIGNED_CONFIG,
) -> DesignedResult:
    """Run the designed model on ``tokens`` (see :func:`featurize` for ``overrides``)."""
    features = featurize(tokens, overrides)  # (T, Nf)
    X = embed(features)  # (T, D)
    # the post-LN block of visattn.models.block
    traces = run_layers(X, config.layers, config.n_heads)
    weights = stack_weights(traces)  # (L, H, T, T)
    return DesignedResult(
        tokens=list(tokens),
        head_names=config.head_names,
        feature_names=config.feature_names,
        dim_names=config.dim_names,
        features=features,
        positions=X[:, _POS0 : _POS0 + N_POSITIONS],
        X=X,
        layers=traces,
        weights=weights,
    )


def run(
    text: str, overrides: Mapping[int | str, Mapping[str, float]] | None = None
) -> DesignedResult:
    """Cut ``text`` into words (:func:`segment`: English by spaces and marks, Chinese by the
    lexicon; a curly apostrophe counts as a straight one) and run the designed model.

    A ValueError for empty text or more than 64 tokens.
    """
    if isinstance(text, str):
        text = text.replace("\u2019", "'")
    tokenize(text, max_tokens=len(text) + 1)  # an empty text or one without tokens: its message
    words = segment(text)
    if len(words) > MAX_SENTENCE_TOKENS:
        raise InputError(
            "too_many_tokens",
            f"The text has {len(words)} tokens; the limit here is {MAX_SENTENCE_TOKENS}. "
            "Shorten it.",
            n=len(words),
            limit=MAX_SENTENCE_TOKENS,
        )
    return run_tokens(words, overrides)
