"""``loss_hint``: the hint a failing gradient's input supports, or none."""

from __future__ import annotations

import numpy as np
import torch

from properties.loss import DENOMINATOR, DETACHED, EMPTY_ROW, ISOLATE, SIGN, UNDERFLOW, loss_hint
from properties.strategies import LossBatch

EXPECTED = np.array([[-0.25, -0.25, 0.0], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]])


def batch(padding: float = 0.0, old: float = -1.0) -> LossBatch:
    valid = torch.tensor([[True, True, False], [True, True, True], [False, False, False]])
    scores = torch.where(valid, torch.full((3, 3), -1.0, dtype=torch.float64), padding)
    old_logp = torch.where(valid, torch.full((3, 3), old, dtype=torch.float64), padding)
    return LossBatch(scores, old_logp, scores, valid, torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64), 4)


def test_a_nan_in_an_empty_row_only_points_at_the_empty_row():
    grad = EXPECTED.copy()
    grad[2] = np.nan
    assert loss_hint(batch(padding=np.nan), grad, EXPECTED) == EMPTY_ROW


def test_a_nan_beside_garbage_padding_points_at_isolation():
    grad = EXPECTED.copy()
    grad[0, 2] = np.nan
    assert loss_hint(batch(padding=np.inf), grad, EXPECTED) == ISOLATE


def test_a_nan_beside_underflowing_old_scores_points_at_the_ratio():
    grad = EXPECTED.copy()
    grad[1, 1] = np.nan
    assert loss_hint(batch(old=-800.0), grad, EXPECTED) == UNDERFLOW
    assert loss_hint(batch(), grad, EXPECTED) is None  # nothing in the input explains it


def test_factors_and_signs():
    assert loss_hint(batch(), -EXPECTED, EXPECTED) == SIGN
    assert loss_hint(batch(), 3 * EXPECTED, EXPECTED) == DENOMINATOR
    assert loss_hint(batch(), EXPECTED * np.array([[2.0], [0.5], [1.0]]), EXPECTED) == DENOMINATOR
    assert loss_hint(batch(), EXPECTED, EXPECTED) is None
    shuffled = EXPECTED * np.array([[1.0, 2.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, 1.0]])
    assert loss_hint(batch(), shuffled, EXPECTED) is None


def test_a_right_value_with_a_wrong_gradient_points_at_a_detached_part():
    halved = EXPECTED / 2
    assert loss_hint(batch(), halved, EXPECTED, np.array(0.7), np.array(0.7)) == DETACHED
    assert loss_hint(batch(), halved, EXPECTED, np.array(0.35), np.array(0.7)) == DENOMINATOR
