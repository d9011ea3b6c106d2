"""The options and exit codes shared by the commands that run checks, each defined once.

``python -m grader``, ``batch``, ``audit``, ``bundle``, ``release`` and ``grader.autograders``
add the options they take from here, so that ``--seed 3`` or ``--rubric FILE`` means the same in
each and a new command cannot drift from them. Only the standard library is imported: the
command line parses its arguments before it starts the zygote, which must not wait for the
grader's own imports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

# Every command's exit code: 0 all went well (every check passed); 1 the graded work is wrong
# (a check failed, the audit found a problem); 2 a usage error or a failure of the grader itself.
EXIT_PASSED, EXIT_FAILED, EXIT_GRADER = 0, 1, 2


def positive(text: str) -> int:
    """An integer of at least 1, or the parser's error naming the value."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_seed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="seed for the inputs (default: 0)")


def add_max_examples(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-examples", type=positive, default=100, help="Hypothesis examples per check (default: 100)"
    )


def add_rubric(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rubric", type=Path, help="TOML file of points and visibility per check (default: the packaged one)"
    )


def add_exercise(parser: argparse.ArgumentParser) -> None:
    """``--exercise MODULE:NAME``: the exercise to grade (``grader.exercise``)."""
    parser.add_argument(
        "--exercise",
        metavar="MODULE:NAME",
        help="the exercise, an Exercise object (default: $GRADER_EXERCISE, else the packaged one)",
    )


def add_properties(parser: argparse.ArgumentParser) -> None:
    """``--properties PATH`` (repeatable): an instructor's checks (``grader.declare.extensions``)."""
    parser.add_argument(
        "--properties",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="add the checks defined in PATH, a .py file or a folder of them (repeatable)",
    )


def add_output(parser: argparse.ArgumentParser, written: str, *, required: bool = False) -> None:
    """``-o/--output``: where the command writes what it made, which ``written`` says."""
    parser.add_argument("-o", "--output", type=Path, required=required, help=written)


def add_grading(parser: argparse.ArgumentParser) -> None:
    """The options of every command that grades: ``--exercise``, ``--seed``, ``--max-examples``,
    ``--rubric`` and ``--properties``."""
    add_exercise(parser)
    add_seed(parser)
    add_max_examples(parser)
    add_rubric(parser)
    add_properties(parser)
