"""The CPU time single calls into correct submissions take, to set ``Limits.call_cpu_s``.

    python benchmarks/call_cpu.py [FILE ...]

Grades each file (default: the bundled correct example and the tests' correct submissions,
among them one written with Python loops) with the plots' calls too, and records the CPU time
the worker used on every request, loading included; prints each file's largest call, and the
largest of all against the budget. The CPU time of a call follows the work it does, not the
machine's load (the wall-clock time does): a budget far above these figures hurts no correct
submission, however busy the machine.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from grader.api import grade
from grader.sandbox import zygote as sandbox
from grader.sandbox.protections import Limits

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [
    ROOT / "examples" / "drgrpo_correct.py",
    *sorted((ROOT / "tests" / "submissions" / "correct").glob("*.py")),
]


def measured_calls(path: Path) -> list[float]:
    """CPU seconds of each request the worker answered while grading ``path`` in this process."""
    spent: list[float] = []
    request = sandbox.WorkerProcess.request

    def timed(worker: sandbox.WorkerProcess, *args, **kwargs):
        before = worker.cpu_seconds()
        try:
            return request(worker, *args, **kwargs)
        finally:
            spent.append(worker.cpu_seconds() - before)

    sandbox.WorkerProcess.request = timed  # one shard (jobs=1): every call passes here
    try:
        grade(path, jobs=1, visuals=True)
    finally:
        sandbox.WorkerProcess.request = request
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args()
    largest = 0.0
    for path in args.files:
        spent = measured_calls(path)
        largest = max(largest, *spent)
        print(
            f"{path.name}: {len(spent)} calls, median {statistics.median(spent) * 1000:.1f} ms, "
            f"largest {max(spent) * 1000:.1f} ms of CPU"
        )
    budget = Limits().call_cpu_s
    print(f"largest call {largest * 1000:.1f} ms of CPU; budget {budget:g} s = {budget / largest:.0f}x it")


if __name__ == "__main__":
    main()
