"""Replaying a student's call on trusted code, and comparing what two calls gave back.

The reference solution and the catalogued mistakes are the grader's own code: they run here,
in the trusted process, through the very code path the worker uses (``grader.sandbox.worker.Worker``),
so that their replies have the same form as the student's and compare part by part. Student
code never runs here: its replies arrive as plain data from the worker.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from grader.compare import values
from grader.compare.expect import mismatched, rtol_for
from grader.engine.student import outcome
from grader.sandbox import wire
from grader.sandbox.worker import Worker


def replay(module: ModuleType, data: bytes) -> dict[str, Any]:
    """The reply that ``module``'s function gives to the packed call ``data``, made here."""
    worker = Worker(str(module.__file__))
    worker.module = module
    return worker.call(wire.unpack(data))


def call_dtype(data: bytes) -> str:
    """The floating dtype of the call's first floating tensor argument: what tolerances go by."""
    for spec in wire.unpack(data)["args"]:
        if "array" in spec and spec["dtype"].startswith(("float", "bfloat")):
            return str(spec["dtype"])
    return "float64"


def parts(reply: dict[str, Any]) -> dict[str, Any]:
    """What a call showed, by name: what it raised, or what it returned, the gradient of each
    argument that required grad (``None`` when it got none), and each argument afterwards."""
    if not reply.get("ok"):
        return {"raises": str((reply.get("error") or {}).get("type"))}
    if reply.get("grad_error"):
        return {"backward raises": str(reply["grad_error"].get("type"))}
    found = outcome(reply)
    shown: dict[str, Any] = {"returns": found.value}
    if found.grad_problem is not None:
        shown["backward"] = "not possible"
    for index, grad in enumerate(found.grads or ()):
        shown[f"grad {index}"] = grad
    for index, after in enumerate(found.args_after or ()):
        shown[f"after {index}"] = after
    return shown


def differing(actual: dict[str, Any], expected: dict[str, Any], dtype: str) -> list[str]:
    """The names of the parts in which two replies to the same call differ, beyond the
    tolerance of ``dtype`` (empty when they agree). A malformed reply differs in everything."""
    try:
        mine, theirs = parts(actual), parts(expected)
    except (KeyError, TypeError, AttributeError, wire.WireError):
        return ["reply"]
    rtol = rtol_for(dtype)
    names = list(theirs) + [name for name in mine if name not in theirs]
    return [name for name in names if not _same(mine.get(name), theirs.get(name), rtol, name)]


def agree(actual: dict[str, Any], expected: dict[str, Any], dtype: str) -> bool:
    return not differing(actual, expected, dtype)


def _same(a: Any, b: Any, rtol: float, name: str) -> bool:
    if name.startswith("grad "):  # no gradient at all and a zero gradient say the same thing
        a, b = _zero_if_none(a, b), _zero_if_none(b, a)
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, values.TensorValue):
        head = (a.type, a.dtype, a.shape, a.device, a.requires_grad, a.has_grad_fn)
        if head != (b.type, b.dtype, b.shape, b.device, b.requires_grad, b.has_grad_fn):
            return False
        if a.data is None or b.data is None:
            return a.data is None and b.data is None
        if a.data.size != b.data.size:
            return False
        # An array may cross the wire with another layout of the same numbers (() as (1,)).
        mine, theirs = a.data.reshape(b.shape), b.data.reshape(b.shape)
        return numbers_close(mine, theirs, rtol_for(b.dtype) if b.is_floating else rtol)
    if isinstance(a, values.ScalarValue):
        if a.type != b.type:
            return False
        if isinstance(b.value, float) and isinstance(a.value, float):
            return numbers_close(np.asarray(a.value), np.asarray(b.value), rtol)
        return a.value == b.value
    if isinstance(a, values.SequenceValue):
        return (
            a.kind == b.kind
            and a.length == b.length
            and len(a.items) == len(b.items)
            and all(_same(x, y, rtol, name) for x, y in zip(a.items, b.items, strict=True))
        )
    if isinstance(a, values.DictValue):  # the keys' order does not matter
        mine, theirs = _entries(a), _entries(b)
        return (
            (a.length, len(a.values)) == (b.length, len(b.values))
            and mine.keys() == theirs.keys()
            and all(_same(mine[key], theirs[key], rtol, name) for key in theirs)
        )
    return a.type == b.type  # ObjectValue: the type is all that can be compared


def _entries(value: values.DictValue) -> dict[tuple[str, str], values.Value]:
    keys = zip(value.keys, value.key_types, strict=False)  # a hostile reply may not match up
    return dict(zip(keys, value.values, strict=False))


def _zero_if_none(value: Any, other: Any) -> Any:
    if value is None and isinstance(other, values.TensorValue) and other.data is not None:
        return values.TensorValue(
            other.type, other.dtype, other.shape, other.device, False, False, np.zeros_like(other.data)
        )
    return value


def numbers_close(actual: np.ndarray, expected: np.ndarray, rtol: float) -> bool:
    """Same shape, and within the tolerance a check allows (``grader.compare.expect.mismatched``)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    return actual.shape == expected.shape and not mismatched(actual, expected, rtol).any()
