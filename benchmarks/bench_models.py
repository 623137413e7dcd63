"""Checkpoints from a folder in visattn's NumPy against transformers' eager forward: load time,
forward time and peak memory, for a GPT-2-small-sized checkpoint (float32) and random checkpoints
of today's small models' shapes in bfloat16 (Qwen2.5-0.5B, Llama-3.2-1B); and the BLAS thread count
measured rather than assumed.

Run with the benchmark venv (torch and transformers make the GPT-2 checkpoint once and time the
reference; the bfloat16 checkpoints are written by this script with NumPy, once, under $TMPDIR):

    .venv-bench/bin/python benchmarks/bench_models.py [--threads 2] [--rounds 3]
        [--shapes gpt2-small qwen2.5-0.5b llama-3.2-1b] [--tokens 128 512 2048] [--no-threads]

Shapes (random weights, seed 0; a trained model computes the same operations at the same speed):
gpt2-small (12 L × 12 H, d 768, 124 M parameters, float32 made by transformers); qwen2.5-0.5b (24 L,
d 896, 14 heads / 2 key-value heads of 64, Dff 4864, vocabulary 151,936, tied: 494 M parameters, a
988 MB bf16 file); llama-3.2-1b (16 L, d 2048, 32 / 8 heads of 64, Dff 8192, vocabulary 128,256,
tied, llama3 RoPE scaling: 1.24 B parameters, a 2.47 GB bf16 file). The tokenizer is the tiny
byte-level BPE of tests/fixtures/models/gpt2; the ids of the timed text are fed directly, so only
the forward is timed: ``model.forward(ids)`` (every layer's attention returned) against the base
model's ``model(ids, output_attentions=True)`` (eager attention, inference mode, float32 weights).

Each (engine, shape, length) runs in its own subprocess with the same thread count
(OMP/OpenBLAS/MKL set before NumPy or torch load; torch.set_num_threads too); engines alternate for
``--rounds`` subprocesses. Printed per length: each engine's median over rounds (min … max), the
ratio of medians (the spread of the per-round ratios), each engine's peak RSS (VmHWM) and the ratio;
the load times; the NumPy side's RSS after load and after its forwards split into anonymous
memory (the process's own) and file-backed pages (the mapped weights) from /proc/self/smaps_rollup,
with the model's memory budget (VISATTN_MODEL_BUDGET, default 2 GB), what it counts, and whether
the weights were widened at load or layer by layer. A length whose attention maps (L × H × T²
float32, in both engines) would not fit in half the memory available now is skipped, saying so.

Thread count (``--no-threads`` skips it): ``--thread-shape`` (qwen2.5-0.5b) at 128 tokens, each
engine at 1 and at 2 threads, as the machine is and with one more process spinning on a core (what a
shared server sees); the NumPy side also times one (T × d) x (d × Dff) product, which OpenBLAS
splits over its threads. The chosen count and why are printed after the table."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_pretrained import ratio, spread
from timing import engine_args, importable, median_time

REPO = Path(__file__).resolve().parent.parent
ROOT = Path(tempfile.gettempdir())
TOKENIZER = REPO / "tests" / "fixtures" / "models" / "gpt2" / "tokenizer.json"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
REPEATS = {128: 5, 512: 3, 2048: 1}  # timed forwards per subprocess (after one warm-up)
GPT2_VOCAB = 50257
# the real shapes: (model_type, L, D, H, Hkv, Dh, Dff, vocabulary, extra config.json fields)
SHAPES = {
    "qwen2.5-0.5b": (
        "qwen2",
        24,
        896,
        14,
        2,
        64,
        4864,
        151936,
        {"rope_theta": 1000000.0, "max_position_embeddings": 32768, "use_sliding_window": False},
    ),
    "llama-3.2-1b": (
        "llama",
        16,
        2048,
        32,
        8,
        64,
        8192,
        128256,
        {
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "rope_type": "llama3",
                "factor": 32.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        },
    ),
}
DEFAULT_TOKENS = {"gpt2-small": [128, 512], "qwen2.5-0.5b": [128, 512, 2048]}


def folder_of(shape: str) -> Path:
    return ROOT / f"visattn-bench-{shape}"


def make_gpt2() -> Path:
    """The random GPT-2 small folder (made once by transformers, float32)."""
    folder = folder_of("gpt2-small")
    if (folder / "model.safetensors").is_file():
        return folder
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=GPT2_VOCAB)
    model = GPT2Model(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    shutil.copy(TOKENIZER, folder / "tokenizer.json")
    return folder


def tensor_shapes(shape: str) -> dict[str, tuple[int, ...]]:
    """Every tensor of a LLaMA-family checkpoint of ``shape``, as transformers names them."""
    model_type, L, D, H, Hkv, Dh, F, V, _ = SHAPES[shape]
    out = {"model.embed_tokens.weight": (V, D)}
    for i in range(L):
        p = f"model.layers.{i}."
        out |= {
            p + "input_layernorm.weight": (D,),
            p + "self_attn.q_proj.weight": (H * Dh, D),
            p + "self_attn.k_proj.weight": (Hkv * Dh, D),
            p + "self_attn.v_proj.weight": (Hkv * Dh, D),
            p + "self_attn.o_proj.weight": (D, H * Dh),
            p + "post_attention_layernorm.weight": (D,),
            p + "mlp.gate_proj.weight": (F, D),
            p + "mlp.up_proj.weight": (F, D),
            p + "mlp.down_proj.weight": (D, F),
        }
        if model_type == "qwen2":
            for n, rows in (("q", H * Dh), ("k", Hkv * Dh), ("v", Hkv * Dh)):
                out[p + f"self_attn.{n}_proj.bias"] = (rows,)
    out["model.norm.weight"] = (D,)
    return out


def make_bf16(shape: str) -> Path:
    """A random checkpoint of ``shape`` in bfloat16 (made once, by NumPy, a tensor at a time):
    matrices and biases ~ N(0, 0.02²), norms 1."""
    import numpy as np

    folder = folder_of(shape)
    if (folder / "model.safetensors").is_file():
        return folder
    model_type, L, D, H, Hkv, Dh, F, V, extra = SHAPES[shape]
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": model_type,
        "architectures": ["Qwen2ForCausalLM" if model_type == "qwen2" else "LlamaForCausalLM"],
        "num_hidden_layers": L,
        "hidden_size": D,
        "num_attention_heads": H,
        "num_key_value_heads": Hkv,
        "head_dim": Dh,
        "intermediate_size": F,
        "vocab_size": V,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6 if model_type == "qwen2" else 1e-5,
        "torch_dtype": "bfloat16",
        **extra,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    shutil.copy(TOKENIZER, folder / "tokenizer.json")
    shapes = tensor_shapes(shape)
    header, offset = {}, 0
    for name, dims in shapes.items():
        n = 2 * int(np.prod(dims))
        header[name] = {"dtype": "BF16", "shape": list(dims), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    rng = np.random.default_rng(0)
    part = folder / "model.safetensors.part"
    with open(part, "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        for name, dims in shapes.items():
            n = int(np.prod(dims))
            if name.endswith("norm.weight"):
                f.write(np.full(n, 0x3F80, dtype="<u2").tobytes())  # bf16 1.0
                continue
            for a in range(0, n, 1 << 24):
                x = rng.standard_normal(min(1 << 24, n - a), dtype=np.float32) * np.float32(0.02)
                f.write((x.view(np.uint32) >> 16).astype("<u2").tobytes())  # bf16: the top bits
    part.rename(folder / "model.safetensors")
    return folder


def dims_of(shape: str) -> tuple[int, int, int, int]:
    """(layers, heads, d_model, d_ff) of a shape."""
    if shape == "gpt2-small":
        return 12, 12, 768, 3072
    _, L, D, H, _, _, F, _, _ = SHAPES[shape]
    return L, H, D, F


def memory() -> dict:
    """This process's peak RSS (VmHWM) and its RSS now, split into anonymous and file-backed."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmHWM:", "VmRSS:", "RssAnon:", "RssFile:")):
            key, value = line.split(":")
            out[key] = int(value.split()[0]) * 1024
    rollup = Path("/proc/self/smaps_rollup")
    if rollup.is_file():
        for line in rollup.read_text().splitlines():
            if line.startswith(("Rss:", "Anonymous:")):
                key, value = line.split(":")
                out["smaps_" + key] = int(value.split()[0]) * 1024
    return out


def product_ms(d: int, d_ff: int, n_tokens: int) -> float:
    """One (T × d) x (d × Dff) float32 product, median ms (OpenBLAS threads it)."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((n_tokens, d), dtype=np.float32)
    w = rng.standard_normal((d, d_ff), dtype=np.float32)

    def call():
        return x @ w

    return 1e3 * median_time(call, 30, warmup=3)


def worker(engine: str, shape: str, n_tokens: int, threads: int, repeats: int) -> dict:
    import numpy as np

    folder = folder_of(shape)
    L, H, D, F = dims_of(shape)
    vocab = GPT2_VOCAB if shape == "gpt2-small" else SHAPES[shape][7]
    ids = np.random.default_rng(1).integers(0, vocab, n_tokens)
    out = {"engine": engine, "shape": shape, "tokens": n_tokens}
    if engine == "numpy":
        sys.path.insert(0, str(REPO))
        from visattn.models import load, loading, sources

        t0 = time.perf_counter()
        model = load(folder)
        out["load"] = time.perf_counter() - t0
        out["after_load"] = memory()
        out["widened_at_load"] = not any(
            isinstance(v, loading.Stored) for v in vars(model.layers[0]).values()
        )
        out["budget"] = sources.budget_bytes()
        weights = loading.Weights.open(folder)
        out["resident"] = loading.resident_bytes(weights.tensors, out["budget"])
        assert model.forward(ids)[0].shape == (L, H, n_tokens, n_tokens)

        def call():
            return model.forward(ids)

        out["seconds"] = median_time(call, repeats, warmup=0)
        out["memory"] = memory()
        out["product_ms"] = product_ms(D, F, n_tokens)
        return out
    import torch
    from transformers import AutoModel

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
    model = model.eval()
    out["load"] = time.perf_counter() - t0
    batch = torch.from_numpy(ids)[None]

    def call():
        with torch.inference_mode():
            return model(batch, output_attentions=True)

    assert call().attentions[0].shape[-1] == n_tokens
    out["seconds"] = median_time(call, repeats, warmup=0)
    out["memory"] = memory()
    return out


def measure(engine: str, shape: str, n_tokens: int, threads: int, repeats: int) -> dict | None:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    cmd = [sys.executable, __file__, "--worker", engine, "--shapes", shape]
    cmd += ["--tokens", str(n_tokens), "--threads", str(threads), "--repeats", str(repeats)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        print(f"[{engine} {shape} @ {n_tokens}] failed:\n{proc.stderr.strip()[-2000:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def gb(n: float | None) -> str:
    return "-" if n is None else f"{n / 1e9:.2f}"


def peaks(found: list[dict | None]) -> list[float | None]:
    return [f["memory"]["VmHWM"] if f else None for f in found]


def median_of(values: list[float | None]) -> float | None:
    ok = [v for v in values if v is not None]
    return statistics.median(ok) if ok else None


def compare(shape: str, tokens: list[int], threads: int, rounds: int) -> None:
    """The table of one shape: forward time, peak memory, and the NumPy side's memory."""
    L, H, _, _ = dims_of(shape)
    folder = folder_of(shape)
    size = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    print(f"\n### {shape}: {size / 1e6:.0f} MB on disk, threads={threads}, rounds={rounds}")
    print("| tokens | NumPy ms | torch eager ms | NumPy ÷ torch | peak RSS GB NumPy / torch (÷) |")
    print("|---|---|---|---|---|")
    notes, loads, torch_loads = [], [], []
    for n in tokens:
        maps = 4 * L * H * n * n
        if 2 * maps > available_bytes() / 2:
            print(f"| {n} | skipped: maps {gb(maps)} GB per engine | | | |")
            continue
        runs: dict[str, list] = {"numpy": [], "torch": []}
        for _ in range(rounds):
            for engine in runs:
                runs[engine].append(measure(engine, shape, n, threads, REPEATS.get(n, 3)))
        seconds = {e: [f["seconds"] if f else None for f in runs[e]] for e in runs}
        mine, theirs = median_of(peaks(runs["numpy"])), median_of(peaks(runs["torch"]))
        share = f"{mine / theirs:.2f}" if mine and theirs else "-"
        print(
            f"| {n} | {spread(seconds['numpy'])} | {spread(seconds['torch'])} | "
            f"{ratio(seconds['numpy'], seconds['torch'])} | {gb(mine)} / {gb(theirs)} ({share}) |"
        )
        loads += [f["load"] for f in runs["numpy"] if f]
        torch_loads += [f["load"] for f in runs["torch"] if f]
        last = next((f for f in reversed(runs["numpy"]) if f), None)
        if last:
            m, a = last["memory"], last["after_load"]
            how = "widened at load" if last["widened_at_load"] else "widened layer by layer"
            notes.append(
                f"NumPy @ {n}: peak RSS {gb(m['VmHWM'])} GB; after load {split(a)}; after the "
                f"forwards {split(m)}; {how}; the budget of {gb(last['budget'])} GB counts "
                f"{gb(last['resident'])} GB"
            )
    faster = ratio_loads(loads, torch_loads)
    print(f"load ms: NumPy {spread(loads)}; torch {spread(torch_loads)}; {faster}")
    for note in notes:
        print(f"- {note}")


def split(m: dict) -> str:
    """RSS as anonymous (the process's own) + file-backed (mapped weights) GB."""
    anonymous = m.get("smaps_Anonymous", m.get("RssAnon"))
    return f"RSS {gb(m['VmRSS'])} GB = anonymous {gb(anonymous)} + file-backed {gb(m['RssFile'])}"


def ratio_loads(mine: list[float], theirs: list[float]) -> str:
    if not mine or not theirs:
        return ""
    return f"torch ÷ NumPy {statistics.median(theirs) / statistics.median(mine):.1f}×"


def busy_core() -> subprocess.Popen:
    """A process spinning on one core (another user of a shared machine)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def thread_table(shape: str, rounds: int, chosen: int) -> None:
    """Each engine at 1 and 2 threads on ``shape`` at 128 tokens, as the machine is and with a core
    busy; NumPy's one product too; then what 1 thread costs or saves against 2, and the choice."""
    n = 128
    print(f"\n### threads: {shape} at {n} tokens, rounds={rounds}")
    print("| machine | threads | NumPy ms | torch eager ms | NumPy ÷ torch | one product ms |")
    print("|---|---|---|---|---|---|")
    medians: dict[tuple[str, int, str], float | None] = {}
    for machine in ("as it is", "+ a busy core"):
        spinner = busy_core() if machine != "as it is" else None
        try:
            for threads in (1, 2):
                runs: dict[str, list] = {"numpy": [], "torch": []}
                for _ in range(rounds):
                    for engine in runs:
                        runs[engine].append(measure(engine, shape, n, threads, REPEATS[n]))
                seconds = {e: [f["seconds"] if f else None for f in runs[e]] for e in runs}
                products = [f["product_ms"] / 1e3 for f in runs["numpy"] if f]
                medians |= {(machine, threads, e): median_of(seconds[e]) for e in runs}
                medians[(machine, threads, "product")] = median_of(products)
                print(
                    f"| {machine} (load {os.getloadavg()[0]:.1f}) | {threads} | "
                    f"{spread(seconds['numpy'])} | {spread(seconds['torch'])} | "
                    f"{ratio(seconds['numpy'], seconds['torch'])} | {spread(products)} |"
                )
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
    for machine in ("as it is", "+ a busy core"):
        parts = []
        for what in ("numpy", "torch", "product"):
            one, two = medians[(machine, 1, what)], medians[(machine, 2, what)]
            parts.append(f"{what} {one / two:.2f}" if one and two else f"{what} -")
        print(f"1 thread ÷ 2 threads, {machine}: {', '.join(parts)}")
    print(
        f"chosen: {chosen} threads for both engines in the tables above (--threads; `make bench` "
        "passes 2, the count the issue's targets are stated at on this 2-core machine, and both "
        "engines get the same count); the app sets no count, so OpenBLAS takes every core and "
        "visattn adds its one helper thread (visattn/models/layers.py)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["gpt2-small", *SHAPES])
    parser.add_argument("--tokens", type=int, nargs="+", default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--no-threads", action="store_true", help="skip the thread comparison")
    parser.add_argument("--thread-shape", default="qwen2.5-0.5b", help="the thread table's shape")
    engine_args(parser, ["numpy", "torch"], rounds=3)
    args = parser.parse_args()
    if args.worker:
        shape, n = args.shapes[0], args.tokens[0]
        print(json.dumps(worker(args.worker, shape, n, args.threads, args.repeats or 3)))
        return
    if not importable("torch", "transformers"):
        sys.exit("bench_models needs torch and transformers (the benchmark venv)")
    print(
        f"threads={args.threads}  rounds={args.rounds}  load average={os.getloadavg()}  "
        f"python={sys.executable}"
    )
    for shape in args.shapes:
        if shape == "gpt2-small":
            make_gpt2()
        else:
            make_bf16(shape)
        tokens = args.tokens or DEFAULT_TOKENS.get(shape, [128, 512, 2048])
        compare(shape, tokens, args.threads, args.rounds)
        print(f"load average now: {os.getloadavg()}")
    if not args.no_threads:
        if args.thread_shape == "gpt2-small":
            make_gpt2()
        else:
            make_bf16(args.thread_shape)
        thread_table(args.thread_shape, args.rounds, args.threads)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
