"""Cold grade vs a bare torch import, in alternating runs on this machine.

    python benchmarks/cold_grade.py [--rounds 5] [--submission FILE] [--baseline DIR]

Every grade pays for importing torch; the goal is a cold ``python -m grader`` on a correct
submission within 3x ``python -c "import torch"``. Runs alternate so that both see the same
machine load; the ratio of medians is printed, with each run's figures. ``--baseline DIR``
grades with another checkout too (for example ``git worktree add DIR REV``), in the same
rounds, to compare two revisions under the same load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str], cwd: Path = ROOT) -> float:
    """Seconds to run ``command`` in ``cwd`` (``python -m grader`` imports the checkout there)."""
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--submission", default=str(ROOT / "examples" / "drgrpo_correct.py"))
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--baseline", type=Path, help="another checkout to grade with, in the same rounds")
    args = parser.parse_args()
    bare = [sys.executable, "-c", "import torch"]
    grade = [sys.executable, "-m", "grader", args.submission, "--max-examples", str(args.max_examples)]
    timed(bare)  # warm the file cache for all
    timed(grade)
    if args.baseline:
        timed(grade, args.baseline)
    imports, grades, baselines = [], [], []
    for round_ in range(args.rounds):
        imports.append(timed(bare))
        grades.append(timed(grade))
        line = f"round {round_ + 1}: import torch {imports[-1]:.2f} s, grade {grades[-1]:.2f} s"
        if args.baseline:
            baselines.append(timed(grade, args.baseline))
            line += f", baseline {baselines[-1]:.2f} s"
        print(f"{line}, ratio {grades[-1] / imports[-1]:.2f}")
    ratio = statistics.median(grades) / statistics.median(imports)
    print(
        f"median: import torch {statistics.median(imports):.2f} s, "
        f"grade {statistics.median(grades):.2f} s, ratio {ratio:.2f}x (goal: at most 3x)"
    )
    if baselines:
        base = statistics.median(baselines)
        print(
            f"baseline {args.baseline}: grade {base:.2f} s, ratio {base / statistics.median(imports):.2f}x; "
            f"this checkout / baseline {statistics.median(grades) / base:.2f}x"
        )


if __name__ == "__main__":
    main()
