"""Comparisons that fail with structured, student-readable ``CheckFailed`` errors.

Tolerances depend on the dtype the student computed in, and are relative to the size of the
quantity (``scale``), so that a correct implementation written another way (other operation
order, ``expm1``, ``torch.where``, float64 accumulation) always passes, while the smallest
classic mistake (a denominator off by one token in nine) is far outside them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.compare import display, values
from grader.errors import CheckFailed

# Relative tolerance per dtype: about 1000 units in the last place for float32 and float64.
RTOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2, "bfloat16": 2e-2}
# The smallest size a quantity is given: a quantity of zeros still has a (tiny) tolerance.
SCALE_FLOOR = 1e-6


def rtol_for(dtype: str) -> float:
    return RTOL.get(dtype, RTOL["float32"])


def mismatched(
    actual: np.ndarray, expected: np.ndarray, rtol: float, scale: float | None = None
) -> np.ndarray:
    """Where ``actual`` is not ``expected``: the one tolerance rule, used by the checks
    (``close``) and by the diagnosis' replays (``grader.feedback.replay``). Same shapes, float64.

    A finite expected value allows ``rtol * (|expected| + scale)``, with ``scale`` the size of
    the quantity (by default the largest finite ``|expected|``, at least ``SCALE_FLOOR``): it
    absorbs rounding in sums whose terms cancel, and nothing more. A nan or an infinity must be
    the same nan or infinity.
    """
    finite = np.isfinite(expected)
    if scale is None:
        scale = float(np.max(np.abs(expected[finite]), initial=0.0))
    allowed = rtol * (np.abs(expected) + max(scale, SCALE_FLOOR))
    with np.errstate(invalid="ignore"):
        within = finite & (np.abs(actual - expected) <= allowed)
    return ~(within | (actual == expected) | (np.isnan(actual) & np.isnan(expected)))


def tensor(value: values.Value | None, what: str, hint: str | None = None) -> values.TensorValue:
    """The value as a tensor with readable data, or a failure saying what it was instead."""
    if not isinstance(value, values.TensorValue) or value.data is None:
        raise CheckFailed(
            f"{what} should be a torch.Tensor, but it is {values.summary(value)}",
            expected="a torch.Tensor",
            actual=display.value(value),
            hint=hint,
        )
    return value


def numbers(value: values.Value | None, what: str) -> np.ndarray:
    """The numbers in a tensor or a Python number (leniently: the type is another check's job)."""
    data = values.as_array(value)
    if data is None:
        raise CheckFailed(
            f"{what} should be a tensor of numbers, but it is {values.summary(value)}",
            expected="a torch.Tensor",
            actual=display.value(value),
        )
    return data


def close(
    actual: np.ndarray,
    expected: np.ndarray,
    *,
    what: str,
    dtype: str,
    scale: float | None = None,
    hint: str | None = None,
) -> None:
    """``actual`` equals ``expected`` within the dtype's tolerance, elementwise (``mismatched``:
    ``scale`` is the size of the quantity, by default the largest finite ``|expected|``)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    _same_shape(actual, expected, what, hint)
    rtol = rtol_for(dtype)
    bad = mismatched(actual, expected, rtol, scale)
    if not bad.any():
        return
    with np.errstate(invalid="ignore"):
        error = np.abs(actual - expected)
    raise _mismatch(what, actual, expected, bad, error, f"relative {rtol:g}", hint)


def exact(actual: np.ndarray, expected: np.ndarray, *, what: str, hint: str | None = None) -> None:
    """Exact equality (``nan`` equals ``nan``, ``-0.0`` equals ``0.0``), for facts that involve no
    rounding: untouched inputs, gradients that must be exactly 0."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    _same_shape(actual, expected, what, hint)
    same = actual == expected
    if actual.dtype.kind == "f" and expected.dtype.kind == "f":
        same |= np.isnan(actual) & np.isnan(expected)
    bad = ~same
    if not bad.any():
        return
    with np.errstate(invalid="ignore"):
        error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    raise _mismatch(what, actual, expected, bad, error, "exact", hint)


def _same_shape(actual: np.ndarray, expected: np.ndarray, what: str, hint: str | None) -> None:
    if actual.shape != expected.shape:
        raise CheckFailed(
            f"{what} has shape {actual.shape}, expected {expected.shape}",
            expected=display.array(expected),
            actual=display.array(actual),
            hint=hint,
        )


def _mismatch(
    what: str,
    actual: np.ndarray,
    expected: np.ndarray,
    bad: np.ndarray,
    error: np.ndarray,
    tolerance: str,
    hint: str | None,
) -> CheckFailed:
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    finite = np.where(np.isfinite(error), error, np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        relative = finite / np.abs(expected.astype(np.float64))
    where = f" at index {list(first)}" if first else ""
    count = int(bad.sum())
    message = (
        f"{what} is wrong{where}: expected {display.number(expected[first])}, "
        f"got {display.number(actual[first])}"
    )
    if count > 1:
        message += f" ({count} of {bad.size} values differ)"
    return CheckFailed(
        message,
        expected=display.array(expected),
        actual=display.array(actual),
        difference={
            "first_mismatch_index": list(first),
            "mismatches": count,
            "max_abs_error": display.number(np.max(finite[bad])),
            "max_rel_error": display.number(np.max(np.where(bad, relative, 0.0))),
            "tolerance": tolerance,
        },
        hint=hint,
    )


def fail(message: str, *, expected: Any = None, actual: Any = None, hint: str | None = None) -> None:
    """Fail the check with a sentence and, where useful, what was expected and what came."""
    raise CheckFailed(message, expected=expected, actual=actual, hint=hint)
