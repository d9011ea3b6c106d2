"""``python -m grader audit``: is every check right, and is it useful?

A check is right when the reference solution passes it, and useful when it catches a classic
mistake. The audit grades the reference, the untouched student template and every catalogued
mistake (``Exercise.catalogue``) with the same checks, and shows which check catches which
mistake (the catch matrix). It flags:

- errors: a check the reference fails; a mistake no check catches; a check that broke on its
  own (an internal error of the grader or of the check's code);
- warnings: a check that catches no mistake; a check the template passes (it gives points for
  nothing); a mistake that a check it declares in ``CAUGHT_BY`` did not catch.

``audit()`` takes the grading function, so that a caller that already graded these files (the
test suite) reuses its reports.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from grader import options
from grader.errors import UsageError

if TYPE_CHECKING:
    from grader.declare.checks import Check
    from grader.declare.mistakes import Mistake
    from grader.exercise import Exercise
    from grader.report.model import Report

AUDIT_VERSION = "1.0"
# A cell of the matrix: how the check ended on the mistake's submission.
# ``grader_error``: the grader or the check's own code broke (not a catch); ``missing``: no result.
MARK = {
    "passed": ".",
    "failed": "x",
    "error": "E",
    "timeout": "T",
    "skipped": "-",
    "grader_error": "!",
    "missing": "?",
}
CAUGHT = ("failed", "error", "timeout")


@dataclass(frozen=True)
class Finding:
    """One thing the audit flags. ``severity`` error makes the audit fail, warning does not
    (unless ``--strict``)."""

    severity: Literal["error", "warning"]
    kind: str
    message: str
    check: str | None = None
    mistake: str | None = None


@dataclass(frozen=True)
class Row:
    """One check, as the audit saw it."""

    id: str
    title: str
    target: str
    points: float
    visibility: str
    reference: str  # its status on the reference solution
    template: str  # and on the untouched template
    catches: tuple[str, ...]  # the ids of the mistakes it catches
    only: tuple[str, ...]  # those that no other check catches


@dataclass(frozen=True)
class Audit:
    """The whole audit: ``matrix[mistake][check]`` is the check's status on that mistake."""

    checks: tuple[Row, ...]
    mistakes: tuple[Mistake, ...]
    matrix: Mapping[str, Mapping[str, str]]
    findings: tuple[Finding, ...]

    def ok(self, *, strict: bool = False) -> bool:
        return not any(f.severity == "error" or strict for f in self.findings)

    def caught_by(self, mistake: str) -> tuple[str, ...]:
        return tuple(c for c, status in self.matrix[mistake].items() if status in CAUGHT)

    def to_dict(self) -> dict[str, Any]:
        return {
            "audit_version": AUDIT_VERSION,
            "ok": self.ok(),
            "checks": [dataclasses.asdict(row) for row in self.checks],
            "mistakes": [
                {
                    "id": m.id,
                    "name": m.name,
                    "target": m.target,
                    "caught_by": list(self.caught_by(m.id)),
                    "declared": list(m.caught_by),
                }
                for m in self.mistakes
            ],
            "matrix": {mistake: dict(row) for mistake, row in self.matrix.items()},
            "findings": [dataclasses.asdict(f) for f in self.findings],
        }


def _statuses(report: Report, checks: Sequence[Check]) -> dict[str, str]:
    """Each check's status in the report: ``grader_error`` when the grader or the check itself
    broke, ``missing`` when the report has no result for it."""
    results = {r.id: r for r in report.checks}
    statuses = {}
    for c in checks:
        result = results.get(c.id)
        if result is None:
            statuses[c.id] = "missing"
        else:
            statuses[c.id] = "grader_error" if result.error_source == "grader" else result.status
    return statuses


def _broken(name: str, report: Report, statuses: Mapping[str, str]) -> list[Finding]:
    """Errors for a grade that failed as a whole, or for checks that broke on their own."""
    if report.internal_error:
        return [
            Finding("error", "grade_failed", f"grading {name} failed: {report.internal_error}", mistake=name)
        ]
    messages = {r.id: r.message for r in report.checks}
    return [
        Finding(
            "error",
            "check_broke",
            f"{check_id} broke on {name}: {messages.get(check_id, 'no result')}",
            check_id,
            name,
        )
        for check_id, status in statuses.items()
        if status in ("grader_error", "missing")
    ]


def audit(
    checks: Sequence[Check],
    *,
    grade: Callable[[Path], Report],
    mistakes: Sequence[Mistake] | None = None,
    progress: Callable[[str], None] | None = None,
    exercise: Exercise | None = None,
) -> Audit:
    """Grade the reference, the template and each mistake of ``exercise`` (default: the
    configured one) with ``grade`` (which must run ``checks``), and judge the checks by the
    results."""
    from grader.exercise import load

    exercise = exercise or load()
    mistakes = tuple(exercise.mistakes() if mistakes is None else mistakes)
    solution = _source(exercise.solution)
    template = exercise.path(exercise.template)
    subjects = [("reference", solution), ("template", template)] + [(m.id, m.path) for m in mistakes]
    reports: dict[str, Report] = {}
    graded: dict[str, dict[str, str]] = {}
    findings: list[Finding] = []
    for number, (name, path) in enumerate(subjects, 1):
        if progress:
            progress(f"[{number}/{len(subjects)}] {name}")
        reports[name] = grade(path)
        graded[name] = _statuses(reports[name], checks)
        findings += _broken(name, reports[name], graded[name])

    matrix = {m.id: graded[m.id] for m in mistakes}
    caught = {m.id: {c for c, s in matrix[m.id].items() if s in CAUGHT} for m in mistakes}
    findings += _judge_checks(checks, reports["reference"], graded["reference"], graded["template"])
    findings += _judge_mistakes(mistakes, caught, matrix)
    rows = []
    for c in checks:
        catches = tuple(m.id for m in mistakes if c.id in caught[m.id])
        if not catches and mistakes:
            findings.append(
                Finding("warning", "catches_nothing", f"{c.id} catches no catalogued mistake", c.id)
            )
        rows.append(
            Row(
                id=c.id,
                title=c.title,
                target=c.target,
                points=c.points,
                visibility=c.visibility,
                reference=graded["reference"][c.id],
                template=graded["template"][c.id],
                catches=catches,
                only=tuple(m for m in catches if caught[m] == {c.id}),
            )
        )
    findings.sort(key=lambda f: f.severity != "error")  # errors first, otherwise in order
    return Audit(tuple(rows), mistakes, matrix, tuple(findings))


def _judge_checks(
    checks: Sequence[Check],
    reference: Report,
    on_reference: Mapping[str, str],
    on_template: Mapping[str, str],
) -> list[Finding]:
    """The reference must pass every check; the template should pass none."""
    messages = {r.id: r.message for r in reference.checks}
    findings = []
    for c in checks:
        status = on_reference[c.id]
        if status not in ("passed", "grader_error", "missing"):  # those two are reported as broken
            message = f"{c.id} does not pass on the reference ({status}): {messages[c.id]}"
            findings.append(Finding("error", "reference_fails", message, c.id))
        if on_template[c.id] == "passed":
            message = f"the untouched template passes {c.id}: it gives points for no work"
            findings.append(Finding("warning", "template_passes", message, c.id))
    return findings


def _judge_mistakes(
    mistakes: Sequence[Mistake], caught: Mapping[str, set[str]], matrix: Mapping[str, Mapping[str, str]]
) -> list[Finding]:
    """Every mistake must be caught, at least by the checks it declares (those that ran)."""
    findings = []
    for m in mistakes:
        if not caught[m.id]:
            findings.append(Finding("error", "uncaught", f"no check catches {m.id} ({m.name})", mistake=m.id))
        missed = [c for c in m.caught_by if c in matrix[m.id] and c not in caught[m.id]]
        if missed:
            message = f"{m.id} declares CAUGHT_BY {', '.join(missed)}, which did not catch it"
            findings.append(Finding("warning", "declared_not_caught", message, mistake=m.id))
    return findings


def render_text(result: Audit) -> str:
    """The catch matrix as a table (rows: checks; columns: mistakes, numbered and listed
    below), then the mistakes, then the findings."""
    mistakes = result.mistakes
    width = max([len(row.id) for row in result.checks] + [5])
    groups = [range(i, min(i + 5, len(mistakes))) for i in range(0, len(mistakes), 5)]
    cells = lambda marks: " ".join("".join(marks[i] for i in group) for group in groups)  # noqa: E731
    numbers = " ".join(f"{group.start + 1:<{len(group)}}" for group in groups)
    head = f"{'check':<{width}}  {'points':>6}  {'ref':<4}  {'tpl':<4}  "
    lines = [
        f"Audit: {len(result.checks)} checks against the reference, the template and "
        f"{len(mistakes)} catalogued mistakes",
        "",
        "Catch matrix: a row per check, a column per mistake (numbered as listed below);",
        "x failed, E error, T timeout (caught); . passed, - skipped (not caught); ! the check broke.",
        "ref/tpl: the check on the reference (must pass) and on the untouched template (must not).",
        "caught: how many mistakes the check catches; only: how many no other check catches.",
        "",
        f"{'':<{len(head)}}{numbers}  caught  only" if mistakes else head + "caught  only",
    ]
    short = {
        "passed": "pass",
        "failed": "FAIL",
        "error": "ERR",
        "timeout": "TIME",
        "skipped": "skip",
        "grader_error": "BUG",
        "missing": "none",
    }
    for row in result.checks:
        marks = [MARK[result.matrix[m.id][row.id]] for m in mistakes]
        lines.append(
            f"{row.id:<{width}}  {row.points:>6g}  {short.get(row.reference, row.reference):<4}  "
            f"{short.get(row.template, row.template):<4}  {cells(marks)}  "
            f"{len(row.catches):>6}  {len(row.only):>4}"
        )
    lines += ["", "Mistakes (number, id, target: the checks that catch it)"]
    number_width = len(str(len(mistakes)))
    id_width = max([len(m.id) for m in mistakes] + [2])
    for number, m in enumerate(mistakes, 1):
        by = result.caught_by(m.id)
        said = ", ".join(by) if by else "NONE"
        lines.append(f"{number:>{number_width}}  {m.id:<{id_width}}  {m.target}: {said}")
    lines += ["", "Findings"]
    if not result.findings:
        lines.append("  none: the reference passes every check, every mistake is caught")
    for finding in result.findings:
        lines.append(f"  {finding.severity:<7}  {finding.message}")
    verdict = "OK" if result.ok() else "FAILED"
    lines += ["", f"audit: {verdict} ({_tally(result)})"]
    return "\n".join(lines) + "\n"


def _tally(result: Audit) -> str:
    errors = sum(f.severity == "error" for f in result.findings)
    warnings = len(result.findings) - errors
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    return f"{plural(errors, 'error')}, {plural(warnings, 'warning')}"


def render_json(result: Audit) -> str:
    return json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"


FORMATS: dict[str, Callable[[Audit], str]] = {"text": render_text, "json": render_json}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader audit",
        description="Grade the reference, the student template and every catalogued mistake with "
        "every check, print the catch matrix, and flag checks the reference fails, mistakes no "
        "check catches and checks that catch nothing. Exit code 1 when the reference fails a check "
        "or a mistake goes uncaught (with --strict, on any finding).",
    )
    options.add_exercise(parser)
    options.add_properties(parser)
    parser.add_argument("--format", choices=tuple(FORMATS), default="text", help="default: text")
    options.add_output(parser, "write the audit to FILE, not stdout")
    options.add_seed(parser)
    options.add_max_examples(parser)
    parser.add_argument("--only", type=_ids, help="audit only these check ids (comma-separated)")
    parser.add_argument("--mistakes", type=_ids, help="only these catalogued mistakes (comma-separated ids)")
    parser.add_argument("--strict", action="store_true", help="warnings fail the audit too")
    return parser


def _ids(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def _source(module: str) -> Path:
    """The file of the exercise's reference solution."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise UsageError(f"the reference solution {module} is not installed here")
    return Path(spec.origin)


def _chosen_mistakes(exercise: Exercise, ids: Sequence[str] | None) -> tuple[Mistake, ...]:
    known = exercise.mistakes()
    if not ids:
        return known
    unknown = sorted(set(ids) - {m.id for m in known})
    if unknown:
        raise UsageError(f"unknown mistake id(s): {', '.join(unknown)} (see {exercise.catalogue})")
    return tuple(m for m in known if m.id in set(ids))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from grader.sandbox.zygote import Zygote

    zygote = Zygote()  # first: it imports torch on the other core while we do
    try:
        from grader.api import grade, select
        from grader.declare.extensions import all_checks
        from grader.exercise import load

        try:
            exercise = load(args.exercise)
            checks = select(all_checks(args.properties, exercise), args.only)
            mistakes = _chosen_mistakes(exercise, args.mistakes)
        except UsageError as error:
            print(f"python -m grader audit: error: {error}", file=sys.stderr)
            return options.EXIT_GRADER

        def grade_one(path: Path) -> Report:
            return grade(
                path,
                seed=args.seed,
                max_examples=args.max_examples,
                zygote=zygote,
                checks=checks,
                exercise=exercise,
            )

        def progress(text: str) -> None:
            print(f"audit: grading {text}", file=sys.stderr, flush=True)

        result = audit(checks, grade=grade_one, mistakes=mistakes, progress=progress, exercise=exercise)
    finally:
        zygote.close()
    from grader.report.render import emit

    emit(FORMATS[args.format](result), args.output)
    print(f"audit: {_tally(result)}", file=sys.stderr)
    return options.EXIT_PASSED if result.ok(strict=args.strict) else options.EXIT_FAILED
