"""gpt-oss (OpenAI's open-weight models, ``model_type`` "gpt_oss") in NumPy: a LLaMA-style decoder
(RMSNorm, RoPE with YaRN scaling, grouped-query attention, biases on q, k, v and o) with these
additions, as Hugging Face's ``GptOssForCausalLM`` computes them (eager attention):

- **Attention sinks** (``sinks``): each head has one learned logit that joins every softmax row as
  an extra column and is then dropped. ``softmax([q·k₀ … q·kₜ, s_h])`` without its last entry: a
  row's weights sum to less than 1, and the share the sink took (1 − the row's sum) is attention
  the head paid to nothing. transformers returns the weights without the sink's column, as here.
- **Banded window on alternate layers** (``layer_types``): a "sliding_attention" layer masks keys
  ``sliding_window`` or more positions back (128 in the released models), a "full_attention" layer
  sees the whole prefix; the released models alternate them, sliding first.
- **Mixture of experts** (``moe``): the feed-forward is E experts; a router (a linear layer with a
  bias) scores them per token, the top k are kept and their logits softmaxed into weights, and the
  token's output is the weighted sum of those k experts' outputs. Each expert is a clamped SwiGLU:
  ``gate_up = m W₁ + b₁`` with gate and up interleaved (even and odd columns), gate clamped above at
  ``limit``, up to ±``limit``, ``(up + 1) · gate · σ(α·gate)``, then ``W₂`` and ``b₂`` (α 1.702,
  limit 7.0).
- **MXFP4 experts** (``mxfp4``): the released checkpoints store the experts' matrices in the OCP
  Microscaling format: ``*_blocks`` (uint8, two 4-bit E2M1 values a byte, low nibble first) and
  ``*_scales`` (uint8 E8M0: one power of two 2^(s − 127) per 32 values). They are unpacked to
  float32 here (:func:`dequantize_mxfp4`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import loading
from .causal import Cache, Decoder, causal_attention, tokenizer_flavour
from .llama import ANCHOR, Llama, LlamaConfig, _Heads, _Layer, inverse_frequencies, rms_norm, rope_

# the 16 E2M1 codes (OCP Microscaling spec): bit 3 the sign, bits 0–2 an index into these
FP4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)
MX_BLOCK = 32  # values sharing one scale
EXPERTS = ("gate_up_proj", "down_proj")


def dequantize_mxfp4(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """MXFP4 as gpt-oss stores an expert matrix → float32 (E, In, Out), the (in, out) layout the
    experts multiply by.

    ``blocks`` (E, Out, G, 16) uint8: output row r's In = 32·G inputs in G groups, two 4-bit codes
    a byte (value 2j in the low nibble, 2j + 1 in the high one); ``scales`` (E, Out, G) uint8: the
    group's exponent s, its values multiplied by 2^(s − 127)."""
    blocks = np.asarray(blocks, dtype=np.uint8)
    codes = np.arange(16, dtype=np.uint8)
    signed = np.where(codes & 8, -FP4_VALUES[codes & 7], FP4_VALUES[codes & 7])  # (16,)
    pairs = np.stack([signed[np.arange(256) & 0x0F], signed[np.arange(256) >> 4]], axis=-1)
    E, n_out, G, _ = blocks.shape
    values = pairs[blocks].reshape(E, n_out, G, MX_BLOCK)  # (E, Out, G, 16, 2) -> (E, Out, G, 32)
    exponents = np.asarray(scales, dtype=np.int32) - 127  # (E, Out, G)
    values = np.ldexp(values, exponents[..., None]).astype(np.float32)
    return values.reshape(E, n_out, G * MX_BLOCK).transpose(0, 2, 1)  # (E, In, Out)


@dataclass(frozen=True)
class GptOssConfig(LlamaConfig):
    n_experts: int = 0  # num_local_experts
    top_k: int = 0  # num_experts_per_tok
    swiglu_alpha: float = 1.702
    swiglu_limit: float = 7.0
    layer_windows: tuple[int | None, ...] = ()  # per layer: sliding_window or None (full)
    mxfp4: bool = False  # experts stored as MXFP4 blocks and scales

    @classmethod
    def from_dict(cls, cfg: dict, path: Path) -> GptOssConfig:
        base = super().from_dict(cfg, path)  # a GptOssConfig with LLaMA's fields read

        def number(*names, default=None) -> int:
            return loading.config_int(cfg, names, path, default)

        n_layers = base.n_layers
        kinds = cfg.get("layer_types") or [
            "sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)
        ]
        if len(kinds) != n_layers:
            raise InputError(
                "model_config_field",
                f"{path}: layer_types has {len(kinds)} entries for {n_layers} layers.",
                file=str(path),
                name="layer_types",
            )
        window = number("sliding_window", default=128)
        quant = cfg.get("quantization_config") or {}
        return replace(
            base,
            n_experts=number("num_local_experts"),
            top_k=number("num_experts_per_tok", "experts_per_token", default=4),
            swiglu_alpha=float(cfg.get("swiglu_alpha", 1.702)),
            swiglu_limit=float(cfg.get("swiglu_limit", 7.0)),
            layer_windows=tuple(window if k == "sliding_attention" else None for k in kinds),
            mxfp4=quant.get("quant_method") == "mxfp4",
            qkv_bias=bool(cfg.get("attention_bias", True)),
            o_bias=bool(cfg.get("attention_bias", True)),
        )

    @property
    def mechanisms(self) -> tuple[str, ...]:
        """LlamaConfig's names and "sinks", "sliding_window" (on the layers ``layer_windows``
        names; "local_global" when other layers see the whole text), "moe" and "mxfp4" (experts
        stored in MXFP4)."""
        found = ["sinks"]
        if any(w is not None for w in self.layer_windows):
            found.append("sliding_window")
        if None in self.layer_windows and any(w is not None for w in self.layer_windows):
            found.append("local_global")  # windowed layers alternating with full ones
        found.append("moe")
        if self.mxfp4:
            found.append("mxfp4")
        return super().mechanisms + tuple(found)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        D, F, E, H = self.d_model, self.d_ff, self.n_experts, self.n_heads
        dense = (".mlp.gate_proj.weight", ".mlp.up_proj.weight", ".mlp.down_proj.weight")
        expected = {k: v for k, v in super().shapes().items() if not k.endswith(dense)}
        for i in range(self.n_layers):
            m = f"layers.{i}.mlp."
            expected[f"layers.{i}.self_attn.sinks"] = (H,)
            expected[m + "router.weight"] = (E, D)
            expected[m + "router.bias"] = (E,)
            expected[m + "experts.gate_up_proj_bias"] = (E, 2 * F)
            expected[m + "experts.down_proj_bias"] = (E, D)
            if self.mxfp4:  # (E, Out, In / 32, 16) bytes and (E, Out, In / 32) scales
                expected[m + "experts.gate_up_proj_blocks"] = (E, 2 * F, D // MX_BLOCK, 16)
                expected[m + "experts.gate_up_proj_scales"] = (E, 2 * F, D // MX_BLOCK)
                expected[m + "experts.down_proj_blocks"] = (E, D, F // MX_BLOCK, 16)
                expected[m + "experts.down_proj_scales"] = (E, D, F // MX_BLOCK)
            else:
                expected[m + "experts.gate_up_proj"] = (E, D, 2 * F)
                expected[m + "experts.down_proj"] = (E, F, D)
        return expected


@dataclass(frozen=True)
class _Experts:
    router: np.ndarray  # (D, E)
    router_bias: np.ndarray  # (E,)
    gate_up: np.ndarray  # (E, D, 2·Dff): gate in the even columns, up in the odd ones
    gate_up_bias: np.ndarray  # (E, 2·Dff)
    down: np.ndarray  # (E, Dff, D)
    down_bias: np.ndarray  # (E, D)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(−x) overflows to inf for x ≪ 0: σ is then 0
        return np.float32(1.0) / (np.float32(1.0) + np.exp(-x))


class GptOss(Llama):
    family = "gpt_oss"

    def __init__(self, config: GptOssConfig, weights, tokenizer, path: Path):
        Decoder.__init__(self, config, tokenizer, path, *tokenizer_flavour(tokenizer))

        def w(name: str) -> np.ndarray:
            return np.asarray(weights[name], dtype=np.float32)

        c = config
        self.has_head = c.has_head
        self.embed_tokens = w("embed_tokens.weight")  # (Nv, D)
        self.norm = w("norm.weight")
        self.embed_scale = None  # embeddings as stored (Gemma's √D scaling is Gemma's)
        self.lm_head = None
        if c.tied:
            self.lm_head = self.embed_tokens
        elif c.has_head:
            self.lm_head = w("lm_head.weight")
        self.layers = tuple(self._read_attention(i, w) for i in range(c.n_layers))
        self.sinks = tuple(w(f"layers.{i}.self_attn.sinks") for i in range(c.n_layers))  # (H,)
        self.experts = tuple(self._read_experts(i, weights) for i in range(c.n_layers))
        self.inv_freq, self.attention_factor = inverse_frequencies(c)

    def _read_attention(self, i: int, w) -> _Layer:
        """Layer i's norms and attention, as llama's layers (the dense MLP fields None)."""
        a = f"layers.{i}.self_attn."
        return _Layer(
            ln1=w(f"layers.{i}.input_layernorm.weight"),
            W_q=w(a + "q_proj.weight").T,
            W_k=w(a + "k_proj.weight").T,
            W_v=w(a + "v_proj.weight").T,
            b_q=w(a + "q_proj.bias") if self.config.qkv_bias else None,
            b_k=w(a + "k_proj.bias") if self.config.qkv_bias else None,
            b_v=w(a + "v_proj.bias") if self.config.qkv_bias else None,
            q_norm=None,
            k_norm=None,
            W_o=w(a + "o_proj.weight").T,
            b_o=w(a + "o_proj.bias") if self.config.o_bias else None,
            ln2=w(f"layers.{i}.post_attention_layernorm.weight"),
            post_attn=None,
            post_mlp=None,
            W_gate=None,
            W_up=None,
            W_down=None,
            b_mlp=None,
        )

    def _read_experts(self, i: int, weights) -> _Experts:
        m = f"layers.{i}.mlp."

        def w(name: str) -> np.ndarray:
            return np.asarray(weights[m + name], dtype=np.float32)

        def matrix(name: str) -> np.ndarray:  # (E, In, Out) float32
            if not self.config.mxfp4:
                return w(f"experts.{name}")
            blocks = w(f"experts.{name}_blocks").astype(np.uint8)  # U8 read as float: exact
            scales = w(f"experts.{name}_scales").astype(np.uint8)
            return dequantize_mxfp4(blocks, scales)

        return _Experts(
            router=w("router.weight").T,
            router_bias=w("router.bias"),
            gate_up=matrix("gate_up_proj"),
            gate_up_bias=w("experts.gate_up_proj_bias"),
            down=matrix("down_proj"),
            down_bias=w("experts.down_proj_bias"),
        )

    def attention_args(self, i: int) -> dict:
        """Keyword arguments of :func:`~visattn.models.causal.causal_attention` for layer i: the
        scale 1/√Dh, the layer's window (None on a full-attention layer) and its sinks (H,)."""
        return {
            "scale": self.config.d_head**-0.5,
            "window": self.config.layer_windows[i],
            "sinks": self.sinks[i],
        }

    def route(self, i: int, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Layer i's router on its MLP input m (T, D): the top-k experts of each token (T, k),
        best first, and their weights (T, k), a softmax over those k experts' logits."""
        e = self.experts[i]
        logits = m @ e.router + e.router_bias  # (T, D) x (D, E) -> (T, E)
        chosen = np.argsort(-logits, axis=-1, kind="stable")[:, : self.config.top_k]  # (T, k)
        top = np.take_along_axis(logits, chosen, axis=-1)  # (T, k)
        top = np.exp(top - top.max(axis=-1, keepdims=True))
        return chosen, top / top.sum(axis=-1, keepdims=True)

    def moe(self, i: int, m: np.ndarray) -> np.ndarray:
        """Layer i's mixture of experts on m (T, D) → (T, D): each token's top-k experts' clamped
        SwiGLU outputs, weighted by the router."""
        c, e = self.config, self.experts[i]
        chosen, weights = self.route(i, m)
        out = np.zeros_like(m)
        for expert in np.unique(chosen):  # in increasing order, as transformers adds them
            rows, slot = np.nonzero(chosen == expert)  # tokens routed to it, and at which rank
            h = m[rows] @ e.gate_up[expert] + e.gate_up_bias[expert]  # (n, 2·Dff)
            gate = np.minimum(h[:, 0::2], np.float32(c.swiglu_limit))  # (n, Dff)
            up = np.clip(h[:, 1::2], np.float32(-c.swiglu_limit), np.float32(c.swiglu_limit))
            glu = gate * _sigmoid(gate * np.float32(c.swiglu_alpha))
            y = ((up + np.float32(1.0)) * glu) @ e.down[expert] + e.down_bias[expert]  # (n, D)
            out[rows] += y * weights[rows, slot][:, None]
        return out

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray | None):
        c, layer = self.config, self.layers[i]
        q, k, v = self.project(i, x)  # normed, projected, biased: (H, T, Dh), (Hkv, T, Dh)
        cos, sin = self.rotation(start, x.shape[0])
        q, k = rope_(q, cos, sin), rope_(k, cos, sin)
        k, v = cache.extend(i, k, v, q)  # (Hkv, S, Dh)
        args = self.attention_args(i)
        _, out = causal_attention(q, k, v, start, **args, weights=weights, scratch=weights is None)
        y = out @ layer.W_o  # (T, H·Dh) x (H·Dh, D) -> (T, D)
        y += layer.b_o
        x = x + y
        x += self.moe(i, rms_norm(x, layer.ln2, c.rms_eps))
        return x

    def sink_shares(self, attentions: np.ndarray) -> np.ndarray:
        """(…, T) the share of each query's attention its head's sink took: 1 − the row's sum of
        a map (L, H, T, S) or (H, T, S) this model drew (rows without the sink sum to less than
        1)."""
        return 1.0 - np.asarray(attentions, dtype=np.float64).sum(axis=-1)


def build(folder: Path, cfg: dict, weights: loading.Weights, tokenizer: Tokenizer) -> GptOss:
    config = GptOssConfig.from_dict(cfg, folder / loading.CONFIG)
    prefix = loading.find_prefix(weights, ANCHOR)
    body = weights.with_prefix(prefix)
    # a checkpoint's experts are MXFP4 when its tensors say so (a dequantized copy may keep the
    # config's quantization_config)
    config = replace(config, mxfp4="layers.0.mlp.experts.gate_up_proj_blocks" in body)
    loading.check_shapes(body, config.shapes())
    if not config.tied:
        if "lm_head.weight" not in weights:  # a base checkpoint: attention without a head
            config = replace(config, has_head=False)
        else:
            loading.check_shapes(weights, {"lm_head.weight": (config.vocab_size, config.d_model)})
    return GptOss(config, _Heads(body, weights), tokenizer, folder)
