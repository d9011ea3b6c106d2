"""``python -m grader SUB.py --reproduce CHECK``: grade that one check, print its reproduction
snippet (``grader.feedback.snippet``), and show what the student's functions gave on each of
the example's calls. Those replies come from the sandboxed worker as data and are shown, and
compared, here in the trusted process: no verdict is ever computed in the student's
interpreter. A check whose details are withheld (hidden by the rubric) shows no snippet and no
number there either.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grader.api import rubric_checks, select
from grader.compare import display, values
from grader.engine.runner import run_check
from grader.engine.student import Student, outcome
from grader.errors import UsageError
from grader.exercise import Exercise, load
from grader.feedback.explain import explain
from grader.feedback.snippet import parameter_name
from grader.options import EXIT_FAILED, EXIT_GRADER, EXIT_PASSED
from grader.report.render import printable
from grader.report.visibility import for_students
from grader.sandbox import wire
from grader.sandbox.protections import Limits
from grader.sandbox.zygote import Zygote


def replies_text(calls: list[tuple[bytes, dict[str, Any]]], parameters: Mapping[str, Sequence[str]]) -> str:
    """What the student's functions gave on each call, written here from the worker's replies
    (plain data): the trusted process's account of the replay, not the student interpreter's."""
    lines = []
    for number, (data, reply) in enumerate(calls, 1):
        request = wire.unpack(data)
        function, sent = request["function"], request["args"]
        names = parameters.get(function, ())
        lines.append(f"call {number} of {len(calls)}: {request['function']}")
        error = reply.get("error") or reply.get("grad_error")
        if isinstance(error, dict):
            where = "its backward pass raised" if reply.get("ok") else "raised"
            lines.append(f"  {where} {error.get('type')}: {error.get('message')}")
            continue
        try:
            found = outcome(reply)
        except (KeyError, TypeError, AttributeError, wire.WireError):
            lines.append("  a reply that could not be read")
            continue
        lines.append(f"  returned {_shown(found.value)}")
        if found.grad_problem:
            lines.append(f"  its output cannot be differentiated: {found.grad_problem}")
        # zip: a hostile worker may send more gradients or arguments than the call had.
        for index, (spec, grad) in enumerate(zip(sent, found.grads or (), strict=False)):
            if spec.get("requires_grad"):
                lines.append(f"  {parameter_name(names, index)}.grad: {_shown(grad)}")
        for index, (spec, after) in enumerate(zip(sent, found.args_after or (), strict=False)):
            if _changed(after, spec.get("array")):
                lines.append(f"  {parameter_name(names, index)} was changed in place: {_shown(after)}")
    return "\n".join(lines) + "\n"


def _shown(value: values.Value | None) -> str:
    """A returned value in one line: what it is, then its numbers."""
    if isinstance(value, values.TensorValue) and value.data is not None:
        grad = " that requires grad" if value.requires_grad else ""
        return f"{values.summary(value)}{grad} {json.dumps(display.array(value.data))}"
    if isinstance(value, values.SequenceValue):
        inner = ", ".join(_shown(item) for item in value.items)
        return f"{values.summary(value)}: ({inner})"
    if isinstance(value, values.DictValue):
        inner = ", ".join(f"{k!r}: {_shown(v)}" for k, v in zip(value.keys, value.values, strict=False))
        return f"a dict {{{inner}}}"
    return values.summary(value)


def _changed(after: values.Value | None, before: np.ndarray | None) -> bool:
    data = after.data if isinstance(after, values.TensorValue) else None
    if before is None or data is None:
        return False
    if data.size != before.size:
        return True
    as64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    return not np.array_equal(as64(data).reshape(before.shape), as64(before), equal_nan=True)


def reproduce_check(
    submission: str,
    check_id: str,
    *,
    seed: int = 0,
    max_examples: int = 100,
    rubric: Path | None = None,
    exercise: Exercise | str | None = None,
) -> int:
    """``python -m grader SUBMISSION --reproduce CHECK_ID``: grade that one check as a grade
    does, then print its snippet and the student's replies on the failing example. Exit 0 when
    the check passed (or is graded on submission), 1 when it did not, 2 for a usage error or a
    failure of the grader. ``exercise``: an ``Exercise``, or how ``--exercise`` names one."""
    try:
        if not Path(submission).is_file():
            raise UsageError(f"no such submission file: {submission}")
        if not isinstance(exercise, Exercise):
            exercise = load(exercise)
        (check,) = select(rubric_checks(rubric, exercise=exercise).checks, [check_id])
    except UsageError as error:
        print(f"python -m grader: error: {error}", file=sys.stderr)
        return EXIT_GRADER
    zygote = Zygote()
    try:
        student = Student(zygote, str(Path(submission).resolve()), Limits(), exercise)
        try:
            result = run_check(check, student, seed=seed, max_examples=max_examples, explain=explain)
            # Hypothesis ends on the shrunk failing example: these are its calls.
            calls = student.example_calls()
        finally:
            student.close()
    finally:
        zygote.close()
    shown = for_students(result)
    print(printable(f"{shown.status.upper()} {check_id}: {shown.message}"))
    if result.error_source == "grader":
        return EXIT_GRADER
    if result.status == "passed" or result.graded_on_submission:
        print("nothing to reproduce")
        return EXIT_PASSED
    if not shown.reproduce:
        why = "its details are withheld" if shown is not result else "no call of your functions shows it"
        print(f"nothing to replay: {why}")
        return EXIT_FAILED
    print("\nThis script replays it (save it as a file and run it with python):\n")
    print(shown.reproduce)
    print("What your functions gave on those calls, as the grader saw them:\n")
    sys.stdout.write(printable(replies_text(calls, exercise.functions)))
    return EXIT_FAILED
