"""LLaMA-style decoders in NumPy (LLaMA, Mistral, Qwen2, Qwen3, OLMo 2, SmolLM3, Phi-3, Gemma 2,
Gemma 3): RMSNorm, rotary positions (RoPE), SwiGLU, grouped-query attention, Qwen2's biases on the
query, key and value projections.

Per layer, as Hugging Face's ``LlamaModel`` (eval mode): ``x = x + W_o Attn(RoPE(W_q n), RoPE(W_k
n), W_v n)`` with n = RMSNorm₁(x), then ``x = x + W_down(SiLU(W_gate m) ⊙ W_up m)`` with m =
RMSNorm₂(x); the last hidden state goes through the final RMSNorm; logits = hidden · W_lmᵀ (the
embedding table when ``tie_word_embeddings``). No position embeddings: RoPE turns each query and key
by its position, so a score depends on the distance between the two. Mistral masks keys more than
``sliding_window`` − 1 positions back. Linear weights (out, in) are read through their transpose.

What each family adds, named by the config fields below so that a page can say it:

- QK-norm (``qk_norm``): an RMSNorm on the queries and keys before RoPE, so a score cannot grow
  with their length alone. Qwen3 normalises each head's Dh numbers ("head"); OLMo 2 the whole
  H·Dh projection ("whole").
- Post-norm blocks (``post_norm``, OLMo 2): no norm before attention or the MLP; their outputs are
  normalised before they are added, ``x = x + RMSNorm(Attn(x))``.
- RoPE scaling (``rope_kind``): longer texts than the model was trained on by slowing the
  rotation: "linear" (every frequency ÷ factor), "dynamic" (NTK: a larger base once the text
  outgrows the trained length), "yarn" (low frequencies interpolated, high ones kept, a ramp
  between, scores scaled by an attention factor), "llama3" (Llama 3.1 / 3.2's smoothed version),
  "longrope" (Phi-3-128k, Phi-4-mini: a factor per frequency, short or long by the text's length).
- Layers without RoPE (``rope_layers``, SmolLM3's ``no_rope_layers``): every fourth layer's
  queries and keys are not rotated, so its scores see no position except through the mask.
- Fused projections (Phi-3, Phi-4-mini): one ``qkv_proj`` and one ``gate_up_proj`` matrix, read
  as views of their row blocks; ``partial_rotary_factor`` rotates only the first part of each head.
- No LM head (``has_head``): a base checkpoint (an embedding model) has attention but no
  unembedding; every view of the attention works, generation says it needs the head.
- Gemma 2 and Gemma 3 (``gemma``): the embeddings scaled by √D; every RMSNorm scales by 1 + w
  (the gains are stored around 0); sandwich norms (the attention's and the MLP's inputs
  normalised as LLaMA's, and their outputs too before they are added, as OLMo 2's); GeGLU (the
  gate through GELU's tanh form); scores scaled by ``query_pre_attn_scalar``^−½ instead of Dh^−½;
  local and global layers (``sliding_layers``, from ``layer_types``): the local ones see only the
  ``sliding_window`` − 1 keys before the query. Gemma 2 soft-caps the scores before the mask
  (``softcap``: s → c·tanh(s / c), so no score exceeds ±c) and the logits (``final_softcap``);
  Gemma 3 adds QK-norm per head and rotates its local layers with their own RoPE base
  (``local_rope_theta``), the RoPE scaling applying to the global layers only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..errors import InputError
from . import loading
from .causal import Cache, Decoder, by_rows, causal_attention, tokenizer_flavour
from .gpt2 import gelu_tanh_

ANCHOR = "embed_tokens.weight"
# model_type → what it adds to LLaMA's layer (see the module docstring)
QK_NORM = {"qwen3": "head", "olmo2": "whole", "gemma3_text": "head"}  # each head's / whole q, k
POST_NORM = frozenset({"olmo2"})  # the attention's and the MLP's outputs normalised, not inputs
FUSED = frozenset({"phi3"})  # qkv_proj and gate_up_proj in one matrix each
WINDOWED = frozenset({"mistral", "phi3"})  # sliding_window applies without use_sliding_window
GEMMA = frozenset({"gemma2", "gemma3_text"})  # see the module docstring
GEMMA_PATTERN = {"gemma2": 2, "gemma3_text": 6}  # every n-th layer global without layer_types
GEMMA_THETA = {"gemma2": 10000.0, "gemma3_text": 1_000_000.0}  # RoPE base (global layers)
# config's rope_type → the parameters it reads (beyond rope_theta)
ROPE_KINDS = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor",),
    "yarn": ("factor",),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "longrope": ("original_max_position_embeddings",),  # and the lists short_factor, long_factor
}
# the kinds whose frequencies depend on the text's length (so a cached key keeps its step's)
LENGTH_DEPENDENT = frozenset({"dynamic", "longrope"})
# Gemma 3's text model as transformers' Gemma3TextConfig fills what a multimodal (model_type
# "gemma3") config.json leaves out of its text_config
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262_208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131_072,
    "rms_norm_eps": 1e-6,
    "query_pre_attn_scalar": 256,
    "sliding_window": 4096,
    "tie_word_embeddings": True,
}
YARN_OPTIONAL = (
    "original_max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
)


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
    rope_kind: str  # a key of ROPE_KINDS: how RoPE is scaled for long texts
    rope_scaling: tuple[tuple[str, float], ...]  # its parameters, () for plain RoPE
    rope_factors: tuple[tuple[float, ...], ...]  # longrope's (short_factor, long_factor), else ()
    rotary_dim: int  # the first rotary_dim of each head's Dh numbers are rotated (Phi-4-mini)
    rope_layers: tuple[bool, ...]  # per layer: rotate q and k? (SmolLM3: not every fourth)
    qk_norm: str | None  # "head" (Qwen3), "whole" (OLMo 2) or None
    post_norm: bool  # OLMo 2
    fused: bool  # Phi-3
    qkv_bias: bool
    o_bias: bool
    mlp_bias: bool
    tied: bool
    window: int | None  # Mistral's sliding window
    has_head: bool = True  # an lm_head (or the tied embedding) to turn states into logits
    gemma: bool = False  # Gemma 2 / 3: √D embeddings, 1 + w norms, sandwich norms, GeGLU
    activation: str = "silu"  # the gate's: a key of ACTIVATIONS
    query_scale: float | None = None  # the scores' scale (query_pre_attn_scalar^−½); None: Dh^−½
    sliding_layers: tuple[bool, ...] = ()  # per layer: windowed? () : every layer (Mistral)
    softcap: float | None = None  # Gemma 2's attention logit soft-cap c: s → c·tanh(s / c)
    final_softcap: float | None = None  # the same on the output logits
    local_rope_theta: float | None = None  # Gemma 3's RoPE base of its sliding-window layers

    @classmethod
    def from_dict(cls, cfg: dict, path: Path) -> LlamaConfig:
        cfg = gemma3_text_config(cfg)
        model_type = str(cfg.get("model_type"))

        def number(*names, default=None) -> int:
            return loading.config_int(cfg, names, path, default)

        d_model = number("hidden_size")
        n_heads = number("num_attention_heads")
        n_layers = number("num_hidden_layers")
        d_head = number("head_dim", default=0) or loading.head_width(d_model, n_heads, path)
        rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
        local_theta = None
        if model_type == "gemma3_text":  # global layers: rope; local ones: their own base
            rope, local_theta = _gemma3_rope(cfg, rope, path)
        rope_kind = rope.get("rope_type", rope.get("type", "default"))
        default_theta = GEMMA_THETA.get(model_type, 10000.0)
        theta = float(rope.get("rope_theta", cfg.get("rope_theta", default_theta)))
        if rope_kind not in ROPE_KINDS:
            raise InputError(
                "model_unsupported",
                f"{path}: rope type {rope_kind!r}; this app implements {', '.join(ROPE_KINDS)}.",
                file=str(path),
                what=f"rope_type={rope_kind}",
            )
        if rope_kind == "longrope" and "original_max_position_embeddings" not in rope:
            rope = rope | {
                "original_max_position_embeddings": cfg.get("original_max_position_embeddings")
            }
        factors = ()
        try:
            scaling = tuple((k, float(rope[k])) for k in ROPE_KINDS[rope_kind])
            if rope_kind == "longrope":
                factors = tuple(
                    tuple(float(f) for f in rope[k]) for k in ("short_factor", "long_factor")
                )
                scaling += tuple(
                    (k, float(rope[k])) for k in ("factor", "attention_factor") if rope.get(k)
                )
                scaling += (("max_position_embeddings", float(cfg["max_position_embeddings"])),)
            if rope_kind == "dynamic":  # the trained length, beyond which the base grows
                scaling += (("max_position_embeddings", float(cfg["max_position_embeddings"])),)
            if rope_kind == "yarn":
                scaling += tuple(
                    (k, float(rope[k])) for k in YARN_OPTIONAL if rope.get(k) is not None
                )
        except (KeyError, TypeError, ValueError):
            raise InputError(
                "model_config_field",
                f"{path} has no number {ROPE_KINDS[rope_kind]} for rope type {rope_kind!r}.",
                file=str(path),
                name="rope_parameters",
            ) from None
        activation = cfg.get("hidden_act", "silu")
        if model_type in GEMMA:  # hidden_activation, GELU's tanh form unless it says otherwise
            gelu = cfg.get("hidden_act") or "gelu_pytorch_tanh"
            activation = cfg.get("hidden_activation") or gelu
        if activation not in ACTIVATIONS:
            raise InputError(
                "model_unsupported",
                f"{path}: hidden_act={activation!r}; this app implements {', '.join(ACTIVATIONS)}.",
                file=str(path),
                what=f"hidden_act={activation}",
            )
        window = None
        if model_type in WINDOWED or cfg.get("use_sliding_window"):
            window = cfg.get("sliding_window")
        sliding_layers, query_scale, softcap = (), None, None
        if model_type in GEMMA:
            window = cfg.get("sliding_window")
            sliding_layers = _gemma_sliding_layers(cfg, model_type, n_layers, path)
            query_scale = float(cfg.get("query_pre_attn_scalar") or 256) ** -0.5
        if model_type == "gemma2":  # Gemma 3's attention ignores attn_logit_softcapping
            softcap = _positive(cfg.get("attn_logit_softcapping"))
        partial = float(rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0)))
        no_rope = cfg.get("no_rope_layers")  # SmolLM3: 1 where the layer uses RoPE, 0 where not
        if model_type == "smollm3" and no_rope is None:
            interval = number("no_rope_layer_interval", default=4)
            no_rope = [int((i + 1) % interval != 0) for i in range(n_layers)]
        rope_layers = tuple(bool(u) for u in no_rope) if no_rope else (True,) * n_layers
        if len(rope_layers) != n_layers:
            raise InputError(
                "model_config_field",
                f"{path}: no_rope_layers has {len(rope_layers)} entries for {n_layers} layers.",
                file=str(path),
                name="no_rope_layers",
            )
        max_positions = number("max_position_embeddings")
        if rope_kind == "dynamic":  # dynamic NTK reads factor × the trained length
            max_positions = int(max_positions * dict(scaling)["factor"])
        config = cls(
            model_type=model_type,
            n_layers=n_layers,
            n_heads=n_heads,
            n_kv_heads=number("num_key_value_heads", default=n_heads),
            d_model=d_model,
            d_head=d_head,
            d_ff=number("intermediate_size"),
            max_positions=max_positions,
            vocab_size=number("vocab_size"),
            rms_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=theta,
            rope_kind=rope_kind,
            rope_scaling=scaling,
            rope_factors=factors,
            rotary_dim=int(d_head * partial),
            rope_layers=rope_layers,
            qk_norm=QK_NORM.get(model_type),
            post_norm=model_type in POST_NORM,
            fused=model_type in FUSED,
            qkv_bias=model_type == "qwen2" or bool(cfg.get("attention_bias")),
            o_bias=model_type != "qwen2" and bool(cfg.get("attention_bias")),
            mlp_bias=bool(cfg.get("mlp_bias")),
            tied=bool(cfg.get("tie_word_embeddings", model_type in GEMMA)),
            window=int(window) if window else None,
            gemma=model_type in GEMMA,
            activation=activation,
            query_scale=query_scale,
            sliding_layers=sliding_layers,
            softcap=softcap,
            final_softcap=_positive(cfg.get("final_logit_softcapping")),
            local_rope_theta=local_theta,
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

    @property
    def mechanisms(self) -> tuple[str, ...]:
        """What this checkpoint adds to LLaMA's attention, as names a page can translate:
        "qk_norm_head", "qk_norm_whole", "post_norm", "rope_<kind>", "no_rope_layers",
        "partial_rotary", "fused_qkv", "sliding_window", "no_lm_head"; Gemma's "scaled_embedding",
        "sandwich_norm", "geglu", "local_global" (sliding-window layers alternating with global
        ones), "local_rope_base", "softcap" (attention scores), "final_softcap" (logits)."""
        found = []
        if self.qk_norm:
            found.append(f"qk_norm_{self.qk_norm}")
        if self.post_norm:
            found.append("post_norm")
        if self.rope_kind != "default":
            found.append(f"rope_{self.rope_kind}")
        if not all(self.rope_layers):
            found.append("no_rope_layers")
        if self.rotary_dim < self.d_head:
            found.append("partial_rotary")
        if self.fused:
            found.append("fused_qkv")
        if self.window is not None:
            found.append("sliding_window")
        if self.window is not None and self.sliding_layers and not all(self.sliding_layers):
            found.append("local_global")
        if self.gemma:
            found += ["scaled_embedding", "sandwich_norm"]
        if self.activation == "gelu_pytorch_tanh":
            found.append("geglu")
        if self.local_rope_theta is not None:
            found.append("local_rope_base")
        if self.softcap is not None:
            found.append("softcap")
        if self.final_softcap is not None:
            found.append("final_softcap")
        if not self.has_head:
            found.append("no_lm_head")
        return tuple(found)

    def layer_window(self, i: int) -> int | None:
        """Layer i's sliding window (keys more than window − 1 positions back are masked), None
        for a global layer."""
        if self.sliding_layers and not self.sliding_layers[i]:
            return None
        return self.window

    def layer_rope_theta(self, i: int) -> float | None:
        """The RoPE base of layer i when it is not the model's (Gemma 3's local layers), else
        None."""
        if self.local_rope_theta is not None and self.sliding_layers and self.sliding_layers[i]:
            return self.local_rope_theta
        return None

    def shapes(self) -> dict[str, tuple[int, ...]]:
        D, F, Dh = self.d_model, self.d_ff, self.d_head
        Dq, Dkv = self.n_heads * Dh, self.n_kv_heads * Dh
        expected = {"embed_tokens.weight": (self.vocab_size, D), "norm.weight": (D,)}
        for i in range(self.n_layers):
            p = f"layers.{i}."
            a, m = p + "self_attn.", p + "mlp."
            expected[a + "o_proj.weight"] = (D, Dq)
            expected[m + "down_proj.weight"] = (D, F)
            if self.fused:
                expected[a + "qkv_proj.weight"] = (Dq + 2 * Dkv, D)
                expected[m + "gate_up_proj.weight"] = (2 * F, D)
            else:
                expected |= {
                    a + "q_proj.weight": (Dq, D),
                    a + "k_proj.weight": (Dkv, D),
                    a + "v_proj.weight": (Dkv, D),
                    m + "gate_proj.weight": (F, D),
                    m + "up_proj.weight": (F, D),
                }
            if self.gemma:  # sandwich: before and after attention and the MLP
                for name in ("input", "post_attention", "pre_feedforward", "post_feedforward"):
                    expected[p + f"{name}_layernorm.weight"] = (D,)
            elif self.post_norm:
                expected[p + "post_attention_layernorm.weight"] = (D,)
                expected[p + "post_feedforward_layernorm.weight"] = (D,)
            else:
                expected[p + "input_layernorm.weight"] = (D,)
                expected[p + "post_attention_layernorm.weight"] = (D,)
            if self.qk_norm == "head":
                expected[a + "q_norm.weight"] = (Dh,)
                expected[a + "k_norm.weight"] = (Dh,)
            elif self.qk_norm == "whole":
                expected[a + "q_norm.weight"] = (Dq,)
                expected[a + "k_norm.weight"] = (Dkv,)
            if self.qkv_bias:
                expected |= {
                    a + "q_proj.bias": (Dq,),
                    a + "k_proj.bias": (Dkv,),
                    a + "v_proj.bias": (Dkv,),
                }
            if self.o_bias:
                expected[a + "o_proj.bias"] = (D,)
            if self.mlp_bias:
                for name, n in (("gate_proj", F), ("up_proj", F), ("down_proj", D)):
                    expected[m + f"{name}.bias"] = (n,)
        return expected


def gemma3_text_config(cfg: dict) -> dict:
    """A multimodal Gemma 3 config (model_type "gemma3") as its text model's: text_config, the
    fields it leaves out as Gemma3TextConfig's defaults; any other config unchanged."""
    if cfg.get("model_type") != "gemma3":
        return cfg
    text = GEMMA3_TEXT_DEFAULTS | dict(cfg.get("text_config") or {})
    if "tie_word_embeddings" in cfg:
        text["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    return text | {"model_type": "gemma3_text"}


def _gemma3_rope(cfg: dict, rope: dict, path: Path) -> tuple[dict, float]:
    """Gemma 3's global layers' RoPE parameters and its local layers' base: rope_parameters by
    layer type (transformers 5), or rope_theta, rope_scaling and rope_local_base_freq."""
    local = {"rope_theta": cfg.get("rope_local_base_freq", 10000.0)}
    if "full_attention" in rope or "sliding_attention" in rope:
        local = rope.get("sliding_attention") or local
        rope = rope.get("full_attention") or {}
    if local.get("rope_type", "default") != "default":
        raise InputError(
            "model_unsupported",
            f"{path}: the sliding-window layers' rope type {local['rope_type']!r}; this app "
            "implements plain RoPE there.",
            file=str(path),
            what=f"rope_type={local['rope_type']}",
        )
    return rope, float(local.get("rope_theta", 10000.0))


def _gemma_sliding_layers(cfg: dict, model_type: str, n_layers: int, path: Path) -> tuple:
    """Per layer: a sliding-window ("sliding_attention") layer? From layer_types, or every n-th
    layer global (sliding_window_pattern; Gemma 2: every second)."""
    if cfg.get("use_bidirectional_attention"):
        raise InputError(
            "model_unsupported",
            f"{path}: use_bidirectional_attention; this app implements causal Gemma models.",
            file=str(path),
            what="use_bidirectional_attention",
        )
    types = cfg.get("layer_types")
    if not types:
        every = int(cfg.get("sliding_window_pattern") or GEMMA_PATTERN[model_type])
        types = [
            "full_attention" if (i + 1) % every == 0 else "sliding_attention"
            for i in range(n_layers)
        ]
    if len(types) != n_layers:
        raise InputError(
            "model_config_field",
            f"{path}: layer_types has {len(types)} entries for {n_layers} layers.",
            file=str(path),
            name="layer_types",
        )
    return tuple(t == "sliding_attention" for t in types)


def _positive(value) -> float | None:
    """A soft-cap from the config: None when absent or 0."""
    return float(value) if value else None


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _exponents(dim: int) -> np.ndarray:
    """(dim / 2,) float32 2i/dim, computed in float32 as torch does."""
    return np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / np.float32(dim)


def inverse_frequencies(config: LlamaConfig, seq_len: int = 0) -> tuple[np.ndarray, float]:
    """RoPE's (rotary_dim / 2,) float32 angular frequencies θ^(−2i/dim) for a text of ``seq_len``
    positions, and the factor cos and sin are multiplied by (YaRN's attention factor, else 1).

    The scaling kinds (``config.rope_kind``), as transformers computes them: "linear" divides every
    frequency by ``factor``; "dynamic" (NTK-aware) raises the base θ once the text is longer than
    max_position_embeddings (then the model reads up to factor × that many); "yarn" keeps the
    high frequencies, divides the low ones by ``factor`` and ramps between them, and scales the
    scores by 0.1·ln(factor) + 1 (squared: cos and sin both carry it); "llama3" slows the low
    frequencies (long wavelengths) by ``factor`` with a smooth band between."""
    dim = config.rotary_dim
    s = dict(config.rope_scaling)
    base = config.rope_theta
    if config.rope_kind == "dynamic":
        trained = s["max_position_embeddings"]
        longest = max(seq_len, trained)
        base = base * ((s["factor"] * longest / trained) - (s["factor"] - 1)) ** (dim / (dim - 2))
    inv = (np.float32(1.0) / (np.float32(base) ** _exponents(dim))).astype(np.float32)
    if config.rope_kind == "linear":
        return (inv / np.float32(s["factor"])).astype(np.float32), 1.0
    if config.rope_kind == "yarn":
        return _yarn(config, s)
    if config.rope_kind == "longrope":
        return _longrope(config, s, seq_len)
    if config.rope_kind != "llama3":
        return inv, 1.0
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / s["low_freq_factor"], old / s["high_freq_factor"]
    wavelen = np.float32(2 * np.pi) / inv
    scaled = np.where(wavelen > low_wavelen, inv / np.float32(s["factor"]), inv)
    smooth = (old / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
    smoothed = (1 - smooth) * scaled / np.float32(s["factor"]) + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return np.where(medium, smoothed, scaled).astype(np.float32), 1.0


def _yarn(config: LlamaConfig, s: dict) -> tuple[np.ndarray, float]:
    """YaRN (Peng et al. 2023): frequencies that turn fewer than beta_slow times over the trained
    length are interpolated (÷ factor), those turning more than beta_fast times kept, a linear ramp
    between; the attention factor 0.1·ln(factor) + 1."""
    dim, base, factor = config.rotary_dim, config.rope_theta, s["factor"]
    trained = s.get("original_max_position_embeddings", config.max_positions)
    attention_factor = s.get("attention_factor")
    if attention_factor is None:
        if s.get("mscale") and s.get("mscale_all_dim"):
            attention_factor = _yarn_mscale(factor, s["mscale"]) / _yarn_mscale(
                factor, s["mscale_all_dim"]
            )
        else:
            attention_factor = _yarn_mscale(factor)

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(trained / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(s.get("beta_fast", 32.0))
    high = correction_dim(s.get("beta_slow", 1.0))
    if s.get("truncate", 1.0):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = (np.arange(dim // 2, dtype=np.float32) - np.float32(low)) / np.float32(high - low)
    keep = np.float32(1.0) - np.clip(ramp, 0, 1)  # 1: extrapolate (keep), 0: interpolate
    pos_freqs = np.float32(base) ** _exponents(dim)
    inv = (np.float32(1.0) / (np.float32(factor) * pos_freqs)) * (1 - keep) + (
        np.float32(1.0) / pos_freqs
    ) * keep
    return inv.astype(np.float32), float(attention_factor)


def _longrope(config: LlamaConfig, s: dict, seq_len: int) -> tuple[np.ndarray, float]:
    """LongRoPE (Phi-3-128k, Phi-4-mini): each frequency divided by its own factor, short_factor's
    for a text within original_max_position_embeddings, long_factor's beyond; the attention factor
    √(1 + ln(factor) / ln(original)) with factor = max_position_embeddings / original."""
    trained = s["original_max_position_embeddings"]
    factor = s.get("factor", s["max_position_embeddings"] / trained)
    attention_factor = s.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0
        if factor > 1.0:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(trained))
    short, long = config.rope_factors
    ext = np.asarray(long if seq_len > trained else short, dtype=np.float32)
    inv = np.float32(1.0) / (ext * np.float32(config.rope_theta) ** _exponents(config.rotary_dim))
    return inv.astype(np.float32), float(attention_factor)


def rope_(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate (heads, T, Dh) by position: x·cos + rotate_half(x)·sin with rotate_half(x) =
    (−x₂, x₁) for the halves x₁, x₂ (Hugging Face's layout), returning a new array. cos and sin
    narrower than Dh rotate the first columns only and pass the rest (partial rotary)."""
    rd = cos.shape[-1]
    if rd < x.shape[-1]:
        return np.concatenate([rope_(x[..., :rd], cos, sin), x[..., rd:]], axis=-1)
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


# hidden_act → the gate's activation, in place
ACTIVATIONS = {"silu": silu_, "gelu_pytorch_tanh": gelu_tanh_}


@dataclass(frozen=True)
class _Layer:
    ln1: np.ndarray | None  # (D,); None under post-norm
    W_q: np.ndarray  # (D, H·Dh)
    W_k: np.ndarray  # (D, Hkv·Dh)
    W_v: np.ndarray
    b_q: np.ndarray | None
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    q_norm: np.ndarray | None  # QK-norm's gains: (Dh,) per head or (H·Dh,) whole
    k_norm: np.ndarray | None  # (Dh,) or (Hkv·Dh,)
    W_o: np.ndarray  # (H·Dh, D)
    b_o: np.ndarray | None
    ln2: np.ndarray | None  # (D,) before the MLP; None under post-norm
    post_attn: np.ndarray | None  # (D,) post-norm of the attention's output (OLMo 2)
    post_mlp: np.ndarray | None  # (D,) post-norm of the MLP's output
    W_gate: np.ndarray  # (D, Dff)
    W_up: np.ndarray
    W_down: np.ndarray  # (Dff, D)
    b_mlp: tuple[np.ndarray, np.ndarray, np.ndarray] | None


def _read_layer(c: LlamaConfig, i: int, w) -> _Layer:
    """Layer i's tensors from ``w`` (name → a float32 array or a :class:`loading.Stored` one, as
    the file stores it), linear weights as (in, out) views."""
    p = f"layers.{i}."
    a, m = p + "self_attn.", p + "mlp."
    Dq, Dkv, F = c.n_heads * c.d_head, c.n_kv_heads * c.d_head, c.d_ff

    def bias(name: str, present: bool) -> np.ndarray | None:
        return w(name) if present else None

    def gain(name: str, present: bool = True) -> np.ndarray | None:
        """A norm's gains; Gemma's as the 1 + w its RMSNorm scales by."""
        if not present:
            return None
        return w(name) + np.float32(1.0) if c.gemma else w(name)

    if c.fused:  # row blocks of the fused matrices: q, k, v and gate, up
        qkv = w(a + "qkv_proj.weight")  # (Dq + 2·Dkv, D)
        W_q, W_k, W_v = qkv[:Dq].T, qkv[Dq : Dq + Dkv].T, qkv[Dq + Dkv :].T
        gate_up = w(m + "gate_up_proj.weight")  # (2·Dff, D)
        W_gate, W_up = gate_up[:F].T, gate_up[F:].T
    else:
        W_q, W_k, W_v = (w(a + f"{n}_proj.weight").T for n in "qkv")
        W_gate, W_up = w(m + "gate_proj.weight").T, w(m + "up_proj.weight").T
    b_mlp = None
    if c.mlp_bias:
        b_mlp = tuple(w(m + n + ".bias") for n in ("gate_proj", "up_proj", "down_proj"))
    post = c.post_norm
    before_mlp = "pre_feedforward" if c.gemma else "post_attention"  # Gemma: sandwich norms
    return _Layer(
        ln1=None if post else gain(p + "input_layernorm.weight"),
        W_q=W_q,
        W_k=W_k,
        W_v=W_v,
        b_q=bias(a + "q_proj.bias", c.qkv_bias),
        b_k=bias(a + "k_proj.bias", c.qkv_bias),
        b_v=bias(a + "v_proj.bias", c.qkv_bias),
        q_norm=gain(a + "q_norm.weight", c.qk_norm is not None),
        k_norm=gain(a + "k_norm.weight", c.qk_norm is not None),
        W_o=w(a + "o_proj.weight").T,
        b_o=bias(a + "o_proj.bias", c.o_bias),
        ln2=None if post else gain(p + f"{before_mlp}_layernorm.weight"),
        post_attn=gain(p + "post_attention_layernorm.weight", post or c.gemma),
        post_mlp=gain(p + "post_feedforward_layernorm.weight", post or c.gemma),
        W_gate=W_gate,
        W_up=W_up,
        W_down=w(m + "down_proj.weight").T,
        b_mlp=b_mlp,
    )


class Llama(Decoder):
    family = "llama"
    positions = "rotary"  # no position embeddings: RoPE rotates queries and keys in every layer

    def __init__(
        self, config: LlamaConfig, weights, tokenizer, path: Path, widen_at_load: bool = True
    ):
        super().__init__(config, tokenizer, path, *tokenizer_flavour(tokenizer))

        def w(name: str) -> np.ndarray | loading.Stored:
            # float32 tensors stay read-only views into the mapped file (loading copies nothing);
            # float16 / bfloat16 / quantized matrices stay as stored until widened
            return weights.stored(name)

        c = config
        self.has_head = c.has_head
        self.embed_tokens = w("embed_tokens.weight")  # (Nv, D)
        self.norm = w("norm.weight")
        if c.gemma:  # RMSNorm scales by 1 + w; the embeddings by √D (a float32, as the table)
            self.norm = self.norm + np.float32(1.0)
        self.embed_scale = np.float32(c.d_model**0.5) if c.gemma else None
        self.lm_head = None  # (Nv, D): the embedding when tied, none in a base checkpoint
        if not c.tied and c.has_head:
            self.lm_head = w("lm_head.weight")
        self.layers = tuple(_read_layer(c, i, w) for i in range(c.n_layers))
        if widen_at_load:  # the float32 model fits the budget: widened once, here
            self.embed_tokens, self.lm_head = map(loading.widen, (self.embed_tokens, self.lm_head))
            self.layers = tuple(map(loading.widened, self.layers))
        if c.tied:
            self.lm_head = self.embed_tokens
        self.inv_freq, self.attention_factor = inverse_frequencies(c)  # (rotary_dim / 2,)
        self.local_inv_freq = None  # (rotary_dim / 2,) Gemma 3's local layers' plain RoPE
        if c.local_rope_theta is not None:
            local = replace(c, rope_theta=c.local_rope_theta, rope_kind="default", rope_scaling=())
            self.local_inv_freq, _ = inverse_frequencies(local)

    def embed(self, ids: np.ndarray, start: int) -> np.ndarray:
        x = loading.gather(self.embed_tokens, ids)  # (T, D), a copy
        if self.embed_scale is not None:  # Gemma: √D, after the gather
            x *= self.embed_scale
        return x

    def rotation(
        self, start: int, T: int, layer: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """cos and sin (T, rotary_dim) of positions start … start + T − 1 (dynamic NTK and
        LongRoPE: for a text of start + T positions, as transformers recomputes them) in
        ``layer`` (Gemma 3's local layers: plain RoPE of their own base; None: a global
        layer's)."""
        inv_freq, factor = self.inv_freq, self.attention_factor
        if layer is not None and self.config.layer_rope_theta(layer) is not None:
            inv_freq, factor = self.local_inv_freq, 1.0
        elif self.config.rope_kind in LENGTH_DEPENDENT:
            inv_freq, factor = inverse_frequencies(self.config, start + T)
        positions = np.arange(start, start + T, dtype=np.float32)
        freqs = positions[:, None] * inv_freq[None, :]  # (T, rotary_dim / 2)
        angles = np.concatenate([freqs, freqs], axis=-1)  # (T, rotary_dim)
        cos, sin = np.cos(angles), np.sin(angles)
        if factor != 1.0:
            cos, sin = cos * np.float32(factor), sin * np.float32(factor)
        return cos, sin

    def project(self, i: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Layer i's queries (H, T, Dh), keys and values (Hkv, T, Dh) for its input x (T, D):
        normed (pre-norm), projected, biased, QK-normed, not yet rotated."""
        c, layer = self.config, loading.in_flight(self, i)
        T, H, Hkv, Dh = x.shape[0], c.n_heads, c.n_kv_heads, c.d_head
        n = x if layer.ln1 is None else rms_norm(x, layer.ln1, c.rms_eps)
        q, k, v = n @ layer.W_q, n @ layer.W_k, n @ layer.W_v  # (T, H·Dh), 2 × (T, Hkv·Dh)
        if layer.b_q is not None:
            q += layer.b_q
            k += layer.b_k
            v += layer.b_v
        if c.qk_norm == "whole":  # OLMo 2: over all heads' numbers at once
            q, k = rms_norm(q, layer.q_norm, c.rms_eps), rms_norm(k, layer.k_norm, c.rms_eps)
        q = q.reshape(T, H, Dh)  # (T, H, Dh)
        k = k.reshape(T, Hkv, Dh)  # (T, Hkv, Dh)
        if c.qk_norm == "head":  # Qwen3: each head's Dh numbers
            q, k = rms_norm(q, layer.q_norm, c.rms_eps), rms_norm(k, layer.k_norm, c.rms_eps)
        q = q.transpose(1, 0, 2)  # (H, T, Dh)
        k = k.transpose(1, 0, 2)  # (Hkv, T, Dh)
        v = np.ascontiguousarray(v.reshape(T, Hkv, Dh).transpose(1, 0, 2))  # (Hkv, T, Dh)
        return q, k, v

    def attention_args(self, i: int) -> dict:
        """Keyword arguments of :func:`~visattn.models.causal.causal_attention` for layer i: the
        scores' scale (Dh^−½; Gemma's query_pre_attn_scalar^−½), its sliding window (None:
        global) and Gemma 2's soft-cap."""
        c = self.config
        scale = c.d_head**-0.5 if c.query_scale is None else c.query_scale
        return {"scale": scale, "window": c.layer_window(i), "softcap": c.softcap}

    def layer(self, i: int, x: np.ndarray, start: int, cache: Cache, weights: np.ndarray | None):
        c, layer = self.config, loading.in_flight(self, i)
        q, k, v = self.project(i, x)
        if c.rope_layers[i]:
            cos, sin = self.rotation(start, x.shape[0], i)
            q, k = rope_(q, cos, sin), rope_(k, cos, sin)
        k, v = cache.extend(i, k, v, q)  # (Hkv, S, Dh)
        args = self.attention_args(i)
        _, out = causal_attention(q, k, v, start, **args, weights=weights, scratch=weights is None)
        y = out @ layer.W_o  # (T, H·Dh) x (H·Dh, D) -> (T, D)
        if layer.b_o is not None:
            y += layer.b_o
        if layer.post_attn is not None:
            y = rms_norm(y, layer.post_attn, c.rms_eps)
        x = x + y
        m = x if layer.ln2 is None else rms_norm(x, layer.ln2, c.rms_eps)
        gate, up = m @ layer.W_gate, m @ layer.W_up  # 2 × (T, Dff)
        if layer.b_mlp is not None:
            gate += layer.b_mlp[0]
            up += layer.b_mlp[1]
        by_rows(ACTIVATIONS[c.activation], gate)
        gate *= up
        y = gate @ layer.W_down  # (T, Dff) x (Dff, D) -> (T, D)
        if layer.b_mlp is not None:
            y += layer.b_mlp[2]
        if layer.post_mlp is not None:
            y = rms_norm(y, layer.post_mlp, c.rms_eps)
        x += y
        return x

    def final_norm(self, x: np.ndarray) -> np.ndarray:
        return rms_norm(x, self.norm, self.config.rms_eps)

    def head_values(self, i: int, x: np.ndarray) -> np.ndarray:
        """As Decoder.head_values; under post-norm (OLMo 2) the heads' sum is normalised after
        W_O, so v_j W_O^h is what head h contributes before that norm."""
        c, layer = self.config, loading.in_flight(self, i)
        H, Hkv, Dh, D = c.n_heads, c.n_kv_heads, c.d_head, c.d_model
        _, _, v = self.project(i, x)  # (Hkv, T, Dh)
        v = np.repeat(v, H // Hkv, axis=0)  # (H, T, Dh): query head h reads key/value head h // G
        return v @ layer.W_o.reshape(H, Dh, D)  # (H, T, Dh) x (H, Dh, D) -> (H, T, D)

    def head_queries_keys(self, i: int, x: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
        """As Decoder.head_queries_keys, queries scaled by attention_args(i)["scale"]; under
        Gemma 2's soft-cap q·k is the score before the cap."""
        c = self.config
        T = x.shape[0]
        shared = head // (c.n_heads // c.n_kv_heads)  # the key/value head this query head reads
        q, k, _ = self.project(i, x.astype(np.float64))  # (H, T, Dh), (Hkv, T, Dh)
        q, k = q[head], k[shared]  # (T, Dh) each
        if c.rope_layers[i]:
            cos, sin = self.rotation(0, T, i)  # (T, rotary_dim): positions 0 … T − 1
            q, k = rope_(q, cos, sin), rope_(k, cos, sin)
        return q * self.attention_args(i)["scale"], k

    def unembed(self, hidden: np.ndarray) -> np.ndarray:
        if self.lm_head is None:
            raise InputError(
                "model_no_head",
                f"{self.path}: this checkpoint has no LM head (lm_head.weight), so it cannot "
                "predict or generate tokens; its attention can still be shown. Load the "
                "checkpoint saved with its head (…ForCausalLM) to generate.",
                file=str(self.path),
            )
        logits = loading.times_transposed(hidden, self.lm_head)  # (T, D) x (D, Nv) -> (T, Nv)
        cap = self.config.final_softcap
        if cap is not None:  # Gemma: c·tanh(logits / c)
            logits = np.tanh(logits / np.float32(cap)) * np.float32(cap)
        return logits


def build(folder: Path, cfg: dict, weights: loading.Weights, tokenizer: Tokenizer) -> Llama:
    from dataclasses import replace

    config = LlamaConfig.from_dict(cfg, folder / loading.CONFIG)
    prefix = loading.find_prefix(weights, ANCHOR)
    body = weights.with_prefix(prefix)
    loading.check_shapes(body, config.shapes())
    if not config.tied:
        if "lm_head.weight" not in weights:  # a base checkpoint: attention without a head
            config = replace(config, has_head=False)
        else:
            loading.check_shapes(weights, {"lm_head.weight": (config.vocab_size, config.d_model)})
    widen = loading.widen_at_load(weights.tensors)
    return Llama(config, _Heads(body, weights), tokenizer, folder, widen)


class _Heads:
    """The body's tensors under their prefix ("model."), and lm_head.weight, which has none."""

    def __init__(self, body: loading.Weights, whole: loading.Weights):
        self.body, self.whole = body, whole

    def __getitem__(self, name: str) -> np.ndarray:
        return self.whole[name] if name == "lm_head.weight" else self.body[name]

    def stored(self, name: str) -> np.ndarray | loading.Stored:
        return (self.whole if name == "lm_head.weight" else self.body).stored(name)
