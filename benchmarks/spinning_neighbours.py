"""How much submissions that spin slow down a classmate's grade, with and without cgroups.

    python benchmarks/spinning_neighbours.py [--spinners 4] [--rounds 3]

A batch grades several submissions at once; one whose ``drgrpo_loss`` spins until the call's
time limit takes a core for 10 s per worker. Each round grades a correct submission alone, then
beside ``--spinners`` grades of ``tests/submissions/hostile/infinite_loop.py`` started just
before, once with per-worker control groups (the spinners' workers get a quarter of the CPU
weight) and once without (niceness only). Needs root for the cgroups; prints each round and the
medians' ratios to the grade alone.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORRECT = ROOT / "examples" / "drgrpo_correct.py"
SPINNER = ROOT / "tests" / "submissions" / "hostile" / "infinite_loop.py"
GRADE = (
    "import sys; from grader.api import grade; from grader.sandbox.zygote import Limits; "
    "grade(sys.argv[1], limits=Limits(cgroups=sys.argv[2] == 'on'))"
)


def grade(path: Path, cgroups: str) -> subprocess.Popen:
    command = [sys.executable, "-c", GRADE, str(path), cgroups]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed_beside(spinners: int, cgroups: str) -> float:
    others = [grade(SPINNER, cgroups) for _ in range(spinners)]
    time.sleep(3.0)  # their workers are spinning by now
    started = time.perf_counter()
    grade(CORRECT, cgroups).wait()
    elapsed = time.perf_counter() - started
    for other in others:
        other.kill()
        other.wait()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spinners", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {"alone": [], "on": [], "off": []}
    for round_ in range(args.rounds):
        figures["alone"].append(timed_beside(0, "on"))
        for cgroups in ("on", "off"):
            figures[cgroups].append(timed_beside(args.spinners, cgroups))
        print(
            f"round {round_ + 1}: alone {figures['alone'][-1]:.2f} s, beside {args.spinners} spinners: "
            f"cgroups {figures['on'][-1]:.2f} s, no cgroups {figures['off'][-1]:.2f} s"
        )
    alone = statistics.median(figures["alone"])
    on, off = statistics.median(figures["on"]), statistics.median(figures["off"])
    print(
        f"median: alone {alone:.2f} s; beside spinners {on / alone:.2f}x with cgroups, "
        f"{off / alone:.2f}x without"
    )


if __name__ == "__main__":
    main()
