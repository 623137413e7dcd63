"""Whole models whose attention the pages show.

``block`` (the post-LN layer loop the toy models share), ``designed`` (a hand-built transformer with
readable heads), ``random`` (the same block with seeded untrained weights), ``induction`` (a
hand-built two-layer causal model whose heads copy), ``minilm`` (a BERT encoder in NumPy; the
bundled all-MiniLM-L6-v2 by default), and checkpoints read from a folder: ``loading`` (config,
safetensors by memory map, tokenizer), ``bert``, ``gpt2``, ``llama`` (LLaMA, Mistral, Qwen2, Qwen3,
OLMo 2, SmolLM3, Phi-3, Gemma 2, Gemma 3), ``gpt_oss`` (attention sinks, windows on alternate
layers, a mixture of experts, MXFP4 experts), ``causal`` (what the decoders share: masking, the KV
cache, greedy generation), ``pieces`` (byte-level pieces shown as characters), ``gguf`` (llama.cpp's
single-file format), ``sources`` (where the app finds checkpoints).

``load(path)`` reads any of them: the result's ``.run(text)`` gives ``.tokens`` and ``.attentions``
(L, H, T, T) for every family (a decoder's computed when read: ``causal.AttentionMaps``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:  # annotations only: importing visattn.models loads no model code
    import numpy as np

    from .causal import Decoder, DecoderResult
    from .encoder import BertEncoder, BertResult

# config.json's model_type → the module that builds it
FAMILIES = {
    "bert": "bert",
    "gpt2": "gpt2",
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "llama",
    "qwen3": "llama",  # QK-norm per head
    "olmo2": "llama",  # QK-norm over the whole projection, post-norm blocks
    "smollm3": "llama",  # no RoPE on every fourth layer
    "phi3": "llama",  # fused qkv_proj and gate_up_proj (Phi-3, Phi-4-mini)
    "gemma2": "llama",  # soft-capping, local/global layers, sandwich norms, scaled embeddings
    "gemma3_text": "llama",  # Gemma 2's without soft-capping, with QK-norm and two RoPE bases
    "gemma3": "llama",  # the multimodal Gemma 3's text model (its text_config)
    "gpt_oss": "gpt_oss",  # sinks, a window on alternate layers, mixture of experts, MXFP4
}


def family_of(config: dict, path: Path) -> str:
    """The family module's name for a config, or InputError naming the unknown model_type."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:  # ["bert"] is no name
        raise InputError(
            "model_type",
            f"{path}: model_type={model_type!r}; this app reads {sorted(FAMILIES)}.",
            file=str(path),
            type=str(model_type),
            known=", ".join(sorted(FAMILIES)),
        )
    return FAMILIES[model_type]


# What a damaged or hand-edited file can raise deep in a family's reading (a string where a number
# goes, a list where a table goes): at the boundary, one refusal naming the file.
DAMAGED = (
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
    OverflowError,
    ZeroDivisionError,
    RecursionError,
)


@contextmanager
def refusing(path: Path) -> Iterator[None]:
    """Any of :data:`DAMAGED` raised inside, as InputError("model_damaged") naming ``path``; an
    InputError as it is."""
    try:
        yield
    except InputError:
        raise
    except DAMAGED as exc:
        raise InputError(
            "model_damaged",
            f"{path}: a value is not what a model holds ({type(exc).__name__}: {exc}).",
            file=str(path),
        ) from None


def load(path: str | Path) -> BertEncoder | Decoder:
    """The model in folder ``path`` (config.json, *.safetensors, tokenizer.json), or in the file
    ``path`` (a GGUF file, llama.cpp's format: see :mod:`visattn.models.gguf`), in NumPy.

    Returns a :class:`~visattn.models.encoder.BertEncoder` (BERT family) or a
    :class:`~visattn.models.causal.Decoder` (GPT-2 and the LLaMA family). Raises InputError,
    naming the file, for a folder it cannot read; nothing is built before every check passed."""
    import importlib

    from . import loading

    folder = Path(path)
    with refusing(folder):
        if folder.is_file():  # a .gguf file, or an Ollama blob (a GGUF file named by its digest)
            from .gguf import load_gguf

            return load_gguf(folder)
        config = loading.read_config(folder)
        family = family_of(config, folder / loading.CONFIG)
        weights = loading.Weights.open(folder)
        tokenizer = loading.read_tokenizer(folder)
        module = importlib.import_module(f"{__name__}.{family}")
        return module.build(folder, config, weights, tokenizer)


def value_norms(model: BertEncoder | Decoder, result: BertResult | DecoderResult) -> np.ndarray:
    """(L, H, T) ‖v_j W_O^h‖ of a run of any loaded model (the norm-weighted reading's factor)."""
    from .causal import Decoder

    if isinstance(model, Decoder):
        return model.value_norms(result)
    from ..reading import encoder_value_norms

    return encoder_value_norms(model, result)


def queries_keys(
    model: BertEncoder | Decoder, result: BertResult | DecoderResult, layer: int, head: int
) -> tuple[np.ndarray, np.ndarray]:
    """One head's queries and keys in a run of any loaded model, (T, Dh) float64 each, queries
    scaled by 1/√Dh so that q·k is the score (a RoPE model's after their rotation; Gemma's scaled
    by query_pre_attn_scalar^−½, and Gemma 2's score is then soft-capped: see the decoder's
    ``attention_args``)."""
    from ..reading import _head_index, encoder_queries_keys
    from .causal import Decoder

    if not isinstance(model, Decoder):
        return encoder_queries_keys(model, result, layer, head)
    layer = _head_index(layer, "layer", model.config.n_layers)
    head = _head_index(head, "head", model.config.n_heads)
    return model.head_queries_keys(layer, result.layer_inputs[layer], head)
