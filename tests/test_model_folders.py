"""No folder takes a page down: a checkpoint folder with any value in config.json or in a
safetensors header is described (sources.describe) or refused with one InputError naming the file,
never another exception, and reading it allocates no more than its files hold. Fuzzed with
hypothesis from the tiny GPT-2 and LLaMA fixtures; the cases the room saw are named below."""

from __future__ import annotations

import json
import shutil
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from visattn import models
from visattn.errors import InputError
from visattn.models import loading, sources

FIXTURES = Path(__file__).parent / "fixtures" / "models"
BIG = 10**30
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-BIG, BIG)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
CONFIG_KEYS = (
    "model_type",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_size",
    "intermediate_size",
    "vocab_size",
    "head_dim",
    "rope_theta",
    "rope_scaling",
    "max_position_embeddings",
    "rms_norm_eps",
    "tie_word_embeddings",
    "n_layer",
    "n_head",
    "n_embd",
    "n_positions",
)
HEADER_FIELDS = ("dtype", "shape", "data_offsets")


def header_of(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def write_header(path: Path, header, body: bytes) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)


def judged(folder: Path) -> None:
    """Describe and load ``folder``: a Source, and a model or one InputError; and what reading it
    allocated at most its files' bytes (a tenth of a megabyte for the rest)."""
    size = sum(f.stat().st_size for f in folder.iterdir())
    tracemalloc.start()
    try:
        found = sources.describe(folder, "fuzzed", "fuzzed", "folder", 10**12)
        assert isinstance(found, sources.Source)
        if found.problem is not None:
            assert str(folder) not in str(found.problem.params.get("file", ""))
        try:
            models.load(folder)
        except InputError:
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 4 * size + 2_000_000, (peak, size)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def family(request) -> str:
    return request.param


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=st.sampled_from(CONFIG_KEYS), value=JSON_VALUES)
def test_any_config_value_is_read_or_refused(family, tmp_path_factory, key, value):
    folder = tmp_path_factory.mktemp("config") / family
    shutil.copytree(FIXTURES / family, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {key: value}))
    judged(folder)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(HEADER_FIELDS), value=JSON_VALUES, which=st.integers(0, 10**6))
def test_any_header_field_is_read_or_refused(family, tmp_path_factory, field, value, which):
    folder = tmp_path_factory.mktemp("header") / family
    shutil.copytree(FIXTURES / family, folder)
    path = folder / "model.safetensors"
    header, body = header_of(path)
    names = sorted(k for k in header if k != "__metadata__")
    header[names[which % len(names)]][field] = value
    write_header(path, header, body)
    judged(folder)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=JSON_VALUES)
def test_any_header_is_read_or_refused(tmp_path_factory, value):
    folder = tmp_path_factory.mktemp("whole") / "gpt2"
    shutil.copytree(FIXTURES / "gpt2", folder)
    path = folder / "model.safetensors"
    _, body = header_of(path)
    write_header(path, value, body)
    judged(folder)


def refusal(folder: Path) -> InputError:
    """The InputError that loading ``folder`` raises; the model list describes it without raising
    (greyed with the same reason when the list's cheaper reading already finds it)."""
    with pytest.raises(InputError) as refused:
        models.load(folder)
    found = sources.describe(folder, "room", "room", "folder", 10**12)
    assert found.problem is None or found.problem.code == refused.value.code
    return refused.value


def copy(family: str, tmp_path: Path) -> Path:
    folder = tmp_path / family
    shutil.copytree(FIXTURES / family, folder)
    return folder


def with_config(folder: Path, **changes) -> Path:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | changes))
    return folder


def test_the_room_s_folders_are_each_one_refusal_naming_the_field(tmp_path):
    """What took three pages down room-wide: a model_type list, zero heads, heads that do not
    divide the width, a million layers, a negative or a 10³⁰ shape, overlapping tensors."""
    bert = copy("bert", tmp_path)
    assert refusal(with_config(bert, model_type=["bert"])).code == "model_type"
    gpt2 = copy("gpt2", tmp_path / "a")
    error = refusal(with_config(gpt2, n_head=0))
    assert error.code == "model_config_field" and error.params["name"] == "n_head"
    gpt2 = copy("gpt2", tmp_path / "b")
    width = json.loads((gpt2 / "config.json").read_text())["n_embd"]
    error = refusal(with_config(gpt2, n_head=width - 1))  # no head_dim: heads split the width
    assert error.code == "model_config_heads" and error.params["width"] == width
    llama = copy("llama", tmp_path / "c")
    error = refusal(with_config(llama, num_hidden_layers=10**6))
    assert error.params["name"] == "num_hidden_layers"
    for shape in ([-4, 8], [10**30, 1]):
        gpt2 = copy("gpt2", tmp_path / f"shape{shape[0]}")
        path = gpt2 / "model.safetensors"
        header, body = header_of(path)
        name = next(k for k in header if k != "__metadata__")
        header[name]["shape"] = shape
        write_header(path, header, body)
        assert refusal(gpt2).code == "model_truncated"
    gpt2 = copy("gpt2", tmp_path / "overlap")
    path = gpt2 / "model.safetensors"
    header, body = header_of(path)
    first, second = sorted(
        (k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0]
    )[:2]
    size = header[second]["data_offsets"][1] - header[second]["data_offsets"][0]
    start = header[first]["data_offsets"][0]
    header[second]["data_offsets"] = [start, start + size]  # its bytes inside the first's
    header[second]["shape"] = [size // loading.DTYPES[header[second]["dtype"]].itemsize]
    write_header(path, header, body)
    assert refusal(gpt2).code == "model_truncated"


def test_a_header_past_its_limit_is_refused_without_reading_it(tmp_path):
    folder = copy("gpt2", tmp_path)
    path = folder / "model.safetensors"
    path.write_bytes(struct.pack("<Q", loading.MAX_HEADER + 1) + b" " * 64)
    assert refusal(folder).code == "model_truncated"
