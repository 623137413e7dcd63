"""multi_head_attention against a naive per-head loop and torch.nn.MultiheadAttention, as ratios.

    .venv/bin/python benchmarks/bench_mha.py          # NumPy parts only (the app's .venv)
    .venv-bench/bin/python benchmarks/bench_mha.py    # adds torch (torch==2.13.0 CPU; `make bench`
    builds it)

T=512, d_model=512, 8 heads, float32 inputs. Each implementation runs in its own process with the
same thread count (``--threads``, default 2: OMP/OpenBLAS/MKL variables set before numpy or torch
load, and torch.set_num_threads), reporting the median of repeated runs after a warm-up; the
processes alternate for ``--rounds`` rounds. The table gives each one's median over rounds with the
spread (min … max) and the ratio of medians, visattn ÷ this, with the spread of the per-round
ratios."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import engine_args, importable, median_time  # noqa: E402

import visattn  # noqa: E402

T, D, H = 512, 512, 8


def naive(X, Wq, Wk, Wv, Wo):
    """Textbook loop: one head at a time, one query row at a time."""
    dh = D // H
    outs = []
    for h in range(H):
        c = slice(h * dh, (h + 1) * dh)
        q, k, v = X @ Wq[:, c], X @ Wk[:, c], X @ Wv[:, c]
        rows = []
        for i in range(X.shape[0]):
            s = k @ q[i] / math.sqrt(dh)
            e = np.exp(s - s.max())
            rows.append((e / e.sum()) @ v)
        outs.append(np.stack(rows))
    return np.concatenate(outs, axis=1) @ Wo


ENGINES = {
    "visattn": "visattn.multi_head_attention",
    "naive": "naive per-head, per-row loop",
    "torch": "torch.nn.MultiheadAttention (weights returned)",
}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker(engine: str, threads: int) -> float:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((T, D)).astype(np.float32)
    Ws = [(rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32) for _ in range(4)]
    ref = visattn.multi_head_attention(X, *Ws, H).output
    if engine == "visattn":
        return median_time(lambda: visattn.multi_head_attention(X, *Ws, H))
    if engine == "naive":
        assert np.allclose(naive(X, *Ws), ref, atol=1e-3)
        return median_time(lambda: naive(X, *Ws), repeats=5)
    import torch

    torch.set_num_threads(threads)
    mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate(Ws[:3], axis=1).T.copy()))
        mha.out_proj.weight.copy_(torch.from_numpy(Ws[3].T.copy()))
        xt = torch.from_numpy(X)[None]
        out = mha(xt, xt, xt, need_weights=True, average_attn_weights=False)[0][0].numpy()
        assert np.allclose(out, ref, atol=1e-3), np.abs(out - ref).max()
        return median_time(lambda: mha(xt, xt, xt, need_weights=True, average_attn_weights=False))


def measure(engine: str, threads: int) -> float | None:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", engine, "--threads", str(threads)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        print(f"[{engine}] failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    engine_args(parser, list(ENGINES))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.threads)))
        return
    engines = ["visattn", "torch", "naive"] if importable("torch") else ["visattn", "naive"]
    if "torch" not in engines:
        print("torch not importable: NumPy rows only", file=sys.stderr)
    times = {e: [] for e in engines}
    for _ in range(args.rounds):
        for e in engines:
            times[e].append(measure(e, args.threads))
    base = times["visattn"]
    print(
        f"T={T}, d_model={D}, heads={H}, threads={args.threads}, rounds={args.rounds}, "
        f"load={os.getloadavg()[0]:.1f}"
    )
    print("| implementation | median ms (min … max) | visattn time ÷ this (rounds' spread) |")
    print("|---|---|---|")
    for e in engines:
        ok = [t * 1e3 for t in times[e] if t]
        pairs = [b / t for b, t in zip(base, times[e], strict=True) if b and t]
        if not ok or not pairs:
            print(f"| {ENGINES[e]} | - | - |")
            continue
        ratio = statistics.median([b for b in base if b]) * 1e3 / statistics.median(ok)
        print(
            f"| {ENGINES[e]} | {statistics.median(ok):.1f} ({min(ok):.1f} … {max(ok):.1f}) "
            f"| {ratio:.2f} ({min(pairs):.2f} … {max(pairs):.2f}) |"
        )


if __name__ == "__main__":
    main()
