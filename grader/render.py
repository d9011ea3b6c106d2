"""Renderers: pure functions from a ``Report`` to text, one per ``--format``; ``emit`` writes one."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.notes import LOCKED
from grader.report import CheckResult, Report
from grader.visibility import for_students

_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}


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
    if report.internal_error:
        return f"drgrpo-grader: internal error while grading {report.submission}"
    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
    return (
        f"drgrpo-grader: {report.submission}: {_points(report.score)}/"
        f"{_points(report.max_score)} points ({counts})"
    )


def _short(data: Any, width: int = 100) -> str:
    text = json.dumps(data, allow_nan=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _inputs(inputs: dict[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in inputs.items():
        if isinstance(value, dict) and "values" in value:
            label = f"{name} ({value['dtype']}, shape {tuple(value['shape'])})"
            lines.append(f"{indent}{label}: {_short(value['values'], 200)}")
        elif isinstance(value, dict):
            lines.append(f"{indent}{name}:")
            lines.extend(_inputs(value, indent + "  "))
        else:
            lines.append(f"{indent}{name}: {_short(value)}")
    return lines


def _check_text(result: CheckResult) -> list[str]:
    head = f"{_MARK[result.status]:<7} {result.id} ({_points(result.score)}/{_points(result.max_score)})"
    lines = [head]
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
    if result.diagnosis:
        lines += wrap(f"diagnosis: {result.diagnosis['name']}. {result.diagnosis['explanation']}")
        lines += wrap("what to change: " + result.diagnosis["fix"])
    if result.reproduce:
        lines.append(f"{pad}reproduce it (python -m grader SUBMISSION --reproduce {result.id} runs this):")
        lines += [(pad + "  " + line).rstrip() for line in result.reproduce.rstrip().splitlines()]
    return lines


def check_lines(result: CheckResult) -> list[str]:
    """One check as the text report shows it (the platform formats reuse it)."""
    return _check_text(result)


def render_text(report: Report) -> str:
    lines = [summary_line(report), ""]
    if report.internal_error:
        lines += ["The grader itself failed (this is not your fault):", report.internal_error]
    for result in report.checks:
        lines += _check_text(for_students(result))
    if report.submission_output.strip():
        lines += ["", "What your code printed:", textwrap.indent(report.submission_output.rstrip(), "  ")]
    lines += ["", report.notes.rstrip() if report.solved and report.notes else LOCKED]
    return "\n".join(lines) + "\n"


def render_html(report: Report) -> str:
    """One self-contained page (``grader.html_report``, which imports Plotly only when asked)."""
    from grader.html_report import render_html as page

    return page(report)


FORMATS: dict[str, Callable[[Report], str]] = {"json": render_json, "text": render_text, "html": render_html}
