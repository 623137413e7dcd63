"""The lesson "attention as today's LLMs run it" as data: grouped-query heads, the KV
cache of real models, sliding windows with attention sinks, and FlashAttention's online softmax.

One function per section of ``pages/modern_attention.py``, each returning a frozen dataclass with
every number that section shows; ``CONTROLS`` declares every URL parameter of the page; ``MODELS``
holds the published configuration of each model the cache section compares, with its source.

Blocks, heads and layers count from 1 on the page (as its prose and links do) and from 0 in
:mod:`visattn.modern_attention`; :func:`flash_section` is where the two meet."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .. import decode, modern_attention
from ..attention import attention
from ..controls import Control, table
from ..display import byte_size
from ..errors import InputError

SECTIONS = ("gqa", "cache", "window", "flash")
KINDS = ("mha", "gqa", "mqa", "mla")  # multi-head, grouped-query, multi-query, multi-head latent
DTYPES = ("bf16", "fp8")  # what one cached number takes: 2 bytes (fp16 or bf16) or 1 byte
BYTES = {"bf16": 2, "fp8": 1}
SEED = 0
COST_MODEL = "llama2_70b"  # the real shape whose every choice of G the cost table prices
GQA_DH = 4  # the small example's head width
FLASH_D = 4  # the online-softmax demo's width
MAX_DEMO_HEADS = 16
MAX_DEMO_TOKENS = 12
MAX_WINDOW_TOKENS = 48
REACH_LAYERS = 8  # the layers the reach figure draws
MAX_SINKS = 4  # the mask's slider keeps 0 … 4 first tokens (StreamingLLM keeps 4)
MAX_FLASH_TOKENS = 16
MAX_FLASH_STEPS = MAX_FLASH_TOKENS**2  # the loop's steps with blocks of one token
OPENING = 0  # the FlashAttention step control's value for the step the lesson opens on
FLASH_N = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)  # the traffic arithmetic's N
FLASH_DH = (64, 128, 256)
SRAM_KB = (100, 192, 228)  # the paper's "around 100 KB"; an A100's and an H100's SRAM per SM
# Their bytes: the paper's 100 kB taken as decimal; NVIDIA's KB are 1,024 B (KiB). 192 KiB is an
# A100's L1 cache and shared memory together per SM, 228 KiB an H100's largest shared memory per SM.
SRAM_BYTES = {100: 100_000, 192: 192 * 1024, 228: 228 * 1024}
SRAM_UNITS = {100: "kB", 192: "KiB", 228: "KiB"}
# Below this standard ÷ flash ratio FlashAttention does not even halve the HBM traffic: the page
# says why (d² not many times smaller than M).
NEAR_RATIO = 2.0
CONTEXTS = tuple(2**k for k in range(9, 18))  # the cache chart's context lengths: 512 … 131,072
# Two cache lines closer than this ratio lie on one another: 5 % is 0.021 decades, about 3 px of the
# chart's 3.3 decades over its ~400-px plot, less than a marker (5 px); the page names such lines.
COINCIDE = 1.05

# ---------------------------------------------------------------- the models' configurations


@dataclass(frozen=True)
class Model:
    """A published configuration: what its KV cache holds per token, and its own context (its name
    is the label table ``modern.models``)."""

    kind: str  # one of KINDS
    n_layers: int
    n_heads: int  # query heads
    n_kv_heads: int  # key/value heads (MLA: as many as query heads, rebuilt from the latent)
    head_dim: int
    d_model: int
    context: int  # the model's own maximum context, in tokens
    source: tuple[str, str]  # (paper, config.json with its values): where each number comes from
    latent: int = 0  # MLA: d_c, the compressed K/V latent cached per layer
    rope_key: int = 0  # MLA: d_h^R, the decoupled RoPE key cached per layer
    window: int | None = None  # sliding window: a rolling cache holds this many tokens
    # which layers see fewer than all earlier tokens: "" none (full attention in every layer),
    # "window" every layer (a sliding window), "alternating" some layers (locally banded)
    local: str = ""

    @property
    def shape(self) -> modern_attention.CacheShape:
        if self.kind == "mla":
            return modern_attention.CacheShape(
                self.n_layers, latent=self.latent, rope_key=self.rope_key
            )
        return modern_attention.CacheShape(self.n_layers, self.n_kv_heads, self.head_dim)

    @property
    def mha_shape(self) -> modern_attention.CacheShape:
        """The same model with a key and a value per query head (what multi-head attention
        caches)."""
        return modern_attention.CacheShape(self.n_layers, self.n_heads, self.head_dim)

    def cached_tokens(self, tokens: int) -> int:
        """Tokens in the cache after ``tokens``: all of them, or the window of a rolling cache."""
        return min(tokens, self.window) if self.window else tokens


_GPT2 = decode.GPT2_SMALL
_GPT3 = decode.GPT3_175B
MODELS = {
    "gpt2_small": Model(
        "mha",
        n_layers=_GPT2["n_layers"],
        n_heads=_GPT2["n_heads"],
        n_kv_heads=_GPT2["n_heads"],
        head_dim=_GPT2["d_model"] // _GPT2["n_heads"],
        d_model=_GPT2["d_model"],
        context=_GPT2["context"],
        source=(
            "Radford et al. 2019",
            "https://huggingface.co/openai-community/gpt2/blob/main/config.json: "
            "n_layer 12, n_head 12, n_embd 768, n_positions 1024",
        ),
    ),
    "gpt3_175b": Model(
        "mha",
        n_layers=_GPT3["n_layers"],
        n_heads=_GPT3["n_heads"],
        n_kv_heads=_GPT3["n_heads"],
        head_dim=_GPT3["d_model"] // _GPT3["n_heads"],
        d_model=_GPT3["d_model"],
        context=_GPT3["context"],
        local="alternating",  # §2.1: dense and locally banded sparse layers alternate
        source=(
            "Brown et al. 2020, §2.1",
            "n_layers 96, d_model 12288, n_heads 96, d_head 128, n_ctx 2048",
        ),
    ),
    "llama2_7b": Model(
        "mha",
        n_layers=32,
        n_heads=32,
        n_kv_heads=32,
        head_dim=128,
        d_model=4096,
        context=4096,
        source=(
            "Touvron et al. 2023, §2.2",
            "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json: "
            "num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 32, "
            "hidden_size 4096, max_position_embeddings 4096",
        ),
    ),
    "llama2_70b": Model(
        "gqa",
        n_layers=80,
        n_heads=64,
        n_kv_heads=8,
        head_dim=128,
        d_model=8192,
        context=4096,
        source=(
            "Touvron et al. 2023, §2.2",
            "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json: "
            "num_hidden_layers 80, num_attention_heads 64, num_key_value_heads 8, "
            "hidden_size 8192, max_position_embeddings 4096",
        ),
    ),
    "llama3_8b": Model(
        "gqa",
        n_layers=32,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        d_model=4096,
        context=8192,
        source=(
            "Dubey et al. 2024",
            "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json: "
            "num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8, "
            "hidden_size 4096, max_position_embeddings 8192",
        ),
    ),
    "llama3_70b": Model(
        "gqa",
        n_layers=80,
        n_heads=64,
        n_kv_heads=8,
        head_dim=128,
        d_model=8192,
        context=8192,
        source=(
            "Dubey et al. 2024",
            "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json: "
            "num_hidden_layers 80, num_attention_heads 64, num_key_value_heads 8, "
            "hidden_size 8192, max_position_embeddings 8192",
        ),
    ),
    "mistral_7b": Model(
        "gqa",
        n_layers=32,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        d_model=4096,
        context=8192,
        window=4096,
        local="window",  # v0.1's; v0.2 has no sliding window
        source=(
            "Jiang et al. 2023, §2: context_len 8192",
            "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json: "
            "num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8, "
            "hidden_size 4096, sliding_window 4096, max_position_embeddings 32768",
        ),
    ),
    "deepseek_v2": Model(
        "mla",
        n_layers=60,
        n_heads=128,
        n_kv_heads=128,
        head_dim=128,
        d_model=5120,
        context=128 * 1024,
        latent=512,
        rope_key=64,
        source=(
            "DeepSeek-AI 2024, §2.1",
            "https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json: "
            "num_hidden_layers 60, num_attention_heads 128, kv_lora_rank 512, "
            "qk_rope_head_dim 64, v_head_dim 128, max_position_embeddings 163840",
        ),
    ),
    "deepseek_v3": Model(
        "mla",
        n_layers=61,
        n_heads=128,
        n_kv_heads=128,
        head_dim=128,
        d_model=7168,
        context=128 * 1024,
        latent=512,
        rope_key=64,
        source=(
            "DeepSeek-AI 2024, §4.2",
            "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json: "
            "num_hidden_layers 61, num_attention_heads 128, kv_lora_rank 512, "
            "qk_rope_head_dim 64, v_head_dim 128, max_position_embeddings 163840",
        ),
    ),
}
CONTROLS = table(
    Control("mo_sec", "gqa", options=SECTIONS, labels="modern_attention.sections"),
    # grouped-query attention: T tokens, H query heads sharing G key/value heads
    Control("mo_gt", 6, lo=2, hi=MAX_DEMO_TOKENS),
    Control("mo_h", 8, lo=1, hi=MAX_DEMO_HEADS),
    Control("mo_g", 2, lo=1, hi=MAX_DEMO_HEADS, in_figure=True),  # a divisor of H
    Control("mo_causal", True),
    # the KV cache of real models: the model whose sum is written out, the number format
    Control("mo_model", "llama2_70b", options=tuple(MODELS), labels="modern_attention.models"),
    Control("mo_dtype", "bf16", options=DTYPES, labels="modern_attention.dtypes"),
    # sliding windows: tokens, window (0 is refused, with a message), the sinks kept, the layer
    # whose reach the reach figure writes out
    Control("mo_wt", 20, lo=8, hi=MAX_WINDOW_TOKENS),
    Control("mo_w", 4, lo=0, hi=MAX_WINDOW_TOKENS),
    Control("mo_sinks", 0, lo=0, hi=MAX_SINKS, in_figure=True),
    Control("mo_wl", REACH_LAYERS, lo=1, hi=REACH_LAYERS, in_figure=True),
    # FlashAttention: T, the block sizes (larger than T is refused), causal, the loop's step shown
    # (1-based; OPENING: the step the lesson opens on)
    Control("mo_ft", 10, lo=2, hi=MAX_FLASH_TOKENS),
    Control("mo_fbq", 4, lo=1, hi=MAX_FLASH_TOKENS),
    Control("mo_fbk", 3, lo=1, hi=MAX_FLASH_TOKENS),
    Control("mo_fcausal", False),
    Control("mo_fstep", OPENING, lo=OPENING, hi=MAX_FLASH_STEPS, in_figure=True),
    # the memory-traffic arithmetic: sequence length N, head width d, on-chip memory M
    Control("mo_fn", 4096, options=FLASH_N),
    Control("mo_fd", 64, options=FLASH_DH),
    Control("mo_fm", 100, options=SRAM_KB, labels="modern_attention.sram"),
)


# Value sets that are not controls: what each kind of attention caches (the kinds' names are the
# figures' words, visattn.figures.modern_attention.Words, and the page's tables use them too).
LABELS = {"modern_attention.kind_notes": KINDS}


def full_attention_models() -> tuple[int, int]:
    """How many of MODELS use full attention in every layer, and how many models there are."""
    return sum(1 for model in MODELS.values() if not model.local), len(MODELS)


def kind_of(n_heads: int, n_kv_heads: int) -> str:
    """mha (G = H), mqa (G = 1 < H) or gqa (in between)."""
    if n_kv_heads == n_heads:
        return "mha"
    return "mqa" if n_kv_heads == 1 else "gqa"


def seeded(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- grouped-query attention


@dataclass(frozen=True)
class CostRow:
    G: int
    kind: str
    kv_params: int  # W_k and W_v of one layer: 2 · D · G · Dh
    attention_params: int  # W_q, W_k, W_v and W_o of one layer
    per_token: str  # cache one token adds (all layers), fp16
    per_sequence: str  # cache of one sequence at the model's context, fp16


@dataclass(frozen=True)
class GQASection:
    H: int
    G: int
    T: int
    kind: str
    result: modern_attention.GQAResult  # weights (H, T, T), output (H, T, Dh)
    groups: tuple[tuple[int, ...], ...]  # (G,) the query heads (0-based) of each K/V head
    repeat_difference: float  # max |output − H ordinary heads with K/V copied|


def gqa_section(T: int, H: int, G: int, causal: bool) -> GQASection:
    """Seeded Q (H, T, Dh) and K, V (G, T, Dh); an InputError unless G divides H."""
    modern_attention.kv_head_of(
        H, G
    )  # the error first: nothing is drawn for a G that does not divide H
    Q = seeded((H, T, GQA_DH), SEED)
    K = seeded((G, T, GQA_DH), SEED + 1)
    V = seeded((G, T, GQA_DH), SEED + 2)
    result = modern_attention.grouped_query_attention(Q, K, V, causal=causal)
    mask = result.mask if causal else None
    copied = np.stack(
        [attention(Q[h], K[g], V[g], mask=mask).output for h, g in enumerate(result.kv_head)]
    )  # (H, T, Dh)
    groups = tuple(tuple(int(h) for h in np.flatnonzero(result.kv_head == g)) for g in range(G))
    return GQASection(
        H=H,
        G=G,
        T=T,
        kind=kind_of(H, G),
        result=result,
        groups=groups,
        repeat_difference=float(np.abs(result.output - copied).max()),
    )


def shown_kv_heads(H: int, G: int) -> int:
    """The G the figures show for the control's G: itself when it divides H, else the largest
    divisor of H below it (H changed under it, or a link asked for a G that does not divide H)."""
    return max(g for g in modern_attention.divisors(H) if g <= max(G, 1))


@dataclass(frozen=True)
class GQASteps:
    """The example at every G that divides H, for the grouping figure's slider over G (the maps
    follow it)."""

    Gs: tuple[int, ...]  # (S,) the divisors of H, ascending
    active: int  # index of the control's G
    kv_heads: np.ndarray  # (S, H) the K/V head each query head reads at each G
    weights: np.ndarray  # (S, H, T, T) every query head's weights at each G
    kinds: tuple[str, ...]  # (S,) mha, gqa or mqa
    repeat_difference: float  # max over every G of |output − H ordinary heads with K/V copied|


@dataclass(frozen=True)
class GroupingSteps:
    """Which K/V head each query head reads at every G that divides H (no tokens: the grouping
    figure stays as it is when T or the mask changes)."""

    Gs: tuple[int, ...]  # (S,) the divisors of H, ascending
    active: int  # index of the control's G
    kv_heads: np.ndarray  # (S, H)
    kinds: tuple[str, ...]  # (S,) mha, gqa or mqa


def grouping_steps(H: int, G: int) -> GroupingSteps:
    """An InputError unless G divides H (:func:`shown_kv_heads` gives one that does)."""
    modern_attention.kv_head_of(H, G)
    Gs = tuple(modern_attention.divisors(H))
    kv_heads = np.stack([modern_attention.kv_head_of(H, g) for g in Gs])  # (S, H)
    kinds = tuple(kind_of(H, g) for g in Gs)
    return GroupingSteps(Gs=Gs, active=Gs.index(G), kv_heads=kv_heads, kinds=kinds)


def gqa_steps(T: int, H: int, G: int, causal: bool) -> GQASteps:
    """:func:`gqa_section` at every G that divides H (the same seeded queries; keys and values
    drawn for each G as the section draws them); an InputError unless G divides H."""
    modern_attention.kv_head_of(H, G)
    Gs = tuple(modern_attention.divisors(H))
    runs = [gqa_section(T, H, g, causal) for g in Gs]
    return GQASteps(
        Gs=Gs,
        active=Gs.index(G),
        kv_heads=np.stack([run.result.kv_head for run in runs]),  # (S, H)
        weights=np.stack([run.result.weights for run in runs]),  # (S, H, T, T)
        kinds=tuple(run.kind for run in runs),
        repeat_difference=max(run.repeat_difference for run in runs),
    )


def cost_rows(model: Model) -> tuple[CostRow, ...]:
    """Parameters and cache of the model's attention for every G that divides its H (fp16)."""
    D, H, Dh = model.d_model, model.n_heads, model.head_dim
    rows = []
    for G in reversed(modern_attention.divisors(H)):
        shape = modern_attention.CacheShape(model.n_layers, G, Dh)
        kv = 2 * D * G * Dh
        rows.append(
            CostRow(
                G=G,
                kind=kind_of(H, G),
                kv_params=kv,
                attention_params=2 * D * H * Dh + kv,
                per_token=byte_size(modern_attention.kv_cache_bytes(shape, BYTES["bf16"])),
                per_sequence=byte_size(
                    modern_attention.kv_cache_bytes(shape, BYTES["bf16"], model.context)
                ),
            )
        )
    return tuple(rows)


# ---------------------------------------------------------------- the KV cache of real models


@dataclass(frozen=True)
class ModelRow:
    id: str
    model: Model
    values_per_token: int  # numbers one token adds to the cache, all layers
    bytes_token: dict[str, int]  # dtype → bytes per token
    bytes_sequence: dict[str, int]  # dtype → bytes of one sequence at the model's own context
    cached_tokens: int  # tokens the cache holds at that context (a rolling window: fewer)
    mha_bytes_token: int  # bf16 bytes per token if every query head had its own key and value


@dataclass(frozen=True)
class CacheSection:
    dtype: str
    rows: tuple[ModelRow, ...]
    contexts: tuple[int, ...]  # the chart's x
    curves: dict[str, tuple[np.ndarray, np.ndarray]]  # model id → (contexts ≤ its own, GB)
    # the least and the most GB of any model's curve in any number format: the chart's y axis,
    # the same for every format, so that fp8 halving the cache shows as every curve moving down
    gb_range: tuple[float, float]
    chosen: ModelRow  # the model whose sum is written out
    formula: str  # LaTeX: that model's bytes per token, factor by factor


def model_rows() -> tuple[ModelRow, ...]:
    """Every model of MODELS: numbers and bytes per token, bytes of one sequence at its own context
    (the tables, which no control changes)."""
    rows = []
    for key, model in MODELS.items():
        per_token = {d: modern_attention.kv_cache_bytes(model.shape, b) for d, b in BYTES.items()}
        cached = model.cached_tokens(model.context)
        rows.append(
            ModelRow(
                id=key,
                model=model,
                values_per_token=model.shape.values_per_token,
                bytes_token=per_token,
                bytes_sequence={
                    d: modern_attention.kv_cache_bytes(model.shape, b, cached)
                    for d, b in BYTES.items()
                },
                cached_tokens=cached,
                mha_bytes_token=modern_attention.kv_cache_bytes(model.mha_shape, BYTES["bf16"]),
            )
        )
    return tuple(rows)


def cache_curve(row: ModelRow, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """One model's line: (the chart's contexts up to the model's own, GB of one sequence's cache
    at each) in ``dtype``."""
    model = row.model
    x = np.unique([n for n in CONTEXTS if n <= model.context] + [model.context])
    cached = np.array([model.cached_tokens(int(n)) for n in x])
    return x, row.bytes_token[dtype] * cached / 1e9


def cache_section(model_id: str, dtype: str) -> CacheSection:
    """The model written out (its formula and numbers) and every model's curve in ``dtype``."""
    rows = model_rows()
    curves, reached = {}, []
    for row in rows:
        every = {d: cache_curve(row, d) for d in DTYPES}
        curves[row.id] = every[dtype]
        reached += [float(gb.min()) for _, gb in every.values()]
        reached += [float(gb.max()) for _, gb in every.values()]
    chosen = next(r for r in rows if r.id == model_id)
    return CacheSection(
        dtype=dtype,
        rows=rows,
        contexts=CONTEXTS,
        curves=curves,
        gb_range=(min(reached), max(reached)),
        chosen=chosen,
        formula=cache_formula(chosen.model, dtype),
    )


@dataclass(frozen=True)
class Coinciding:
    ids: tuple[str, str]  # two models, in MODELS' order
    contexts: tuple[int, int]  # the first and the last context at which their lines coincide


def coinciding_lines() -> tuple[Coinciding, ...]:
    """The pairs of models whose cache lines lie on one another (within COINCIDE of each other) at
    two or more of the chart's contexts: a stretch of line hidden under another, not a crossing.
    The ratio of two lines is the same in every number format, so bf16 decides for both."""
    curves = {row.id: cache_curve(row, "bf16") for row in model_rows()}
    pairs = []
    for a, b in itertools.combinations(curves, 2):
        (xa, gb_a), (xb, gb_b) = curves[a], curves[b]
        shared, ia, ib = np.intersect1d(xa, xb, return_indices=True)
        ratio = gb_a[ia] / gb_b[ib]
        close = shared[np.maximum(ratio, 1 / ratio) < COINCIDE]
        if len(close) >= 2:
            pairs.append(Coinciding(ids=(a, b), contexts=(int(close[0]), int(close[-1]))))
    return tuple(pairs)


def cache_formula(model: Model, dtype: str) -> str:
    """LaTeX of one token's cache: layers × (keys and values of the K/V heads, or latent + RoPE
    key) × bytes."""
    b = BYTES[dtype]
    total = modern_attention.kv_cache_bytes(model.shape, b)
    if model.kind == "mla":
        factors = rf"{model.n_layers} \times ({model.latent} + {model.rope_key}) \times {b}"
    else:
        factors = rf"2 \times {model.n_layers} \times {model.n_kv_heads} \times {model.head_dim}"
        factors += rf" \times {b}"
    return rf"{factors} = {total:,}\ \mathrm{{B}} = \text{{{byte_size(total)}}}".replace(",", "{,}")


# ---------------------------------------------------------------- sliding windows


@dataclass(frozen=True)
class WindowSection:
    T: int
    window: int
    mask: np.ndarray  # (T, T) True = may attend: the band of the window
    sink_cells: np.ndarray  # (MAX_SINKS + 1, T, T) with s sinks, does query i keep key j (j < s)?
    reach: np.ndarray  # (REACH_LAYERS, T) can position j reach the last token after layer l + 1?
    spans: tuple[int, ...]  # positions the last token depends on after each layer (measured)
    bounds: tuple[int, ...]  # L(W − 1) + 1 after each layer L: the formula, before T caps it
    keys_per_query: int  # the most keys one query reads in its window (sinks aside)
    reference_difference: float  # max over 0 … MAX_SINKS sinks of |sliding-window GQA − masked|


@dataclass(frozen=True)
class MistralSpan:
    """How far Mistral 7B's last token reaches over its layers under the two conventions for W."""

    window: int  # W = 4,096
    layers: int  # L = 32
    positions: int  # L(W − 1) + 1: W keys a query, its own included (this page, Hugging Face)
    back: int  # L(W − 1): how many tokens back the farthest one is
    paper_back: int  # W × L: keys i − W … i, W + 1 a query (the paper's §2 and reference code)
    paper_positions: int  # W × L + 1


def mistral_span() -> MistralSpan:
    """Mistral 7B's reach after its 32 layers: with W keys a query (its own token included),
    L(W − 1) + 1 positions (what composing the masks gives, tests/test_modern_attention); with
    the paper's W + 1 keys i − W … i, each layer reaches W further back: W × L exactly."""
    mistral = MODELS["mistral_7b"]
    W, L = mistral.window, mistral.n_layers
    positions = modern_attention.window_span(W, L)
    paper_positions = modern_attention.window_span(W + 1, L)
    return MistralSpan(
        window=W,
        layers=L,
        positions=positions,
        back=positions - 1,
        paper_back=paper_positions - 1,
        paper_positions=paper_positions,
    )


def window_section(T: int, window: int) -> WindowSection:
    window = modern_attention.check_window(window)
    mask = modern_attention.window_mask(T, window)
    # a sink is kept by every query from its own position on, whatever the window
    causal = modern_attention.window_mask(T)  # (T, T)
    sink_cells = np.stack([causal & (np.arange(T) < s) for s in range(MAX_SINKS + 1)])
    reach = modern_attention.receptive_field(mask, REACH_LAYERS)[
        :, -1, :
    ]  # (L, T): the last query's row
    Q = seeded((1, T, GQA_DH), SEED)
    K = seeded((1, T, GQA_DH), SEED + 1)
    V = seeded((1, T, GQA_DH), SEED + 2)
    differences = []
    for sinks in range(MAX_SINKS + 1):
        windowed = modern_attention.grouped_query_attention(
            Q, K, V, causal=True, window=window, sinks=sinks
        )
        reference = attention(Q[0], K[0], V[0], mask=mask | sink_cells[sinks]).output
        differences.append(np.abs(windowed.output[0] - reference).max())
    return WindowSection(
        T=T,
        window=window,
        mask=mask,
        sink_cells=sink_cells,
        reach=reach,
        spans=tuple(int(n) for n in reach.sum(axis=1)),
        bounds=tuple(layers * (window - 1) + 1 for layers in range(1, REACH_LAYERS + 1)),
        keys_per_query=int(mask.sum(axis=1).max()),
        reference_difference=float(max(differences)),
    )


# ---------------------------------------------------------------- FlashAttention


@dataclass(frozen=True)
class FlashSection:
    T: int
    block_q: int
    block_k: int
    causal: bool
    result: modern_attention.FlashResult
    scores: np.ndarray  # (T, T) the whole S = QKᵀ/√d (−inf where masked): what flash never holds
    reference: np.ndarray  # (T, d) softmax(S)·V at once
    difference: float  # max |flash − reference|
    # every step in the loop's order (FlashAttention-2's): each query block, each key block
    steps: tuple[modern_attention.FlashStep, ...]
    errors: tuple[float, ...]  # after each step: max |Õ/ℓ − final O| of its query block's rows
    full_numbers: int  # T² scores (and as many weights) the standard way holds
    tile_numbers: int  # a tile, the block's Q rows, m, ℓ and the accumulator


def flash_opening(section: FlashSection) -> int:
    """The step (0-based) the lesson opens on: the first query block's last tile computed, its
    final output (a causal block's later tiles are skipped and change nothing)."""
    n_k = section.result.n_k_blocks
    return max(j for j in range(n_k) if not section.steps[j].skipped)


def flash_shown(section: FlashSection, value: int) -> int:
    """The step (0-based) the figure shows for the control's value: step ``value`` (1-based), or
    the opening one for OPENING (and past the last step)."""
    if OPENING < value <= len(section.steps):
        return value - 1
    return flash_opening(section)


def flash_step_shown(section: FlashSection, value: int) -> int:
    """The control's value for a step the figure has: ``value``, or OPENING for a step past the
    last (the blocks changed under it, or a link asked for it)."""
    return value if OPENING < value <= len(section.steps) else OPENING


def flash_section(T: int, block_q: int, block_k: int, causal: bool) -> FlashSection:
    Q = seeded((T, FLASH_D), SEED)
    K = seeded((T, FLASH_D), SEED + 1)
    V = seeded((T, FLASH_D), SEED + 2)
    result = modern_attention.flash_attention(
        Q, K, V, block_q=block_q, block_k=block_k, causal=causal
    )
    mask = modern_attention.window_mask(T, causal=True) if causal else None
    exact = attention(Q, K, V, mask=mask)
    scores = exact.scores if mask is None else np.where(mask, exact.scores, -np.inf)
    Bq, Bk = result.block_q, result.block_k
    return FlashSection(
        T=T,
        block_q=Bq,
        block_k=Bk,
        causal=causal,
        result=result,
        scores=scores,
        reference=exact.output,
        difference=float(np.abs(result.output - exact.output).max()),
        steps=result.steps,
        errors=tuple(
            float(np.abs(s.estimate - exact.output[s.rows[0] : s.rows[1]]).max())
            for s in result.steps
        ),
        full_numbers=T * T,
        tile_numbers=Bq * Bk + 2 * Bq * FLASH_D + Bk * 2 * FLASH_D + 2 * Bq,
    )


@dataclass(frozen=True)
class TrafficSection:
    traffic: modern_attention.Traffic
    sram_numbers: int  # M: the on-chip memory in fp16 numbers
    ratio: float  # standard / flash
    m_over_d2: float  # M / d²: the paper's argument needs it many times above 1
    limit: float  # the ratio as N grows: 4 B_c / (3d + 4), about M / (3d²)
    sram: str  # the on-chip memory as the page writes it: "100 kB", "192 KiB"
    sram_bytes: int
    standard_bytes: str
    flash_bytes: str
    scores_bytes: str  # the N × N scores of one head in fp16


def sram_text(sram_kb: int) -> str:
    """An on-chip memory choice in its own unit: "100 kB" (the paper's), "192 KiB" (NVIDIA's)."""
    return f"{sram_kb} {SRAM_UNITS[sram_kb]}"


def traffic_section(N: int, d: int, sram_kb: int) -> TrafficSection:
    """Dao et al. 2022's HBM accesses for N tokens, head width d and the on-chip memory
    ``SRAM_BYTES[sram_kb]`` (fp16: 2 bytes a number)."""
    if sram_kb not in SRAM_KB:
        raise InputError("sram_choice", f"sram_kb must be one of {SRAM_KB}.", value=sram_kb)
    M = SRAM_BYTES[sram_kb] // BYTES["bf16"]
    traffic = modern_attention.hbm_traffic(N, d, M)
    return TrafficSection(
        traffic=traffic,
        sram_numbers=M,
        ratio=traffic.standard / traffic.flash,
        m_over_d2=M / d**2,
        # per key block, Q and O pass with 3Nd + 4N accesses against the standard 4N² in all
        limit=4 * traffic.block_k / (3 * d + 4),
        sram=sram_text(sram_kb),
        sram_bytes=SRAM_BYTES[sram_kb],
        standard_bytes=byte_size(traffic.standard * BYTES["bf16"]),
        flash_bytes=byte_size(traffic.flash * BYTES["bf16"]),
        scores_bytes=byte_size(N * N * BYTES["bf16"]),
    )


def paper_m_over_d2() -> dict[int, float]:
    """M / d² at the paper's 100 kB for every head width the controls offer: the paper's
    condition d² ≪ M holds at d = 64, not at d = 128."""
    return {d: traffic_section(FLASH_N[0], d, SRAM_KB[0]).m_over_d2 for d in FLASH_DH}


def traffic_range() -> tuple[int, int]:
    """The fewest and the most HBM accesses of either algorithm over every N, d and on-chip size
    the controls offer: the traffic chart's y axis, the same for every choice, so that a larger d
    or a smaller M shows as the curves moving."""
    counts = []
    for N, d, sram_kb in itertools.product(FLASH_N, FLASH_DH, SRAM_KB):
        traffic = traffic_section(N, d, sram_kb).traffic
        counts += [traffic.standard, traffic.flash]
    return min(counts), max(counts)


FLASH_LATEX = (
    r"\begin{gathered} S_{ij} = \frac{Q_i K_j^\top}{\sqrt{d}},\quad "
    r"m_{ij} = \max\big(m_{i,j-1},\ \mathrm{rowmax}(S_{ij})\big),\quad "
    r"\tilde P_{ij} = e^{S_{ij} - m_{ij}} \\ "
    r"\ell_{ij} = e^{m_{i,j-1} - m_{ij}}\,\ell_{i,j-1} + \mathrm{rowsum}(\tilde P_{ij}),\quad "
    r"\tilde O_{ij} = e^{m_{i,j-1} - m_{ij}}\,\tilde O_{i,j-1} + \tilde P_{ij} V_j,\quad "
    r"O_i = \tilde O_{i,T_c} / \ell_{i,T_c} \end{gathered}"
)


def traffic_latex(section: TrafficSection, standard_name: str, flash_name: str) -> str:
    """Both counts with the chosen N, d and M put in, each after its (translated) name."""
    c = section.traffic
    N, d, Tc = c.N, c.d, c.n_k_blocks

    def latex_count(n: int) -> str:
        return f"{n:,}".replace(",", "{,}")

    standard = rf"\text{{{standard_name}}}:\ 4Nd + 4N^2 = {latex_count(c.standard)}"
    first, per_block = latex_count(3 * N * d + 2 * N), latex_count(3 * N * d + 4 * N)
    flash = (
        rf"\text{{{flash_name}}}:\ 3Nd + 2N + T_c(3Nd + 4N) = {first} + {Tc}"
        rf" \times {per_block} = {latex_count(c.flash)}"
    )
    return r"\begin{gathered} " + standard + r" \\ " + flash + r" \end{gathered}"
