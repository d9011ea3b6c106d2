"""What submissions that spin take from a classmate's grade, with and without a CPU budget.

    python benchmarks/spinning_neighbours.py [--spinners 4] [--rounds 3] [--cgroups on|off]

A batch grades several submissions at once; one whose ``drgrpo_loss`` spins takes a core until
its call is stopped. Each round times a correct submission's grade (the classmate) alone, then
beside ``--spinners`` grades started just before it: of a correct submission (the load that any
neighbours make), and of ``tests/submissions/hostile/infinite_loop.py`` with the per-call CPU
budget (``Limits.call_cpu_s``) and without it (the budget set to the wall-clock limit, which
alone then stops a spinner). Each neighbour's grade runs to its end, and the CPU time of its
whole process tree (grader, zygote, workers) is read from ``wait4``. ``--cgroups``: per-worker
control groups (needs root) or niceness only. Prints each round, then medians: the classmate's
time as a ratio to the time beside correct neighbours, and the CPU time per neighbour's grade.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grader.sandbox.protections import Limits

ROOT = Path(__file__).resolve().parent.parent
CORRECT = ROOT / "examples" / "drgrpo_correct.py"
SPINNER = ROOT / "tests" / "submissions" / "hostile" / "infinite_loop.py"
GRADE = (
    "import sys; from grader.api import grade; from grader.sandbox.protections import Limits; "
    "grade(sys.argv[1], limits=Limits(cgroups=sys.argv[2] == 'on', call_cpu_s=float(sys.argv[3])))"
)


def grade(path: Path, cgroups: str, cpu_s: float) -> subprocess.Popen:
    command = [sys.executable, "-c", GRADE, str(path), cgroups, str(cpu_s)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cpu_of(process: subprocess.Popen) -> float:
    """Wait for ``process``; the CPU seconds of it and of every descendant it waited for."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def beside(neighbours: int, path: Path, cgroups: str, cpu_s: float) -> tuple[float, float]:
    """The classmate's wall time beside ``neighbours`` grades of ``path``, and their mean CPU time."""
    others = [grade(path, cgroups, cpu_s) for _ in range(neighbours)]
    time.sleep(3.0)  # they are under way by now
    started = time.perf_counter()
    grade(CORRECT, cgroups, Limits().call_cpu_s).wait()
    elapsed = time.perf_counter() - started
    spent = [cpu_of(other) for other in others]
    return elapsed, statistics.mean(spent) if spent else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spinners", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cgroups", choices=("on", "off"), default="on")
    args = parser.parse_args()
    limits = Limits()
    variants = {
        "correct": (CORRECT, limits.call_cpu_s),
        "budget": (SPINNER, limits.call_cpu_s),
        "no budget": (SPINNER, limits.call_timeout_s),
    }
    wall: dict[str, list[float]] = {"alone": [], **{name: [] for name in variants}}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        wall["alone"].append(beside(0, CORRECT, args.cgroups, limits.call_cpu_s)[0])
        for name, (path, cpu_s) in variants.items():
            elapsed, spent = beside(args.spinners, path, args.cgroups, cpu_s)
            wall[name].append(elapsed)
            cpu[name].append(spent)
        print(
            f"round {round_ + 1}: classmate alone {wall['alone'][-1]:.1f} s; beside {args.spinners} "
            + ", ".join(f"{name} {wall[name][-1]:.1f} s ({cpu[name][-1]:.1f} CPU-s each)" for name in cpu),
            flush=True,
        )
    median = {name: statistics.median(times) for name, times in wall.items()}
    spent = {name: statistics.median(times) for name, times in cpu.items()}
    print(
        f"median (cgroups {args.cgroups}, CPU budget {limits.call_cpu_s:g} s): classmate alone "
        f"{median['alone']:.1f} s, beside correct neighbours {median['correct']:.1f} s; beside spinners "
        f"{median['budget'] / median['correct']:.2f}x that with the budget, "
        f"{median['no budget'] / median['correct']:.2f}x without; CPU per neighbour's grade: correct "
        f"{spent['correct']:.1f} s, spinner {spent['budget']:.1f} s with the budget, "
        f"{spent['no budget']:.1f} s without"
    )


if __name__ == "__main__":
    main()
