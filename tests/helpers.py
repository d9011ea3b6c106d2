"""What several test modules share: the project's paths, the report schemas, running the CLI.

Test modules import from here (``from helpers import ...``), never from one another, so that a
module can be read, run or marked alone; ``conftest.py`` holds only pytest fixtures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema

from grader.api import builtin_checks
from grader.sandbox.protections import can_drop_privileges

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = ROOT / "tests" / "submissions"
HOSTILE = SUBMISSIONS / "hostile"
SOLUTION = ROOT / "reference" / "solution.py"
TEMPLATE = ROOT / "student_template" / "drgrpo.py"
MISTAKES = ROOT / "reference" / "mistakes"
# The bundled examples: a correct file, and one that keeps GRPO's length bias.
CORRECT_EXAMPLE = ROOT / "examples" / "drgrpo_correct.py"
BIASED = ROOT / "examples" / "drgrpo_length_biased.py"
# The instructor's worked example of docs/instructors.md, and the id of its one check.
EXAMPLE = ROOT / "tests" / "instructor_properties"
EXAMPLE_ID = "advantages_permutation_equivariant"
# How many checks the exercise's rubric has.
CHECK_COUNT = len(builtin_checks())

# Unless student code runs as an unprivileged user (the grader is root, and Python and the
# grader are installed where that user can read them), nothing stops hostile files from
# reaching the grader's files or processes: the tests that need it skip, saying why.
IS_ROOT = can_drop_privileges()
WHY = "needs root, and Python and the grader readable by other users, to drop privileges"

SCHEMA = json.loads((ROOT / "grader" / "report.schema.json").read_text())

# A small budget for CLI runs whose point is not the checks' power.
FAST = ["--max-examples", "10"]


def fixtures(kind: str) -> list[Path]:
    """The fixture submissions of one kind (``correct``, ``broken``, ``hostile``, ``unrelated``)."""
    return sorted((SUBMISSIONS / kind).glob("*.py"))


def validate(report: dict) -> None:
    """Raise unless ``report`` (a JSON report, parsed) matches the published schema."""
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


def run(*args: object, cwd=ROOT, ci: bool | None = None) -> subprocess.CompletedProcess:
    """``python -m grader ARGS``; ``ci`` sets or removes the CI variable (None: as it is)."""
    env = dict(os.environ)
    if ci is not None:
        env.pop("CI", None)
        if ci:
            env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}

# Gradescope's "Autograder specifications", results.json: only the documented keys.
GRADESCOPE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["score", "tests"],
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["score", "max_score", "name", "status"],
                "properties": {
                    "score": {"type": "number", "minimum": 0},
                    "max_score": {"type": "number", "minimum": 0},
                    "name": {"type": "string", "minLength": 1},
                    "number": {"type": "string"},
                    "status": {"enum": ["passed", "failed"]},
                    "output": {"type": "string"},
                    "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": VISIBILITY,
                    "extra_data": {"type": "object"},
                },
            },
        },
    },
}

# PrairieLearn's "External grading", grading results: score in [0, 1] when gradable, format
# errors (a string or strings) when not; tests as <pl-external-grader-results> renders them.
PL_TEST = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "points", "max_points"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "points": {"type": "number", "minimum": 0},
        "max_points": {"type": "number", "minimum": 0},
        "message": {"type": "string"},
        "output": {"type": "string"},
    },
}
PRAIRIELEARN = {
    "type": "object",
    "additionalProperties": False,
    "required": ["gradable"],
    "properties": {
        "gradable": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "message": {"type": "string"},
        "output": {"type": "string"},
        "format_errors": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]
        },
        "tests": {"type": "array", "items": PL_TEST},
    },
    "if": {"properties": {"gradable": {"const": True}}},
    "then": {"required": ["score"]},
    "else": {"required": ["format_errors"]},
}
