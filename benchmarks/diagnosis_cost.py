"""What diagnosis and reproduction add to a grade, in alternating runs on this machine.

    python benchmarks/diagnosis_cost.py [--rounds 3] [--max-examples 100]

Grades a few catalogued mistakes (each fails some checks, so each pays for its diagnosis)
in one process with one zygote, with the feedback on and off (``grader.feedback.explain.explain``
replaced by a function that adds nothing), alternating so that both see the same machine
load. Prints the ratio of the median times. A correct submission pays nothing: passing
checks never reach the feedback.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.sandbox.zygote import Zygote  # noqa: E402

SAMPLE = (
    "per_response_mean",
    "std_scaling_kept",
    "multiply_by_mask",
    "stats_include_padding",
    "no_validation",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-examples", type=int, default=100)
    args = parser.parse_args()
    paths = [ROOT / "reference" / "mistakes" / f"{name}.py" for name in SAMPLE]
    explain = api.explain  # what grade() passes the runner: the diagnosis and the snippet
    zygote = Zygote()
    times: dict[str, list[float]] = {"with feedback": [], "without": []}
    try:
        for _ in range(args.rounds):
            for label, function in (("with feedback", explain), ("without", lambda *a: {})):
                api.explain = function
                started = time.perf_counter()
                for path in paths:
                    api.grade(path, zygote=zygote, max_examples=args.max_examples)
                times[label].append(time.perf_counter() - started)
    finally:
        api.explain = explain
        zygote.close()
    for label, runs in times.items():
        print(
            f"{label:14s} " + " ".join(f"{t:.2f}" for t in runs) + f"  median {statistics.median(runs):.2f} s"
        )
    ratio = statistics.median(times["with feedback"]) / statistics.median(times["without"])
    print(f"{len(paths)} failing submissions: with / without feedback = {ratio:.2f}x")


if __name__ == "__main__":
    main()
