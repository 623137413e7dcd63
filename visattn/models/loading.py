"""Reading a checkpoint folder without torch: config.json, safetensors weights, tokenizer.json.

A folder as Hugging Face writes it: ``config.json``; the weights in ``model.safetensors`` or in
shards named by ``model.safetensors.index.json``; ``tokenizer.json`` (the fast tokenizer's file,
read by the ``tokenizers`` package). Weights are read by memory map: a tensor is a view into the
mapped file until the model copies it into its own float32 layout, so opening a 500 MB file costs
no read. fp32, fp16 and bf16 tensors become float32; NumPy has no bfloat16, so a bf16 tensor is
widened by bits (the 16 bits are the top half of the float32 with the same value).

A decoder keeps its weight matrices as stored (:meth:`Weights.stored`: float16 values or bfloat16
bits, a :class:`Stored` view of the mapped file, file-backed pages rather than the process's own
memory) when its float32 copy would not fit the memory budget, and widens them one layer at a time
during the forward (:func:`in_flight`); :func:`resident_bytes` counts what it then holds.

Every way a folder can be unusable raises :class:`~visattn.errors.InputError` naming the file: no
config, an unreadable config, a model type no family implements, weights only as
``pytorch_model.bin`` (a pickle that needs torch), a truncated safetensors file, a tensor missing
or with a shape the config disagrees with, no tokenizer.json.

The safetensors format: 8 bytes little-endian header length N, N bytes of JSON ``{name: {"dtype",
"shape", "data_offsets": [begin, end]}}`` (offsets from the end of the header), then the data."""

from __future__ import annotations

import json
import math
import operator
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:  # read_tokenizer imports it when called
    from tokenizers import Tokenizer

    from .causal import Decoder

LayerT = TypeVar("LayerT")  # a family's layer: a dataclass of arrays

CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
TORCH_BIN = "pytorch_model.bin"
# A header larger than this is not a checkpoint's: a 70B model's is about 1 MB, and a 95 MB one
# (safetensors' own limit is 100 MB) took 46 s to parse before the first model page could draw.
MAX_HEADER = 16_000_000
MAX_RANK = 8  # axes of a tensor
# config.json's whole numbers, each at least 1 and at most its limit (far above any model's: a
# config of a million layers took 41 s and 6.6 GB before its first tensor was looked at)
CONFIG_LIMITS = {
    "num_hidden_layers": 1_024,
    "n_layer": 1_024,
    "num_attention_heads": 4_096,
    "n_head": 4_096,
    "num_key_value_heads": 4_096,
    "head_dim": 65_536,
    "hidden_size": 1 << 20,
    "n_embd": 1 << 20,
}
CONFIG_MOST = 1 << 31  # any other whole number of config.json
# safetensors dtype → (NumPy dtype of its bytes, bytes per element)
DTYPES = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # read as bits, widened by bf16_to_float32
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("u1"),
}


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 values given as their uint16 bits → float32 with exactly the same values (the bits
    moved to the top half of a 32-bit word)."""
    wide = np.left_shift(np.asarray(bits, dtype=np.uint16), 16, dtype=np.uint32)  # one pass
    return wide.view(np.float32)


def float16_to_float32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32)


class Stored:
    """A weight as its file stores it (float16 values, bfloat16 bits, quantized blocks: a view into
    the mapped file), widened to float32 only when a forward needs it.

    ``widen_rows`` turns ``raw``, or any run of its leading rows, into float32; ``steps`` are then
    applied in order (GGUF's unpermutation, a transpose or a slice taken after it). Where one stored
    number is one float32 number (``elementwise``: float16, bfloat16), a transpose or a slice is
    taken of ``raw`` itself, so widening a row block reads only its rows. Anything that asks NumPy
    for the array (``np.asarray(w)``, ``x @ w``) gets it widened."""

    def __init__(
        self,
        raw: np.ndarray,
        widen_rows: Callable[[np.ndarray], np.ndarray],
        steps: tuple[Callable[[np.ndarray], np.ndarray], ...] = (),
        elementwise: bool = False,
        rows_shape: tuple[int, ...] | None = None,
    ):
        self.raw, self.widen_rows, self.steps = raw, widen_rows, steps
        self.elementwise = elementwise
        # the shape of widen_rows(raw): raw's, or (rows, values per row) for quantized blocks
        self.rows_shape = raw.shape if rows_shape is None else rows_shape

    @property
    def shape(self) -> tuple[int, ...]:
        probe = np.broadcast_to(np.empty((), dtype=bool), self.rows_shape)  # no memory
        for step in self.steps:
            probe = step(probe)
        return probe.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def then(self, step: Callable[[np.ndarray], np.ndarray]) -> Stored:
        """This tensor with ``step`` applied once widened."""
        return Stored(self.raw, self.widen_rows, (*self.steps, step), False, self.rows_shape)

    def _reshaped(self, step: Callable[[np.ndarray], np.ndarray]) -> Stored:
        if self.elementwise and not self.steps:  # taken of the stored numbers themselves
            return Stored(step(self.raw), self.widen_rows, (), True)
        return self.then(step)

    @property
    def T(self) -> Stored:  # noqa: N802 (as ndarray.T)
        return self._reshaped(np.transpose)

    def __getitem__(self, key) -> Stored:
        return self._reshaped(operator.itemgetter(key))

    def widen(self) -> np.ndarray:
        x = self.widen_rows(self.raw)
        for step in self.steps:
            x = step(x)
        return x

    def take(self, rows) -> np.ndarray:
        """Rows ``rows`` (an index array or a slice) of the float32 tensor, only those widened."""
        if self.steps:
            return self.widen()[rows]
        return self.widen_rows(self.raw[rows])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        wide = self.widen()
        return wide if dtype is None else wide.astype(dtype, copy=False)


def widen(value: Any) -> Any:
    """``value`` in float32: a :class:`Stored` widened, a tuple element by element, anything else
    (a float32 array, None) as it is."""
    if isinstance(value, Stored):
        return value.widen()
    if isinstance(value, tuple):
        wide = tuple(widen(v) for v in value)
        return value if all(a is b for a, b in zip(wide, value, strict=True)) else wide
    return value


def widened(layer: LayerT) -> LayerT:
    """A layer (a dataclass of arrays) with every stored field widened to float32, whatever its
    fields are; the same layer when none is stored."""
    changes = {}
    for f in fields(layer):
        value = getattr(layer, f.name)
        wide = widen(value)
        if wide is not value:
            changes[f.name] = wide
    return replace(layer, **changes) if changes else layer


def in_flight(model: Decoder, i: int) -> Any:
    """Layer i of ``model.layers`` in float32: the layer itself when nothing in it is stored (the
    model was widened at load), else its widened copy, kept until another layer is asked for, so a
    forward holds one widened layer at a time."""
    layer = model.layers[i]
    slot = getattr(model, "_in_flight", None)
    if slot is not None and slot[0] is layer:
        return slot[1]
    model._in_flight = None  # the previous layer's copy is freed before this one is made
    wide = widened(layer)
    if wide is not layer:
        model._in_flight = (layer, wide)
    return wide


def gather(table: np.ndarray | Stored, ids: np.ndarray) -> np.ndarray:
    """Rows ``ids`` of an embedding table (float32 or :class:`Stored`) as a new float32 array: of
    a stored table only the rows read are widened."""
    if isinstance(table, Stored):
        return table.take(ids)
    return table[ids]


ROW_BLOCK = 8192  # rows of a stored unembedding widened at once (64 MB at d_model 2048)


def times_transposed(x: np.ndarray, table: np.ndarray | Stored) -> np.ndarray:
    """``x @ table.T`` for x (T, D) and table (N, D), float32 or :class:`Stored`: a stored table
    (a tied LM head over a vocabulary of 128K) is widened ROW_BLOCK rows at a time."""
    if not isinstance(table, Stored):
        return x @ table.T  # (T, D) x (D, N) -> (T, N)
    n = table.shape[0]
    out = np.empty((x.shape[0], n), dtype=np.float32)
    for a in range(0, n, ROW_BLOCK):
        b = min(a + ROW_BLOCK, n)
        out[:, a:b] = x @ table.take(slice(a, b)).T  # (T, D) x (D, b − a) -> (T, b − a)
    return out


# a layer's number in a tensor name: model.layers.3.…, h.3.…, blk.3.…
LAYER_NUMBER = re.compile(r"(?:^|\.)(\d+)\.")


def float32_bytes(tensors: Mapping) -> int:
    """Bytes of every tensor in float32 (``tensors``: name → TensorInfo or GGUFTensor)."""
    return 4 * sum(int(np.prod(t.shape, dtype=np.int64)) for t in tensors.values())


def resident_bytes(tensors: Mapping, budget: int) -> int:
    """Bytes of float32 weights a decoder of these tensors holds at once under ``budget``.

    When the whole float32 model fits (:func:`float32_bytes` ≤ budget) it is widened at load and
    that is the count. Otherwise the matrices stored in another precision stay mapped (file-backed
    pages, not counted) and are widened during the forward: the count is the tensors kept in
    float32 (float32 ones, read whole by every forward, and the vectors: norms, biases), plus the
    largest layer's stored matrices widened, plus ROW_BLOCK rows of each stored matrix outside
    the layers (the embedding, whose rows are gathered, and the LM head, widened by row blocks)."""
    whole = float32_bytes(tensors)
    if whole <= budget:
        return whole
    kept, outside = 0, 0
    layers: dict[str, int] = {}
    for name, t in tensors.items():
        n = int(np.prod(t.shape, dtype=np.int64))
        found = LAYER_NUMBER.search(name)
        if t.dtype == "F32" or len(t.shape) < 2:
            kept += n
        elif found:
            layers[found.group(1)] = layers.get(found.group(1), 0) + n
        else:
            outside += min(t.shape[0], ROW_BLOCK) * n // t.shape[0]
    return 4 * (kept + max(layers.values(), default=0) + outside)


def widen_at_load(tensors: Mapping, budget: int | None = None) -> bool:
    """Whether a decoder of these tensors is widened to float32 once, at load (its float32 copy
    fits the budget: the fastest forward), rather than one layer at a time in each forward."""
    if budget is None:
        from .sources import budget_bytes

        budget = budget_bytes()
    return float32_bytes(tensors) <= budget


def read_config(folder: str | Path) -> dict:
    """config.json of ``folder`` as a dict; InputError when the folder or the file is unusable."""
    folder = Path(folder)
    path = folder / CONFIG
    if not folder.is_dir():
        raise InputError(
            "model_folder", f"{folder} is not a folder; name a checkpoint folder.", file=str(folder)
        )
    if not path.is_file():
        raise InputError(
            "model_no_config",
            f"{path} is missing; a checkpoint folder holds config.json, its weights as "
            "*.safetensors and tokenizer.json.",
            file=str(path),
        )
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            "model_config", f"{path} is not readable JSON ({exc}).", file=str(path)
        ) from None
    if not isinstance(config, dict):
        raise InputError("model_config", f"{path} is not a JSON object.", file=str(path))
    return config


@dataclass(frozen=True)
class TensorInfo:
    file: Path
    dtype: str  # safetensors dtype: "F32", "F16", "BF16" …
    shape: tuple[int, ...]
    start: int  # byte offset of the data in the file
    end: int


def _truncated(path: Path, why: str) -> InputError:
    return InputError(
        "model_truncated",
        f"{path} is truncated or not a safetensors file ({why}); download it again.",
        file=str(path),
    )


def read_header(path: Path) -> dict[str, TensorInfo]:
    """The tensors of one safetensors file (names, dtypes, shapes, byte ranges), from its header
    alone: a few kB read, whatever the file's size. InputError for a truncated or foreign file."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise _truncated(path, f"{size} bytes")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER or 8 + n > size:
                raise _truncated(path, f"a header of {n} bytes in a file of {size}")
            raw = f.read(n)
    except OSError as exc:
        raise InputError(
            "model_unreadable", f"{path} cannot be read ({exc}).", file=str(path)
        ) from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise _truncated(path, "its header is not JSON") from None
    if not isinstance(header, dict):
        raise _truncated(path, "its header is not a JSON object")
    tensors = {}
    base = 8 + n
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, begin, end = _entry(path, name, entry)
        if dtype not in DTYPES:
            raise InputError(
                "model_dtype",
                f"{path}: tensor {name!r} is {dtype}; this app reads F32, F16 and BF16 weights.",
                file=str(path),
                name=name,
                dtype=dtype,
            )
        if end - begin != DTYPES[dtype].itemsize * math.prod(shape):  # Python ints: no overflow
            raise _truncated(path, f"tensor {name!r} has {end - begin} bytes for shape {shape}")
        if base + end > size:
            raise _truncated(path, f"tensor {name!r} ends at byte {base + end} of {size}")
        tensors[name] = TensorInfo(path, dtype, shape, base + begin, base + end)
    ranges = sorted((t.start, t.end, name) for name, t in tensors.items() if t.end > t.start)
    for (_, end, first), (start, _, second) in zip(ranges, ranges[1:], strict=False):
        if start < end:
            raise _truncated(path, f"tensors {first!r} and {second!r} share bytes")
    return tensors


def _whole(value) -> bool:
    """A JSON whole number ≥ 0 (not a boolean, which Python counts as an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _entry(path: Path, name: str, entry) -> tuple[str, tuple[int, ...], int, int]:
    """A header entry's (dtype, shape, begin, end), each of the type and range it must have."""
    if isinstance(entry, dict):
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if (
            isinstance(dtype, str)
            and isinstance(shape, list)
            and len(shape) <= MAX_RANK
            and all(_whole(d) for d in shape)
            and isinstance(offsets, list)
            and len(offsets) == 2
            and all(_whole(o) for o in offsets)
            and offsets[0] <= offsets[1]
        ):
            return dtype, tuple(shape), offsets[0], offsets[1]
    raise _truncated(path, f"tensor {name!r} has no dtype, shape or offsets")


def weight_files(folder: str | Path) -> list[Path]:
    """The safetensors files of a checkpoint: the one ``model.safetensors``, or the shards its
    index names; InputError when there are none (naming pytorch_model.bin when only that is
    there)."""
    folder = Path(folder)
    index = folder / INDEX
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            shards = sorted(set(weight_map.values()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(
                "model_config", f"{index} is not a readable shard index ({exc}).", file=str(index)
            ) from None
        missing = [name for name in shards if not (folder / name).is_file()]
        if missing:
            raise InputError(
                "model_shard_missing",
                f"{index} names {missing[0]}, which is not in the folder.",
                file=str(folder / missing[0]),
            )
        return [folder / name for name in shards]
    if (folder / SINGLE).is_file():
        return [folder / SINGLE]
    loose = sorted(folder.glob("*.safetensors"))
    if loose:
        return loose
    if any((folder / name).is_file() for name in (TORCH_BIN, TORCH_BIN + ".index.json")):
        raise InputError(
            "model_torch_bin",
            f"{folder / TORCH_BIN}: the weights are a PyTorch pickle, which needs torch to read; "
            "save the model as safetensors (model.save_pretrained(folder) does by default).",
            file=str(folder / TORCH_BIN),
        )
    raise InputError(
        "model_no_weights",
        f"{folder} has no weights: no {SINGLE}, no {INDEX}, no *.safetensors.",
        file=str(folder / SINGLE),
    )


class Weights(Mapping):
    """The tensors of a checkpoint by name, read from memory-mapped files on access and returned as
    float32 arrays (fp32: a read-only view into the file; fp16 and bf16: a widened copy).

    ``prefix`` is stripped from the names (``"bert."`` of a BertForMaskedLM checkpoint,
    ``"transformer."`` of GPT2LMHeadModel), so a family reads ``embeddings.word_embeddings.weight``
    whatever head the checkpoint was saved with."""

    def __init__(self, tensors: dict[str, TensorInfo], source: Path, prefix: str = ""):
        self.tensors = tensors
        self.source = source  # the file a message names: model.safetensors or the shard index
        self.prefix = prefix
        self._maps: dict[Path, np.memmap] = {}

    @classmethod
    def open(cls, folder: str | Path) -> Weights:
        tensors: dict[str, TensorInfo] = {}
        files = weight_files(folder)
        for path in files:
            tensors.update(read_header(path))
        index = Path(folder) / INDEX
        return cls(tensors, index if index.is_file() else files[0])

    def with_prefix(self, prefix: str) -> Weights:
        return Weights(self.tensors, self.source, prefix)

    def info(self, name: str) -> TensorInfo:
        return self.tensors[self.prefix + name]

    def __getitem__(self, name: str) -> np.ndarray:
        info = self.tensors[self.prefix + name]
        if info.file not in self._maps:
            self._maps[info.file] = np.memmap(info.file, dtype=np.uint8, mode="r")
        raw = self._maps[info.file][info.start : info.end].view(DTYPES[info.dtype])
        raw = raw.reshape(info.shape)
        if info.dtype == "BF16":
            return bf16_to_float32(raw)
        if info.dtype == "F32":
            return np.asarray(raw)
        return raw.astype(np.float32)

    def _raw(self, info) -> np.ndarray:
        if info.file not in self._maps:
            self._maps[info.file] = np.memmap(info.file, dtype=np.uint8, mode="r")
        return self._maps[info.file][info.start : info.end]

    def stored(self, name: str) -> np.ndarray | Stored:
        """The tensor as the file stores it: float32 a read-only view into the mapped file, a
        float16 or bfloat16 matrix a :class:`Stored` view (widened when used), a vector (norms,
        biases: small) widened now."""
        info = self.tensors[self.prefix + name]
        if info.dtype not in ("F16", "BF16") or len(info.shape) < 2:
            return self[name]
        raw = self._raw(info).view(DTYPES[info.dtype]).reshape(info.shape)
        if info.dtype == "BF16":
            return Stored(raw, bf16_to_float32, elementwise=True)
        return Stored(raw, float16_to_float32, elementwise=True)

    def __iter__(self) -> Iterator[str]:
        n = len(self.prefix)
        return (name[n:] for name in self.tensors if name.startswith(self.prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.prefix + name in self.tensors

    def n_params(self) -> int:
        return sum(int(np.prod(t.shape, dtype=np.int64)) for t in self.tensors.values())

    def nbytes(self) -> int:
        """Bytes on disk of every tensor."""
        return sum(t.end - t.start for t in self.tensors.values())


def find_prefix(weights: Weights, anchor: str) -> str:
    """The prefix before ``anchor`` (a tensor every checkpoint of the family has) in the tensor
    names: "" for a base model, "bert." or "transformer." for one saved with a head."""
    for name in weights.tensors:
        if name == anchor or name.endswith("." + anchor):
            return name[: len(name) - len(anchor)]
    raise InputError(
        "model_tensor_missing",
        f"{weights.source} has no tensor {anchor!r}; is it a checkpoint of this family?",
        file=str(weights.source),
        name=anchor,
    )


def check_shapes(weights: Weights, expected: dict[str, tuple[int, ...]]) -> None:
    """Every tensor the family needs is there with the shape config.json implies."""
    for name, shape in expected.items():
        if name not in weights:
            raise InputError(
                "model_tensor_missing",
                f"{weights.source} has no tensor {weights.prefix + name!r}, which config.json "
                "implies.",
                file=str(weights.source),
                name=weights.prefix + name,
            )
        info = weights.info(name)
        if info.shape != tuple(shape):
            raise InputError(
                "model_shape",
                f"{info.file}: tensor {weights.prefix + name!r} has shape {info.shape}, but "
                f"config.json implies {tuple(shape)}.",
                file=str(info.file),
                name=weights.prefix + name,
                shape=" × ".join(map(str, info.shape)),
                expected=" × ".join(map(str, shape)),
            )


def read_tokenizer(folder: str | Path) -> Tokenizer:
    """tokenizer.json of ``folder`` as a ``tokenizers.Tokenizer`` without padding or truncation."""
    from tokenizers import Tokenizer

    path = Path(folder) / TOKENIZER
    if not path.is_file():
        raise InputError(
            "model_no_tokenizer",
            f"{path} is missing; this app reads the fast tokenizer's tokenizer.json (save it with "
            "tokenizer.save_pretrained(folder)).",
            file=str(path),
        )
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises a plain Exception for a bad file
        raise InputError(
            "model_tokenizer", f"{path} cannot be read as a tokenizer ({exc}).", file=str(path)
        ) from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def config_int(config: dict, names: tuple[str, ...], path: Path, default: int | None = None) -> int:
    """The first of ``names`` present in config.json, as an int (configs of one family spell the
    same number differently: n_embd / hidden_size); ``default`` when none is there. A number
    must be at least 1 and at most its limit (:data:`CONFIG_LIMITS`)."""
    present = [config[name] for name in names if config.get(name) is not None]
    if not present and default is not None:
        return default
    most = CONFIG_LIMITS.get(names[0], CONFIG_MOST)
    if present and _whole(present[0]) and 1 <= present[0] <= most:
        return present[0]
    raise InputError(
        "model_config_field",
        f"{path} has no whole number {names[0]!r} from 1 to {most:,}.",
        file=str(path),
        name=names[0],
    )


def head_width(d_model: int, n_heads: int, path: Path) -> int:
    """Each head's width D / H, when the heads divide the model's width."""
    if d_model % n_heads:
        raise InputError(
            "model_config_heads",
            f"{path}: {n_heads} heads do not divide the width {d_model}; give head_dim or fix "
            "num_attention_heads.",
            file=str(path),
            heads=n_heads,
            width=d_model,
        )
    return d_model // n_heads
