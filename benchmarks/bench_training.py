"""visattn.training (NumPy, written-out backprop) against the same decoder trained by torch, CPU.

    .venv-bench/bin/python benchmarks/bench_training.py            # `make bench` runs this
    .venv-bench/bin/python benchmarks/bench_training.py --steps 200 --rounds 3 --full

The page's default model and task (visattn.training.DecoderConfig(): 2 layers × 4 heads, d = 64,
vocabulary 64, 48 tokens, 32 sequences a step, Adam). Each engine trains in its own process with
``--threads`` threads for BLAS / OpenMP (torch.set_num_threads too; the NumPy trainer itself asks
OpenBLAS for one thread, visattn.training.one_blas_thread), float32 both, the same initial weights
and batches; the processes alternate for ``--rounds`` rounds, each timing ``--steps`` steps after
5 warm-up steps. The table gives each engine's median milliseconds a step over the rounds with the
spread (min … max), and the ratio NumPy ÷ torch of each round (median, min … max). ``--full``
adds whole NumPy trainings of the default config, seeds 0 … ``--seeds`` − 1, each in its own
process: the wall and CPU seconds until the accuracy on repeated tokens first reaches 0.9 (measured
every ``eval_every`` steps, the measurements included), and that step."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def numpy_steps(steps: int) -> float:
    import numpy as np

    from visattn import training

    config = training.DecoderConfig()
    params = training.init_params(config, 0, dtype=np.float32)
    adam = training.Adam(config.lr, config.beta1, config.beta2, config.eps)
    rng = np.random.default_rng(0)
    batches = [training.repeated_batch(config, rng, config.batch)[0] for _ in range(steps + 5)]
    with training.one_blas_thread():
        for step, tokens in enumerate(batches, start=1):
            if step == 6:  # after 5 warm-up steps
                start = time.perf_counter()
            adam.lr = training.learning_rate(config, step)
            adam.step(params, training.loss_and_grads(params, config, tokens)[1])
        return time.perf_counter() - start


def torch_steps(steps: int, threads: int) -> float:
    import numpy as np
    import torch

    from visattn import training

    torch.set_num_threads(threads)
    config = training.DecoderConfig()
    B, T = config.batch, config.seq_len
    H, Dh, D = config.n_heads, config.d_head, config.d_model
    params = {
        name: torch.tensor(p, requires_grad=True)
        for name, p in training.init_params(config, 0, dtype=np.float32).items()
    }
    optimiser = torch.optim.Adam(
        params.values(), lr=config.lr, betas=(config.beta1, config.beta2), eps=config.eps
    )
    future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))
    rng = np.random.default_rng(0)
    batches = [torch.tensor(training.repeated_batch(config, rng, B)[0]) for _ in range(steps + 5)]

    def step(ids: torch.Tensor) -> None:
        x = params["embed"][ids] + params["pos"][:T]
        for layer in range(config.n_layers):
            g, b = params[f"l{layer}.ln_g"], params[f"l{layer}.ln_b"]
            h = torch.nn.functional.layer_norm(x, (D,), g, b, eps=1e-5)
            qkv = (h @ params[f"l{layer}.W_qkv"]).reshape(B, T, 3, H, Dh).permute(2, 0, 3, 1, 4)
            scores = qkv[0] @ qkv[1].transpose(-1, -2) / math.sqrt(Dh)
            weights = scores.masked_fill(future, float("-inf")).softmax(-1)
            z = (weights @ qkv[2]).permute(0, 2, 1, 3).reshape(B, T, D)
            x = x + z @ params[f"l{layer}.W_o"]
        h = torch.nn.functional.layer_norm(x, (D,), params["ln_f_g"], params["ln_f_b"], eps=1e-5)
        logits = h @ params["unembed"]
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, config.vocab), ids[:, 1:].reshape(-1)
        )
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()

    for number, ids in enumerate(batches, start=1):
        if number == 6:  # after 5 warm-up steps
            start = time.perf_counter()
        optimiser.param_groups[0]["lr"] = training.learning_rate(config, number)
        step(ids)
    return time.perf_counter() - start


def full_run(seed: int) -> dict:
    from visattn import training

    reached: dict = {}
    wall, cpu = time.perf_counter(), time.process_time()

    def on_step(step: int, history) -> None:
        if not reached and history["repeat_accuracy"].iloc[-1] >= 0.9:
            reached.update(
                step=step,
                wall=time.perf_counter() - wall,
                cpu=time.process_time() - cpu,
            )

    run = training.train(seed=seed, on_step=on_step)
    return reached | {
        "total_wall": time.perf_counter() - wall,
        "final": float(run.history["repeat_accuracy"].iloc[-1]),
        "phase": training.phase_change_step(run.history),
    }


def spawn(args: list[str], threads: int) -> dict:
    env = dict(os.environ) | {name: str(threads) for name in THREAD_VARS}
    out = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def spread(values: list[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f} … "
        f"{max(values):.{digits}f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="whole NumPy trainings as well")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 … n − 1 of --full")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", choices=("numpy", "torch", "full"))
    args = parser.parse_args()
    if args.worker == "numpy":
        print(json.dumps({"seconds": numpy_steps(args.steps)}))
        return 0
    if args.worker == "torch":
        print(json.dumps({"seconds": torch_steps(args.steps, args.threads)}))
        return 0
    if args.worker == "full":
        print(json.dumps(full_run(args.seed)))
        return 0
    times: dict[str, list[float]] = {"numpy": [], "torch": []}
    ratios = []
    for round_ in range(args.rounds):
        order = ("numpy", "torch") if round_ % 2 == 0 else ("torch", "numpy")
        this = {}
        for engine in order:
            worker = [
                "--worker",
                engine,
                "--steps",
                str(args.steps),
                "--threads",
                str(args.threads),
            ]
            this[engine] = spawn(worker, args.threads)["seconds"] / args.steps * 1000
            times[engine].append(this[engine])
        ratios.append(this["numpy"] / this["torch"])
    print(
        f"default config, {args.steps} steps a round, {args.rounds} rounds, {args.threads} threads"
    )
    print("| engine | ms a step: median (min … max) |")
    print("|---|---|")
    for engine, values in times.items():
        print(f"| {engine} | {spread(values)} |")
    print(f"NumPy ÷ torch per round: {spread(ratios, 2)}")
    if args.full:
        for seed in range(args.seeds):
            full = spawn(["--worker", "full", "--seed", str(seed)], args.threads)
            if "step" in full:
                print(
                    f"whole NumPy training, seed {seed}: accuracy on repeated tokens ≥ 0.9 at step "
                    f"{full['step']} after {full['wall']:.1f} s wall ({full['cpu']:.1f} s CPU); "
                    f"phase change at step {full['phase']}; all {full['total_wall']:.1f} s, "
                    f"final {full['final']:.2f}"
                )
            else:
                final = full["final"]
                print(f"whole NumPy training, seed {seed}: never reached 0.9 (final {final:.2f})")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
