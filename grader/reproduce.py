"""Reproduction snippets: a failed check as a short Python file a student can paste and run.

The snippet rebuilds the failing call's tensors from literal values, imports the student's file
by its path, makes the call (and the backward pass), and prints expected vs actual for each
thing the call gives back. The expected values are the reference's answers to the same call,
computed here in the trusted process and embedded as literals: the snippet never imports the
reference, so it can be handed to students. Which call: the first one of the failing example
whose reply differs from the reference's (a check may make several).
"""

from __future__ import annotations

import inspect
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from grader import replay, values, wire
from grader.errors import SubmissionBroken, SubmissionTimedOut
from grader.sandbox import Limits, Zygote
from reference import solution

_SNIPPET = "drgrpo_reproduce_snippet.py"  # the snippet's name beside the student's file

_HEADER = """\
# Reproduces the failed check {check}: one call to {function}, expected vs actual.
# Run it with Python in an environment with torch. It imports your file from SUBMISSION.
import importlib.util

import torch

SUBMISSION = {path!r}
nan, inf = float("nan"), float("inf")
torch.set_printoptions(precision=8)
spec = importlib.util.spec_from_file_location("submission", SUBMISSION)
submission = importlib.util.module_from_spec(spec)
spec.loader.exec_module(submission)
"""

_COMPARE = '''
RTOL = {torch.float64: 1e-10, torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}


def same(want, got):
    """As the grader compares: type, shape, dtype, requires_grad, then numbers within tolerance."""
    if want is None and isinstance(got, torch.Tensor):  # no gradient, or a zero one
        return not got.detach().any()
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or (want.shape, want.dtype) != (got.shape, got.dtype):
            return False
        if want.requires_grad != got.requires_grad:
            return False
        w, g = want.detach().double(), got.detach().double()
        rtol = RTOL.get(want.dtype, 1e-4)
        atol = rtol * max(float(w[w.isfinite()].abs().max()) if w.isfinite().any() else 0.0, 1e-6)
        return torch.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if isinstance(want, (tuple, list)):
        return type(want) is type(got) and len(want) == len(got) and all(map(same, want, got))
    if isinstance(want, dict):
        return isinstance(got, dict) and set(want) == set(got) and all(same(want[k], got[k]) for k in want)
    return want == got


for name, want in expected.items():
    got = actual.get(name)
    verdict = "same" if same(want, got) else "DIFFERENT"
    print(f"{name}: {verdict}\\n  expected: {want!r}\\n  actual:   {got!r}")
'''


def snippet(check_id: str, submission: str, calls: list[tuple[bytes, dict[str, Any]]]) -> str | None:
    """The snippet for the first of ``calls`` whose student reply differs from the reference's;
    None when none differs (a failure that no single call shows)."""
    for data, reply in calls:
        expected = replay.replay(solution, data)
        differing = replay.differing(reply, expected, replay.call_dtype(data))
        if differing:
            return _write(check_id, submission, wire.unpack(data), expected, differing)
    return None


def _write(
    check_id: str, submission: str, request: dict[str, Any], expected: dict[str, Any], differing: list[str]
) -> str:
    function = request["function"]
    names = list(inspect.signature(getattr(solution, function)).parameters)
    lines = [_HEADER.format(check=check_id, function=function, path=str(Path(submission).resolve()))]
    args = []
    for name, spec in zip(names, request["args"], strict=False):
        lines.append(f"{name} = {_argument(spec)}")
        args.append(name)
    tensors = [n for n, spec in zip(names, request["args"], strict=False) if "array" in spec]
    kwargs = [f"{key}={_argument(spec)}" for key, spec in request["kwargs"].items()]
    if any(part.startswith("after ") for part in differing):
        lines.append(f"before = {{{', '.join(f'{n!r}: {n}.detach().clone()' for n in tensors)}}}")
    lines += [
        "",
        "actual = {}",
        "try:",
        f"    result = submission.{function}({', '.join(args + kwargs)})",
        '    actual["returns"] = result',
    ]
    if request.get("backward") is not None:
        index = "".join(f"[{i}]" for i in request["backward"])
        lines += [
            f"    result{index}.backward()",
            *(f'    actual["{n}.grad"] = {n}.grad' for n in tensors if _needs_grad(request, n, names)),
        ]
    lines += [
        "except Exception as error:",
        '    actual.setdefault("raises", type(error).__name__)',
    ]
    if any(part.startswith("after ") for part in differing):
        lines.append(
            f"actual.update({{f'{{n}} after the call': t for n, t in zip(before, ({', '.join(tensors)},))}})"
        )
    lines += ["", "expected = {", *_expected(expected, request, names, differing), "}", _COMPARE]
    return "\n".join(lines)


def _needs_grad(request: dict[str, Any], name: str, names: list[str]) -> bool:
    spec = request["args"][names.index(name)]
    return bool(spec.get("requires_grad"))


def _expected(
    expected: dict[str, Any], request: dict[str, Any], names: list[str], differing: list[str]
) -> list:
    found = replay.parts(expected)
    lines = []
    if "raises" in found:
        return [f'    "raises": {found["raises"]!r},']
    lines.append(f'    "returns": {_value(found["returns"])},')
    for part, value in found.items():
        if part.startswith("grad ") and request["args"][int(part.split()[1])].get("requires_grad"):
            name = names[int(part.split()[1])]
            lines.append(f'    "{name}.grad": {_value(value) if value is not None else "None"},')
        elif part.startswith("after ") and part in differing:
            name = names[int(part.split()[1])]
            lines.append(f'    "{name} after the call": before[{name!r}],')
    return lines


def _argument(spec: dict[str, Any]) -> str:
    if "array" not in spec:
        return repr(spec["value"])
    grad = ", requires_grad=True" if spec.get("requires_grad") else ""
    return f"torch.tensor({_literal(np.asarray(spec['array']))}, dtype=torch.{spec['dtype']}{grad})"


def _value(value: values.Value) -> str:
    """A returned value as a Python expression (tensors as ``torch.tensor`` literals)."""
    if isinstance(value, values.TensorValue):
        if value.data is None:
            return "None"
        grad = ", requires_grad=True" if value.requires_grad else ""
        return f"torch.tensor({_literal(value.data)}, dtype=torch.{value.dtype}{grad})"
    if isinstance(value, values.SequenceValue):
        items = [_value(item) for item in value.items]
        return f"({', '.join(items)},)" if value.kind == "tuple" else f"[{', '.join(items)}]"
    if isinstance(value, values.DictValue):
        return (
            "{"
            + ", ".join(f"{k!r}: {_value(v)}" for k, v in zip(value.keys, value.values, strict=True))
            + "}"
        )
    if isinstance(value, values.ScalarValue):
        return _number(value.value)
    return repr(value.text)


def _literal(data: np.ndarray) -> str:
    if data.ndim == 0:
        return _number(data[()])
    return "[" + ", ".join(_literal(row) for row in data) + "]"


def _number(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)) or x is None:
        return repr(None if x is None else bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    value = float(str(x)) if isinstance(x, np.floating) else float(x)  # shortest form in its dtype
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value + 0.0)


def run_sandboxed(code: str, submission: str, limits: Limits | None = None) -> str:
    """Run a snippet for ``submission`` as a grade runs student code: in a sandboxed worker
    (``grader.sandbox``), never in the grader's process nor with its rights. The snippet is
    loaded like a submission, with a copy of the student's file beside it; returns what it
    printed, and why it stopped if it did not finish."""
    local = re.sub(
        r"^SUBMISSION = .*$", f"SUBMISSION = {os.path.basename(submission)!r}", code, count=1, flags=re.M
    )
    with tempfile.TemporaryDirectory(prefix="drgrpo-reproduce-") as folder:
        script = Path(folder) / _SNIPPET
        script.write_text(local)
        zygote = Zygote()
        worker = zygote.spawn(str(script), limits or Limits(), beside=[submission])
        try:
            reply = worker.request({"op": "load", "functions": []})
            stopped = "" if reply.get("ok") else _stopped((reply.get("error") or {}).get("traceback", ""))
        except (SubmissionBroken, SubmissionTimedOut) as stop:
            stopped = _stopped(stop.message)
        finally:
            output = worker.captured_output()
            worker.kill()
            zygote.close()
    return output + stopped


def _stopped(why: str) -> str:
    return f"\nthe snippet stopped: {why.strip()}\n" if why.strip() else ""


def reproduce_check(submission: str, check_id: str, *, seed: int = 0, max_examples: int = 100) -> int:
    """``python -m grader SUBMISSION --reproduce CHECK_ID``: grade that one check, then run its
    snippet in a fresh process and show its output. Exit 0 when the check passed, 1 when its
    failure was reproduced (or cannot be), 2 for a usage error or a failure of the grader."""
    from grader.api import UsageError, grade

    try:
        report = grade(submission, seed=seed, max_examples=max_examples, only=[check_id])
    except UsageError as error:
        print(f"python -m grader: error: {error}", file=sys.stderr)
        return 2
    if report.internal_error or not report.checks:
        print(f"the grader failed: {report.internal_error}", file=sys.stderr)
        return 2
    (result,) = report.checks
    print(f"{result.status.upper()} {check_id}: {result.message}")
    if result.status == "passed":
        print("nothing to reproduce")
        return 0
    if not result.reproduce:
        print("no single call shows this failure: nothing to reproduce (see the report's message)")
        return 1
    print("running its reproduction snippet (--format text shows the snippet itself):\n")
    sys.stdout.write(run_sandboxed(result.reproduce, submission))
    return 1
