"""Batch throughput: submissions per second of ``python -m grader batch`` over mixed submissions,
and a check that every batch score equals the score of grading the file alone.

    python benchmarks/batch_throughput.py [--jobs N] [--max-examples N] [--no-verify]

The batch: the correct variants (tests/submissions/correct, examples), every catalogued mistake
(reference/mistakes), and a few broken and hostile files (tests/submissions), 40+ in all. The
rate is measured from the command's start (torch import, zygote and warm-up included) to its
end. Verification then grades each file alone, as ``python -m grader FILE`` does (two shards,
the same seed and budget) one after another in this process, which already has torch imported
and one zygote for all (so cheaper than a cold ``python -m grader`` per file), compares the
score and every check's status, and prints how much faster the batch was.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ["syntax_error", "raises_in_loss", "missing_loss", "wrong_signature"]
HOSTILE = ["segfault", "os_exit_in_loss", "output_flood", "lying_tensor"]


def gather(into: Path) -> list[Path]:
    """Copies of the mixed submissions in ``into``, named ``kind__name.py``."""
    sources = [
        *sorted((ROOT / "tests/submissions/correct").glob("*.py")),
        *sorted((ROOT / "examples").glob("*.py")),
    ]
    sources += sorted(p for p in (ROOT / "reference/mistakes").glob("*.py") if p.name != "__init__.py")
    sources += [ROOT / "tests/submissions/broken" / f"{name}.py" for name in BROKEN]
    sources += [ROOT / "tests/submissions/hostile" / f"{name}.py" for name in HOSTILE]
    copies = []
    for source in sources:
        copy = into / f"{source.parent.name}__{source.name}"
        shutil.copyfile(source, copy)
        copies.append(copy)
    return copies


def outcome(report: dict) -> tuple:
    return report["score"], tuple((c["id"], c["status"], c["score"]) for c in report["checks"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, help="default: the batch command's own")
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--no-verify", action="store_true", help="skip grading each file alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        files = gather(folder)
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "grader", "batch", str(folder), "--output", str(out)]
        command += ["--max-examples", str(args.max_examples)]
        command += ["--jobs", str(args.jobs)] if args.jobs else []
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        used = resource.getrusage(resource.RUSAGE_CHILDREN)  # every process of the batch, workers too
        print(done.stdout + done.stderr)
        rate = len(files) / elapsed
        cpu = (used.ru_utime + used.ru_stime) / len(files)
        print(
            f"{len(files)} submissions in {elapsed:.1f} s: {rate:.2f} submissions/s "
            f"(--jobs {args.jobs or 'default'}); "
            f"{cpu:.2f} CPU-s per submission, start-up included"
        )
        if args.no_verify:
            return 0
        sys.path.insert(0, str(ROOT))
        from grader.api import grade
        from grader.sandbox.zygote import Zygote

        mismatches = 0
        started = time.perf_counter()
        with_zygote = Zygote()
        try:
            for path in files:
                batch = json.loads((out / "reports" / f"{path.name}.json").read_text())
                alone = grade(path, max_examples=args.max_examples, zygote=with_zygote).to_dict()
                if outcome(batch) != outcome(alone):
                    mismatches += 1
                    print(f"MISMATCH {path.name}: batch {batch['score']}, alone {alone['score']}")
        finally:
            with_zygote.close()
        alone_s = time.perf_counter() - started
        print(f"verified: {len(files) - mismatches}/{len(files)} batch results equal grading alone")
        print(
            f"one at a time in one warm process (two shards, a shared zygote): {alone_s:.1f} s, "
            f"{len(files) / alone_s:.2f} submissions/s; the batch is {alone_s / elapsed:.1f}x faster"
        )
        return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
