"""One tolerance rule: a check (``expect.close``) and the diagnosis' replays
(``replay.numbers_close``) accept exactly the same numbers, those of ``expect.mismatched``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.compare import expect
from grader.errors import CheckFailed
from grader.feedback import replay

SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0])
NUMBERS = st.floats(-1e3, 1e3, allow_nan=False) | SPECIAL


def _check_accepts(actual: np.ndarray, expected: np.ndarray, dtype: str) -> bool:
    try:
        expect.close(actual, expected, what="x", dtype=dtype)
    except CheckFailed:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    dtype=st.sampled_from(sorted(expect.RTOL)),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
)
def test_a_check_and_a_replay_accept_the_same_numbers(data: st.DataObject, dtype: str, shape) -> None:
    expected = data.draw(hnp.arrays(np.float64, shape, elements=NUMBERS))
    rtol = expect.rtol_for(dtype)
    # Off by a few tolerances either way, or something else entirely, per element.
    factors = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 0.5, 0.99, 1.5, 3.0])))
    signs = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-1.0, 1.0])))
    with np.errstate(invalid="ignore"):
        nudged = expected + signs * factors * rtol * (np.abs(expected) + 1.0)
    other = data.draw(hnp.arrays(np.float64, shape, elements=NUMBERS))
    actual = np.where(data.draw(hnp.arrays(np.bool_, shape)), other, nudged)
    accepted = _check_accepts(actual, expected, dtype)
    assert accepted == replay.numbers_close(actual, expected, rtol)
    assert accepted == (not expect.mismatched(actual, expected, rtol).any())


@pytest.mark.parametrize("dtype", sorted(expect.RTOL))
def test_the_rule_draws_its_line_at_the_dtypes_tolerance(dtype: str) -> None:
    rtol = expect.rtol_for(dtype)
    expected = np.array([0.5, -2.0, 1e-3])
    size = 2.0  # the largest |expected|: the quantity's scale
    inside = expected + 0.9 * rtol * (np.abs(expected) + size)
    outside = expected + 1.1 * rtol * (np.abs(expected) + size)
    for rule_accepts in (
        lambda a: _check_accepts(a, expected, dtype),
        lambda a: replay.numbers_close(a, expected, rtol),
    ):
        assert rule_accepts(inside)
        assert not rule_accepts(outside)


def test_nan_and_infinity_must_match_exactly() -> None:
    expected = np.array([np.nan, np.inf, 1.0])
    assert replay.numbers_close(expected.copy(), expected, 1e-4)
    assert _check_accepts(expected.copy(), expected, "float32")
    for actual in ([0.0, np.inf, 1.0], [np.nan, -np.inf, 1.0], [np.nan, 1e30, 1.0], [np.nan, np.inf, 1.5]):
        assert not replay.numbers_close(np.array(actual), expected, 1e-4)
        assert not _check_accepts(np.array(actual), expected, "float32")
