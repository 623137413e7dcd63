"""multi_head_attention against a naive per-head loop and torch.nn.MultiheadAttention, as ratios.

    python benchmarks/bench_mha.py            # NumPy parts only (the app's .venv)
    /path/to/venv-with-torch/bin/python benchmarks/bench_mha.py   # adds torch (torch==2.13.0 CPU)

T=512, d_model=512, 8 heads, float32 inputs, same thread count for NumPy's BLAS and torch (set
OMP_NUM_THREADS before starting, default: all cores). Each figure is the median of repeated runs after a
warm-up, measured in this one process so that the ratios share the machine's current load.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import visattn  # noqa: E402

T, D, H = 512, 512, 8


def median_time(fn, repeat: int = 15) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((T, D)).astype(np.float32)
    Ws = [(rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32) for _ in range(4)]
    results = {"visattn.multi_head_attention": median_time(lambda: visattn.multi_head_attention(X, *Ws, H)),
               "naive per-head loop": median_time(lambda: naive(X, *Ws), repeat=5)}
    ref = visattn.multi_head_attention(X, *Ws, H).output
    assert np.allclose(naive(X, *Ws), ref, atol=1e-3)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)))
        mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate(Ws[:3], axis=1).T.copy()))
            mha.out_proj.weight.copy_(torch.from_numpy(Ws[3].T.copy()))
            xt = torch.from_numpy(X)[None]
            out = mha(xt, xt, xt, need_weights=True, average_attn_weights=False)[0][0].numpy()
            assert np.allclose(out, ref, atol=1e-3), np.abs(out - ref).max()
            results["torch.nn.MultiheadAttention (weights returned)"] = median_time(
                lambda: mha(xt, xt, xt, need_weights=True, average_attn_weights=False))
    base = results["visattn.multi_head_attention"]
    print(f"T={T}, d_model={D}, heads={H}, threads={os.environ.get('OMP_NUM_THREADS', 'default')}")
    print(f"{'implementation':50s} {'median ms':>10s} {'visattn / this':>15s}")
    for name, t in results.items():
        print(f"{name:50s} {t * 1e3:10.2f} {base / t:15.2f}")


if __name__ == "__main__":
    main()
