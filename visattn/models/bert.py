"""BERT-family encoders from a checkpoint folder (BERT, MiniLM, bert-base-chinese-style
vocabularies): the NumPy encoder of :mod:`.encoder`, fed by the common loader.

MiniLM is one such checkpoint: :class:`~visattn.models.encoder.BertEncoder` computes any
``BertModel`` (post-LN layers, absolute positions, erf GELU); this module reads the folder, strips
the ``bert.`` prefix of a checkpoint saved with a head (BertForMaskedLM, BertForPreTraining) and
checks every tensor's shape against config.json before anything is built."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from . import loading
from .encoder import BertConfig, BertEncoder

ANCHOR = "embeddings.word_embeddings.weight"


def shapes(c: BertConfig, type_vocab: int) -> dict[str, tuple[int, ...]]:
    D, F = c.d_model, c.d_ff
    expected = {
        "embeddings.word_embeddings.weight": (c.vocab_size, D),
        "embeddings.position_embeddings.weight": (c.max_positions, D),
        "embeddings.token_type_embeddings.weight": (type_vocab, D),
        "embeddings.LayerNorm.weight": (D,),
        "embeddings.LayerNorm.bias": (D,),
    }
    for i in range(c.n_layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            expected[p + f"attention.self.{name}.weight"] = (D, D)
            expected[p + f"attention.self.{name}.bias"] = (D,)
        expected |= {
            p + "attention.output.dense.weight": (D, D),
            p + "attention.output.dense.bias": (D,),
            p + "attention.output.LayerNorm.weight": (D,),
            p + "attention.output.LayerNorm.bias": (D,),
            p + "intermediate.dense.weight": (F, D),
            p + "intermediate.dense.bias": (F,),
            p + "output.dense.weight": (D, F),
            p + "output.dense.bias": (D,),
            p + "output.LayerNorm.weight": (D,),
            p + "output.LayerNorm.bias": (D,),
        }
    return expected


def build(folder: Path, cfg: dict, weights: loading.Weights, tokenizer: Tokenizer) -> BertEncoder:
    path = folder / loading.CONFIG
    for name in (
        "num_hidden_layers",
        "num_attention_heads",
        "hidden_size",
        "intermediate_size",
        "max_position_embeddings",
        "vocab_size",
    ):
        loading.config_int(cfg, (name,), path)
    loading.head_width(cfg["hidden_size"], cfg["num_attention_heads"], path)
    config = BertConfig.from_json(path)
    weights = weights.with_prefix(loading.find_prefix(weights, ANCHOR))
    type_vocab = loading.config_int(cfg, ("type_vocab_size",), path, default=2)
    loading.check_shapes(weights, shapes(config, type_vocab))
    return BertEncoder(config, weights, tokenizer, folder)
