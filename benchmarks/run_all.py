"""Run the benchmarks of benchmarks/README.md one after another and print their tables (what `make
bench` does).

    .venv-bench/bin/python benchmarks/run_all.py                 # every benchmark
    .venv-bench/bin/python benchmarks/run_all.py pretrained interact   # some of them, by the names
    below

Each script runs in its own process with this Python (the `.venv-bench` that `make bench` builds:
the app's requirements, the model package, CPU torch 2.13.0 and transformers) and BLAS / OpenMP on 2
threads. The serving benchmarks (load, load_ws, offline) start servers and browsers on loopback
only; offline needs root (it makes a network namespace) and nginx for nothing; load_ws with replicas
needs Debian's nginx, so it runs with one server here. The machine's load average is printed before
and after each script: the machines are shared, so read the ratios measured within one script, not
absolute times across scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREADS = "2"
BENCHMARKS = {  # name: (script, arguments, needs)
    "mha": ("bench_mha.py", [], None),
    "pretrained": ("bench_pretrained.py", ["--threads", THREADS, "--rounds", "5"], None),
    "models": ("bench_models.py", ["--threads", THREADS, "--rounds", "5"], None),
    "long": ("bench_long.py", ["--threads", THREADS, "--rounds", "3"], None),
    "reading": ("bench_reading.py", ["--rounds", "7"], None),
    "pages": ("bench_pages.py", [], None),
    "training": ("bench_training.py", ["--rounds", "5", "--full"], None),
    "interact": ("interact.py", ["--rounds", "7"], "/usr/bin/chromium"),
    "load": ("load.py", ["--sessions", "20"], "/usr/bin/chromium"),
    "load_ws": ("load_ws.py", ["--sessions", "8,16,24"], None),
    "burst": ("burst.py", ["--sessions", "10", "20"], None),
    "lanes": ("lanes.py", ["--rounds", "5"], None),
    "offline": ("offline_start.py", ["--dns", "none"], "unshare"),
}


def missing(need: str | None) -> str | None:
    if need is None:
        return None
    if need.startswith("/"):
        return None if Path(need).exists() else f"{need} is missing (apt-get install chromium)"
    if shutil.which(need) is None:
        return f"{need} is missing"
    if need == "unshare" and os.geteuid() != 0:
        return "needs root (it makes its own network namespace)"
    return None


def main() -> int:
    names = sys.argv[1:] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    env = dict(
        os.environ, OMP_NUM_THREADS=THREADS, OPENBLAS_NUM_THREADS=THREADS, MKL_NUM_THREADS=THREADS
    )
    print(f"python: {sys.executable}; BLAS/OpenMP threads: {THREADS}; cores: {os.cpu_count()}")
    failed = []
    for name in names:
        script, args, need = BENCHMARKS[name]
        print(f"\n## {script} {' '.join(args)}", flush=True)
        why = missing(need)
        if why:
            print(f"skipped: {why}", flush=True)
            failed.append(name)
            continue
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        rc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=ROOT, env=env
        ).returncode
        print(
            f"(load average {load:.1f} → {os.getloadavg()[0]:.1f}; {time.monotonic() - t0:.0f} s; "
            f"exit {rc})",
            flush=True,
        )
        if rc:
            failed.append(name)
    if failed:
        print(f"\nnot measured or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
