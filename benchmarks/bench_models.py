"""A GPT-2-small-sized checkpoint (12 layers × 12 heads, d = 768, 124 M parameters, 498 MB of
float32 safetensors) in visattn's NumPy against transformers' eager GPT2Model, at 128 and 512
tokens; and the time visattn.models.load takes to open that 498 MB folder.

Run with the benchmark venv (torch and transformers make the random checkpoint once, under
$TMPDIR/visattn-bench-gpt2-small, and time the reference):

    .venv-bench/bin/python benchmarks/bench_models.py [--threads 2] [--tokens 128 512] [--rounds 5]

The weights are random (seed 0; a trained GPT-2 computes the same operations at the same speed); its
tokenizer is the tiny byte-level BPE of tests/fixtures/models/gpt2 (the ids of the timed text are
fed directly, so only the forward pass is timed). Timed per engine, each in its own subprocess with
the same thread count: one forward pass returning every layer's attention weights —
``model.forward(ids)`` against ``GPT2Model(ids, output_attentions=True)`` (eager attention,
inference mode). Engines alternate for ``--rounds`` subprocesses; printed per length: each engine's
median over rounds with its spread (min … max), and the ratio of the medians with the spread of the
per-round ratios. The load time is each NumPy subprocess's ``load(folder)`` (safetensors by memory
map; the file is in the page cache after the first round), median and spread over rounds."""

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
FOLDER = Path(tempfile.gettempdir()) / "visattn-bench-gpt2-small"
TOKENIZER = REPO / "tests" / "fixtures" / "models" / "gpt2" / "tokenizer.json"
REPEATS = {128: 10, 512: 5}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
VOCAB = 50257


def make_checkpoint() -> Path:
    """The random GPT-2 small folder (made once: config.json, model.safetensors, tokenizer.json)."""
    if (FOLDER / "model.safetensors").is_file():
        return FOLDER
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=VOCAB)
    model = GPT2Model(config).eval()
    FOLDER.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(FOLDER, safe_serialization=True)
    shutil.copy(TOKENIZER, FOLDER / "tokenizer.json")
    return FOLDER


def ids_of_length(n_tokens: int):
    import numpy as np

    return np.random.default_rng(1).integers(0, VOCAB, n_tokens)


def worker(engine: str, n_tokens: int, threads: int, repeats: int) -> dict:
    ids = ids_of_length(n_tokens)
    if engine == "numpy":
        sys.path.insert(0, str(REPO))
        from visattn.models import load

        t0 = time.perf_counter()
        model = load(FOLDER)
        loaded = time.perf_counter() - t0
        assert model.forward(ids)[0].shape == (12, 12, n_tokens, n_tokens)

        def call():
            return model.forward(ids)

        seconds = median_time(call, repeats, warmup=2)
        return {"engine": engine, "tokens": n_tokens, "seconds": seconds, "load": loaded}
    import torch
    from transformers import GPT2Model

    torch.set_num_threads(threads)
    model = GPT2Model.from_pretrained(FOLDER, attn_implementation="eager").eval()
    batch = torch.from_numpy(ids)[None]

    def call():
        with torch.inference_mode():
            return model(batch, output_attentions=True)

    assert call().attentions[0].shape[-1] == n_tokens
    return {"engine": engine, "tokens": n_tokens, "seconds": median_time(call, repeats, warmup=2)}


def measure(engine: str, n_tokens: int, threads: int, repeats: int) -> dict | None:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    cmd = [sys.executable, __file__, "--worker", engine, "--tokens", str(n_tokens)]
    cmd += ["--threads", str(threads), "--repeats", str(repeats)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        print(f"[{engine} @ {n_tokens}] failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--repeats", type=int, default=None)
    engine_args(parser, ["numpy", "torch"])
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.tokens[0], args.threads, args.repeats or 5)))
        return
    if not importable("torch", "transformers"):
        sys.exit("bench_models needs torch and transformers (the benchmark venv)")
    folder = make_checkpoint()
    size = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    print(
        f"threads={args.threads}  rounds={args.rounds}  load={os.getloadavg()[0]:.1f}  "
        f"checkpoint={size / 1e6:.0f} MB  python={sys.executable}"
    )
    print("| tokens | NumPy ms | torch eager ms | NumPy ÷ torch |")
    print("|---|---|---|---|")
    loads = []
    for n in args.tokens:
        repeats = args.repeats or REPEATS.get(n, 5)
        times: dict[str, list] = {"numpy": [], "torch": []}
        for _ in range(args.rounds):
            for engine in times:
                found = measure(engine, n, args.threads, repeats)
                times[engine].append(found["seconds"] if found else None)
                if found and "load" in found:
                    loads.append(found["load"])
        numpy_t, torch_t = times["numpy"], times["torch"]
        print(f"| {n} | {spread(numpy_t)} | {spread(torch_t)} | {ratio(numpy_t, torch_t)} |")
    print(f"load({size / 1e6:.0f} MB) ms: {spread(loads)}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
