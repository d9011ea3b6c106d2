"""``python -m grader batch``: grade many submissions, one report each, a CSV and a summary.

    python -m grader batch DIR_OR_FILE... --output OUTDIR [--jobs N] [--seed N]
                                          [--max-examples N] [--rubric FILE]

Writes ``OUTDIR/reports/<submission>.json`` (the same report as ``python -m grader``) and
``OUTDIR/scores.csv`` (submission, score, max_score, problem, then one column per check), and
prints a table of the pass rate of each check, the most failed first.

Speed: torch is imported, and the inputs of the shared runs drawn (``grader.engine.recording``), once, in
this process; each submission is then graded in a fork of it, with one shard, against one
shared zygote, ``--jobs`` at a time. A submission's result does not depend on its neighbours: it
is the very ``grade()`` a single ``python -m grader`` runs, with the same seed (only the split
into shards differs, and a check's result does not depend on its shard). A grading process
that crashes or hangs ends in a report with ``internal_error`` for that submission alone.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import json
import os
import selectors
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from grader.declare.rubric import Rubric
from grader.engine.recording import Recording, record
from grader.options import EXIT_GRADER, EXIT_PASSED, add_grading, add_output, positive

if TYPE_CHECKING:
    from grader.declare.checks import Check
    from grader.exercise import Exercise

# Seconds a grading process may take beyond the grade's own time budget before it is killed.
GRACE_S = 120.0


@dataclass(frozen=True)
class Submission:
    """A file to grade, and its name in the batch (unique; its report's path under OUTDIR)."""

    path: Path
    name: str


def find_submissions(inputs: Sequence[str | Path]) -> list[Submission]:
    """The ``.py`` files given, or found under the directories given (at any depth, so that one
    folder per student works), each named by its path relative to that directory."""
    found: list[Submission] = []
    for given in map(Path, inputs):
        if given.is_dir():
            found += [Submission(p, p.relative_to(given).as_posix()) for p in sorted(given.rglob("*.py"))]
        elif given.is_file():
            found.append(Submission(given, given.name))
        else:
            raise ValueError(f"no such file or directory: {given}")
    names: dict[str, Path] = {}
    for submission in found:
        if submission.name in names:
            raise ValueError(
                f"two submissions would share the name {submission.name!r}: "
                f"{names[submission.name]} and {submission.path} (give their directory instead)"
            )
        names[submission.name] = submission.path
    if not found:
        raise ValueError(f"no .py submission found in {', '.join(map(str, inputs))}")
    return found


@dataclass(frozen=True)
class Settings:
    """How every submission of the batch is graded (``grade()``'s arguments)."""

    seed: int = 0
    max_examples: int = 100
    rubric: Rubric | None = None  # None: the exercise's default; read once, before any fork
    checks: tuple[Check, ...] | None = None  # None: the exercise's; with --properties, loaded once
    exercise: Exercise | None = None  # None: the configured one (grader.exercise.load)


@dataclass
class _Running:
    submission: Submission
    pid: int
    started: float
    chunks: list[bytes] = field(default_factory=list)


@dataclass(frozen=True)
class Graded:
    """One submission's outcome, as the batch keeps it: its JSON report, parsed."""

    submission: Submission
    report: dict[str, Any]


class Pool:
    """Forks of this process, each grading one submission, ``jobs`` at a time."""

    def __init__(self, settings: Settings, jobs: int) -> None:
        from grader.sandbox.protections import Limits
        from grader.sandbox.zygote import Zygote

        if jobs < 1:
            raise ValueError(f"jobs={jobs} is invalid; expected an integer >= 1")
        self.settings = settings
        self.jobs = jobs
        self.budget_s = Limits().total_timeout_s + GRACE_S
        self.zygote = Zygote()  # first: it imports torch on the other core while we do
        try:
            self.recording = _record(settings)
        except BaseException:
            self.zygote.close()
            raise
        # The forks share this process's memory until they write to it; the garbage collector
        # of each would write to every object it scans, so the objects made so far are frozen.
        gc.collect()
        gc.freeze()

    def close(self) -> None:
        gc.unfreeze()
        self.zygote.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self, submissions: Sequence[Submission], on_done: Callable[[Graded, int], None] | None = None
    ) -> list[Graded]:
        """Grade every submission; ``on_done(graded, how_many_done)`` after each. In input order."""
        pending = list(reversed(submissions))
        running: dict[int, _Running] = {}  # by the read end of its pipe
        results: dict[str, Graded] = {}
        with selectors.DefaultSelector() as selector:

            def finish(fd: int, *, killed: bool) -> None:
                selector.unregister(fd)
                graded = self._finish(fd, running.pop(fd), killed=killed)
                results[graded.submission.name] = graded
                if on_done:
                    on_done(graded, len(results))

            try:
                while pending or running:
                    while pending and len(running) < self.jobs:
                        submission = pending.pop()
                        fd, pid = self._fork(submission)
                        running[fd] = _Running(submission, pid, time.monotonic())
                        selector.register(fd, selectors.EVENT_READ)
                    for key, _ in selector.select(timeout=1.0):
                        data = os.read(key.fd, 1 << 20)
                        if data:
                            running[key.fd].chunks.append(data)
                        else:
                            finish(key.fd, killed=False)
                    now = time.monotonic()
                    for fd in [fd for fd, r in running.items() if now - r.started > self.budget_s]:
                        finish(fd, killed=True)
            except BaseException:  # Ctrl-C, say: no grading process outlives the batch
                for fd in list(running):
                    self._finish(fd, running.pop(fd), killed=True)
                raise
        return [results[s.name] for s in submissions]

    def _fork(self, submission: Submission) -> tuple[int, int]:
        from grader.engine.parallel import fork_grading  # not at import: the zygote starts first

        settings, recording = self.settings, self.recording

        def failed(error: str) -> bytes:
            return json.dumps(
                _broken_report(submission, f"internal grader error: {error}", settings)
            ).encode()

        pid, read_fd = fork_grading(
            self.zygote, lambda link: _grade(submission, settings, recording, link), failed
        )
        return read_fd, pid

    def _finish(self, fd: int, running: _Running, *, killed: bool) -> Graded:
        """Reap the grading process; its report, or one that says how it failed."""
        if killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(running.pid, signal.SIGKILL)
        os.close(fd)
        _, status = os.waitpid(running.pid, 0)
        if not killed:
            with contextlib.suppress(ValueError):
                return Graded(running.submission, json.loads(b"".join(running.chunks)))
        from grader.sandbox.zygote import describe_status

        why = (
            f"it took more than {self.budget_s:g} s and was killed"
            if killed
            else f"it ended without a report ({describe_status(status)})"
        )
        report = _broken_report(running.submission, f"the grading process failed: {why}", self.settings)
        return Graded(running.submission, report)


def _record(settings: Settings) -> Recording:
    """Import the grading code here, once, so that every fork starts with it loaded, and draw
    the shared runs' inputs once for the whole batch (``grader.engine.recording``)."""
    from grader import api

    checks = api.rubric_checks(settings.rubric, settings.checks, settings.exercise).checks
    return record(checks, seed=settings.seed, max_examples=settings.max_examples)


def _grade(  # pragma: no cover - runs in the child
    submission: Submission, settings: Settings, recording: Recording, link: Any
) -> bytes:
    """Grade one submission in a forked grading process: its JSON report."""
    from grader.api import grade
    from grader.report.render import render_json

    report = grade(
        submission.path,
        seed=settings.seed,
        max_examples=settings.max_examples,
        rubric=settings.rubric,
        checks=settings.checks,
        zygote=link,
        jobs=1,
        recording=recording,
        exercise=settings.exercise,
    )
    return render_json(report).encode()


def _broken_report(submission: Submission, message: str, settings: Settings) -> dict[str, Any]:
    from grader.api import unusable

    return unusable(
        str(submission.path), message, seed=settings.seed, max_examples=settings.max_examples
    ).to_dict()


def problem(report: dict[str, Any]) -> str:
    """Why a submission got no real grade, in a few words; empty when it was graded."""
    if report.get("internal_error"):
        return "grader error: " + report["internal_error"].splitlines()[0][:200]
    if report.get("load_error"):
        error = report["load_error"]
        return f"not loaded: {error.get('type')}: {error.get('message')}"[:200]
    return ""


def write_outputs(graded: Sequence[Graded], check_ids: Sequence[str], outdir: Path) -> None:
    """The reports (already rendered) and ``scores.csv``."""
    for item in graded:
        path = outdir / "reports" / f"{item.submission.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(item.report, indent=2, allow_nan=False) + "\n")
    with open(outdir / "scores.csv", "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["submission", "score", "max_score", "problem", *check_ids])
        for item in graded:
            scores = {c["id"]: c["score"] for c in item.report["checks"]}
            writer.writerow(
                [
                    item.submission.name,
                    f"{item.report['score']:g}",
                    f"{item.report['max_score']:g}",
                    problem(item.report),
                    *(f"{scores[i]:g}" if i in scores else "" for i in check_ids),
                ]
            )


def summary_table(graded: Sequence[Graded], check_ids: Sequence[str]) -> str:
    """Pass rate per check, the most failed first: which properties students get wrong."""
    rows = []
    for check_id in check_ids:
        statuses = [c["status"] for g in graded for c in g.report["checks"] if c["id"] == check_id]
        passed = statuses.count("passed")
        rows.append((passed / len(statuses) if statuses else 0.0, check_id, passed, len(statuses), statuses))
    rows.sort(key=lambda row: (row[0], row[1]))
    width = max([len("check"), *(len(i) for i in check_ids)])
    lines = [f"{'check':<{width}}  passed         failed  error  timeout  skipped"]
    for rate, check_id, passed, total, statuses in rows:
        others = "  ".join(
            f"{statuses.count(s):>{len(s)}}" for s in ("failed", "error", "timeout", "skipped")
        )
        lines.append(f"{check_id:<{width}}  {passed:>4}/{total:<4} {rate:>4.0%}  {others}")
    scores = [g.report["score"] for g in graded]
    problems = sum(bool(problem(g.report)) for g in graded)
    lines.append(
        f"{len(graded)} submissions, mean score {sum(scores) / len(scores):.1f}"
        f"/{max(g.report['max_score'] for g in graded):g}, {problems} not graded normally (see scores.csv)"
    )
    return "\n".join(lines) + "\n"


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.on = stream.isatty()
        self.started = time.monotonic()

    def __call__(self, graded: Graded, done: int) -> None:
        if not self.on:
            return
        elapsed = time.monotonic() - self.started
        rate = done / elapsed if elapsed else 0.0
        left = (self.total - done) / rate if rate else 0.0
        bar = "#" * (30 * done // self.total)
        self.stream.write(
            f"\r[{bar:<30}] {done}/{self.total} {rate:.2f}/s, {left:.0f} s left  "
            f"{graded.submission.name[-30:]:<30}"
        )
        if done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader batch", description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="submission files, or directories of them")
    add_output(parser, "directory for the reports and CSV", required=True)
    parser.add_argument(
        "--jobs",
        type=positive,
        default=2 * (os.cpu_count() or 1),
        help="submissions graded at once (default: two per CPU; see the figures in benchmarks/RESULTS.md)",
    )
    add_grading(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        submissions = find_submissions(args.inputs)
    except ValueError as error:
        parser.error(str(error))
    from grader.api import rubric_checks
    from grader.declare.extensions import all_checks
    from grader.declare.rubric import default_rubric, load_rubric
    from grader.exercise import load

    try:
        exercise = load(args.exercise)
        rubric = load_rubric(args.rubric) if args.rubric else default_rubric(exercise)
        checks = all_checks(args.properties, exercise) if args.properties else None
        check_ids = [c.id for c in rubric_checks(rubric, checks, exercise).checks]
    except ValueError as error:  # a UsageError or a RubricError
        parser.error(str(error))
    args.output.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        seed=args.seed, max_examples=args.max_examples, rubric=rubric, checks=checks, exercise=exercise
    )
    started = time.monotonic()
    with Pool(settings, args.jobs) as pool:
        graded = pool.run(submissions, Progress(len(submissions), sys.stderr))
    elapsed = time.monotonic() - started
    write_outputs(graded, check_ids, args.output)
    sys.stdout.write(summary_table(graded, check_ids))
    print(
        f"drgrpo-grader batch: {len(graded)} submissions in {elapsed:.1f} s "
        f"({len(graded) / elapsed:.2f}/s, {args.jobs} at a time); reports in {args.output}",
        file=sys.stderr,
    )
    return EXIT_GRADER if any(g.report.get("internal_error") for g in graded) else EXIT_PASSED
