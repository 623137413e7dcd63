"""LLaMA-style decoders in NumPy (LLaMA, Mistral, Qwen2): RMSNorm, rotary positions (RoPE), SwiGLU,
grouped-query attention, Qwen2's biases on the query, key and value projections.

Per layer, as Hugging Face's ``LlamaModel`` (eval mode): ``x = x + W_o Attn(RoPE(W_q n), RoPE(W_k
n), W_v n)`` with n = RMSNorm₁(x), then ``x = x + W_down(SiLU(W_gate m) ⊙ W_up m)`` with m =
RMSNorm₂(x); the last hidden state goes through the final RMSNorm; logits = hidden · W_lmᵀ (the
embedding table when ``tie_word_embeddings``). No position embeddings: RoPE turns each query and key
by its position, so a score depends on the distance between the two. Mistral masks keys more than
``sliding_window`` − 1 positions back. Linear weights (out, in) are read through their transpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import loading
from .causal import Cache, Decoder, by_rows, causal_attention, tokenizer_flavour

ANCHOR = "embed_tokens.weight"


@dataclass(frozen=True)
class LlamaConfig:
    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    d_ff: int
    max_positions: int
    vocab_size: int
    rms_eps: float
    rope_theta: float
    rope_scaling: tuple[tuple[str, float], ...]  # llama3's factors, () for plain RoPE
    qkv_bias: bool
    o_bias: bool
    mlp_bias: bool
    tied: bool
    window: int | None  # Mistral's sliding window

    @classmethod
    def from_dict(cls, cfg: dict, path: Path) -> LlamaConfig:
        model_type = str(cfg.get("model_type"))

        def number(*names, default=None) -> int:
            return loading.config_int(cfg, names, path, default)

        d_model = number("hidden_size")
        n_heads = number("num_attention_heads")
        rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        theta = float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0)))
        if rope_type not in ("default", "llama3"):
            raise InputError(
                "model_unsupported",
                f"{path}: rope type {rope_type!r}; this app implements plain RoPE and llama3's.",
                file=str(path),
                what=f"rope_type={rope_type}",
            )
        scaling = ()
        if rope_type == "llama3":
            keys = ("factor", "low_freq_factor", "high_freq_factor")
            scaling = tuple((k, float(rope[k])) for k in keys) + (
                (
                    "original_max_position_embeddings",
                    float(rope["original_max_position_embeddings"]),
                ),
            )
        if cfg.get("hidden_act", "silu") != "silu":
            raise InputError(
                "model_unsupported",
                f"{path}: hidden_act={cfg['hidden_act']!r}; this app implements silu.",
                file=str(path),
                what=f"hidden_act={cfg['hidden_act']}",
            )
        window = None
        if model_type == "mistral" or cfg.get("use_sliding_window"):
            window = cfg.get("sliding_window")
        config = cls(
            model_type=model_type,
            n_layers=number("num_hidden_layers"),
            n_heads=n_heads,
            n_kv_heads=number("num_key_value_heads", default=n_heads),
            d_model=d_model,
            d_head=number("head_dim", default=d_model // n_heads),
            d_ff=number("intermediate_size"),
            max_positions=number("max_position_embeddings"),
            vocab_size=number("vocab_size"),
            rms_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=theta,
            rope_scaling=scaling,
            qkv_bias=model_type == "qwen2" or bool(cfg.get("attention_bias")),
            o_bias=model_type != "qwen2" and bool(cfg.get("attention_bias")),
            mlp_bias=bool(cfg.get("mlp_bias")),
            tied=bool(cfg.get("tie_word_embeddings", False)),
            window=int(window) if window else None,
        )
        if n_heads % config.n_kv_heads:
            raise InputError(
                "model_unsupported",
                f"{path}: num_attention_heads={n_heads} is not a multiple of "
                f"num_key_value_heads={config.n_kv_heads}.",
                file=str(path),
                what=f"num_key_value_heads={config.n_kv_heads}",
            )
        return config

    def shapes(self) -> dict[str, tuple[int, ...]]:
        D, F, Dh = self.d_model, self.d_ff, self.d_head
        Dq, Dkv = self.n_heads * Dh, self.n_kv_heads * Dh
        expected = {"embed_tokens.weight": (self.vocab_size, D), "norm.weight": (D,)}
        for i in range(self.n_layers):
            p = f"layers.{i}."
            expected |= {
                p + "input_layernorm.weight": (D,),
                p + "self_attn.q_proj.weight": (Dq, D),
                p + "self_attn.k_proj.weight": (Dkv, D),
                p + "self_attn.v_proj.weight": (Dkv, D),
                p + "self_attn.o_proj.weight": (D, Dq),
                p + "post_attention_layernorm.weight": (D,),
                p + "mlp.gate_proj.weight": (F, D),
                p + "mlp.up_proj.weight": (F, D),
                p + "mlp.down_proj.weight": (D, F),
            }
            if self.qkv_bias:
                expected |= {
                    p + "self_attn.q_proj.bias": (Dq,),
                    p + "self_attn.k_proj.bias": (Dkv,),
                    p + "self_attn.v_proj.bias": (Dkv,),
                }
            if self.o_bias:
                expected[p + "self_attn.o_proj.bias"] = (D,)
            if self.mlp_bias:
                for name, n in (("gate_proj", F), ("up_proj", F), ("down_proj", D)):
                    expected[p + f"mlp.{name}.bias"] = (n,)
        return expected


def inverse_frequencies(config: LlamaConfig) -> np.ndarray:
    """RoPE's (Dh / 2,) float32 angular frequencies θ^(−2i/Dh), computed in float32 as torch does;
    llama3's scaling slows the low frequencies (long wavelengths) by ``factor``."""
    Dh = config.d_head
    exponents = np.arange(0, Dh, 2, dtype=np.int64).astype(np.float32) / np.float32(Dh)
    inv = (np.float32(1.0) / (np.float32(config.rope_theta) ** exponents)).astype(np.float32)
    if not config.rope_scaling:
        return inv
    s = dict(config.rope_scaling)
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / s["low_freq_factor"], old / s["high_freq_factor"]
    wavelen = np.float32(2 * np.pi) / inv
    scaled = np.where(wavelen > low_wavelen, inv / np.float32(s["factor"]), inv)
    smooth = (old / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
    smoothed = (1 - smooth) * scaled / np.float32(s["factor"]) + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return np.where(medium, smoothed, scaled).astype(np.float32)


def rope_(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate (heads, T, Dh) by position: x·cos + rotate_half(x)·sin with rotate_half(x) =
    (−x₂, x₁) for the halves x₁, x₂ (Hugging Face's layout), returning a new array."""
    half = x.shape[-1] // 2
    turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + turned * sin


def rms_norm(x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    """x / √(mean(x²) + eps) · g over the last axis."""
    var = np.mean(np.square(x), axis=-1, keepdims=True)  # (T, 1)
    y = x * (np.float32(1.0) / np.sqrt(var + np.float32(eps)))
    y *= g
    return y


def silu_(x: np.ndarray) -> np.ndarray:
    """x·σ(x) in place."""
    s = np.negative(x)
    np.exp(s, out=s)
    s += np.float32(1.0)
    x /= s
    return x


@dataclass(frozen=True)
class _Layer:
    ln1: np.ndarray  # (D,)
    W_q: np.ndarray  # (D, H·Dh)
    W_k: np.ndarray  # (D, Hkv·Dh)
    W_v: np.ndarray
    b_q: np.ndarray | None
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    W_o: np.ndarray  # (H·Dh, D)
    b_o: np.ndarray | None
    ln2: np.ndarray
    W_gate: np.ndarray  # (D, Dff)
    W_up: np.ndarray
    W_down: np.ndarray  # (Dff, D)
    b_mlp: tuple[np.ndarray, np.ndarray, np.ndarray] | None


class Llama(Decoder):
    family = "llama"
    positions = "rotary"  # no position embeddings: RoPE rotates queries and keys in every layer

    def __init__(self, config: LlamaConfig, weights, tokenizer, path: Path):
        super().__init__(config, tokenizer, path, *tokenizer_flavour(tokenizer))

        def w(name: str) -> np.ndarray:
            # float32 tensors stay read-only views into the mapped file (loading copies nothing)
            return np.asarray(weights[name], dtype=np.float32)

        def linear(name: str) -> np.ndarray:  # (out, in) -> its (in, out) transposed view
            return w(name).T

        def bias(name: str, present: bool) -> np.ndarray | None:
            return w(name) if present else None

        c = config
        self.embed_tokens = w("embed_tokens.weight")  # (Nv, D)
        self.norm = w("norm.weight")
        self.lm_head = self.embed_tokens if c.tied else w("lm_head.weight")  # (Nv, D)
        layers = []
        for i in range(c.n_layers):
            p = f"layers.{i}."
            a, m = p + "self_attn.", p + "mlp."
            b_mlp = None
            if c.mlp_bias:
                b_mlp = tuple(w(m + n + ".bias") for n in ("gate_proj", "up_proj", "down_proj"))
            layers.append(
                _Layer(
                    ln1=w(p + "input_layernorm.weight"),
                    W_q=linear(a + "q_proj.weight"),
                    W_k=linear(a + "k_proj.weight"),
                    W_v=linear(a + "v_proj.weight"),
                    b_q=bias(a + "q_proj.bias", c.qkv_bias),
                    b_k=bias(a + "k_proj.bias", c.qkv_bias),
                    b_v=bias(a + "v_proj.bias", c.qkv_bias),
                    W_o=linear(a + "o_proj.weight"),
                    b_o=bias(a + "o_proj.bias", c.o_bias),
                    ln2=w(p + "post_attention_layernorm.weight"),
                    W_gate=linear(m + "gate_proj.weight"),
                    W_up=linear(m + "up_proj.weight"),
                    W_down=linear(m + "down_proj.weight"),
                    b_mlp=b_mlp,
                )
            )
        self.layers = tuple(layers)
        self.inv_freq = inverse_frequencies(c)  # (Dh / 2,)

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        return self.embed_tokens[ids]  # (T, D), a copy

    def rotation(self, start: int, T: int) -> tuple[np.ndarray, np.ndarray]:
        """cos and sin (T, Dh) of positions start … start + T − 1."""
        positions = np.arange(start, start + T, dtype=np.float32)
        freqs = positions[:, None] * self.inv_freq[None, :]  # (T, Dh / 2)
        angles = np.concatenate([freqs, freqs], axis=-1)  # (T, Dh)
        return np.cos(angles), np.sin(angles)

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray):
        c, layer = self.config, self.layers[i]
        T, H, Hkv, Dh = x.shape[0], c.n_heads, c.n_kv_heads, c.d_head
        n = rms_norm(x, layer.ln1, c.rms_eps)
        q, k, v = n @ layer.W_q, n @ layer.W_k, n @ layer.W_v  # (T, H·Dh), 2 × (T, Hkv·Dh)
        if layer.b_q is not None:
            q += layer.b_q
            k += layer.b_k
            v += layer.b_v
        q = q.reshape(T, H, Dh).transpose(1, 0, 2)  # (H, T, Dh)
        k = k.reshape(T, Hkv, Dh).transpose(1, 0, 2)  # (Hkv, T, Dh)
        v = np.ascontiguousarray(v.reshape(T, Hkv, Dh).transpose(1, 0, 2))  # (Hkv, T, Dh)
        cos, sin = self.rotation(start, T)
        q, k = rope_(q, cos, sin), rope_(k, cos, sin)
        k, v = cache.extend(i, k, v)  # (Hkv, S, Dh)
        _, out = causal_attention(q, k, v, start, Dh**-0.5, c.window, weights)
        y = out @ layer.W_o  # (T, H·Dh) x (H·Dh, D) -> (T, D)
        if layer.b_o is not None:
            y += layer.b_o
        x = x + y
        m = rms_norm(x, layer.ln2, c.rms_eps)
        gate, up = m @ layer.W_gate, m @ layer.W_up  # 2 × (T, Dff)
        if layer.b_mlp is not None:
            gate += layer.b_mlp[0]
            up += layer.b_mlp[1]
        by_rows(silu_, gate)
        gate *= up
        y = gate @ layer.W_down  # (T, Dff) x (Dff, D) -> (T, D)
        if layer.b_mlp is not None:
            y += layer.b_mlp[2]
        x += y
        return x

    def final_norm(self, x: np.ndarray) -> np.ndarray:
        return rms_norm(x, self.norm, self.config.rms_eps)

    def head_values(self, i: int, x: np.ndarray) -> np.ndarray:
        c, layer = self.config, self.layers[i]
        T, H, Hkv, Dh, D = x.shape[0], c.n_heads, c.n_kv_heads, c.d_head, c.d_model
        v = rms_norm(x, layer.ln1, c.rms_eps) @ layer.W_v  # (T, Hkv·Dh)
        if layer.b_v is not None:
            v += layer.b_v
        v = v.reshape(T, Hkv, Dh).transpose(1, 0, 2)  # (Hkv, T, Dh)
        v = np.repeat(v, H // Hkv, axis=0)  # (H, T, Dh): query head h reads key/value head h // G
        return v @ layer.W_o.reshape(H, Dh, D)  # (H, T, Dh) x (H, Dh, D) -> (H, T, D)

    def head_queries_keys(self, i: int, x: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
        c, layer = self.config, self.layers[i]
        T, Dh = x.shape[0], c.d_head
        shared = head // (c.n_heads // c.n_kv_heads)  # the key/value head this query head reads
        q_cols = slice(head * Dh, (head + 1) * Dh)
        k_cols = slice(shared * Dh, (shared + 1) * Dh)
        n = rms_norm(x, layer.ln1, c.rms_eps).astype(np.float64)  # (T, D)
        q, k = n @ layer.W_q[:, q_cols], n @ layer.W_k[:, k_cols]  # (T, Dh) each
        if layer.b_q is not None:
            q, k = q + layer.b_q[q_cols], k + layer.b_k[k_cols]
        cos, sin = self.rotation(0, T)  # (T, Dh): positions 0 … T − 1
        return rope_(q, cos, sin) * Dh**-0.5, rope_(k, cos, sin)

    def unembed(self, hidden: np.ndarray) -> np.ndarray:
        return hidden @ self.lm_head.T  # (T, D) x (D, Nv) -> (T, Nv)


def build(folder: Path, cfg: dict, weights: loading.Weights, tokenizer: Tokenizer) -> Llama:
    config = LlamaConfig.from_dict(cfg, folder / loading.CONFIG)
    prefix = loading.find_prefix(weights, ANCHOR)
    body = weights.with_prefix(prefix)
    loading.check_shapes(body, config.shapes())
    if not config.tied:
        loading.check_shapes(weights, {"lm_head.weight": (config.vocab_size, config.d_model)})
    return Llama(config, _Heads(body, weights), tokenizer, folder)


class _Heads:
    """The body's tensors under their prefix ("model."), and lm_head.weight, which has none."""

    def __init__(self, body: loading.Weights, whole: loading.Weights):
        self.body, self.whole = body, whole

    def __getitem__(self, name: str) -> np.ndarray:
        return self.whole[name] if name == "lm_head.weight" else self.body[name]
