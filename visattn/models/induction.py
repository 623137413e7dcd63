"""A designed two-layer, attention-only, causal transformer whose two heads form an induction
circuit.

Why it exists. The induction head (Elhage et al. 2021, "A Mathematical Framework for Transformer
Circuits"; Olsson et al. 2022, "In-context learning and induction heads") is the best-understood
circuit of trained decoders, and the clearest case of two heads working together. Read "… A B … A":
to guess what follows the second A, find the earlier A and copy what came after it. No single head
can do that (a query can only match a key by what the key's own row holds), so two heads do it in
turn:

1. layer 1, ``previous``: each token attends to the token before it and writes that token's identity
   into its own row ("the token before me was A");
2. layer 2, ``induction``: the query of the current token ("I am A") matches the key written by step
   1 ("the token before me was A"), so the head lands on B, the token *after* the earlier A, and its
   value writes "B" into the next-token columns that the unembedding reads.

As in :mod:`visattn.models.designed`, every weight has a reason and no weight names a word: the
matrices move one-hot blocks of the residual stream into others. Nothing is trained.

Axis letters: T tokens, V vocabulary size (Nv in the package legend), P positions, D model width, L
layers, H heads (one per layer here).

The residual stream (D = 3V + P + 1 named columns, :data:`DIM_NAMES`)::

    tok:w    (V)  one-hot: the current token is w                       — the input
    pos:i    (P)  one-hot: the position is i (P = 64)                    — the input
    one      (1)  always 1: a constant for biases                        — the input
    prev:w   (V)  the token before this one was w                        — written by layer 1's head
    next:w   (V)  the token after the earlier copy of this one was w     — written by layer 2's head

Each layer is X ← X + attention(X) with a causal mask: no LayerNorm, no feed-forward part (Elhage et
al.'s attention-only transformer); the logits are X W_U with W_U reading only the ``next`` columns.

``previous``   query: position i moved to column i − 1 (a shift matrix); key: position j. Score
               PREV_SHARPNESS where j = i − 1, else 0. Value: ``tok`` → ``prev``.
``induction``  query: ``tok``; key: ``prev`` (the same word in the same column); score
               INDUCTION_SHARPNESS where the key's previous token is the query's token; the key
               reads ``prev`` − ``tok`` and the value ``tok`` − ``prev``, both exactly 0 at the
               first position (its "previous" head can only look at itself), which scores SINK for
               every query (``one`` and ``pos:0``): a query with no match rests there, writes
               nothing, and the logits stay flat.

Measured (tests/test_decoder.py, n = 20 on seeds 0 … 7): the previous head puts ≥ 0.98 on i − 1; the
induction head ≥ 0.99 on the token after the earlier copy; the second copy is predicted 100 % right,
the first copy is predicted uniformly (p(next) ≈ 1 / V, loss ≈ ln V); with ``previous`` ablated
the induction head loses its target and the second copy falls to ≤ 10 %."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..activations import softmax
from ..attention import multi_head_attention
from ..checks import positive_int
from ..errors import InputError
from ..text import tokenize

# ── The vocabulary ────────────────────────────────────────────────────────────────────────────
# Short nonsense words for random sequences (no meaning, no bigram to guess from), then a small
# English vocabulary for typed sequences such as "Harry Potter went to the shop. Then Harry …".
NONSENSE: tuple[str, ...] = tuple(
    "bax dep fim gok hul jav kez lom mip nuv pag rus sib tof vek wol yad zin bef cog "
    "dut fal gim hob jek lup mav nid pif rol sug tam vin wex yob zuk dax wug fep tiv".split()
)
ENGLISH: tuple[str, ...] = tuple(
    ". , ! ? ; : ' \" - ( ) "
    "Harry Potter Ron Weasley Hermione Granger Albus Dumbledore Hagrid Draco Malfoy Dursley "
    "Hogwarts London Mr Mrs Miss Professor I you he she it we they me him her us them my your his "
    "its our their the a an this that these those some every no not and or but because so then "
    "when after before while is was are were be been has had have do did does will would can "
    "could said says say went go goes came come saw see met meet took take gave give bought buy "
    "made make found find ran run walked walk looked look asked ask told tell wanted want liked "
    "like knew know thought think to of in on at for with from into over under by about up down "
    "out back home away again here there shop school castle house street station train door room "
    "garden forest river road town city table milk bread tea cake apple book letter wand owl cat "
    "dog broom hat cloak map key box day night morning evening today tomorrow time year week new "
    "old big small good bad little young one two three first last very all many more most other "
    "same".split()
)
VOCAB: tuple[str, ...] = NONSENSE + ENGLISH
# Chinese spellings of English words ("哈利·波特 … 哈利" → "波特"): each is another spelling of the
# English word's id, so the vocabulary keeps its V ids and every English number stays as it was (the
# circuit compares identities only, never meanings). Typed Chinese is cut into these words by
# forward maximum matching (:func:`tokens_of`).
CHINESE: dict[str, str] = {
    "哈利": "Harry", "波特": "Potter", "罗恩": "Ron", "韦斯莱": "Weasley", "赫敏": "Hermione",
    "格兰杰": "Granger", "邓布利多": "Dumbledore", "海格": "Hagrid", "马尔福": "Malfoy",
    "霍格沃茨": "Hogwarts", "伦敦": "London", "。": ".", "，": ",", "！": "!", "？": "?",
    "我": "I", "你": "you", "他": "he", "她": "she", "它": "it", "我们": "we", "他们": "they",
    "这": "this", "那": "that", "和": "and", "但是": "but", "因为": "because", "所以": "so",
    "然后": "then", "是": "is", "有": "has", "去": "went", "来": "came", "看见": "saw", "看": "see",
    "遇见": "met", "拿": "took", "把": "gave", "买了": "bought", "买": "buy", "做": "made",
    "找到": "found", "跑": "ran", "走": "walked", "说": "said", "送到": "to", "的": "of",
    "在": "in", "了": "been", "回家": "home", "商店": "shop", "学校": "school", "城堡": "castle",
    "房子": "house", "街道": "street", "车站": "station", "火车": "train", "门": "door",
    "房间": "room", "花园": "garden", "森林": "forest", "河": "river", "路": "road", "牛奶": "milk",
    "面包": "bread", "茶": "tea", "蛋糕": "cake", "苹果": "apple", "书": "book", "信": "letter",
    "魔杖": "wand", "猫头鹰": "owl", "猫": "cat", "狗": "dog", "扫帚": "broom", "帽子": "hat",
    "今天": "today", "明天": "tomorrow", "新": "new", "旧": "old", "大": "big", "小": "small",
}  # fmt: skip
_INDEX = {w.lower(): i for i, w in enumerate(VOCAB)}
_INDEX |= {zh: _INDEX[en.lower()] for zh, en in CHINESE.items()}
_CHINESE_OF = {_INDEX[en.lower()]: zh for zh, en in CHINESE.items()}  # id → its Chinese spelling
_ZH_LONGEST = max(len(w) for w in CHINESE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
N_VOCAB = len(VOCAB)  # V
N_POSITIONS = 64  # P: at most 64 tokens (a repeated sequence of at most 32)
MAX_REPEAT = min(len(NONSENSE), N_POSITIONS // 2)

# ── The residual stream ───────────────────────────────────────────────────────────────────────
DIM_NAMES: tuple[str, ...] = (
    tuple(f"tok:{w}" for w in VOCAB)
    + tuple(f"pos:{i}" for i in range(N_POSITIONS))
    + ("one",)
    + tuple(f"prev:{w}" for w in VOCAB)
    + tuple(f"next:{w}" for w in VOCAB)
)
D_MODEL = len(DIM_NAMES)
TOK, POS, ONE = 0, N_VOCAB, N_VOCAB + N_POSITIONS
PREV, NEXT = ONE + 1, ONE + 1 + N_VOCAB
HEAD_NAMES: tuple[tuple[str, ...], ...] = (("previous",), ("induction",))  # per layer
N_LAYERS = len(HEAD_NAMES)

# The numbers a reader may change: post-scaling scores (W_q carries √D, which attention divides
# out)
PREV_SHARPNESS = 9.0  # previous: e⁹ ≈ 8100 against ≤ 63 other keys of score 0 → ≥ 0.99 on i − 1
# induction: a match scores 10 × (the previous head's weight on i − 1 ≈ 0.99)
INDUCTION_SHARPNESS = 10.0
# induction: the first position's score for every query (a match scores ≈ 9.9): the sink
SINK = 5.0
UNEMBED = 10.0  # logits = UNEMBED × the next-token columns


@dataclass(frozen=True)
class Layer:
    """One layer's single head: W_q, W_k, W_v, W_o, each (D, D)."""

    name: str
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray


def _readonly(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


def _layers() -> tuple[Layer, ...]:
    D, V, P = D_MODEL, N_VOCAB, N_POSITIONS
    root = np.sqrt(D)  # one head of width D: attention divides scores by √D
    eye_v = np.eye(V)
    # layer 1, "previous": q_i = s · e_(i−1), k_j = e_j over the position columns (head space reuses
    # their indices)
    Wq1, Wk1, Wv1, Wo1 = (np.zeros((D, D)) for _ in range(4))
    for i in range(1, P):
        Wq1[POS + i, POS + i - 1] = PREV_SHARPNESS * root
    Wk1[POS : POS + P, POS : POS + P] = np.eye(P)
    Wv1[TOK : TOK + V, PREV : PREV + V] = eye_v  # value: the token's identity …
    Wo1[PREV : PREV + V, PREV : PREV + V] = eye_v  # … written into the "prev" columns
    # layer 2, "induction": q_i = s · tok_i, k_j = prev_j (both in the prev columns' indices)
    Wq2, Wk2, Wv2, Wo2 = (np.zeros((D, D)) for _ in range(4))
    # key: prev − tok. At the first position the previous head can only look at itself, so prev
    # holds the token itself and the key is exactly 0 (it matches nothing) …
    Wq2[TOK : TOK + V, PREV : PREV + V] = INDUCTION_SHARPNESS * root * eye_v
    Wk2[PREV : PREV + V, PREV : PREV + V] = eye_v
    Wk2[TOK : TOK + V, PREV : PREV + V] = -eye_v
    # … and scores SINK for every query: the sink, where a query with no match puts its weight
    Wq2[ONE, ONE] = SINK * root
    Wk2[POS + 0, ONE] = 1.0
    # value: tok − prev, the token's identity (less the one before it), written into the "next"
    # columns; exactly 0 at the first position, so the sink writes nothing and the logits stay flat
    Wv2[TOK : TOK + V, NEXT : NEXT + V] = eye_v
    Wv2[PREV : PREV + V, NEXT : NEXT + V] = -eye_v
    Wo2[NEXT : NEXT + V, NEXT : NEXT + V] = eye_v
    _readonly(Wq1, Wk1, Wv1, Wo1, Wq2, Wk2, Wv2, Wo2)
    return (Layer("previous", Wq1, Wk1, Wv1, Wo1), Layer("induction", Wq2, Wk2, Wv2, Wo2))


LAYERS = _layers()
W_U = np.zeros((D_MODEL, N_VOCAB))
W_U[NEXT : NEXT + N_VOCAB] = UNEMBED * np.eye(N_VOCAB)
_readonly(W_U)


# ── Inputs ────────────────────────────────────────────────────────────────────────────────────
def repeated_sequence(n: int, seed: int = 0) -> list[str]:
    """n distinct random nonsense words, then the same n again (2n tokens).

    Distinct, so that every token's successor in the first copy is unambiguous: with a repeat inside
    a copy even a perfect copier would have to guess between two continuations."""
    n = positive_int(n, "n", maximum=MAX_REPEAT)
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, np.integer))
        or not 0 <= int(seed) < 2**32
    ):
        raise InputError(
            "decoder_seed",
            f"seed must be a whole number in 0 … {2**32 - 1}, got {seed!r}.",
            value=str(seed)[:20],
        )
    rng = np.random.default_rng(int(seed))
    first = [NONSENSE[i] for i in rng.choice(len(NONSENSE), size=n, replace=False)]
    return first + first


def token_ids(tokens: list[str]) -> np.ndarray:
    """(T,) vocabulary indices (case-insensitive); an InputError naming the words the vocabulary
    lacks."""
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise InputError(
            "decoder_tokens",
            "tokens must be a non-empty list of strings; use visattn.tokenize(text) to get one.",
        )
    if len(tokens) < 2:
        raise InputError(
            "decoder_one_token",
            f"The sequence has {len(tokens)} token(s); a decoder predicts each next token from "
            "the ones before it, so give at least 2.",
            n=len(tokens),
        )
    if len(tokens) > N_POSITIONS:
        raise InputError(
            "too_many_tokens",
            f"The text has {len(tokens)} tokens; the model has positions for {N_POSITIONS}. "
            "Shorten it.",
            n=len(tokens),
            limit=N_POSITIONS,
        )
    unknown = list(dict.fromkeys(t for t in tokens if t.lower() not in _INDEX))
    if unknown:
        shown = ", ".join(unknown[:8]) + (", …" if len(unknown) > 8 else "")
        raise InputError(
            "decoder_unknown_words",
            f"The model's vocabulary ({N_VOCAB} words) lacks {len(unknown)} of the words: "
            f"{shown}. Use words from the vocabulary list, or the nonsense words.",
            n=len(unknown),
            words=shown,
            size=N_VOCAB,
        )
    return np.array([_INDEX[t.lower()] for t in tokens])


def tokens_of(text: str, most: int = 100_000) -> list[str]:
    """The tokens of typed text (words and punctuation; a run of Chinese characters cut into the
    longest words of :data:`CHINESE`, left to right, an unknown character a token of its own); long
    text is counted before it is refused.

    “哈利·波特去商店买了牛奶。然后哈利” → 哈利 · 波特 去 商店 买了 牛奶 。 然后 哈利"""
    # the middle dot between the parts of a foreign name (哈利·波特) stands for the space of "Harry
    # Potter": read as one
    text = text.replace("·", " ") if isinstance(text, str) else text
    words: list[str] = []
    for token in tokenize(text, max_tokens=most):
        if words and _CJK.match(token) and _CJK.match(words[-1][-1]):
            words[-1] += token  # rejoin the run of characters that tokenize cut one by one
        else:
            words.append(token)
    out: list[str] = []
    for word in words:
        if not _CJK.match(word):
            out.append(word)
            continue
        start = 0
        while start < len(word):
            size = next(
                n
                for n in range(min(_ZH_LONGEST, len(word) - start), 0, -1)
                if n == 1 or word[start : start + n] in CHINESE
            )
            out.append(word[start : start + size])
            start += size
    return out


def is_chinese(tokens: Iterable[str]) -> bool:
    """Whether a token has a Chinese character (the guesses are then spelled in Chinese)."""
    return any(_CJK.search(token) for token in tokens)


def spell(ids: Iterable[int], tokens: list[str]) -> tuple[str, ...]:
    """Each id as the sequence spells it (the last spelling it used), else in the sequence's
    language: a Chinese sequence's guesses read 波特, an English one's Potter."""
    chinese = is_chinese(tokens)
    used = {_INDEX[token.lower()]: token for token in tokens}
    return tuple(
        used.get(int(i), _CHINESE_OF.get(int(i), VOCAB[i]) if chinese else VOCAB[i]) for i in ids
    )


def embed(ids: np.ndarray) -> np.ndarray:
    """(T,) ids → (T, D): one-hot token, one-hot position, the constant 1; the written columns start
    at 0."""
    T = len(ids)
    X = np.zeros((T, D_MODEL))
    X[np.arange(T), TOK + ids] = 1.0
    X[np.arange(T), POS + np.arange(T)] = 1.0
    X[:, ONE] = 1.0
    return X


# ── Running it ────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class InductionResult:
    tokens: list[str]  # (T,) as given
    ids: np.ndarray  # (T,) vocabulary indices
    head_names: tuple[tuple[str, ...], ...]  # per layer: (("previous",), ("induction",))
    ablated: tuple[str, ...]  # heads knocked out (their output set to 0)
    X: np.ndarray  # (T, D) the input
    residuals: tuple[np.ndarray, ...]  # (L,) (T, D) the stream after each layer
    weights: np.ndarray  # (L, H, T, T) with H = 1; exactly 0 on future keys
    logits: np.ndarray  # (T, V)
    probs: np.ndarray  # (T, V) softmax of the logits
    predictions: tuple[str, ...]  # (T,) the next-token guess at each position
    prediction_ids: np.ndarray  # (T,)

    @property
    def correct(self) -> np.ndarray:
        """(T − 1,) whether position i's guess is token i + 1."""
        return self.prediction_ids[:-1] == self.ids[1:]

    @property
    def loss(self) -> np.ndarray:
        """(T − 1,) −ln p(token i + 1) at position i (nats)."""
        return -np.log(self.probs[np.arange(len(self.ids) - 1), self.ids[1:]])

    @property
    def seen_before(self) -> np.ndarray:
        """(T − 1,) whether token i occurred earlier: the positions where copying can work (the
        second copy)."""
        first = {}
        for i, w in enumerate(self.ids):
            first.setdefault(int(w), i)
        return np.array([first[int(w)] < i for i, w in enumerate(self.ids[:-1])], dtype=bool)

    def head(self, name: str) -> np.ndarray:
        """(T, T) weights of the head called ``name``."""
        for layer, names in enumerate(self.head_names):
            if name in names:
                return self.weights[layer, names.index(name)]
        raise InputError(
            "induction_head",
            f"No head called {name!r}; the heads are previous, induction.",
            head=str(name)[:40],
            heads="previous, induction",
        )


def _ablate_names(ablate) -> tuple[str, ...]:
    names = (
        ()
        if ablate is None
        else (ablate,)
        if isinstance(ablate, str)
        else tuple(ablate)
        if isinstance(ablate, Iterable)
        else None
    )
    known = {n for layer in HEAD_NAMES for n in layer}
    if names is None or any(n not in known for n in names):
        raise InputError(
            "induction_head",
            f"ablate must name heads among previous, induction; got {ablate!r}.",
            head=str(ablate)[:40],
            heads="previous, induction",
        )
    return tuple(dict.fromkeys(names))


def run(tokens: list[str], ablate: str | Iterable[str] | None = None) -> InductionResult:
    """Run the circuit on ``tokens`` (words of :data:`VOCAB`, case-insensitive, 2 … 64 of them).

    ``ablate`` names heads to knock out ("previous", "induction"): their output is replaced by 0, as
    in Olsson et al.'s ablations."""
    off = _ablate_names(ablate)
    ids = token_ids(tokens)
    X = embed(ids)
    x, weights, residuals = X, [], []
    for layer in LAYERS:
        mha = multi_head_attention(x, layer.W_q, layer.W_k, layer.W_v, layer.W_o, 1, causal=True)
        x = x + (0.0 if layer.name in off else mha.output)
        weights.append(mha.weights)
        residuals.append(x)
    logits = x @ W_U  # (T, D) x (D, V) -> (T, V)
    pred = logits.argmax(axis=1)
    return InductionResult(
        tokens=list(tokens),
        ids=ids,
        head_names=HEAD_NAMES,
        ablated=off,
        X=X,
        residuals=tuple(residuals),
        weights=np.stack(weights),
        logits=logits,
        probs=softmax(logits, axis=1),
        predictions=spell(pred, list(tokens)),
        prediction_ids=pred,
    )


def run_text(text: str, ablate: str | Iterable[str] | None = None) -> InductionResult:
    """Tokenize typed text and :func:`run` it."""
    return run(tokens_of(text), ablate)


def copy_accuracy(r: InductionResult) -> tuple[float, float]:
    """(accuracy over first occurrences, accuracy over tokens seen before): for a repeated sequence,
    the first copy and the second copy. NaN where a group is empty."""
    seen, ok = r.seen_before, r.correct
    return (
        float(ok[~seen].mean()) if (~seen).any() else float("nan"),
        float(ok[seen].mean()) if seen.any() else float("nan"),
    )


def induction_targets(r: InductionResult) -> np.ndarray:
    """(T,) for each position whose token occurred before: the position after that token's latest
    earlier occurrence (where an induction head should look); −1 elsewhere."""
    last: dict[int, int] = {}
    out = np.full(len(r.ids), -1)
    for i, w in enumerate(r.ids):
        if int(w) in last:
            out[i] = last[int(w)] + 1
        last[int(w)] = i
    return out
