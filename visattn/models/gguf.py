"""Reading a GGUF file (llama.cpp, Ollama, LM Studio) without torch or the ``gguf`` package.

A GGUF file (versions 2 and 3) is: the magic ``GGUF``, a uint32 version, uint64 counts of tensors
and of metadata entries; the metadata as (key, typed value) pairs; per tensor its name, its
dimensions (innermost first: ``ne[0]`` is the length of a row), its ggml type and the offset of its
data; padding to ``general.alignment`` (32 by default); then the tensor data, each tensor starting
at a multiple of the alignment. Every integer is little-endian; a string is a uint64 length and
UTF-8 bytes.

The tensors are read by memory map and dequantized when the model asks for one, row block by row
block: a quantized row is a run of blocks of 32 (Q4_0, Q4_1, Q8_0) or 256 (the K-quants) values,
each block holding its own scale (and minimum) as float16 and the values as 4, 5, 6 or 8 bit
integers. The formulas below are ggml's ``dequantize_row_*`` (ggml-quants.c).

:func:`load_gguf` maps the metadata to the ``config.json`` a family module takes, the tensor
names to the Hugging Face names it reads (undoing the conversion's permutation of LLaMA's query
and key rows and its transposition of GPT-2's Conv1D weights), and ``tokenizer.ggml.*`` (the
vocabulary, merges and special tokens the file carries) to a ``tokenizers.Tokenizer``."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from . import loading

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from .causal import Decoder

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_COUNT = 1 << 32  # more tensors, metadata entries or array items than this: not a GGUF file
QK = 32  # values per block of Q4_0, Q4_1, Q8_0
QK_K = 256  # values per block of the K-quants

# metadata value type id → struct format of a scalar (8: string, 9: array are read apart)
SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
STRING, ARRAY = 8, 9


def _f16(raw: np.ndarray) -> np.ndarray:
    """(N, 2) uint8 → (N, 1) float32: a float16 per block."""
    return raw.copy().view("<f2").astype(np.float32)


def _q4_0(b: np.ndarray) -> np.ndarray:
    """(N, 18) blocks → (N, 32): d · (nibble − 8), low nibbles first."""
    d = _f16(b[:, :2])
    qs = b[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8  # (N, 32)
    return d * q


def _q4_1(b: np.ndarray) -> np.ndarray:
    """(N, 20) blocks → (N, 32): d · nibble + m."""
    d, m = _f16(b[:, :2]), _f16(b[:, 2:4])
    qs = b[:, 4:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1)  # (N, 32)
    return d * q + m


def _q8_0(b: np.ndarray) -> np.ndarray:
    """(N, 34) blocks → (N, 32): d · int8."""
    return _f16(b[:, :2]) * b[:, 2:].copy().view(np.int8)


def _scales_mins(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 12 bytes of a Q4_K / Q5_K block → (N, 8) 6-bit scales and (N, 8) 6-bit minimums (ggml's
    get_scale_min_k4)."""
    lo = s[:, 0:4]
    mid = s[:, 4:8]
    hi = s[:, 8:12]
    scales = np.concatenate([lo & 63, (hi & 0x0F) | ((lo >> 6) << 4)], axis=1)
    mins = np.concatenate([mid & 63, (hi >> 4) | ((mid >> 6) << 4)], axis=1)
    return scales.astype(np.float32), mins.astype(np.float32)


def _q4_k(b: np.ndarray) -> np.ndarray:
    """(N, 144) blocks → (N, 256): eight sub-blocks of 32, each d·scale·nibble − dmin·min."""
    N = b.shape[0]
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    scales, mins = _scales_mins(b[:, 4:16])
    qs = b[:, 16:].reshape(N, 4, 32)  # (N, 4, 32): 64 values per group of 32 bytes
    q = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(N, 8, 32)  # (N, 8 sub-blocks, 32)
    y = (d * scales)[:, :, None] * q - (dmin * mins)[:, :, None]
    return y.reshape(N, QK_K)  # (N, 8, 32) -> (N, 256)


def _q5_k(b: np.ndarray) -> np.ndarray:
    """(N, 176) blocks → (N, 256): as Q4_K with a fifth bit per value from qh."""
    N = b.shape[0]
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    scales, mins = _scales_mins(b[:, 4:16])
    qh = b[:, 16:48]  # (N, 32): bit j of byte l is the high bit of value l of sub-block j
    qs = b[:, 48:].reshape(N, 4, 32)  # (N, 4, 32)
    low = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(N, 8, 32)  # (N, 8, 32)
    bits = (qh[:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]) & 1  # (N, 8, 32)
    q = low + (bits << 4)
    y = (d * scales)[:, :, None] * q - (dmin * mins)[:, :, None]
    return y.reshape(N, QK_K)  # (N, 8, 32) -> (N, 256)


def _q6_k(b: np.ndarray) -> np.ndarray:
    """(N, 210) blocks → (N, 256): 16 sub-blocks of 16, each d·int8 scale·(6-bit value − 32)."""
    N = b.shape[0]
    ql = b[:, 0:128].reshape(N, 2, 2, 32)  # (N, half, which 32 bytes, 32)
    qh = b[:, 128:192].reshape(N, 2, 1, 32)  # (N, half, 1, 32)
    sc = b[:, 192:208].copy().view(np.int8).astype(np.float32)  # (N, 16)
    d = _f16(b[:, 208:210])
    low = np.stack([ql[:, :, 0] & 0x0F, ql[:, :, 1] & 0x0F, ql[:, :, 0] >> 4, ql[:, :, 1] >> 4], 2)
    shifts = np.array([0, 2, 4, 6], dtype=np.uint8)[None, None, :, None]
    high = (qh >> shifts) & 3  # (N, 2, 4, 32)
    q = (low | (high << 4)).astype(np.int8) - 32  # (N, 2 halves, 4 groups, 32)
    q = q.reshape(N, 16, 16)  # (N, 2, 4, 32) -> (N, 16 sub-blocks of 16 values)
    y = (d * sc)[:, :, None] * q
    return y.reshape(N, QK_K)  # (N, 16, 16) -> (N, 256)


@dataclass(frozen=True)
class GGMLType:
    name: str
    block: int  # values per block
    nbytes: int  # bytes per block
    dequantize: Callable[[np.ndarray], np.ndarray] | None  # (N, nbytes) uint8 → (N, block)


# ggml type id → how it is stored; F32, F16 and BF16 are read without blocks
TYPES = {
    0: GGMLType("F32", 1, 4, None),
    1: GGMLType("F16", 1, 2, None),
    2: GGMLType("Q4_0", QK, 18, _q4_0),
    3: GGMLType("Q4_1", QK, 20, _q4_1),
    8: GGMLType("Q8_0", QK, 34, _q8_0),
    12: GGMLType("Q4_K", QK_K, 144, _q4_k),
    13: GGMLType("Q5_K", QK_K, 176, _q5_k),
    14: GGMLType("Q6_K", QK_K, 210, _q6_k),
    30: GGMLType("BF16", 1, 2, None),
}
# type ids llama.cpp writes that this module does not read (for the message)
OTHER_TYPES = {
    6: "Q5_0",
    7: "Q5_1",
    9: "Q8_1",
    10: "Q2_K",
    11: "Q3_K",
    15: "Q8_K",
    16: "IQ2_XXS",
    17: "IQ2_XS",
    18: "IQ3_XXS",
    19: "IQ1_S",
    20: "IQ4_NL",
    21: "IQ3_S",
    22: "IQ2_S",
    23: "IQ4_XS",
    29: "IQ1_M",
    34: "TQ1_0",
    35: "TQ2_0",
    39: "MXFP4",
}
ROWS_PER_STEP = 4096  # rows dequantized at once: bounds the temporary integer arrays


def dequantize(raw: np.ndarray, type_id: int, shape: tuple[int, ...]) -> np.ndarray:
    """The float32 array of ``shape`` (NumPy order, the row last) stored as ``raw`` uint8 bytes of
    ggml type ``type_id``."""
    t = TYPES[type_id]
    if t.name == "F32":
        return raw.view("<f4").reshape(shape)
    if t.name == "F16":
        return raw.view("<f2").reshape(shape).astype(np.float32)
    if t.name == "BF16":
        return loading.bf16_to_float32(raw.view("<u2")).reshape(shape)
    row = shape[-1]
    n_rows = int(np.prod(shape[:-1], dtype=np.int64))
    blocks = raw.reshape(n_rows, row // t.block, t.nbytes)  # (rows, blocks per row, bytes)
    out = np.empty((n_rows, row), dtype=np.float32)
    for start in range(0, n_rows, ROWS_PER_STEP):
        part = blocks[start : start + ROWS_PER_STEP]
        n = part.shape[0]
        values = t.dequantize(part.reshape(-1, t.nbytes))  # (n · blocks, block)
        out[start : start + n] = values.reshape(n, row)  # (n · blocks, block) -> (n, row)
    return out.reshape(shape)


def _bad(path: Path, why: str) -> InputError:
    return InputError(
        "model_gguf",
        f"{path} is truncated or not a GGUF file ({why}); download it again.",
        file=str(path),
    )


class _Reader:
    """Sequential little-endian reads from the mapped file, raising model_gguf past its end."""

    def __init__(self, path: Path, data: np.memmap):
        # a memoryview of the map: slicing it is cheap, which matters for 150 000-token vocabularies
        self.path, self.data, self.pos = path, memoryview(data), 0
        self.size = len(self.data)

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > self.size:
            raise _bad(self.path, f"{n} bytes wanted at byte {self.pos} of {self.size}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        n = struct.calcsize(fmt)
        if self.pos + n > self.size:
            raise _bad(self.path, f"{n} bytes wanted at byte {self.pos} of {self.size}")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += n
        return value

    def count(self) -> int:
        n = self.unpack("<Q")
        if n > MAX_COUNT:
            raise _bad(self.path, f"a count of {n}")
        return n

    def string(self) -> str:
        return str(self.take(self.count()), "utf-8", errors="replace")

    def value(self, kind: int):
        if kind in SCALARS:
            return self.unpack(SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item = self.unpack("<I")
            n = self.count()
            if item in SCALARS:  # a vocabulary's scores or token types: one read
                dtype = np.dtype(SCALARS[item].replace("?", "b"))
                return np.frombuffer(self.take(n * dtype.itemsize), dtype=dtype).tolist()
            return [self.value(item) for _ in range(n)]
        raise _bad(self.path, f"metadata value type {kind}")


@dataclass(frozen=True)
class GGUFTensor:
    """One tensor of the file: its bytes and how to make the Hugging Face tensor of them."""

    file: Path
    dtype: str  # the ggml type's name: "F16", "Q4_K" …
    shape: tuple[int, ...]  # the Hugging Face shape, after ``transform``
    start: int  # byte offset in the file
    end: int
    type_id: int = 0
    stored: tuple[int, ...] = ()  # NumPy shape as stored (row last)
    # "", "T" (transpose), "unpermute:<heads>" (LLaMA's q and k rows) or "minus1" (Gemma's norms)
    transform: str = ""


@dataclass(frozen=True)
class GGUFFile:
    path: Path
    version: int
    metadata: dict
    tensors: dict[str, GGUFTensor]  # by GGUF name, shape as stored


def read_gguf(path: str | Path) -> GGUFFile:
    """Metadata and tensor table of a GGUF file (reads only its head; the data stays mapped)."""
    path = Path(path)
    try:
        data = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as exc:
        raise InputError(
            "model_unreadable", f"{path} cannot be read ({exc}).", file=str(path)
        ) from None
    r = _Reader(path, data)
    if bytes(r.take(4)) != MAGIC:
        raise _bad(path, "no GGUF magic")
    version = r.unpack("<I")
    if version not in VERSIONS:
        raise InputError(
            "model_unsupported",
            f"{path}: GGUF version {version}; this app reads versions 2 and 3.",
            file=str(path),
            what=f"GGUF version {version}",
        )
    n_tensors, n_kv = r.count(), r.count()
    metadata = {}
    for _ in range(n_kv):
        key = r.string()
        metadata[key] = r.value(r.unpack("<I"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.unpack("<I")
        if n_dims > 8:
            raise _bad(path, f"tensor {name!r} has {n_dims} dimensions")
        dims = tuple(r.unpack("<Q") for _ in range(n_dims))
        infos.append((name, dims, r.unpack("<I"), r.unpack("<Q")))
    alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
    base = -(-r.pos // alignment) * alignment
    tensors = {}
    for name, dims, type_id, offset in infos:
        if type_id not in TYPES:
            kind = OTHER_TYPES.get(type_id, f"type {type_id}")
            raise InputError(
                "model_unsupported",
                f"{path}: tensor {name!r} is quantized as {kind}; this app reads "
                f"{', '.join(t.name for t in TYPES.values())}.",
                file=str(path),
                what=f"GGUF {kind}",
            )
        t = TYPES[type_id]
        shape = tuple(reversed(dims))  # NumPy order: ne[0], the row, last
        n = int(np.prod(dims, dtype=np.int64))
        if dims and dims[0] % t.block:
            raise _bad(path, f"tensor {name!r} has rows of {dims[0]} for blocks of {t.block}")
        start = base + offset
        end = start + n // t.block * t.nbytes
        if end > data.size:
            raise _bad(path, f"tensor {name!r} ends at byte {end} of {data.size}")
        tensors[name] = GGUFTensor(path, t.name, shape, start, end, type_id, shape)
    return GGUFFile(path, version, metadata, tensors)


class GGUFWeights(loading.Weights):
    """The tensors of a GGUF file under Hugging Face names, dequantized to float32 on access."""

    def with_prefix(self, prefix: str) -> GGUFWeights:
        return GGUFWeights(self.tensors, self.source, prefix)

    def __getitem__(self, name: str) -> np.ndarray:
        info = self.tensors[self.prefix + name]
        if info.file not in self._maps:
            self._maps[info.file] = np.memmap(info.file, dtype=np.uint8, mode="r")
        raw = self._maps[info.file][info.start : info.end]
        x = dequantize(raw, info.type_id, info.stored)
        if info.transform == "T":
            return x.T
        if info.transform.startswith("unpermute:"):
            return unpermute(x, int(info.transform.split(":")[1]))
        if info.transform == "minus1":
            return x - np.float32(1.0)
        return x

    def stored(self, name: str) -> np.ndarray | loading.Stored:
        """The tensor as the file stores it (see :meth:`loading.Weights.stored`): a float32 one
        as :meth:`__getitem__` gives it, a vector widened now, any other a
        :class:`~visattn.models.loading.Stored` view of its bytes, dequantized when used."""
        info = self.tensors[self.prefix + name]
        if info.dtype == "F32" or len(info.shape) < 2:
            return self[name]
        raw = self._raw(info)
        if info.dtype in ("F16", "BF16"):
            bits = info.dtype == "BF16"
            values = raw.view("<u2" if bits else "<f2").reshape(info.stored)
            widen = loading.bf16_to_float32 if bits else loading.float16_to_float32
            x = loading.Stored(values, widen, elementwise=True)
        else:
            n_rows = int(np.prod(info.stored[:-1], dtype=np.int64))
            row = info.stored[-1]
            blocks = raw.reshape(n_rows, -1)  # (rows, bytes per row)
            rows = partial(_dequantize_rows, type_id=info.type_id, row=row)
            x = loading.Stored(blocks, rows, rows_shape=(n_rows, row))
            if len(info.stored) > 2:
                x = x.then(partial(np.reshape, shape=info.stored))
        if info.transform == "T":
            return x.T
        if info.transform.startswith("unpermute:"):
            return x.then(partial(unpermute, heads=int(info.transform.split(":")[1])))
        return x


def _dequantize_rows(blocks: np.ndarray, type_id: int, row: int) -> np.ndarray:
    """(n, bytes per row) quantized rows → (n, row) float32."""
    return dequantize(np.ascontiguousarray(blocks), type_id, (blocks.shape[0], row))


def permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's conversion of LLaMA's q_proj / k_proj rows: each head's rows from Hugging Face's
    halves (rotate_half) to interleaved pairs (GPT-J style)."""
    rest = w.shape[1:]
    split = w.reshape(heads, 2, w.shape[0] // heads // 2, *rest)  # (H, 2, Dh / 2, …)
    return split.swapaxes(1, 2).reshape(w.shape)


def unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """The inverse of :func:`permute`."""
    rest = w.shape[1:]
    split = w.reshape(heads, w.shape[0] // heads // 2, 2, *rest)  # (H, Dh / 2, 2, …)
    return split.swapaxes(1, 2).reshape(w.shape)


# GGUF tensor names (after "blk.N.") → Hugging Face names (after "model.layers.N." / "h.N.")
LLAMA_LAYER = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_output.bias": "self_attn.o_proj.bias",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
LLAMA_TOP = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}
GPT2_LAYER = {
    "attn_norm.weight": "ln_1.weight",
    "attn_norm.bias": "ln_1.bias",
    "attn_qkv.weight": "attn.c_attn.weight",
    "attn_qkv.bias": "attn.c_attn.bias",
    "attn_output.weight": "attn.c_proj.weight",
    "attn_output.bias": "attn.c_proj.bias",
    "ffn_norm.weight": "ln_2.weight",
    "ffn_norm.bias": "ln_2.bias",
    "ffn_up.weight": "mlp.c_fc.weight",
    "ffn_up.bias": "mlp.c_fc.bias",
    "ffn_down.weight": "mlp.c_proj.weight",
    "ffn_down.bias": "mlp.c_proj.bias",
}
GPT2_TOP = {
    "token_embd.weight": "wte.weight",
    "position_embd.weight": "wpe.weight",
    "output_norm.weight": "ln_f.weight",
    "output_norm.bias": "ln_f.bias",
}
QK_NORM = {
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
}
GEMMA_LAYER = LLAMA_LAYER | {
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
}
PHI3_LAYER = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_qkv.weight": "self_attn.qkv_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_up.weight": "mlp.gate_up_proj.weight",  # gate and up stacked, as Phi-3 stores them
    "ffn_down.weight": "mlp.down_proj.weight",
}
# general.architecture → (model_type, per-layer names, top-level names, layer prefix)
ARCHITECTURES = {
    "llama": ("llama", LLAMA_LAYER, LLAMA_TOP, "model.layers."),
    "qwen2": ("qwen2", LLAMA_LAYER, LLAMA_TOP, "model.layers."),
    "qwen3": ("qwen3", LLAMA_LAYER | QK_NORM, LLAMA_TOP, "model.layers."),
    "gemma2": ("gemma2", GEMMA_LAYER, LLAMA_TOP, "model.layers."),
    "gemma3": ("gemma3_text", GEMMA_LAYER | QK_NORM, LLAMA_TOP, "model.layers."),
    "phi3": ("phi3", PHI3_LAYER, LLAMA_TOP, "model.layers."),
    "gpt2": ("gpt2", GPT2_LAYER, GPT2_TOP, "h."),
}
# Gemma's RMSNorm scales by (1 + w); llama.cpp's conversion stores 1 + w, read back as w
NORM_SHIFTED = ("gemma2", "gemma3")
# the layer count of Gemma 2 and 3 27B, whose queries are scaled by 1/√(D/H), not 1/√Dh (llama.cpp
# tells them apart by size too: the GGUF does not store query_pre_attn_scalar)
GEMMA_27B_LAYERS = {"gemma2": 46, "gemma3": 62}
GEMMA3_PATTERN = 6  # every sixth Gemma 3 layer attends globally, the others in a sliding window


def _meta(g: GGUFFile, key: str, default=None):
    """Metadata ``<architecture>.<key>``; model_config_field when it is missing without a
    default."""
    arch = g.metadata["general.architecture"]
    value = g.metadata.get(f"{arch}.{key}", default)
    if value is None:
        raise InputError(
            "model_config_field",
            f"{g.path} has no whole number {arch}.{key!r}.",
            file=str(g.path),
            name=f"{arch}.{key}",
        )
    return value


def config_of(g: GGUFFile) -> dict:
    """The config.json a family module reads, from the GGUF's metadata."""
    arch = g.metadata.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise InputError(
            "model_unsupported",
            f"{g.path}: general.architecture={arch!r}; this app reads GGUF files of "
            f"{sorted(ARCHITECTURES)}.",
            file=str(g.path),
            what=f"general.architecture={arch}",
        )
    model_type = ARCHITECTURES[arch][0]
    vocab = len(g.metadata.get("tokenizer.ggml.tokens", []))
    embed = g.tensors.get("token_embd.weight")
    n_vocab = embed.shape[0] if embed is not None else vocab
    D = int(_meta(g, "embedding_length"))
    H = int(_meta(g, "attention.head_count"))
    config = {
        "model_type": model_type,
        "vocab_size": int(_meta(g, "vocab_size", n_vocab)),
        "max_position_embeddings": int(_meta(g, "context_length")),
        "hidden_size": D,
        "num_hidden_layers": int(_meta(g, "block_count")),
        "num_attention_heads": H,
        "intermediate_size": int(_meta(g, "feed_forward_length")),
        "tie_word_embeddings": "output.weight" not in g.tensors,
    }
    if model_type == "gpt2":
        config |= {
            "n_embd": D,
            "n_head": H,
            "n_layer": config["num_hidden_layers"],
            "n_inner": config["intermediate_size"],
            "n_positions": config["max_position_embeddings"],
            "layer_norm_epsilon": float(_meta(g, "attention.layer_norm_epsilon", 1e-5)),
        }
        return config
    config |= {
        "num_key_value_heads": int(_meta(g, "attention.head_count_kv", H)),
        "head_dim": int(_meta(g, "attention.key_length", D // H)),
        "rms_norm_eps": float(_meta(g, "attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": float(_meta(g, "rope.freq_base", 10000.0)),
        },
        "attention_bias": arch in ("llama",) and "blk.0.attn_q.bias" in g.tensors,
        "hidden_act": "silu",
    }
    rope = config["rope_parameters"]
    scaling = _meta(g, "rope.scaling.type", "none")
    if scaling == "linear":
        rope |= {"rope_type": "linear", "factor": float(_meta(g, "rope.scaling.factor"))}
    elif scaling == "yarn":
        rope |= {
            "rope_type": "yarn",
            "factor": float(_meta(g, "rope.scaling.factor")),
            "original_max_position_embeddings": int(
                _meta(g, "rope.scaling.original_context_length")
            ),
        }
    elif scaling != "none":
        raise InputError(
            "model_unsupported",
            f"{g.path}: {arch}.rope.scaling.type={scaling!r}; this app reads plain RoPE, "
            "linear and YaRN scaling, and llama3's (a rope_freqs tensor).",
            file=str(g.path),
            what=f"rope.scaling.type={scaling}",
        )
    window = _meta(g, "attention.sliding_window", 0)
    L, Dh = config["num_hidden_layers"], config["head_dim"]
    if arch == "qwen3":
        config["layer_types"] = ["full_attention"] * L
    if arch in ("gemma2", "gemma3"):
        config |= {
            "hidden_activation": "gelu_pytorch_tanh",
            "sliding_window": int(window) or None,
            "query_pre_attn_scalar": D // H if L == GEMMA_27B_LAYERS[arch] else Dh,
            "attn_logit_softcapping": _meta(g, "attn_logit_softcapping", 0.0) or None,
            "final_logit_softcapping": _meta(g, "final_logit_softcapping", 0.0) or None,
            "tie_word_embeddings": True,
        }
        del config["hidden_act"]
    if arch == "gemma2":
        config["layer_types"] = ["sliding_attention", "full_attention"] * (L // 2) + (
            ["sliding_attention"] if L % 2 else []
        )
    if arch == "gemma3":
        config["layer_types"] = [
            "full_attention" if (i + 1) % GEMMA3_PATTERN == 0 else "sliding_attention"
            for i in range(L)
        ]
        local = {"rope_type": "default", "rope_theta": float(_meta(g, "rope.freq_base_swa", 1e4))}
        config["rope_parameters"] = {"full_attention": rope, "sliding_attention": local}
    if arch == "phi3":
        rotary = int(_meta(g, "rope.dimension_count", Dh))
        rope["partial_rotary_factor"] = rotary / Dh
        config["sliding_window"] = int(window) or None
        if "rope_factors_long.weight" in g.tensors:  # LongRoPE (Phi-3 128k, Phi-4-mini)
            rope |= {
                "rope_type": "longrope",
                "long_factor": _vector(g, "rope_factors_long.weight").tolist(),
                "short_factor": _vector(g, "rope_factors_short.weight").tolist(),
                "original_max_position_embeddings": int(
                    _meta(g, "rope.scaling.original_context_length")
                ),
            }
    return config


def _vector(g: GGUFFile, name: str) -> np.ndarray:
    """A small tensor of the file (RoPE factors), dequantized."""
    t = g.tensors[name]
    raw = np.memmap(g.path, dtype=np.uint8, mode="r")[t.start : t.end]
    return dequantize(raw, t.type_id, t.stored)


def hf_tensors(g: GGUFFile, config: dict) -> dict[str, GGUFTensor]:
    """The GGUF's tensors under the Hugging Face names, with the transform each needs."""
    arch = g.metadata["general.architecture"]
    _, layer_names, top_names, layer_prefix = ARCHITECTURES[arch]
    out = {}
    for name, t in g.tensors.items():
        transform = ""
        if name.startswith("blk."):
            _, index, rest = name.split(".", 2)
            if rest not in layer_names:
                continue
            hf = f"{layer_prefix}{index}.{layer_names[rest]}"
            if arch == "llama" and rest == "attn_q.weight":
                transform = f"unpermute:{config['num_attention_heads']}"
            elif arch == "llama" and rest == "attn_k.weight":
                transform = f"unpermute:{config['num_key_value_heads']}"
            elif arch == "gpt2" and rest.endswith(".weight") and len(t.shape) == 2:
                transform = "T"  # GPT-2's Conv1D stores (in, out); llama.cpp stores (out, in)
            elif arch in NORM_SHIFTED and rest.endswith("norm.weight"):
                transform = "minus1"
        elif name in top_names:
            hf = top_names[name]
            if arch in NORM_SHIFTED and name == "output_norm.weight":
                transform = "minus1"
        else:
            continue
        shape = tuple(reversed(t.shape)) if transform == "T" else t.shape
        out[hf] = GGUFTensor(t.file, t.dtype, shape, t.start, t.end, t.type_id, t.shape, transform)
    return out


# tokenizer.ggml.pre → the pre-tokenizer's split pattern (llama.cpp's llama-vocab.cpp; None:
# GPT-2's, which ByteLevel applies; "digits": each digit alone, then GPT-2's)
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
PRE_PATTERNS = {
    "default": None,
    "gpt-2": None,
    "llama-bpe": LLAMA3_PATTERN,
    "llama3": LLAMA3_PATTERN,
    "llama-v3": LLAMA3_PATTERN,
    "falcon3": LLAMA3_PATTERN,
    "dbrx": LLAMA3_PATTERN,
    "smaug-bpe": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
    "deepseek-r1-qwen": QWEN2_PATTERN,
    "smollm": "digits",
}
UNKNOWN_TYPE, CONTROL, USER_DEFINED = 2, 3, 4  # tokenizer.ggml.token_type
SPACE = "\u2581"  # SentencePiece's "▁", a space


def _special_tokens(tokens: list[str], types: list[int]) -> list[dict]:
    """Control tokens (<s>, <|endoftext|>) as special added tokens, user-defined ones (<think>) as
    plain added tokens: matched whole, never cut into pieces."""
    added = []
    for i, (token, kind) in enumerate(zip(tokens, types, strict=False)):
        if kind in (CONTROL, USER_DEFINED):
            added.append(
                {"id": i, "content": token, "single_word": False, "lstrip": False}
                | {"rstrip": False, "normalized": False, "special": kind == CONTROL}
            )
    return added


def _bos_template(m: dict, tokens: list[str], default: bool) -> dict | None:
    """The post-processor that puts BOS first when ``tokenizer.ggml.add_bos_token`` says so."""
    bos = m.get("tokenizer.ggml.bos_token_id")
    if not m.get("tokenizer.ggml.add_bos_token", default) or bos is None or bos >= len(tokens):
        return None
    piece = tokens[bos]
    return {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": piece, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [
            {"Sequence": {"id": "A", "type_id": 0}},
            {"Sequence": {"id": "B", "type_id": 1}},
        ],
        "special_tokens": {piece: {"id": piece, "ids": [bos], "tokens": [piece]}},
    }


def _bpe(vocab: dict[str, int], merges: list, **options) -> dict:
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": False,
        "vocab": vocab,
        "merges": merges,
    } | options


def merges_from_scores(tokens: list[str], scores: dict[str, float]) -> list[list[str]]:
    """A SentencePiece vocabulary's BPE merges (it stores none): every split of a token into two
    tokens of the vocabulary, the merge of the best-scored token first (transformers'
    generate_merges, which its GGUF loading uses)."""
    vocab = {token: i for i, token in enumerate(tokens)}
    found = []
    for token, score in scores.items():
        local = []
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        found += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [[left, right] for left, right, _ in found]


def _byte_level_spec(g: GGUFFile, tokens: list[str], types: list[int]) -> dict:
    """tokenizer.json of a byte-level BPE vocabulary (GPT-2, LLaMA 3, Qwen, SmolLM …). A ``pre``
    this module does not know splits as GPT-2's does (as transformers' GGUF loading does too)."""
    m = g.metadata
    pattern = PRE_PATTERNS.get(m.get("tokenizer.ggml.pre", "default"))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    if pattern is None:
        pre_tokenizer = byte_level | {"use_regex": True}
    elif pattern == "digits":
        digits = {"type": "Digits", "individual_digits": True}
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [digits, byte_level | {"use_regex": True}],
        }
    else:
        split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated"}
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [split | {"invert": False}, byte_level | {"use_regex": False}],
        }
    merges = [merge.split(" ", 1) for merge in m.get("tokenizer.ggml.merges", [])]
    return {
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": _bos_template(m, tokens, False),
        "decoder": byte_level | {"use_regex": True},
        "model": _bpe({t: i for i, t in enumerate(tokens)}, merges),
    }


def _sentencepiece_spec(g: GGUFFile, tokens: list[str], types: list[int]) -> dict:
    """tokenizer.json of a SentencePiece vocabulary (LLaMA 2, Mistral, Gemma, Phi-3): BPE over
    characters with "▁" for spaces, merges from the file or from the scores, bytes <0xNN> for
    characters outside the vocabulary."""
    m = g.metadata
    arch = m.get("general.architecture", "")
    if arch.startswith("gemma"):  # spaces stored as spaces; the file's order is the merge order
        tokens = [SPACE * len(t) if " " in t and not t.strip() else t for t in tokens]
        scores = {t: -i for i, t in enumerate(tokens)}
    else:
        scores = dict(
            zip(tokens, m.get("tokenizer.ggml.scores", [0.0] * len(tokens)), strict=False)
        )
    if "tokenizer.ggml.merges" in m:
        merges = [merge.split(" ", 1) for merge in m["tokenizer.ggml.merges"]]
    else:
        merges = merges_from_scores(tokens, scores)
    unknown = m.get("tokenizer.ggml.unknown_token_id")
    if unknown is None:
        unknown = next((i for i, kind in enumerate(types) if kind == UNKNOWN_TYPE), None)
    prefix = bool(m.get("tokenizer.ggml.add_space_prefix", True))
    space_first = {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}
    decoders = [space_first, {"type": "ByteFallback"}, {"type": "Fuse"}]
    if prefix:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    normalizer, pre_tokenizer = (
        None,
        {
            "type": "Metaspace",
            "replacement": SPACE,
            "prepend_scheme": "first" if prefix else "never",
            "split": False,
        },
    )
    if arch == "phi3":  # the prefix space from a normalizer (Phi-3's own tokenizer.json)
        normalizer = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        }
        pre_tokenizer = None
    return {
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": _bos_template(m, tokens, True),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": _bpe(
            {t: i for i, t in enumerate(tokens)},
            merges,
            unk_token=tokens[unknown] if unknown is not None else None,
            fuse_unk=True,
            byte_fallback=True,
        ),
    }


TOKENIZER_MODELS = {"gpt2": _byte_level_spec, "llama": _sentencepiece_spec}


def check_tokenizer(g: GGUFFile) -> None:
    """InputError unless ``tokenizer.ggml.*`` is a vocabulary :func:`tokenizer_of` builds."""
    kind = g.metadata.get("tokenizer.ggml.model")
    if kind not in TOKENIZER_MODELS or not g.metadata.get("tokenizer.ggml.tokens"):
        raise InputError(
            "model_unsupported",
            f"{g.path}: tokenizer.ggml.model={kind!r}; this app reads the tokenizer models "
            f"{sorted(TOKENIZER_MODELS)}.",
            file=str(g.path),
            what=f"tokenizer.ggml.model={kind}",
        )


def tokenizer_of(g: GGUFFile) -> Tokenizer:
    """The tokenizer ``tokenizer.ggml.*`` describes as a ``tokenizers.Tokenizer``: byte-level BPE
    (model "gpt2") or SentencePiece BPE (model "llama"), adding BOS when the file says to."""
    from tokenizers import Tokenizer

    check_tokenizer(g)
    m = g.metadata
    kind = m["tokenizer.ggml.model"]
    tokens = m["tokenizer.ggml.tokens"]
    types = m.get("tokenizer.ggml.token_type", [1] * len(tokens))
    spec = {"version": "1.0", "truncation": None, "padding": None}
    spec["added_tokens"] = _special_tokens(tokens, types)
    spec |= TOKENIZER_MODELS[kind](g, tokens, types)
    try:
        return Tokenizer.from_str(json.dumps(spec))
    except Exception as exc:  # the Rust side raises a plain Exception
        raise InputError(
            "model_tokenizer",
            f"{g.path}: tokenizer.ggml.* cannot be built as a tokenizer ({exc}).",
            file=str(g.path),
        ) from None


def load_gguf(path: str | Path) -> Decoder:
    """The model of a GGUF file, built by its family's module (see :func:`visattn.models.load`)."""
    import importlib

    from . import family_of

    g = read_gguf(path)
    config = config_of(g)
    family = family_of(config, g.path)
    tensors = hf_tensors(g, config)
    weights = GGUFWeights(tensors, g.path)
    tokenizer = tokenizer_of(g)
    module = importlib.import_module(f"{__package__}.{family}")
    model = module.build(g.path, config, weights, tokenizer)
    freqs = g.tensors.get("rope_freqs.weight")
    if freqs is not None:  # llama3's scaling as llama.cpp stores it: a divisor per frequency
        raw = np.memmap(g.path, dtype=np.uint8, mode="r")[freqs.start : freqs.end]
        divisors = dequantize(raw, freqs.type_id, freqs.stored)
        model.inv_freq = (model.inv_freq / divisors).astype(np.float32)
    return model
