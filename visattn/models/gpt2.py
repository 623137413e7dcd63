"""GPT-2 in NumPy from a checkpoint folder: pre-LN blocks, learned positions, GELU (tanh form),
the output layer tied to the token embeddings.

Per layer, as Hugging Face's ``GPT2Model`` (eval mode): ``x = x + Attn(LN₁(x))``, ``x = x +
W₂ GELU(W₁ LN₂(x))``; the last hidden state goes through ``ln_f``; logits = hidden · Eᵀ. GPT-2's
linear layers are ``Conv1D``: their weights are stored (in, out), so y = x W + b without a
transpose. Tensor names may carry the ``transformer.`` prefix of GPT2LMHeadModel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import loading
from .causal import Cache, Decoder, by_rows, causal_attention, tokenizer_flavour

ANCHOR = "wte.weight"
SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))


@dataclass(frozen=True)
class GPT2Config:
    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    max_positions: int
    vocab_size: int
    layer_norm_eps: float
    activation: str

    @property
    def n_kv_heads(self) -> int:
        return self.n_heads

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def from_dict(cls, cfg: dict, path: Path) -> GPT2Config:
        d_model = loading.config_int(cfg, ("n_embd", "hidden_size"), path)
        config = cls(
            n_layers=loading.config_int(cfg, ("n_layer", "num_hidden_layers"), path),
            n_heads=loading.config_int(cfg, ("n_head", "num_attention_heads"), path),
            d_model=d_model,
            d_ff=loading.config_int(cfg, ("n_inner",), path, default=4 * d_model),
            max_positions=loading.config_int(cfg, ("n_positions", "n_ctx"), path),
            vocab_size=loading.config_int(cfg, ("vocab_size",), path),
            layer_norm_eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
            activation=str(cfg.get("activation_function", "gelu_new")),
        )
        loading.head_width(config.d_model, config.n_heads, path)  # d_head divides the width
        if config.activation not in ACTIVATIONS:
            raise InputError(
                "model_unsupported",
                f"{path}: activation_function={config.activation!r}; this app implements "
                f"{sorted(ACTIVATIONS)}.",
                file=str(path),
                what=f"activation_function={config.activation}",
            )
        if config.d_model % config.n_heads:
            raise InputError(
                "model_unsupported",
                f"{path}: n_embd={d_model} is not divisible by n_head={config.n_heads}.",
                file=str(path),
                what=f"n_embd={d_model}, n_head={config.n_heads}",
            )
        if cfg.get("scale_attn_by_inverse_layer_idx") or cfg.get("reorder_and_upcast_attn"):
            raise InputError(
                "model_unsupported",
                f"{path}: scale_attn_by_inverse_layer_idx / reorder_and_upcast_attn are not "
                "implemented.",
                file=str(path),
                what="scale_attn_by_inverse_layer_idx",
            )
        return config

    def shapes(self) -> dict[str, tuple[int, ...]]:
        D, F = self.d_model, self.d_ff
        expected = {
            "wte.weight": (self.vocab_size, D),
            "wpe.weight": (self.max_positions, D),
            "ln_f.weight": (D,),
            "ln_f.bias": (D,),
        }
        for i in range(self.n_layers):
            p = f"h.{i}."
            expected |= {
                p + "ln_1.weight": (D,),
                p + "ln_1.bias": (D,),
                p + "attn.c_attn.weight": (D, 3 * D),
                p + "attn.c_attn.bias": (3 * D,),
                p + "attn.c_proj.weight": (D, D),
                p + "attn.c_proj.bias": (D,),
                p + "ln_2.weight": (D,),
                p + "ln_2.bias": (D,),
                p + "mlp.c_fc.weight": (D, F),
                p + "mlp.c_fc.bias": (F,),
                p + "mlp.c_proj.weight": (F, D),
                p + "mlp.c_proj.bias": (D,),
            }
        return expected


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis of x (T, D) (biased variance, as torch), a new array."""
    y = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(y), axis=-1, keepdims=True)  # (T, 1)
    y *= 1.0 / np.sqrt(var + np.float32(eps))
    y *= g
    y += b
    return y


def gelu_tanh_(x: np.ndarray) -> np.ndarray:
    """GELU's tanh form ½x(1 + tanh(√(2/π)(x + 0.044715x³))) in place (GPT-2's "gelu_new")."""
    inner = np.square(x)
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= SQRT_2_OVER_PI
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    x *= np.float32(0.5)
    x *= inner
    return x


def gelu_erf_(x: np.ndarray) -> np.ndarray:
    from .layers import gelu_

    return gelu_(x, np.empty_like(x), np.empty_like(x), np.empty_like(x))


ACTIVATIONS = {"gelu_new": gelu_tanh_, "gelu_pytorch_tanh": gelu_tanh_, "gelu": gelu_erf_}


@dataclass(frozen=True)
class _Layer:
    ln1: tuple[np.ndarray, np.ndarray]
    W_qkv: np.ndarray  # (D, 3D), W_q carrying 1/√Dh
    b_qkv: np.ndarray  # (3D,)
    W_o: np.ndarray  # (D, D)
    b_o: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]
    W_1: np.ndarray  # (D, Dff)
    b_1: np.ndarray
    W_2: np.ndarray  # (Dff, D)
    b_2: np.ndarray


class GPT2(Decoder):
    family = "gpt2"

    def __init__(
        self, config: GPT2Config, weights, tokenizer, path: Path, widen_at_load: bool = True
    ):
        super().__init__(config, tokenizer, path, *tokenizer_flavour(tokenizer))

        def w(name: str) -> np.ndarray | loading.Stored:
            # float32 tensors stay read-only views into the mapped file (loading copies nothing);
            # float16 / bfloat16 / quantized matrices stay as stored until widened
            return weights.stored(name)

        D = config.d_model
        self.wte = w("wte.weight")  # (Nv, D)
        self.wpe = w("wpe.weight")  # (Npos, D)
        self.ln_f = (w("ln_f.weight"), w("ln_f.bias"))
        layers = []
        for i in range(config.n_layers):
            p = f"h.{i}."
            layers.append(
                _Layer(
                    ln1=(w(p + "ln_1.weight"), w(p + "ln_1.bias")),
                    W_qkv=w(p + "attn.c_attn.weight"),
                    b_qkv=w(p + "attn.c_attn.bias"),
                    W_o=w(p + "attn.c_proj.weight"),
                    b_o=w(p + "attn.c_proj.bias"),
                    ln2=(w(p + "ln_2.weight"), w(p + "ln_2.bias")),
                    W_1=w(p + "mlp.c_fc.weight"),
                    b_1=w(p + "mlp.c_fc.bias"),
                    W_2=w(p + "mlp.c_proj.weight"),
                    b_2=w(p + "mlp.c_proj.bias"),
                )
            )
        self.layers = tuple(layers)
        if widen_at_load:  # the float32 model fits the budget: widened once, here
            self.wte, self.wpe = loading.widen(self.wte), loading.widen(self.wpe)
            self.layers = tuple(map(loading.widened, self.layers))
        self.activation = ACTIVATIONS[config.activation]
        assert self.wte.shape == (config.vocab_size, D)

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        x = loading.gather(self.wte, ids)  # (T, D)
        x += loading.gather(self.wpe, slice(start, start + ids.size))
        return x

    def attention_args(self, i: int) -> dict:
        """Keyword arguments of causal_attention for layer i: 1/√Dh, no window."""
        return {"scale": self.config.d_head**-0.5, "window": None}

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray | None):
        c, layer = self.config, loading.in_flight(self, i)
        T, H, Dh = x.shape[0], c.n_heads, c.d_head
        a = layer_norm(x, *layer.ln1, c.layer_norm_eps)
        qkv = a @ layer.W_qkv  # (T, D) x (D, 3D) -> (T, 3D)
        qkv += layer.b_qkv
        q, k, v = qkv.reshape(T, 3, H, Dh).transpose(1, 2, 0, 3)  # 3 × (H, T, Dh)
        k, v = cache.extend(i, np.ascontiguousarray(k), np.ascontiguousarray(v), q)  # (H, S, Dh)
        args = self.attention_args(i)
        _, out = causal_attention(q, k, v, start, **args, weights=weights, scratch=weights is None)
        y = out @ layer.W_o  # (T, D) x (D, D) -> (T, D)
        y += layer.b_o
        x = x + y
        m = layer_norm(x, *layer.ln2, c.layer_norm_eps)
        h = m @ layer.W_1  # (T, D) x (D, Dff) -> (T, Dff)
        h += layer.b_1
        by_rows(self.activation, h)
        y = h @ layer.W_2  # (T, Dff) x (Dff, D) -> (T, D)
        y += layer.b_2
        x += y
        return x

    def final_norm(self, x: np.ndarray) -> np.ndarray:
        return layer_norm(x, *self.ln_f, self.config.layer_norm_eps)

    def head_values(self, i: int, x: np.ndarray) -> np.ndarray:
        c, layer = self.config, loading.in_flight(self, i)
        T, H, D, Dh = x.shape[0], c.n_heads, c.d_model, c.d_head
        a = layer_norm(x, *layer.ln1, c.layer_norm_eps)
        v = a @ layer.W_qkv[:, 2 * D :] + layer.b_qkv[2 * D :]  # (T, D)
        v = v.reshape(T, H, Dh).transpose(1, 0, 2)  # (H, T, Dh)
        return v @ layer.W_o.reshape(H, Dh, D)  # (H, T, Dh) x (H, Dh, D) -> (H, T, D)

    def head_queries_keys(self, i: int, x: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
        c, layer = self.config, loading.in_flight(self, i)
        D, Dh = c.d_model, c.d_head
        a = layer_norm(x, *layer.ln1, c.layer_norm_eps).astype(np.float64)  # (T, D)
        q_cols = slice(head * Dh, (head + 1) * Dh)  # head h's columns of the query block
        k_cols = slice(D + head * Dh, D + (head + 1) * Dh)  # … of the key block
        q = a @ layer.W_qkv[:, q_cols] + layer.b_qkv[q_cols]  # (T, Dh)
        k = a @ layer.W_qkv[:, k_cols] + layer.b_qkv[k_cols]  # (T, Dh)
        return q * Dh**-0.5, k

    def unembed(self, hidden: np.ndarray) -> np.ndarray:
        return loading.times_transposed(hidden, self.wte)  # (T, D) x (D, Nv) -> (T, Nv)


def build(folder: Path, cfg: dict, weights: loading.Weights, tokenizer: Tokenizer) -> GPT2:
    config = GPT2Config.from_dict(cfg, folder / loading.CONFIG)
    weights = weights.with_prefix(loading.find_prefix(weights, ANCHOR))
    loading.check_shapes(weights, config.shapes())
    return GPT2(config, weights, tokenizer, folder, loading.widen_at_load(weights.tensors))
