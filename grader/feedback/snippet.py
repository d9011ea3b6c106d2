"""Reproduction snippets: a failed check's example as a short Python file a student can run.

The snippet rebuilds the tensors of every call the failing example made, from literal values,
imports the student's file by its path, makes each call (and its backward pass), prints what
the student's function gave, and ends with the check's own message. It shows nothing the
report does not already show: the inputs were drawn by Hypothesis, the values printed are the
student's own, and the only expected values are those the message quotes. No value computed by
the reference is embedded, so a snippet can be handed to students, and it needs no reference
to be written (the student release builds it too).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grader.exercise import load
from grader.sandbox import wire

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
            (output if output.ndim == 0 else output.sum()).backward()  # as the grader differentiates
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
    args = [
        f"    {parameter_name(names, index)!r}: {_argument(spec)},"
        for index, spec in enumerate(request["args"])
    ]
    kwargs = ", ".join(f"{key!r}: {_argument(spec)}" for key, spec in request["kwargs"].items())
    backward = None if request.get("backward") is None else tuple(request["backward"])
    return [
        f"# {label}: {function}",
        "args = {",
        *args,
        "}",
        f"show({f'{label}: {function}'!r}, submission.{function}, args, {{{kwargs}}}, {backward!r})",
    ]


def parameter_name(names: Sequence[str], index: int) -> str:
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
