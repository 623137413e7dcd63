"""Time attention rollout, attention flow and MiniLM value norms on the 16-token example (and longer
texts).

    .venv/bin/python benchmarks/bench_reading.py [--rounds 7] [--tokens 16 24 32 40]

The example is "The animal didn't cross the street because it was too tired." (16 word pieces with
[CLS] and [SEP]); other lengths cut a paragraph to that many tokens. The attention weights come from
one MiniLM forward pass, done once and not timed. Each round times every operation once in turn
(rollout: median of 50 calls; value norms: median of 3; flow: one call per round — T² maximum-flow
problems by SciPy's csgraph, one graph of L·T² edges), so a burst of load on the shared machine
falls on all of them. The table gives the median over rounds, the ratio to one MiniLM forward pass
of the same text timed in the same rounds, and the spread (fastest … slowest round). BLAS runs on
one thread unless OMP_NUM_THREADS etc. say otherwise."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
for var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
):  # one thread: steadier on a shared machine
    os.environ.setdefault(var, "1")

from visattn import reading  # noqa: E402
from visattn.models.encoder import BertEncoder  # noqa: E402

EXAMPLE = "The animal didn't cross the street because it was too tired."
PARAGRAPH = (
    "Attention lets every word in a sentence look at every other word and decide how much each one "
    "matters. In a transformer, each token is turned into a query, a key and a value; the query of "
    "one token is compared with the keys of all tokens, a softmax turns the scores into weights, "
    "and the output is the weighted average of the values."
)


def timed(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls, in ms."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def operations(model, result, n: int) -> dict:
    """name → (call, repeats): the baseline forward pass first, then what this module adds."""
    A = result.attentions
    return {
        "MiniLM.forward (baseline)": (lambda: model.forward(result.token_ids), 10),
        "attention_rollout": (lambda: reading.attention_rollout(A), 50),
        "minilm_value_norms": (lambda: reading.encoder_value_norms(model, result), 3),
        "attention_flow": (
            lambda: reading.attention_flow(A, max_tokens=max(n, reading.FLOW_MAX_TOKENS)),
            1,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, nargs="+", default=[16])
    args = parser.parse_args()
    model = BertEncoder.load()
    print("| tokens | operation | median ms | ÷ forward | fastest … slowest round (ms) | rounds |")
    print("|---|---|---|---|---|---|")
    for n in args.tokens:
        result = model.run(EXAMPLE) if n == 16 else model.run(PARAGRAPH, max_tokens=n)
        assert result.n_tokens == n, (n, result.n_tokens)
        ops = operations(model, result, n)
        times: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(args.rounds):
            for name, (fn, repeats) in ops.items():
                times[name].append(timed(fn, repeats))
        base = statistics.median(times["MiniLM.forward (baseline)"])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(
                f"| {n} | `{name}` | {med:.1f} | {med / base:.2g} | {min(ts):.1f} … {max(ts):.1f} "
                f"| {len(ts)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
