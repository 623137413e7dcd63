"""Where the app finds checkpoints, described without loading them (server side only: a URL names a
model's id, never a path).

These places, in this order: the bundled all-MiniLM-L6-v2 (id ``minilm``); folders named by the
``VISATTN_MODELS`` environment variable (a path list, ``os.pathsep``-separated) or by ``--models
DIR`` (``make run MODELS=DIR``); the snapshots in the local Hugging Face cache (``HF_HUB_CACHE``,
else ``HF_HOME``/hub, else ~/.cache/huggingface/hub); Ollama's store (``OLLAMA_MODELS``, else
~/.ollama/models: a manifest per ``name:tag`` names the GGUF blob of its model layer), shown under
the Ollama name; and LM Studio's folder (~/.lmstudio/models, ~/.cache/lm-studio/models:
publisher/repository/file.gguf). A named folder is a checkpoint itself or holds checkpoints one
level down; a named ``.gguf`` file, or one in a named folder or one level down, is a checkpoint
too. A checkpoint is described from its config.json and its safetensors headers, or from a GGUF
file's metadata and tensor table (a few kB to a few MB whatever its size): name, family, layers ×
heads, parameters, size on disk. One that cannot be read, or whose weights would take more of the
process's own memory than the budget (default 2 GB, ``VISATTN_MODEL_BUDGET`` in bytes, plain or
scientific, or with a unit: "4GB", "500MB", "4GiB", "4e9": :func:`budget_bytes`), is listed with the
reason and cannot be chosen. The budget counts the float32 weights held at once
(:func:`visattn.models.loading.resident_bytes`): the whole float32 model when it fits (it is widened
at load); else, for a decoder whose matrices are stored in float16, bfloat16 or quantized, only what
is widened (vectors, float32 tensors, one layer in flight, a block of the embedding and head rows),
the stored matrices staying mapped file pages."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..controls import Control
from ..errors import InputError
from . import family_of, loading, refusing

BUNDLED = "minilm"
DEFAULT_BUDGET = 2_000_000_000  # bytes of float32 weights held at once
# a budget's units: decimal (K, M, G, T with or without B) and binary (KiB … TiB), upper-cased
UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
UNITS |= {"KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40}
BUDGET = r"(\d+(?:\.\d*)?(?:E[+]?\d+)?)((?:[KMGT]I?)?B?)"  # a number of bytes and its unit
MAX_ID = 120  # characters of an id (the URL's control takes this many)
# the most layers and heads a chosen model may have; the widgets offer the model's own
MAX_LAYERS, MAX_HEADS = 128, 128


def id_control(key: str) -> Control:
    """The URL parameter of a page's model: a checkpoint's id (never a path), the bundled MiniLM
    by default. The pretrained and reading pages declare theirs with it."""
    return Control(key, BUNDLED, max_chars=MAX_ID)


@dataclass(frozen=True)
class Source:
    id: str  # what the URL holds
    name: str  # what the picker shows
    path: Path
    origin: str  # "bundled" | "folder" | "hf_cache" | "ollama" | "lmstudio"
    family: str = ""  # "bert" | "gpt2" | "llama" | "gpt_oss" ("" when unreadable)
    model_type: str = ""
    n_layers: int = 0
    n_heads: int = 0
    n_params: int = 0
    disk_bytes: int = 0
    problem: InputError | None = None  # why it cannot be read
    over_budget: bool = False
    resident_bytes: int = 0  # float32 weights held at once (loading.resident_bytes)

    @property
    def float32_bytes(self) -> int:
        return 4 * self.n_params

    @property
    def usable(self) -> bool:
        return self.problem is None and not self.over_budget

    @property
    def causal(self) -> bool:
        return self.family in ("gpt2", "llama", "gpt_oss")


def budget_bytes(env: Mapping[str, str] = os.environ) -> int:
    """The memory budget for the float32 weights one model holds at once (see the module's
    docstring): VISATTN_MODEL_BUDGET or 2 GB.

    A number of bytes, plain or scientific ("4000000000", "4e9"), or with a unit: decimal ("4GB",
    "500 MB", "4G") or binary ("4GiB", "512MiB"). Anything else raises InputError
    ``model_budget`` naming the value: a budget the server cannot read is said, never replaced."""
    given = env.get("VISATTN_MODEL_BUDGET", "").strip()
    if not given:
        return DEFAULT_BUDGET
    found = re.fullmatch(BUDGET, given.replace(" ", "").upper())
    n_bytes = None
    if found:
        number, unit = found.groups()
        n_bytes = float(number) * UNITS[unit.removesuffix("B") if unit else ""]
    if n_bytes is None or not 1 <= n_bytes < 2**63:
        raise InputError(
            "model_budget",
            f"VISATTN_MODEL_BUDGET={given!r} is not a number of bytes; write it as 4GB, 4GiB, "
            "500MB or 4e9.",
            value=given,
        )
    return int(n_bytes)


def describe_gguf(path: Path, id: str, name: str, origin: str, budget: int) -> Source:
    """A GGUF file described from its metadata and tensor table; an unreadable one is a Source
    with its ``problem``."""
    from . import gguf

    try:
        g = gguf.read_gguf(path)
        config = gguf.config_of(g)
        family = family_of(config, path)
        gguf.check_tokenizer(g)  # a vocabulary this app reads (built when the model is loaded)
    except InputError as problem:
        return Source(id, name, path, origin, problem=problem)
    n_params = sum(int(np.prod(t.shape, dtype=np.int64)) for t in g.tensors.values())
    resident = loading.resident_bytes(g.tensors, budget)
    return Source(
        id=id,
        name=name,
        path=path,
        origin=origin,
        family=family,
        model_type=str(config.get("model_type")),
        n_layers=config["num_hidden_layers"],
        n_heads=config["num_attention_heads"],
        n_params=n_params,
        disk_bytes=sum(t.end - t.start for t in g.tensors.values()),
        over_budget=resident > budget,
        resident_bytes=resident,
    )


def describe(folder: Path, id: str, name: str, origin: str, budget: int) -> Source:
    """A checkpoint folder described from config.json and the safetensors headers (a file: as a
    GGUF file); an unreadable one, whatever is wrong in it, is a Source with its ``problem``, which
    names the file under the model's name, never by the server's path."""
    try:
        with refusing(folder):
            source = _describe(folder, id, name, origin, budget)
    except InputError as problem:
        source = Source(id, name, folder, origin, problem=problem)
    if source.problem is not None:
        shown(source.problem, folder, name)
    return source


def shown(problem: InputError, where: Path, name: str) -> InputError:
    """``problem`` with the file it names given as ``name``/its path inside ``where`` (the model's
    folder; a model that is one file: that file's name), as a page may show it to anyone."""
    file = problem.params.get("file")
    if file:
        inside = where if where.is_dir() else where.parent
        try:
            relative = Path(file).relative_to(inside).as_posix()
        except ValueError:  # outside the model's folder (a blob of the Hugging Face cache)
            relative = Path(file).name
        problem.params["file"] = relative if where.is_file() else f"{name}/{relative}"
    return problem


def _describe(folder: Path, id: str, name: str, origin: str, budget: int) -> Source:
    if folder.is_file():
        return describe_gguf(folder, id, name, origin, budget)
    try:
        config = loading.read_config(folder)
        family = family_of(config, folder / loading.CONFIG)
        weights = loading.Weights.open(folder)
        if not (folder / loading.TOKENIZER).is_file():
            loading.read_tokenizer(folder)  # raises model_no_tokenizer
    except InputError as problem:
        return Source(id, name, folder, origin, problem=problem)
    path = folder / loading.CONFIG
    if config.get("model_type") == "gemma3":  # image and text: its text model's layers and heads
        from .llama import gemma3_text_config

        config = gemma3_text_config(config)
    try:
        n_layers = loading.config_int(config, ("num_hidden_layers", "n_layer"), path)
        n_heads = loading.config_int(config, ("num_attention_heads", "n_head"), path)
    except InputError as problem:
        return Source(id, name, folder, origin, problem=problem)
    n_params = weights.n_params()
    resident = 4 * n_params  # an encoder is always widened at load
    if family != "bert":
        resident = loading.resident_bytes(weights.tensors, budget)
    return Source(
        id=id,
        name=name,
        path=folder,
        origin=origin,
        family=family,
        model_type=str(config.get("model_type")),
        n_layers=n_layers,
        n_heads=n_heads,
        n_params=n_params,
        disk_bytes=weights.nbytes(),
        over_budget=resident > budget,
        resident_bytes=resident,
    )


def is_gguf(path: Path) -> bool:
    """A model's .gguf file (not a vision projector's mmproj file)."""
    name = path.name.lower()
    return path.is_file() and name.endswith(".gguf") and not name.startswith("mmproj")


def checkpoint_folders(root: Path) -> list[Path]:
    """``root`` if it holds a config.json or is a .gguf file, else its sub-folders that hold a
    config.json and the .gguf files in it and in its sub-folders (sorted by name)."""
    if (root / loading.CONFIG).is_file() or is_gguf(root):
        return [root]
    if not root.is_dir():
        return []
    found = []
    for p in sorted(root.iterdir()):
        if p.is_dir() and (p / loading.CONFIG).is_file():
            found.append(p)
        elif is_gguf(p):
            found.append(p)
        elif p.is_dir():
            found += sorted(f for f in p.iterdir() if is_gguf(f))
    return found


def ollama_dir(env: Mapping[str, str] = os.environ) -> Path | None:
    if env.get("OLLAMA_MODELS"):
        return Path(env["OLLAMA_MODELS"])
    return home(env) / ".ollama" / "models" if home(env) else None


def home(env: Mapping[str, str]) -> Path | None:
    """The user's home as ``env`` says (None without HOME: an environment given by a test finds
    no Ollama or LM Studio store of the machine's user)."""
    return Path(env["HOME"]) if env.get("HOME") else None


OLLAMA_REGISTRY, OLLAMA_LIBRARY = "registry.ollama.ai", "library"
OLLAMA_MODEL = "application/vnd.ollama.image.model"


def ollama_models(store: Path | None) -> list[tuple[str, Path]]:
    """(Ollama name "model:tag", GGUF blob) of every manifest in an Ollama store: the manifest at
    manifests/HOST/NAMESPACE/MODEL/TAG names its model layer's blob by digest (blobs/sha256-…).
    The name drops the default registry and the "library" namespace, as ``ollama list`` does."""
    import json

    found = []
    if store is None or not (store / "manifests").is_dir():
        return found
    manifests = store / "manifests"
    for manifest in sorted(manifests.glob("*/*/*/*")):
        if not manifest.is_file():
            continue
        host, namespace, model, tag = manifest.relative_to(manifests).parts
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8"))["layers"]
            digests = [x["digest"] for x in layers if x.get("mediaType") == OLLAMA_MODEL]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            continue
        if not digests:
            continue
        blob = store / "blobs" / digests[0].replace(":", "-")
        if not blob.is_file():
            continue
        name = f"{model}:{tag}"
        if namespace != OLLAMA_LIBRARY or host != OLLAMA_REGISTRY:
            name = f"{namespace}/{name}"
        if host != OLLAMA_REGISTRY:
            name = f"{host}/{name}"
        found.append((name, blob))
    return found


def lmstudio_models(env: Mapping[str, str] = os.environ) -> list[tuple[str, Path]]:
    """(publisher/repository/file, path) of the .gguf files in LM Studio's model folders."""
    found = []
    user = home(env)
    if user is None:
        return found
    for root in (user / ".lmstudio" / "models", user / ".cache" / "lm-studio" / "models"):
        if not root.is_dir():
            continue
        for path in sorted(root.glob("*/*/*.gguf")):
            if is_gguf(path):
                found.append((path.relative_to(root).as_posix().removesuffix(".gguf"), path))
    return found


def hub_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def hub_snapshots(hub: Path) -> list[tuple[str, Path]]:
    """(repo id "org/name", snapshot folder) of every model in a Hugging Face hub cache: the
    snapshot refs/main names, else the newest."""
    found = []
    if not hub.is_dir():
        return found
    for repo in sorted(hub.glob("models--*")):
        snapshots = repo / "snapshots"
        if not snapshots.is_dir():
            continue
        main = repo / "refs" / "main"
        chosen = None
        if main.is_file():
            chosen = snapshots / main.read_text(encoding="utf-8").strip()
        if chosen is None or not chosen.is_dir():
            candidates = [p for p in snapshots.iterdir() if p.is_dir()]
            if not candidates:
                continue
            chosen = max(candidates, key=lambda p: p.stat().st_mtime)
        if (chosen / loading.CONFIG).is_file():
            found.append((repo.name.removeprefix("models--").replace("--", "/"), chosen))
    return found


def _unique(id: str, taken: set[str]) -> str:
    base, n = id[:MAX_ID], 2
    while id in taken or len(id) > MAX_ID:
        id = f"{base[: MAX_ID - 4]}-{n}"
        n += 1
    taken.add(id)
    return id


def find(
    model_dirs: Iterable[str | Path] = (),
    env: Mapping[str, str] = os.environ,
    bundled: Path | None = None,
) -> list[Source]:
    """Every checkpoint the server can offer, bundled MiniLM first (``bundled``: its folder, None
    when the package is missing)."""
    budget = budget_bytes(env)
    taken: set[str] = set()
    found: list[Source] = []
    if bundled is not None:
        taken.add(BUNDLED)
        found.append(describe(bundled, BUNDLED, "all-MiniLM-L6-v2", "bundled", budget))
    roots = [Path(p) for p in env.get("VISATTN_MODELS", "").split(os.pathsep) if p.strip()]
    roots += [Path(p) for p in model_dirs]
    seen: set[Path] = set()
    for root in roots:
        for folder in checkpoint_folders(root.expanduser()):
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            name = folder.name.removesuffix(".gguf") if folder.is_file() else folder.name
            id = _unique(name, taken)
            found.append(describe(folder, id, name, "folder", budget))
    stores = [(repo, folder, "hf_cache") for repo, folder in hub_snapshots(hub_dir(env))]
    stores += [(name, blob, "ollama") for name, blob in ollama_models(ollama_dir(env))]
    stores += [(name, path, "lmstudio") for name, path in lmstudio_models(env)]
    for name, path, origin in stores:
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        found.append(describe(path, _unique(name, taken), name, origin, budget))
    return found
