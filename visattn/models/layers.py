"""The NumPy kernels the checkpoint models share (the BERT encoder, GPT-2, the causal decoders):
in-place float32 LayerNorm, GELU and softmax, a torch Linear weight as a matrix, and the split of
row blocks between the calling thread and one helper thread (:func:`share`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def linear_t(w: np.ndarray) -> np.ndarray:
    """A torch Linear weight (out, in) as a contiguous float32 (in, out) matrix, so that y = x @
    W."""
    return np.ascontiguousarray(w.T, dtype=np.float32)


def layer_norm_(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis of x (T, D), in place (x is a fresh temporary owned by the
    caller)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x), axis=-1, keepdims=True)  # (T, 1) biased variance, as torch
    x *= 1.0 / np.sqrt(var + np.float32(eps))
    x *= g
    x += b
    return x


# Abramowitz & Stegun 7.1.26: erf(z) = 1 − (a1 t + … + a5 t⁵) e^(−z²), t = 1 / (1 + p z), z ≥ 0,
# |error| < 1.5e-7. PyTorch's vectorised CPU erf (used by its GELU) is the same formula; following
# its order of float32 operations keeps our hidden states within ~3e-6 of torch's instead of ~7e-6.
# The coefficients are halved: scaling by ½ is exact in floating point, so ½ − ½(…) rounds exactly
# as 1 − (…) does and saves one pass.
_P = np.float32(0.3275911)
_A_HALF = tuple(
    np.float32(a / 2) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_INV_SQRT2 = np.float32(1.0 / np.sqrt(2.0))
_HALF = np.float32(0.5)


def gelu_(x: np.ndarray, z: np.ndarray, t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """GELU (erf form) x·½(1 + erf(x / √2)) in place, with three scratch arrays of x's shape."""
    np.abs(x, out=z)
    z *= _INV_SQRT2  # z = |x| / √2
    np.multiply(z, _P, out=t)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)  # t = 1 / (1 + p z)
    np.multiply(t, _A_HALF[4], out=q)  # Horner: ½ (((((a5 t + a4) t + a3) t + a2) t + a1) t)
    for coef in _A_HALF[3::-1]:
        q += coef
        q *= t
    np.square(z, out=t)
    np.negative(t, out=t)
    np.exp(t, out=t)  # e^(−z²)
    q *= t  # ½ erfc(z)
    np.subtract(_HALF, q, out=q)  # ½ erf(z)
    np.copysign(q, x, out=q)  # ½ erf(x / √2): erf is odd
    q += _HALF  # Φ(x) = ½ (1 + erf(x / √2))
    x *= q
    return x


def softmax_(att: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place."""
    att -= att.max(axis=-1, keepdims=True)
    np.exp(att, out=att)
    att *= 1.0 / att.sum(axis=-1, keepdims=True)
    return att


# ── Two cores without touching BLAS ───────────────────────────────────────────────────────────────
# NumPy runs each elementwise pass (the softmax's exp, GELU) on one thread, and OpenBLAS runs a
# product on all its threads only when it is big: a product of m × n × k ≤ 64³ (OpenBLAS's
# GEMM_MULTITHREAD_THRESHOLD of 4 × 65536) runs on the calling thread. So attention is computed by
# blocks of query rows, all heads at once, with rows × T × Dh ≤ 64³ (16 rows at T = 512): the (rows
# × Dh) x (Dh × T) scores and the (rows × T) x (T × Dh) weights · values then run single-threaded in
# BLAS, and a block's (H, rows, T) weights (384 KB) stay in the core's cache from the scores through
# the softmax to weights · values. The calling thread and one helper thread take blocks in turn from
# a shared counter (GELU likewise, by rows); the big projections (QKV, W_O, W_1, W_2) keep
# OpenBLAS's own threads (whose worker waits while the blocks run). Nothing process-wide changes (no
# BLAS thread count is set), and a block is computed by the same operations whichever thread takes
# it, so results are bit-for-bit the same from run to run.
# m × n × k of the biggest product OpenBLAS keeps on the calling thread
SINGLE_THREAD_PRODUCT = 64**3
GELU_ROWS = 32  # rows of the (T, Dff) activations per GELU block
SPLIT_FROM = 64  # fewer rows than this: everything on the calling thread (a helper would cost more)
_helper_lock = threading.Lock()
_helper_pool: list[ThreadPoolExecutor | None] = []


def _threads_allowed() -> int:
    """How many threads this process may compute on: the BLAS/OpenMP limit when one is set in the
    environment (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS, as the benchmarks and `make
    bench` set), else the CPUs this process may run on."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(var, "").split(",")[0].strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _helper() -> ThreadPoolExecutor | None:
    """The one helper thread shared by every model in the process (None when only one thread is
    allowed).

    Shared, so that many sessions of a server running MiniLM at once add one thread, not one each; a
    session whose blocks the helper has no time for computes them itself (see :func:`share`)."""
    with _helper_lock:
        if not _helper_pool:
            _helper_pool.append(
                ThreadPoolExecutor(1, thread_name_prefix="visattn-minilm")
                if _threads_allowed() > 1
                else None
            )
        return _helper_pool[0]


def share(work: Callable[[int, int], None], n: int, step: int) -> None:
    """``work(a, b)`` for every block [a, b) of ``step`` rows of range(n), on this thread and the
    helper.

    Both take the next block from one counter until none is left, so when the helper is busy
    (another session's forward pass) this thread simply does every block. Returns when all blocks
    are done."""
    starts = iter(range(0, n, step))
    lock = threading.Lock()

    def loop() -> None:
        while True:
            with lock:
                a = next(starts, None)
            if a is None:
                return
            work(a, min(a + step, n))

    pool = _helper() if n >= SPLIT_FROM and n > step else None
    if pool is None:
        loop()
        return
    future = pool.submit(loop)
    try:
        loop()
    finally:
        # the helper started: wait for its last block (it may be writing into our arrays)
        if not future.cancel():
            future.result()
