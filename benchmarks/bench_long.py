"""Long texts in bounded memory (issue 54, point 4): a Qwen2.5-0.5B-shaped decoder in NumPy.

24 layers, D 896, 14 query heads, 2 key/value heads, Dh 64, Dff 4864, in visattn's NumPy against
transformers' eager Qwen2Model.

    .venv-bench/bin/python benchmarks/bench_long.py [--threads 2] [--rounds 3] [--long 8192]

The weights are random (seed 0) and float32; the vocabulary is cut to 32,000 ids (151,936 in the
real model: only the embedding and the tied head shrink, attention does not change); the
tokenizer is tests/fixtures/models/qwen2's, and ids are fed directly. Every measurement runs in a
subprocess of its own with the same BLAS / OpenMP thread count (2: ``--threads``):

1. forward at 512 tokens: ``model.forward(ids)`` (the maps kept as queries and keys) and
   ``model.forward(ids, eager=True)`` (every (H, T, T) map written while it runs, as before)
   against ``Qwen2Model(ids, output_attentions=True)`` (eager attention, inference mode), the
   engines alternating for ``--rounds`` subprocesses; medians with their spread, ratios of the
   medians with the spread of the per-round ratios;
2. peak RSS at 2,048 tokens above the weights: a run as ``Decoder.run`` makes it (layer inputs,
   the maps' queries and keys, the last token's logits), VmHWM minus the RSS after loading and a
   16-token forward (which pages every weight in);
3. ``--long`` tokens (8,192) complete: time, peak RSS above the weights, then rows of a head's map
   around a chosen token (64 rows of layer 12, head 5 ending at token 6,000) computed from the kept
   queries and keys, median of 5.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_pretrained import ratio, spread
from timing import engine_args, importable, median_time

REPO = Path(__file__).resolve().parent.parent
FOLDER = Path(tempfile.gettempdir()) / "visattn-bench-qwen2.5-0.5b-shape"
TOKENIZER = REPO / "tests" / "fixtures" / "models" / "qwen2" / "tokenizer.json"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
VOCAB = 32_000
SHAPE = dict(
    hidden_size=896,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    intermediate_size=4864,
    max_position_embeddings=32768,
    tie_word_embeddings=True,
)
FOCUS = (12, 5, 6000, 64)  # layer, head, the chosen token, rows up to it


def make_checkpoint() -> Path:
    """The random Qwen2.5-0.5B-shaped folder (made once)."""
    if (FOLDER / "model.safetensors").is_file():
        return FOLDER
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, **SHAPE)).eval()
    FOLDER.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(FOLDER, safe_serialization=True)
    shutil.copy(TOKENIZER, FOLDER / "tokenizer.json")
    return FOLDER


def ids_of_length(n_tokens: int):
    import numpy as np

    return np.random.default_rng(1).integers(0, VOCAB, n_tokens)


def status_kb(field: str) -> int:
    """VmRSS or VmHWM of this process, in KB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def numpy_model():
    sys.path.insert(0, str(REPO))
    from visattn.models import load

    return load(FOLDER)


def run_like(model, ids, progress=None):
    """What Decoder.run computes for ``ids``: the maps, the layer inputs, the next logits."""
    import numpy as np

    c = model.config
    inputs = np.empty((c.n_layers, len(ids), c.d_model), dtype=np.float32)
    maps, hidden = model.forward(ids, layer_inputs=inputs, progress=progress)
    return maps, inputs, model.unembed(hidden[-1:])[0]


def worker(engine: str, n_tokens: int, threads: int, repeats: int) -> dict:
    ids = ids_of_length(n_tokens)
    if engine in ("numpy", "numpy_eager"):
        model = numpy_model()
        eager = engine == "numpy_eager"

        def call():
            return model.forward(ids, eager=eager)

        return {"seconds": median_time(call, repeats, warmup=1)}
    if engine == "memory":
        model = numpy_model()
        model.forward(ids_of_length(16))  # every weight paged in
        base = status_kb("VmRSS")
        t0 = time.perf_counter()
        maps, _, _ = run_like(model, ids, progress=None)
        seconds = time.perf_counter() - t0
        found = {"seconds": seconds, "above_weights_mb": (status_kb("VmHWM") - base) / 1024}
        found |= {"weights_mb": base / 1024, "kept_mb": maps.nbytes / 2**20}
        if n_tokens > FOCUS[2]:
            layer, head, token, rows = FOCUS

            def focus():
                return maps.rows(layer, head, token + 1 - rows, token + 1)

            found["focus_seconds"] = median_time(focus, 5, warmup=1)
        return found
    import torch
    from transformers import Qwen2Model

    torch.set_num_threads(threads)
    model = Qwen2Model.from_pretrained(FOLDER, attn_implementation="eager").eval()
    batch = torch.from_numpy(ids)[None]

    def forward():
        with torch.inference_mode():
            return model(batch, output_attentions=True, use_cache=False)

    return {"seconds": median_time(forward, repeats, warmup=1)}


def measure(engine: str, n_tokens: int, threads: int, repeats: int) -> dict | None:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    cmd = [sys.executable, __file__, "--worker", engine, "--tokens", str(n_tokens)]
    cmd += ["--threads", str(threads), "--repeats", str(repeats)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        print(f"[{engine} @ {n_tokens}] failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def forward_table(args) -> None:
    times: dict[str, list] = {"numpy": [], "numpy_eager": [], "torch": []}
    for _ in range(args.rounds):
        for engine in times:
            found = measure(engine, args.tokens, args.threads, args.repeats)
            times[engine].append(found["seconds"] if found else None)
    print(
        f"\nforward at {args.tokens} tokens (median of {args.repeats} per round; load "
        f"{os.getloadavg()[0]:.1f})"
    )
    print("| engine | ms | ÷ torch eager |")
    print("|---|---|---|")
    for engine, label in (
        ("numpy", "NumPy, maps on demand"),
        ("numpy_eager", "NumPy, every map written (before)"),
        ("torch", "transformers eager, output_attentions"),
    ):
        print(f"| {label} | {spread(times[engine])} | {ratio(times[engine], times['torch'])} |")


def column(found: list[dict], key: str) -> str:
    """The median of ``key`` over the runs that have it, with its spread."""
    values = [f[key] for f in found if key in f]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    mid = sorted(values)[len(values) // 2]
    return f"{mid:.2f} ({lo:.2f} … {hi:.2f})" if hi < 100 else f"{mid:.0f} ({lo:.0f} … {hi:.0f})"


def memory_table(args) -> None:
    print(
        "\nruns as Decoder.run (layer inputs, queries and keys kept; "
        f"load {os.getloadavg()[0]:.1f})"
    )
    print(
        "| tokens | s | peak RSS above the weights MB | kept by the maps MB | weights RSS MB "
        "| 64 rows of a head's map, s |"
    )
    print("|---|---|---|---|---|---|")
    for n, rounds in ((args.memory, args.memory_rounds), (args.long, 1)):
        found = [measure("memory", n, args.threads, 1) for _ in range(rounds)]
        ok = [f for f in found if f]
        if not ok:
            print(f"| {n} | failed | | | | |")
            continue
        keys = ("seconds", "above_weights_mb", "kept_mb", "weights_mb", "focus_seconds")
        print(f"| {n} | " + " | ".join(column(ok, key) for key in keys) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--memory", type=int, default=2048)
    parser.add_argument("--long", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--memory-rounds", type=int, default=2)
    parser.add_argument("--only", choices=["forward", "memory"], default=None)
    engine_args(parser, ["numpy", "numpy_eager", "torch", "memory"], rounds=3)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.tokens, args.threads, args.repeats)))
        return
    if not importable("torch", "transformers"):
        sys.exit("bench_long needs torch and transformers (the benchmark venv)")
    folder = make_checkpoint()
    size = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    print(
        f"threads={args.threads}  rounds={args.rounds}  load={os.getloadavg()[0]:.1f}  "
        f"checkpoint={size / 1e6:.0f} MB (vocabulary cut to {VOCAB})  python={sys.executable}"
    )
    if args.only != "memory":
        forward_table(args)
    if args.only != "forward":
        memory_table(args)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
