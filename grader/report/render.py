"""Renderers: pure functions from a ``Report`` to text, one per ``--format``; ``emit`` writes one."""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from grader.exercise import DEFAULT, Exercise
from grader.report.model import CheckResult, Report
from grader.report.notes import LOCKED
from grader.report.visibility import for_students, not_implemented

# The student release ships no catalogue of mistakes (each is a line from the answer).
NAMES_ON_SUBMISSION = (
    "The name of the mistake behind a failure, and what to change, come with the grade on submission."
)
_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}
# Fields of the grader's own bookkeeping that a counterexample carries but the call did not use.
_INTERNAL_INPUTS = frozenset({"explicit"})
# ANSI escape sequences, then any other control character but newline and tab (a carriage return
# or a cursor move could overwrite the score line), and the bidirectional-text overrides.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without what a terminal would obey rather than show: a submission's output or
    message cannot colour, move the cursor or overwrite a line to forge a "100/100 PASS"."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def emit(text: str, output: Path | None) -> None:
    """Write a rendered report (or audit) to ``output``, or to stdout when None."""
    if output is not None:
        output.write_text(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n"


def _points(x: float) -> str:
    return f"{x:g}"


def summary_line(report: Report) -> str:
    """One line for a terminal's stderr."""
    if report.usage_error:
        line = f"could not grade {report.submission}: {report.internal_error}"
    elif report.internal_error:
        line = f"internal error while grading {report.submission}"
    else:
        counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
        later = report.on_submission_points
        if later:  # the student release: those points are not counted as lost
            here = _points(report.max_score - later)
            line = (
                f"{report.submission}: {_points(report.score)}/{here} points checked here, "
                f"{_points(later)} more graded on submission ({counts})"
            )
        else:
            line = (
                f"{report.submission}: {_points(report.score)}/{_points(report.max_score)} points ({counts})"
            )
    return printable(f"drgrpo-grader: {line}")


def sandbox_warning(report: Report, exercise: Exercise | None = None) -> str | None:
    """One line for staff when student code ran with fewer protections than this machine could
    give (``grader.sandbox.protections.protections``: no privilege drop, no namespaces), None otherwise. Not
    in the student release: there, students grade their own file on their own machine."""
    missing = list((report.grader.get("sandbox") or {}).get("not_available") or ())
    if not missing or (exercise is not None and exercise.student_release()):
        return None
    shown = [missing[0], *(m for m in missing[1:] if "network" in m)]
    return printable(
        f"drgrpo-grader: warning: a weaker sandbox than it could be: {'; '.join(shown)} "
        "(all in the JSON report's grader.sandbox.not_available)"
    )


def _short(data: Any, width: int = 100) -> str:
    text = json.dumps(data, allow_nan=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _inputs(inputs: dict[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in inputs.items():
        if name in _INTERNAL_INPUTS:
            continue
        if isinstance(value, dict) and "values" in value:
            label = f"{name} ({value['dtype']}, shape {tuple(value['shape'])})"
            lines.append(f"{indent}{label}: {_short(value['values'], 200)}")
        elif isinstance(value, dict):
            lines.append(f"{indent}{name}:")
            lines.extend(_inputs(value, indent + "  "))
        else:
            lines.append(f"{indent}{name}: {_short(value)}")
    return lines


def _head(result: CheckResult) -> str:
    return f"{_MARK[result.status]:<7} {result.id} ({_points(result.score)}/{_points(result.max_score)})"


def check_lines(
    result: CheckResult, *, reproduce_command: str | None = None, diagnosed: set[str] | None = None
) -> list[str]:
    """One check as the text report shows it (the platform formats reuse it).

    ``reproduce_command``: the command that prints the check's snippet, shown instead of the
    snippet (a terminal user runs it when they want it); None shows the snippet itself, for
    platforms whose students cannot run the grader. ``diagnosed``: the diagnoses already shown
    in this report, so that a mistake several checks catch is explained once.
    """
    lines = [_head(result)]
    if result.status == "passed":
        return lines
    pad = " " * 8
    wrap = lambda text: textwrap.wrap(text, 92, initial_indent=pad, subsequent_indent=pad)  # noqa: E731
    lines += wrap(result.title)
    lines += wrap("-> " + result.message)
    if result.hint:
        lines += wrap("hint: " + result.hint)
    example = result.counterexample
    if example:
        lines.append(f"{pad}smallest input that shows it:")
        lines += _inputs(example.get("inputs", {}), pad + "  ")
        for key in ("expected", "actual"):
            if key in example:
                lines.append(f"{pad}{key}: {_short(example[key], 200)}")
    if result.traceback:
        lines.append(f"{pad}traceback:")
        lines += [pad + "  " + line for line in result.traceback.rstrip().splitlines()[-12:]]
    found = result.diagnosis
    if found and diagnosed is not None and found["name"] in diagnosed:
        lines += wrap(f"diagnosis: {found['name']} (explained above)")
    elif found:
        lines += wrap(f"diagnosis: {found['name']}. {found['explanation']}")
        lines += wrap("what to change: " + found["fix"])
        if diagnosed is not None:
            diagnosed.add(found["name"])
    if result.reproduce and reproduce_command is not None:
        # A command is never wrapped: it must survive copy and paste whatever the path's length.
        lines += [f"{pad}to replay it in Python:", f"{pad}  {reproduce_command} --reproduce {result.id}"]
    elif result.reproduce:
        lines.append(f"{pad}a script that replays it (set SUBMISSION to your file's path):")
        lines += [(pad + "  " + line).rstrip() for line in result.reproduce.rstrip().splitlines()]
    return lines


def _later_lines(report: Report) -> tuple[list[str], set[str]]:
    """One line for the checks that only the grade on submission runs (the student release),
    and their ids (they are not listed one by one)."""
    later = [r for r in report.checks if r.graded_on_submission]
    if not later:
        return [], set()
    line = (
        f"LATER   {', '.join(r.id for r in later)} ({_points(report.on_submission_points)} points): "
        "graded on submission (they compare with the reference solution, which stays with the course)"
    )
    return textwrap.wrap(line, 100, subsequent_indent=" " * 8), {r.id for r in later}


def _missing_lines(report: Report) -> tuple[list[str], set[str]]:
    """One line per function still raising the template's ``NotImplementedError``, and the
    ids of the checks it stands for (they are not listed one by one)."""
    by_target: dict[str, list[CheckResult]] = {}
    for result in filter(not_implemented, report.checks):
        by_target.setdefault(result.target, []).append(result)
    lines, covered = [], set()
    for target, missing in by_target.items():
        points = sum(r.max_score for r in missing)
        lines.append(
            f"TODO    {target}: not implemented yet"
            f" ({len(missing)} checks, {_points(points)} points wait for it)"
        )
        covered |= {r.id for r in missing}
    return lines, covered


def render_text(report: Report, exercise: Exercise | None = None) -> str:
    """The terminal's report: one short block per failed check, one line per unwritten function.
    ``exercise`` (None: unknown) names itself in the replay command when it is not the packaged
    one, and says whether mistakes get their names here or on submission."""
    lines = [summary_line(report), ""]
    if report.usage_error:
        lines += ["The grader could not start:", report.internal_error or ""]
        return printable("\n".join(lines)) + "\n"
    if report.internal_error:
        lines += ["The grader itself failed (this is not your fault):", report.internal_error]
    missing, covered = _missing_lines(report)
    later, waiting = _later_lines(report)
    lines += missing + later
    diagnosed: set[str] = set()
    command = f"python -m grader {shlex.quote(report.submission)}"
    if exercise is not None and exercise.address not in ("", DEFAULT):  # not the packaged exercise
        command += f" --exercise {shlex.quote(exercise.address)}"
    # Like check50's dependent checks: when a function raises (or hangs) on the smallest input,
    # every check of it ends the same way; the first says how, the others point to it.
    first_error: dict[tuple[str, str], str] = {}
    for result in report.checks:
        if result.id in covered | waiting:
            continue
        shown = for_students(result)
        if shown.status in ("error", "timeout"):
            first = first_error.setdefault((shown.target, shown.message), shown.id)
            if first != shown.id:
                lines += [_head(shown), f"        -> the same error as {first}, above"]
                continue
        lines += check_lines(shown, reproduce_command=command, diagnosed=diagnosed)
    wrong = any(r.status in ("failed", "error") for r in report.checks)
    if wrong and exercise is not None and not exercise.has_catalogue():
        lines += ["", NAMES_ON_SUBMISSION]
    if report.submission_output.strip():
        lines += ["", "What your code printed:", textwrap.indent(report.submission_output.rstrip(), "  ")]
    lines += ["", report.notes.rstrip() if report.solved and report.notes else LOCKED]
    return printable("\n".join(lines)) + "\n"
