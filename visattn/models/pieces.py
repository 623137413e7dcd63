"""Tokens as a reader sees them: byte-level BPE pieces decoded, CJK characters split over several
pieces put back together.

GPT-2's tokenizer (and LLaMA 3's, Qwen2's) works on UTF-8 bytes, each byte written as one printable
character ("Ġ" is the byte of a space); 中 is three bytes, which BPE may cut into two pieces, each
showing as "�" when decoded alone. SentencePiece tokenizers with byte fallback (LLaMA 2, Mistral)
write such bytes as "<0xE4>" and a space as "▁". Here a piece becomes its bytes, consecutive pieces
are grouped until their bytes end on a whole character, and each group is shown as its text: a
group of one piece is that piece's text; a piece of a longer group shows the group's text with its
place in it ("中 1/2"), so repeated labels stay distinct and no "�" appears.
:func:`merge_groups` then merges a group's rows and columns like word pieces (sum of the keys, mean
of the queries)."""

from __future__ import annotations

import codecs
import re
from collections.abc import Collection, Sequence
from functools import cache

import numpy as np

from ..shown_tokens import ShownTokens, _check

BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
SPACE_MARK = "▁"  # SentencePiece's space


@cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's printable character of each byte, inverted: character → byte (256 entries)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def piece_bytes(piece: str, byte_level: bool) -> bytes:
    """The UTF-8 bytes a piece stands for."""
    if byte_level:
        table = byte_decoder()
        if all(ch in table for ch in piece):
            return bytes(table[ch] for ch in piece)
        return piece.encode("utf-8")
    found = BYTE_PIECE.fullmatch(piece)
    if found:
        return bytes([int(found.group(1), 16)])
    return piece.replace(SPACE_MARK, " ").removeprefix("##").encode("utf-8")


def groups(
    tokens: Sequence[str], byte_level: bool, special: Collection[str] = ()
) -> list[tuple[int, ...]]:
    """Positions of the tokens, grouped so that each group's bytes end on a whole character."""
    found: list[tuple[int, ...]] = []
    current: list[int] = []
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for i, token in enumerate(tokens):
        if token in special:
            if current:
                found.append(tuple(current))
                current, decoder = [], codecs.getincrementaldecoder("utf-8")(errors="replace")
            found.append((i,))
            continue
        current.append(i)
        decoder.decode(piece_bytes(token, byte_level))
        if not decoder.getstate()[0]:  # no bytes of an unfinished character pending
            found.append(tuple(current))
            current = []
    if current:
        found.append(tuple(current))
    return found


def split_characters(
    tokens: Sequence[str], byte_level: bool, special: Collection[str] = ()
) -> bool:
    """Whether some character was cut into several pieces (GPT-2's 中: three bytes, "中 1/3" …)."""
    return any(len(group) > 1 for group in groups(tokens, byte_level, special))


def _bytes_shown(error: UnicodeDecodeError) -> tuple[str, int]:
    """The decoding error handler of :func:`readable`: each stray byte as ‹e4›."""
    stray = error.object[error.start : error.end]
    return "".join(f"‹{b:02x}›" for b in stray), error.end


codecs.register_error("visattn_bytes", _bytes_shown)


def readable(raw: bytes) -> str:
    """UTF-8 bytes as text, a byte that belongs to no whole character written ‹e4› (not "�")."""
    return raw.decode("utf-8", errors="visattn_bytes")


def text_of(tokens: Sequence[str], byte_level: bool, special: Collection[str] = ()) -> str:
    """The text a run of pieces stands for (special tokens left out)."""
    return readable(b"".join(piece_bytes(t, byte_level) for t in tokens if t not in special))


def _text(tokens: Sequence[str], group: tuple[int, ...], byte_level: bool) -> str:
    raw = b"".join(piece_bytes(tokens[i], byte_level) for i in group)
    text = readable(raw)
    return text.strip() or text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥")


def display(tokens: Sequence[str], byte_level: bool, special: Collection[str] = ()) -> list[str]:
    """One readable label per token (see the module's docstring)."""
    labels = list(tokens)
    for group in groups(tokens, byte_level, special):
        if len(group) == 1 and tokens[group[0]] in special:
            continue
        text = _text(tokens, group, byte_level)
        for place, i in enumerate(group, start=1):
            labels[i] = text if len(group) == 1 else f"{text} {place}/{len(group)}"
    return labels


def merge_groups(
    tokens: Sequence[str], attn: np.ndarray, byte_level: bool, special: Collection[str] = ()
) -> ShownTokens:
    """Pieces of one character (or word piece run) merged: a group receives the sum of the weights
    on its pieces and sends the mean of its pieces' rows. Rows that summed to 1 still do."""
    tokens, attn = _check(tokens, attn)
    found = groups(tokens, byte_level, special)
    labels = [
        tokens[g[0]] if tokens[g[0]] in special else _text(tokens, g, byte_level) for g in found
    ]
    starts = np.asarray([g[0] for g in found])
    counts = np.asarray([len(g) for g in found], dtype=attn.dtype)
    keys = np.add.reduceat(attn, starts, axis=-1)  # (…, T, T) -> (…, T, G)
    merged = np.add.reduceat(keys, starts, axis=-2)  # (…, T, G) -> (…, G, G)
    merged /= counts[:, None]
    return ShownTokens(tokens=labels, attn=merged, groups=found)
