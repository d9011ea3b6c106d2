"""``python -m grader``: parse arguments, call ``grade()``, render, exit with a meaningful code.

Exit codes: 0 every check passed, 1 some check did not, 2 a usage error or a failure of the
grader itself (a valid report is still written).

``python -m grader COMMAND ...`` runs one of ``COMMANDS``, or one of the exercise's own
(``Exercise.commands``), instead: each is a module with a ``main(argv) -> int``, imported only
when asked for. A submission file that happens to be named like a command is graded when it is
given as a path (``./batch``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

# Standard library only, all three: the zygote is not kept waiting.
from grader.errors import UsageError
from grader.options import EXIT_FAILED, EXIT_GRADER, EXIT_PASSED, add_grading, add_output
from grader.report.formats import FORMATS

# name -> module with main(argv) -> int
COMMANDS: dict[str, str] = {
    "audit": "grader.audit",
    "batch": "grader.batch",
    "bundle": "grader.bundle",
    "release": "grader.release",
}


def _commands() -> dict[str, str]:
    """The grader's commands and the configured exercise's (``Exercise.commands``)."""
    from grader.exercise import load

    try:
        return COMMANDS | dict(load().commands)
    except UsageError:  # no exercise: grading says so, with the option's own message
        return dict(COMMANDS)


def _available(module: str) -> bool:
    """Whether this installation has the command: the student release ships no staff command."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def build_parser() -> argparse.ArgumentParser:
    commands = [name for name, module in _commands().items() if _available(module)]
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description="Grade a submission with property-based checks against the exercise's reference.",
        epilog=f"other commands: {', '.join(commands)} (python -m grader COMMAND --help)"
        if commands
        else None,
    )
    parser.add_argument("submission", nargs="?", help="the student's Python file")
    parser.add_argument(
        "--format",
        choices=tuple(FORMATS),
        default="json",
        help="report format (default: json)",
    )
    add_output(parser, "write the report to FILE, not stdout")
    add_grading(parser)
    parser.add_argument(
        "--only",
        type=lambda s: [x for x in s.split(",") if x],
        help="run only these check ids (comma-separated)",
    )
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    parser.add_argument(
        "--reproduce", metavar="CHECK_ID", help="grade one check and run its reproduction snippet"
    )
    return parser


def _list_checks(checks: Sequence) -> str:
    width = max(len(c.id) for c in checks)
    lines = [f"{'id':<{width}}  points  visibility  target             description"]
    for c in checks:
        lines.append(f"{c.id:<{width}}  {c.points:>6g}  {c.visibility:<10}  {c.target:<17}  {c.title}")
    lines.append(f"{len(checks)} checks, {sum(c.points for c in checks):g} points")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A command's name is a plain word; a path or an option is not one, and reading the
    # exercise's commands for it would only keep the zygote waiting.
    commands = _commands() if argv and argv[0].isidentifier() else {}
    if argv and argv[0] in commands:
        if not _available(commands[argv[0]]):
            print(
                f"python -m grader: error: {argv[0]} is for course staff: not in this release",
                file=sys.stderr,
            )
            return EXIT_GRADER
        return importlib.import_module(commands[argv[0]]).main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        from grader.api import rubric_checks
        from grader.declare.extensions import all_checks
        from grader.exercise import load

        try:
            exercise = load(args.exercise)
            checks = all_checks(args.properties, exercise)
            sys.stdout.write(_list_checks(rubric_checks(args.rubric, checks, exercise).checks))
        except UsageError as error:
            print(f"python -m grader: error: {error}", file=sys.stderr)
            return EXIT_GRADER
        return EXIT_PASSED
    if args.submission is None:
        parser.error("the submission file is required (or use --list)")
    if args.reproduce:
        from grader.reproduce import reproduce_check

        return reproduce_check(
            args.submission,
            args.reproduce,
            seed=args.seed,
            max_examples=args.max_examples,
            rubric=args.rubric,
            exercise=args.exercise,
        )

    # Start the worker's parent first: it imports torch on the other core while we do.
    from grader.sandbox.zygote import Zygote

    zygote = Zygote()
    try:
        from grader.api import grade, unusable
        from grader.declare.extensions import all_checks
        from grader.exercise import load
        from grader.report.formats import render
        from grader.report.model import USAGE_ERROR
        from grader.report.render import emit, sandbox_warning, summary_line

        exercise = None
        try:
            exercise = load(args.exercise)
            checks = all_checks(args.properties, exercise)
            report = grade(
                args.submission,
                seed=args.seed,
                max_examples=args.max_examples,
                only=args.only,
                zygote=zygote,
                checks=checks,
                visuals=args.format == "html" and not exercise.student_release(),  # they plot the reference
                rubric=args.rubric,
                exercise=exercise,
            )
        except UsageError as error:
            print(f"python -m grader: error: {error}", file=sys.stderr)
            report = unusable(
                args.submission, f"{USAGE_ERROR}{error}", seed=args.seed, max_examples=args.max_examples
            )
    finally:
        zygote.close()
    emit(render(args.format, report, exercise), args.output)
    print(summary_line(report), file=sys.stderr)
    if warning := sandbox_warning(report, exercise):
        print(warning, file=sys.stderr)
    grader_broke = report.internal_error or any(c.error_source == "grader" for c in report.checks)
    if grader_broke:
        return EXIT_GRADER
    return EXIT_PASSED if report.all_passed else EXIT_FAILED
