"""The exercise's two pictures, computed with the student's own functions beside the reference.

- Token weights: the per-token gradient weight of two responses of adjustable lengths, with
  equal advantages, under GRPO (``grpo_reference_loss``) and under Dr. GRPO (the student's
  ``drgrpo_loss`` and the reference). Every pair of lengths on a small grid is computed during
  the grade, so the HTML report can switch between them offline.
- Difficulty bias: the advantage of a correct and of an incorrect response as the fraction of
  correct responses in a group varies, standardized (GRPO's ``grpo_reference_advantages``) vs
  only centered (the student's ``drgrpo_advantages`` and the reference).

The student's functions run in their worker, as in the checks; the rest runs here. The result
is plain JSON data for ``Report.visuals``; a call that fails leaves ``None`` and a note.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from grader import edition  # noqa: F401  (before the reference: see grader.edition)
from grader.errors import SubmissionBroken, SubmissionRaised, SubmissionTimedOut
from grader.sandbox import Limits, ZygoteLink
from grader.student import Student
from reference import solution
from reference.provided import grpo_reference_advantages, grpo_reference_loss

LENGTHS = (1, 2, 3, 5, 8, 10, 15, 20, 25, 30)
MAX_LEN = 30
DEFAULT_LENGTHS = (5, 20)
GROUP_SIZE = 8
_STOPS = (SubmissionBroken, SubmissionRaised, SubmissionTimedOut)


def collect(zygote: ZygoteLink, path: str, limits: Limits, deadline: float | None = None) -> dict[str, Any]:
    """Both pictures' data for the submission at ``path`` (a worker of its own), its calls
    stopped at ``deadline`` (monotonic: the grade's) or after ``limits.plots_timeout_s``,
    whichever comes first: a submission slow only on these inputs must not hold the grade."""
    student = Student(zygote, path, limits)
    budget = time.monotonic() + limits.plots_timeout_s
    student.total_deadline = budget if deadline is None else min(deadline, budget)
    try:
        return {"token_weights": token_weights(student), "difficulty": difficulty(student)}
    finally:
        student.close()


def _batch(lengths: tuple[int, int]) -> tuple[torch.Tensor, ...]:
    """Two responses at the on-policy point, equal advantages of 1, padded to the longer one."""
    width = max(lengths)
    logp = torch.full((2, width), -1.0, dtype=torch.float64)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    return logp, logp.clone(), logp.clone(), mask, torch.ones(2, dtype=torch.float64)


def _weights(grad: torch.Tensor | np.ndarray, lengths: tuple[int, int]) -> list[list[float]]:
    """Each response's per-token weight (minus the gradient, as the advantages are 1)."""
    grad = np.asarray(grad, dtype=np.float64).reshape(2, -1)
    return [[float(-g) for g in grad[i, :n]] for i, n in enumerate(lengths)]


def _reference_weights(loss_fn: Any, lengths: tuple[int, int], *extra: int) -> list[list[float]]:
    logp, old, ref, mask, adv = _batch(lengths)
    logp.requires_grad_(True)
    loss, _ = loss_fn(logp, old, ref, mask, adv, *extra)
    (grad,) = torch.autograd.grad(loss, [logp])
    return _weights(grad.numpy(), lengths)


def token_weights(student: Student) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    problem = None
    for a in LENGTHS:
        for b in LENGTHS:
            lengths = (a, b)
            mine = None
            if problem is None:
                try:
                    mine = _student_weights(student, lengths)
                except _STOPS as stop:
                    problem = _why(stop)
            pairs[f"{a},{b}"] = {
                "grpo": _reference_weights(grpo_reference_loss, lengths),
                "reference": _reference_weights(solution.drgrpo_loss, lengths, MAX_LEN),
                "student": mine,
            }
    return {
        "lengths": list(LENGTHS),
        "default": list(DEFAULT_LENGTHS),
        "max_len": MAX_LEN,
        "pairs": pairs,
        "problem": problem,
    }


def _student_weights(student: Student, lengths: tuple[int, int]) -> list[list[float]] | None:
    logp, old, ref, mask, adv = _batch(lengths)
    out = student.call("drgrpo_loss", logp.requires_grad_(True), old, ref, mask, adv, MAX_LEN, backward=(0,))
    grad = out.grads[0] if out.grads else None
    if grad is None or getattr(grad, "data", None) is None or grad.data.size != logp.numel():
        return None
    return _weights(grad.data, lengths)


def difficulty(student: Student) -> dict[str, Any]:
    """Advantages of a correct and an incorrect response in a group of ``GROUP_SIZE`` 0/1
    rewards, for every number of correct responses from 1 to G - 1."""
    rows: dict[str, list[Any]] = {"fraction": [], "grpo": [], "reference": [], "student": []}
    problem = None
    for correct in range(1, GROUP_SIZE):
        rewards = (torch.arange(GROUP_SIZE) < correct).to(torch.float64)
        rows["fraction"].append(correct / GROUP_SIZE)
        rows["grpo"].append(_pair(grpo_reference_advantages(rewards, GROUP_SIZE).numpy()))
        rows["reference"].append(_pair(solution.drgrpo_advantages(rewards, GROUP_SIZE).numpy()))
        mine = None
        if problem is None:
            try:
                out = student.call("drgrpo_advantages", rewards, GROUP_SIZE)
                data = getattr(out.value, "data", None)
                mine = _pair(data.reshape(-1)) if data is not None and data.size == GROUP_SIZE else None
            except _STOPS as stop:
                problem = _why(stop)
        rows["student"].append(mine)
    return {"group_size": GROUP_SIZE, **rows, "problem": problem}


def _pair(advantages: np.ndarray) -> list[float]:
    """[the correct response's advantage, the incorrect one's] (correct ones come first)."""
    return [float(advantages[0]), float(advantages[-1])]


def _why(stop: BaseException) -> str:
    why = str(getattr(stop, "message", None) or stop)
    if isinstance(stop, SubmissionTimedOut):
        return f"the plots' calls ran out of their time budget ({why})"
    return why
