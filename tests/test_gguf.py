"""GGUF files (visattn.models.gguf) against transformers' own GGUF loading, the ``gguf`` package
from llama.cpp and the safetensors checkpoints they were converted from.

tests/fixtures/gguf/ is written by tests/make_gguf_fixtures.py from tests/fixtures/models/. The
reference for reading and dequantizing is ``gguf.GGUFReader`` and ``gguf.quants.dequantize``
(NumPy-only); the reference for a model is the safetensors checkpoint (F32, F16: the same values)
or the same GGUF file built with the reference's dequantization (every quantized type). The
fixture script also recorded transformers' forward on every file (reference.npz); these tests need
no torch."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest

from visattn import models
from visattn.errors import InputError
from visattn.models import gguf as vgguf

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "gguf"
MODELS = HERE / "fixtures" / "models"
FAMILIES = ("llama", "qwen2", "gpt2")
TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1")
K_TYPES = ("Q4_K", "Q5_K", "Q6_K")
FILES = [f"{f}-{t}.gguf" for f in FAMILIES for t in TYPES] + [f"kquant-{t}.gguf" for t in K_TYPES]
FILES += ["llama-spm-F16.gguf"]  # a SentencePiece vocabulary (merges from scores, byte fallback)
# files of the families added since (Qwen3, Gemma 2/3, Phi-3), converted from a random model
NEW_FILES = [f"{arch}-F16.gguf" for arch in ("qwen3", "gemma2", "gemma3", "phi3")]
PRES = ("llama-bpe", "qwen2", "smollm")  # tok-PRE.gguf: the tokenizer alone
TOKEN_TEXTS = (
    "I'LL pay 12345 dollars, don't you?\n\n  Then   the keys\t(42)!",
    "  the values,the street's 2024年3月 小明  ",
)
TEXTS = ("The animal didn't cross the street because it was too tired.", "小明喜欢吃苹果。")
F16_TOL = 2e-3  # attentions of float16-rounded weights (the qwen2 fixture is stored as bfloat16)
TOL = 1e-5


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(FIXTURES / "reference.npz") as data:
        return dict(data)


@pytest.mark.parametrize("name", FILES + NEW_FILES)
def test_attentions_equal_transformers_gguf_loading(name, reference):
    """The tokens and attentions transformers computes from the same GGUF file (its
    from_pretrained(…, gguf_file=…), eager attention), for every family and quantization type
    (Qwen3, Gemma and Phi-3: with the config fields transformers does not read from the file
    given, see tests/make_gguf_fixtures.py)."""
    model = models.load(FIXTURES / name)
    for i, text in enumerate(TEXTS):
        got = model.run(text)
        assert list(model.encode(text)[1]) == reference[f"{name}/ids_{i}"].tolist()
        np.testing.assert_allclose(got.attentions, reference[f"{name}/attentions_{i}"], atol=TOL)


@pytest.mark.parametrize("pre", ["llama-bpe", "qwen2"])
def test_pre_tokenizers_split_as_transformers_gguf_tokenizer(pre, reference):
    """A byte-level vocabulary split by the file's tokenizer.ggml.pre (digits, contractions,
    newlines and spaces differ between them): the pieces and ids transformers' GGUF tokenizer
    gives."""
    name = f"tok-{pre}.gguf"
    tokenizer = vgguf.tokenizer_of(vgguf.read_gguf(FIXTURES / name))
    for i, text in enumerate(TOKEN_TEXTS):
        assert tokenizer.encode(text).ids == reference[f"{name}/ids_{i}"].tolist()
        pieces = [piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)]
        assert pieces == reference[f"{name}/pieces_{i}"].tolist()
    assert len({tuple(reference[f"tok-{p}.gguf/pieces_0"]) for p in PRES}) == len(PRES)


def test_smollm_splits_digits_one_by_one(reference):
    """SmolLM's pre-tokenizer (llama.cpp's "smollm", SmolLM's own tokenizer.json): every digit
    alone, the rest as GPT-2 splits it. transformers' GGUF loading does not know "smollm" and splits
    as GPT-2 (its recorded pieces): the same once digits are taken out."""
    name = "tok-smollm.gguf"
    tokenizer = vgguf.tokenizer_of(vgguf.read_gguf(FIXTURES / name))
    digits = "0123456789"
    for i, text in enumerate(TOKEN_TEXTS):
        pieces = [piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)]
        gpt2 = reference[f"{name}/pieces_{i}"].tolist()
        assert any(len(p) > 1 and p.strip("Ġ").isdigit() for p in gpt2)
        assert all(len(p) == 1 for p in pieces if any(c in digits for c in p))
        assert [p for p in pieces if p not in digits] == [
            p.strip(digits) for p in gpt2 if p.strip(digits)
        ]


def test_sentencepiece_vocabulary_as_transformers_reads_it(reference):
    """Scores, byte fallback, the ▁ prefix and BOS: the ids of transformers' GGUF tokenizer, and
    decoding gives the text back."""
    name = "llama-spm-F16.gguf"
    tokenizer = vgguf.tokenizer_of(vgguf.read_gguf(FIXTURES / name))
    for i, text in enumerate(TEXTS):
        encoding = tokenizer.encode(text)
        assert encoding.ids == reference[f"{name}/ids_{i}"].tolist()
        assert tokenizer.decode(encoding.ids) == text
    assert "\u2581the" in tokenizer.encode("the the").tokens


def reference_dequantize(raw: np.ndarray, type_id: int, shape: tuple[int, ...]) -> np.ndarray:
    """``gguf.quants.dequantize`` in place of visattn's."""
    kind = gguf.GGMLQuantizationType(type_id)
    rows = raw.reshape(int(np.prod(shape[:-1], dtype=np.int64)), -1)  # (rows, bytes per row)
    return gguf.quants.dequantize(rows, kind).astype(np.float32).reshape(shape)


@pytest.mark.parametrize("name", FILES)
def test_reader_and_dequantization_match_gguf_package(name):
    """Every tensor: the same name, shape, type and bytes as GGUFReader reads, and the same values
    as gguf.quants.dequantize."""
    ours = vgguf.read_gguf(FIXTURES / name)
    theirs = gguf.GGUFReader(FIXTURES / name)
    assert sorted(ours.tensors) == sorted(t.name for t in theirs.tensors)
    for t in theirs.tensors:
        mine = ours.tensors[t.name]
        assert mine.type_id == int(t.tensor_type)
        assert mine.shape == tuple(int(d) for d in reversed(t.shape))
        raw = np.memmap(ours.path, dtype=np.uint8, mode="r")[mine.start : mine.end]
        assert raw.tobytes() == t.data.tobytes()
        expected = gguf.quants.dequantize(t.data, t.tensor_type).reshape(mine.shape)
        got = vgguf.dequantize(raw, mine.type_id, mine.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    arch = ours.metadata["general.architecture"]
    assert arch == theirs.fields["general.architecture"].contents()
    assert (
        ours.metadata["tokenizer.ggml.tokens"] == theirs.fields["tokenizer.ggml.tokens"].contents()
    )


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1", "Q8_0", *K_TYPES])
def test_random_blocks_dequantize_as_gguf_package(kind):
    """Random bytes as blocks (every bit pattern of the values and scales; the float16 scales kept
    finite) read as gguf.quants.dequantize reads them."""
    qtype = gguf.GGMLQuantizationType[kind]
    block, nbytes = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(int(qtype))
    raw = rng.integers(0, 256, size=(64, nbytes), dtype=np.uint8)
    scales = rng.uniform(-2, 2, size=(64, 2)).astype(np.float16).view(np.uint8)  # (64, 4)
    if kind == "Q6_K":
        raw[:, -2:] = scales[:, :2]
    else:
        raw[:, : min(4, nbytes - 1)] = scales[:, : min(4, nbytes - 1)]
    if kind in ("Q4_0", "Q8_0"):
        raw[:, :2] = scales[:, :2]
        raw[:, 2:4] = rng.integers(0, 256, size=(64, 2), dtype=np.uint8)
    expected = gguf.quants.dequantize(raw, qtype)  # (64, block)
    got = vgguf.dequantize(raw.reshape(-1), int(qtype), (64, block))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["F32", "F16"])
def test_float_gguf_equals_safetensors_checkpoint(family, kind):
    """The GGUF of a safetensors checkpoint: the same tokens (its own vocabulary and merges), the
    same attentions (F16: to float16's precision) and the same greedy continuation."""
    ref = models.load(MODELS / family)
    model = models.load(FIXTURES / f"{family}-{kind}.gguf")
    tol = TOL if kind == "F32" else F16_TOL
    for text in TEXTS:
        expected, got = ref.run(text), model.run(text)
        assert list(got.tokens) == list(expected.tokens)
        assert got.attentions.shape == expected.attentions.shape
        np.testing.assert_allclose(got.attentions, expected.attentions, atol=tol)
    if kind == "F32":
        ids = ref.encode(TEXTS[0])[1]
        assert model.generate(ids, 6)[0] == ref.generate(ids, 6)[0]


def load_with_reference(path: Path, monkeypatch) -> models.Decoder:
    with monkeypatch.context() as patch:
        patch.setattr(vgguf, "dequantize", reference_dequantize)
        return models.load(path)


@pytest.mark.parametrize("name", [n for n in FILES if "-F32" not in n and "-F16" not in n])
def test_quantized_model_equals_reference_dequantization(name, monkeypatch):
    """A quantized GGUF's forward equals the forward of the same file with every tensor widened by
    gguf.quants.dequantize (the quantization's own error is the file's, not the reader's)."""
    model = models.load(FIXTURES / name)
    reference = load_with_reference(FIXTURES / name, monkeypatch)
    for text in TEXTS:
        expected, got = reference.run(text), model.run(text)
        assert list(got.tokens) == list(expected.tokens)
        np.testing.assert_allclose(got.attentions, expected.attentions, atol=TOL)


def test_float32_tensors_stay_in_the_mapped_file():
    """An F32 tensor is a view into the memory map (nothing read before it is used)."""
    g = vgguf.read_gguf(FIXTURES / "llama-F32.gguf")
    weights = vgguf.GGUFWeights(vgguf.hf_tensors(g, vgguf.config_of(g)), g.path)
    x = weights["model.norm.weight"]
    assert isinstance(x.base, np.ndarray) and not x.flags.owndata


def test_llama_rows_come_back_from_llama_cpp_order():
    """permute (llama.cpp's conversion) and unpermute are inverse for grouped heads."""
    x = np.arange(4 * 8 * 3, dtype=np.float32).reshape(32, 3)  # (H·Dh, D)
    np.testing.assert_array_equal(vgguf.unpermute(vgguf.permute(x, 4), 4), x)
    assert not np.array_equal(vgguf.permute(x, 4), x)


def write(path: Path, arch: str, tensors: dict, raw_dtype=None, **kv) -> Path:
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in kv.items():
        writer.add_uint32(key, value)
    for name, x in tensors.items():
        writer.add_tensor(name, x, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def refused(path: Path, code: str) -> InputError:
    with pytest.raises(InputError) as caught:
        models.load(path)
    assert caught.value.code == code
    assert caught.value.params["file"] == str(path)
    return caught.value


def test_truncated_and_foreign_files_are_refused(tmp_path):
    data = (FIXTURES / "qwen2-F16.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) // 2])
    refused(cut, "model_gguf")
    head = tmp_path / "head.gguf"
    head.write_bytes(data[:100])
    refused(head, "model_gguf")
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(b"PK\x03\x04" + data[4:])
    refused(foreign, "model_gguf")


def test_unknown_architecture_and_type_are_refused(tmp_path):
    x = np.ones((4, 32), dtype=np.float32)
    error = refused(
        write(tmp_path / "falcon.gguf", "falcon", {"token_embd.weight": x}), "model_unsupported"
    )
    assert "falcon" in error.params["what"]
    q5 = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q5_0)
    path = write(tmp_path / "q5.gguf", "llama", {"w": q5}, raw_dtype=gguf.GGMLQuantizationType.Q5_0)
    error = refused(path, "model_unsupported")
    assert "Q5_0" in error.params["what"]


def ollama_store(root: Path, name: str, tag: str, gguf_file: Path, host_path: str) -> Path:
    """An Ollama store holding ``gguf_file`` as the model layer of manifest ``name:tag``."""
    import hashlib
    import json

    digest = hashlib.sha256(gguf_file.read_bytes()).hexdigest()
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / f"sha256-{digest}").write_bytes(gguf_file.read_bytes())
    manifest = root / "manifests" / host_path / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:00"},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}), encoding="utf-8")
    return root


def test_sources_find_gguf_files_ollama_and_lm_studio(tmp_path):
    """A .gguf in VISATTN_MODELS (and one level down), Ollama's manifests → blobs under the Ollama
    name, LM Studio's publisher/repository/file.gguf: described from the file's head, named
    without paths, and each loads."""
    from visattn.models import sources

    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "tiny-gpt2.gguf").write_bytes((FIXTURES / "gpt2-Q8_0.gguf").read_bytes())
    (mine / "sub" / "tiny-llama.gguf").write_bytes((FIXTURES / "llama-F16.gguf").read_bytes())
    (mine / "sub" / "mmproj-tiny.gguf").write_bytes(b"GGUF")
    home = tmp_path / "home"
    store = home / ".ollama" / "models"
    ollama_store(store, "qwen2", "tiny", FIXTURES / "qwen2-Q4_0.gguf", "registry.ollama.ai/library")
    ollama_store(store, "k", "q4", FIXTURES / "kquant-Q4_K.gguf", "hf.co/someone")
    studio = home / ".lmstudio" / "models" / "someone" / "tiny-GGUF"
    studio.mkdir(parents=True)
    (studio / "qwen2-Q8_0.gguf").write_bytes((FIXTURES / "qwen2-Q8_0.gguf").read_bytes())
    env = {"VISATTN_MODELS": str(mine), "HOME": str(home), "HF_HUB_CACHE": str(tmp_path / "none")}
    found = {s.id: s for s in sources.find([], env)}
    assert sorted(found) == sorted(
        [
            "tiny-gpt2",
            "tiny-llama",
            "qwen2:tiny",
            "hf.co/someone/k:q4",
            "someone/tiny-GGUF/qwen2-Q8_0",
        ]
    )
    for id, source in found.items():
        assert source.usable and str(tmp_path) not in id
        g = vgguf.read_gguf(source.path)
        expected = sum(int(np.prod(t.shape)) for t in g.tensors.values())
        assert source.n_params == expected
        assert source.disk_bytes == sum(t.end - t.start for t in g.tensors.values())
        model = models.load(source.path)
        assert (model.config.n_layers, model.config.n_heads) == (source.n_layers, source.n_heads)
    assert found["qwen2:tiny"].origin == "ollama" and found["tiny-gpt2"].family == "gpt2"
    assert found["someone/tiny-GGUF/qwen2-Q8_0"].origin == "lmstudio"


def test_an_unreadable_gguf_is_listed_with_the_reason(tmp_path):
    from visattn.models import sources

    x = np.ones((4, 32), dtype=np.float32)
    write(tmp_path / "falcon.gguf", "falcon", {"token_embd.weight": x})
    found = sources.find([tmp_path], {"HF_HUB_CACHE": str(tmp_path / "none")})
    assert [s.id for s in found] == ["falcon"]
    assert found[0].problem.code == "model_unsupported" and not found[0].usable


NEW_ARCHS = ("qwen3", "gemma2", "gemma3", "phi3")
CONFIG_FIELDS = (
    "model_type",
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "tie_word_embeddings",
)
GEMMA_FIELDS = (
    "head_dim",
    "sliding_window",
    "query_pre_attn_scalar",
    "layer_types",
    "hidden_activation",
    "attn_logit_softcapping",
    "final_logit_softcapping",
)


@pytest.mark.parametrize("arch", NEW_ARCHS)
def test_new_architectures_map_to_the_transformers_checkpoint(arch, reference):
    """Qwen3, Gemma 2, Gemma 3 and Phi-3 files (written as llama.cpp converts them, read back by
    transformers' GGUF loading to the same tensors): every tensor under its Hugging Face name with
    the checkpoint's values (Gemma's norms back from 1 + w), and the config fields the family
    modules read."""
    name = f"{arch}-F16.gguf"
    g = vgguf.read_gguf(FIXTURES / name)
    config = vgguf.config_of(g)
    weights = vgguf.GGUFWeights(vgguf.hf_tensors(g, config), g.path)
    prefix = f"{name}/tensor/"
    expected = {k[len(prefix) :]: v for k, v in reference.items() if k.startswith(prefix)}
    assert sorted(weights) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(weights[key], value)
    original = json.loads(str(reference[f"{name}/config"]))
    for field in CONFIG_FIELDS + (GEMMA_FIELDS if arch.startswith("gemma") else ()):
        assert config[field] == original[field], field
    assert config["rms_norm_eps"] == pytest.approx(original["rms_norm_eps"], rel=1e-6)
    rope, expected_rope = config["rope_parameters"], original["rope_parameters"]
    if arch == "gemma3":
        for kind in ("full_attention", "sliding_attention"):
            assert rope[kind]["rope_theta"] == expected_rope[kind]["rope_theta"]
    else:
        assert rope["rope_theta"] == expected_rope["rope_theta"]
    if arch == "phi3":
        assert rope["partial_rotary_factor"] == expected_rope["partial_rotary_factor"]


def checkpoint_of(arch: str, reference: dict, folder: Path) -> Path:
    """The transformers model ``arch``-F16.gguf was converted from, as a safetensors folder: its
    state dict and config from reference.npz, the qwen2 fixture's tokenizer.json (the GGUF's
    vocabulary)."""
    from safetensors.numpy import save_file

    name = f"{arch}-F16.gguf"
    prefix = f"{name}/tensor/"
    tensors = {k[len(prefix) :]: v for k, v in reference.items() if k.startswith(prefix)}
    folder.mkdir()
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(str(reference[f"{name}/config"]), encoding="utf-8")
    (folder / "tokenizer.json").write_bytes((MODELS / "qwen2" / "tokenizer.json").read_bytes())
    return folder


@pytest.mark.parametrize("arch", NEW_ARCHS)
def test_new_architectures_run_as_their_checkpoint(arch, reference, tmp_path):
    """Qwen3, Gemma 2, Gemma 3 and Phi-3 files load as their family (Gemma's norms, √D embeddings,
    windows and soft-caps included) and compute what the checkpoint they were converted from
    computes: the same tokens, attentions and logits (the file's F16 weights are the checkpoint's
    float16 values; Gemma's norms come back from 1 + w) and the same greedy continuation."""
    expected_model = models.load(checkpoint_of(arch, reference, tmp_path / arch))
    model = models.load(FIXTURES / f"{arch}-F16.gguf")
    assert model.config.mechanisms == expected_model.config.mechanisms
    for name in ("query_scale", "softcap", "final_softcap", "sliding_layers", "local_rope_theta"):
        assert getattr(model.config, name) == getattr(expected_model.config, name), name
    for text in TEXTS:
        expected, got = expected_model.run(text), model.run(text)
        assert got.token_ids.tolist() == expected.token_ids.tolist()
        np.testing.assert_allclose(got.attentions, expected.attentions, atol=TOL)
        np.testing.assert_allclose(got.hidden, expected.hidden, atol=TOL)
        np.testing.assert_allclose(got.next_logits, expected.next_logits, atol=TOL)
    ids = expected_model.encode(TEXTS[0])[1]
    assert model.generate(ids, 6)[0] == expected_model.generate(ids, 6)[0]


def test_the_pretrained_page_draws_an_ollama_model_by_its_name(monkeypatch, tmp_path):
    """A model in Ollama's store, chosen in the link by its Ollama name: the page draws its heads
    from the GGUF blob, and neither the link nor the page shows the blob's path."""
    from apptest_util import array, assert_clean, figures, run_page, texts

    from ui.cache import models as cache_models

    store = tmp_path / "ollama"
    ollama_store(store, "qwen2", "tiny", FIXTURES / "qwen2-Q4_0.gguf", "registry.ollama.ai/library")
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    monkeypatch.setenv("VISATTN_MODELS", str(tmp_path / "none"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "none"))
    cache_models.available.clear()
    try:
        text = "the keys the values"
        at = run_page("pretrained", {"pt_model": "qwen2:tiny", "pt_text": text})
        assert_clean(at)
        assert at.selectbox(key="pt_model").value == "qwen2:tiny"
        grid = next(f for f in figures(at) if len(f["data"]) > 1)
        assert len(grid["data"]) == 2 * 4  # L × H of the qwen2 fixture
        expected = models.load(FIXTURES / "qwen2-Q4_0.gguf").run(text).attentions  # (L, H, T, T)
        np.testing.assert_allclose(array(grid["data"][-1]["z"]), expected[-1, -1], atol=1e-6)
        options = at.selectbox(key="pt_model").options  # as the picker shows them
        assert any(o.startswith("qwen2:tiny") for o in options), options
        shown = texts(at) + " ".join(str(c.value) for c in at.caption) + " ".join(options)
        assert str(store) not in shown + str(dict(at.query_params)) and "sha256" not in shown
    finally:
        cache_models.available.clear()
