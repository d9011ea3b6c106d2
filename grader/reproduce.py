"""Reproduction snippets: a failed check's example as a short Python file a student can run.

The snippet rebuilds the tensors of every call the failing example made, from literal values,
imports the student's file by its path, makes each call (and its backward pass), prints what
the student's function gave, and ends with the check's own message. It shows nothing the
report does not already show: the inputs were drawn by Hypothesis, the values printed are the
student's own, and the only expected values are those the message quotes. No value computed by
the reference is embedded, so a snippet can be handed to students, and it needs no reference
to be written (the student release builds it too).

``python -m grader SUB.py --reproduce CHECK`` grades that one check, prints its snippet, and
shows what the student's functions gave on each of the example's calls. Those replies come
from the sandboxed worker as data and are shown, and compared, here in the trusted process:
no verdict is ever computed in the student's interpreter. A check whose details are withheld
(hidden by the rubric) shows no snippet and no number there either.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grader import display, values, wire
from grader.errors import UsageError
from grader.exercise import Exercise, load
from grader.options import EXIT_FAILED, EXIT_GRADER, EXIT_PASSED
from grader.render import printable
from grader.student import outcome

_HEADER = '''\
# Replays the failed check {check}: the calls it made to your functions, then its verdict.
# Run it with Python in an environment with torch. It imports your file from SUBMISSION.
import importlib.util

import torch

SUBMISSION = {path!r}
nan, inf = float("nan"), float("inf")
torch.set_printoptions(precision=8)
spec = importlib.util.spec_from_file_location("submission", SUBMISSION)
submission = importlib.util.module_from_spec(spec)
spec.loader.exec_module(submission)


def same(a, b):
    """Equal, nan included (to tell whether a call changed its argument in place)."""
    return a.shape == b.shape and bool(((a == b) | ((a != a) & (b != b))).all())


def show(label, function, args, kwargs, backward):
    """Call function(*args, **kwargs), differentiate the output at index path backward, and
    print what came back: the result or the exception, the gradients, edited arguments."""
    tensors = {{name: t for name, t in args.items() if isinstance(t, torch.Tensor)}}
    before = {{name: t.detach().clone() for name, t in tensors.items()}}
    try:
        result = function(*args.values(), **kwargs)
    except Exception as error:
        print(f"{{label}} raised {{type(error).__name__}}: {{error}}")
        return
    print(f"{{label}} returned:\\n  {{result!r}}")
    if backward is not None:
        try:
            output = result
            for index in backward:
                output = output[index]
            output.backward()
        except Exception as error:
            print(f"  its backward pass raised {{type(error).__name__}}: {{error}}")
        else:
            for name, t in tensors.items():
                if t.requires_grad:
                    print(f"  {{name}}.grad:\\n  {{t.grad!r}}")
    for name, t in tensors.items():
        if not same(t.detach(), before[name]):
            print(f"  {{name}} was changed in place: {{t!r}}")
'''


def snippet(
    check_id: str,
    submission: str,
    calls: list[tuple[bytes, dict[str, Any]]],
    message: str,
    parameters: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """The snippet replaying ``calls`` (the failing example's, in order) and quoting the check's
    ``message``; None when the example made no call (a failure no call shows). ``parameters``:
    the functions' parameter names, for readable arguments (default: the exercise's)."""
    if not calls:
        return None
    parameters = load().functions if parameters is None else parameters
    lines = [_HEADER.format(check=check_id, path=str(Path(submission).resolve()))]
    for number, (data, _reply) in enumerate(calls, 1):
        lines += ["", *_call(wire.unpack(data), f"call {number} of {len(calls)}", parameters)]
    lines += ["", "print()", f"print({('the check ' + check_id + ' said: ' + message)!r})"]
    return "\n".join(lines) + "\n"


def _call(request: dict[str, Any], label: str, parameters: Mapping[str, Sequence[str]]) -> list[str]:
    function = request["function"]
    names = parameters.get(function, ())
    args = [f"    {_name(names, index)!r}: {_argument(spec)}," for index, spec in enumerate(request["args"])]
    kwargs = ", ".join(f"{key!r}: {_argument(spec)}" for key, spec in request["kwargs"].items())
    backward = None if request.get("backward") is None else tuple(request["backward"])
    return [
        f"# {label}: {function}",
        "args = {",
        *args,
        "}",
        f"show({f'{label}: {function}'!r}, submission.{function}, args, {{{kwargs}}}, {backward!r})",
    ]


def _name(names: Sequence[str], index: int) -> str:
    """The parameter's name, from the exercise's signature (``Exercise.functions``)."""
    return names[index] if index < len(names) else f"arg{index}"


def _argument(spec: dict[str, Any]) -> str:
    if "array" not in spec:
        return repr(spec["value"])
    grad = ", requires_grad=True" if spec.get("requires_grad") else ""
    return f"torch.tensor({_literal(np.asarray(spec['array']))}, dtype=torch.{spec['dtype']}{grad})"


def _literal(data: np.ndarray) -> str:
    if data.ndim == 0:
        return _number(data[()])
    return "[" + ", ".join(_literal(row) for row in data) + "]"


def _number(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    value = float(str(x)) if isinstance(x, np.floating) else float(x)  # shortest form in its dtype
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value + 0.0)


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
                lines.append(f"  {_name(names, index)}.grad: {_shown(grad)}")
        for index, (spec, after) in enumerate(zip(sent, found.args_after or (), strict=False)):
            if _changed(after, spec.get("array")):
                lines.append(f"  {_name(names, index)} was changed in place: {_shown(after)}")
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
    exercise: Exercise | None = None,
) -> int:
    """``python -m grader SUBMISSION --reproduce CHECK_ID``: grade that one check as a grade
    does, then print its snippet and the student's replies on the failing example. Exit 0 when
    the check passed (or is graded on submission), 1 when it did not, 2 for a usage error or a
    failure of the grader."""
    from grader.api import rubric_checks, select
    from grader.runner import run_check
    from grader.sandbox import Limits, Zygote
    from grader.student import Student
    from grader.visibility import for_students

    try:
        if not Path(submission).is_file():
            raise UsageError(f"no such submission file: {submission}")
        exercise = exercise or load()
        (check,) = select(rubric_checks(rubric, exercise=exercise).checks, [check_id])
    except UsageError as error:
        print(f"python -m grader: error: {error}", file=sys.stderr)
        return EXIT_GRADER
    zygote = Zygote()
    try:
        student = Student(zygote, str(Path(submission).resolve()), Limits(), exercise)
        try:
            result = run_check(check, student, seed=seed, max_examples=max_examples)
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
