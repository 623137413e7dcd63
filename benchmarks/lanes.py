"""Trainings and readings in one replica's budget: does a page's reading wait behind the room's
trainings? (issue 57: ten students pressing "Train" made another student's reading wait 214 s.)

    .venv/bin/python benchmarks/lanes.py [--trainings 10] [--rounds 5] [--steps 800]

In one process, with the app's own budget (ui.room.budget), jobs (ui.room.jobs) and training work
(ui.cache.training, the page's default model and steps): each round times a 512-token MiniLM
reading of a new text (the pretrained page's run, admitted in the short lane with the page's cost)
first with nothing else running (idle), then while ``--trainings`` trainings of different seeds
run or wait in the long lane, each followed by a thread that renews its heartbeat as a watching
session does. Rounds alternate idle and busy; the trainings are let go after each busy reading.
Reported: each round's busy ÷ idle time, their median and spread, and how many trainings had been
admitted when the reading ended. ``--one-lane`` puts the trainings in the short lane, as before
the lanes (the reading then waits for them; bounded by ``--deadline``)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ui.cache import training as cache_training  # noqa: E402
from ui.cache.pretrained import RUN_FACTOR, RUN_FLOOR, attention_bytes  # noqa: E402
from ui.room import budget, jobs  # noqa: E402
from visattn.lessons import training as training_lesson  # noqa: E402
from visattn.models.encoder import BertEncoder  # noqa: E402

WORDS = "the animal did not cross the street because it was too tired to walk on".split()


def text(i: int) -> str:
    """A distinct text of about 600 word pieces (the model reads its first 512)."""
    return f"Text {i}. " + " ".join(WORDS[(i + k * 7) % len(WORDS)] for k in range(600))


def reading(model: BertEncoder, i: int) -> float:
    """Seconds for the pretrained page's run of text i through the budget's short lane."""
    words = text(i)
    n_tokens = len(model.tokenize(words)[0])
    cost = int(RUN_FACTOR * attention_bytes(n_tokens, model)) + RUN_FLOOR
    t0 = time.perf_counter()
    budget.get(("lanes", i), cost, lambda: model.run(words))
    return time.perf_counter() - t0


def follow(key, session: str, stop: threading.Event) -> None:
    """A watching session: renews the job's heartbeat until told to leave."""
    for _ in jobs.follow(key, session):
        if stop.is_set():
            break
    jobs.leave(key, session)


def start_trainings(n: int, steps: int, lane: str, first_seed: int) -> tuple[list, threading.Event]:
    config = training_lesson.training_config(1, steps)
    stop = threading.Event()
    specs = []
    for k in range(n):
        spec = cache_training.job(config, first_seed + k)
        spec = jobs.Spec(spec.key, spec.cost, spec.work, spec.name, lane)
        jobs.start(spec, f"student-{k}")
        threading.Thread(target=follow, args=(spec.key, f"student-{k}", stop), daemon=True).start()
        specs.append(spec)
    return specs, stop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainings", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--one-lane", action="store_true")
    parser.add_argument("--deadline", type=float, default=600, help="seconds for the whole run")
    args = parser.parse_args()
    lane = budget.SHORT if args.one_lane else budget.LONG
    model = BertEncoder.load()
    reading(model, -1)  # warm: the first run pays for BLAS's start-up
    print(
        f"trainings in the {lane} lane; {args.trainings} of {args.steps} steps; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("| round | idle s | busy s | busy ÷ idle | trainings admitted |")
    print("|---|---|---|---|---|")
    ratios, started = [], time.monotonic()
    for r in range(args.rounds):
        idle = reading(model, 2 * r)
        specs, stop = start_trainings(args.trainings, args.steps, lane, 1000 * (r + 1))
        while jobs.state(specs[0].key, "student-0").progress is None:
            time.sleep(0.05)  # the first training has made its first step
        busy = reading(model, 2 * r + 1)
        admitted = sum(jobs.state(s.key, "x").ahead is None for s in specs)
        stop.set()
        for spec in specs:
            jobs.wait(spec.key, most=60)
        ratios.append(busy / idle)
        print(f"| {r + 1} | {idle:.2f} | {busy:.2f} | {busy / idle:.2f} | {admitted} |", flush=True)
        if time.monotonic() - started > args.deadline:
            print(f"stopped at the deadline ({args.deadline:.0f} s)")
            break
    spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
    print(
        f"\nbusy ÷ idle: median {statistics.median(ratios):.2f} (spread {spread}); "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
