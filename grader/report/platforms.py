"""Renderers for course platforms: one ``Report`` as each platform's autograder expects it.

Pure functions like those of ``grader.report.render``, chosen by ``--format``; all four give the same
score. What students see of a check follows the rubric (``grader.report.visibility``). The fields are
the platforms' documented ones:

- Gradescope, "Autograder specifications": ``results.json`` with a top-level ``score``,
  ``execution_time``, ``output``, ``visibility``, ``stdout_visibility`` and ``tests[]``
  (``name``, ``number``, ``score``, ``max_score``, ``status``, ``output``, ``output_format``,
  ``tags``, ``visibility``).
- PrairieLearn, "External grading": ``results.json`` with ``gradable``, ``score`` in [0, 1],
  ``message``, ``output`` and ``tests[]`` (``name``, ``description``, ``points``,
  ``max_points``, ``message``, ``output``); ``gradable: false`` with ``format_errors`` when the
  file could not be loaded, so that the student loses no attempt. At most 1 MB.
- JUnit XML, as Jenkins, GitLab and CodeGrade read it: one ``testcase`` per check, ``failure``
  for a wrong answer, ``error`` for a crash or a timeout, ``skipped``.
- Autolab: the text report, then ``{"scores": {...}}`` (one entry per check id) as the last line
  of the output.
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from typing import Any

from grader.exercise import Exercise
from grader.report.model import CheckResult, Report
from grader.report.render import check_lines, render_text, summary_line
from grader.report.visibility import for_students

# Each test's output is cut to this many characters: PrairieLearn refuses results over 1 MB.
OUTPUT_CHARS = 20_000
GRADER_BROKE = (
    "The grader itself failed while grading this submission (this is not your fault). "
    "Course staff can see the details; please tell them."
)


def _cut(text: str, limit: int = OUTPUT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 40] + "\n... (cut: too long to show)\n"


def details(result: CheckResult) -> str:
    """One check's text for a student (its title, what went wrong, the smallest input), as the
    text report shows it, without the status line."""
    return _cut(textwrap.dedent("\n".join(check_lines(result)[1:])).strip() or result.title)


def _notes(report: Report) -> str:
    """The exercise notes once solved (unlocked, as in the text report); nothing before."""
    return report.notes.rstrip() if report.solved and report.notes else ""


def _overview(report: Report) -> str:
    """What a platform shows for the whole submission."""
    lines = [summary_line(report)]
    if report.internal_error:
        lines.append(GRADER_BROKE)
    elif report.load_error:
        lines.append(
            f"Your file could not be loaded: {report.load_error.get('type')}: "
            f"{report.load_error.get('message')}"
        )
    if _notes(report):
        lines += ["", _notes(report)]
    if report.submission_output.strip():
        lines += ["", "What your code printed:", _cut(report.submission_output.rstrip())]
    return "\n".join(lines)


def gradescope(report: Report) -> dict[str, Any]:
    """Gradescope's ``results.json``. A hidden check stays a visible test with its points but
    shows no details: Gradescope's own ``hidden`` is meant for tests worth nothing (it would
    leave points in the total that no visible test accounts for). ``after_due_date`` and
    ``after_published`` are passed on, for Gradescope to enforce."""
    tests = []
    for number, result in enumerate(report.checks, start=1):
        shown = for_students(result, gated=True)
        tests.append(
            {
                "name": result.id,
                "number": str(number),
                "score": result.score,
                "max_score": result.max_score,
                "status": "passed" if result.status == "passed" else "failed",
                "output": details(shown),
                "output_format": "text",
                "tags": [result.target],
                "visibility": "visible" if result.visibility == "hidden" else result.visibility,
            }
        )
    return {
        "score": report.score,
        "execution_time": report.grader.get("total_time_s", 0.0),
        "output": _overview(report),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def gradable(report: Report) -> bool:
    """Whether anything was graded: not when the file could not be loaded, nor when the grader
    broke (PrairieLearn then keeps the attempt)."""
    return report.internal_error is None and report.load_error is None and bool(report.checks)


def prairielearn(report: Report) -> dict[str, Any]:
    """PrairieLearn's external-grading ``results.json``."""
    if not gradable(report):
        if report.internal_error:
            errors = [GRADER_BROKE]
        elif report.load_error:
            error = report.load_error
            errors = [f"{error.get('type')}: {error.get('message')}", error.get("traceback") or ""]
        else:
            errors = ["no check was run"]
        return {
            "gradable": False,
            "format_errors": [e for e in errors if e],
            "message": summary_line(report),
            "output": _cut(report.submission_output),
        }
    tests = []
    for result in report.checks:
        shown = for_students(result)
        tests.append(
            {
                "name": result.id,
                "description": result.title,
                "points": result.score,
                "max_points": result.max_score,
                "message": shown.status if shown.status == "passed" else f"{shown.status}: {shown.message}",
                "output": details(shown),
            }
        )
    fraction = report.score / report.max_score if report.max_score else 1.0
    return {
        "gradable": True,
        "score": min(1.0, max(0.0, fraction)),
        "message": "\n\n".join(filter(None, [summary_line(report), _notes(report)])),
        "output": _cut(report.submission_output),
        "tests": tests,
    }


# Characters XML 1.0 cannot hold, even escaped; student output may contain any of them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def junit(report: Report) -> str:
    """JUnit XML: one ``testsuite`` of one ``testcase`` per check (its ``classname`` is the
    function it checks); score and max_score as suite properties."""
    counts = report.counts()
    suite = ET.Element(
        "testsuite",
        {
            "name": "drgrpo-grader",
            "tests": str(len(report.checks) + bool(report.internal_error)),
            "failures": str(counts["failed"]),
            "errors": str(counts["error"] + counts["timeout"] + bool(report.internal_error)),
            "skipped": str(counts["skipped"]),
            "time": f"{report.grader.get('total_time_s', 0.0):.3f}",
        },
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("submission", report.submission),
        ("score", f"{report.score:g}"),
        ("max_score", f"{report.max_score:g}"),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": _xml(value)})
    for result in report.checks:
        case = ET.SubElement(
            suite,
            "testcase",
            {"name": result.id, "classname": result.target, "time": f"{result.duration_s:.3f}"},
        )
        shown = for_students(result)
        if result.status == "skipped":
            ET.SubElement(case, "skipped", {"message": _xml(shown.message)})
        elif result.status != "passed":
            kind = "failure" if result.status == "failed" else "error"
            outcome = ET.SubElement(case, kind, {"message": _xml(shown.message), "type": result.status})
            outcome.text = _xml(details(shown))
    if report.internal_error:
        case = ET.SubElement(suite, "testcase", {"name": "grader", "classname": "drgrpo-grader"})
        ET.SubElement(case, "error", {"message": GRADER_BROKE, "type": "internal"})
    if report.submission_output:
        ET.SubElement(suite, "system-out").text = _xml(_cut(report.submission_output))
    root = ET.Element("testsuites", {"name": "drgrpo-grader"})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def autolab_scores(report: Report) -> dict[str, float]:
    """Autolab's scores: one per check id (define the assessment's problems with those names)."""
    return {result.id: result.score for result in report.checks}


def render_gradescope(report: Report) -> str:
    return json.dumps(gradescope(report), indent=2, allow_nan=False) + "\n"


def render_prairielearn(report: Report) -> str:
    return json.dumps(prairielearn(report), indent=2, allow_nan=False) + "\n"


def render_autolab(report: Report, exercise: Exercise | None = None) -> str:
    """The student's text report, then the scores as the last line, which Autolab reads."""
    return (
        render_text(report, exercise) + json.dumps({"scores": autolab_scores(report)}, allow_nan=False) + "\n"
    )
