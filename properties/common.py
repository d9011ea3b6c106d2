"""Calling the student's functions and the reference on the same inputs, for the properties.

The reference runs here, in the trusted process, in float64 on exact copies of the inputs: the
student's result, in whatever dtype they computed, is compared with the true value.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import torch

from grader.compare import expect, values
from grader.engine.student import Outcome, Student
from properties.exercise import EXERCISE
from properties.strategies import LossBatch, RewardBatch
from reference.provided import STAT_KEYS, masked_logprobs, token_objective

EXERCISE.withhold_solution()  # the student release holds no solution: see grader.exercise
from reference import solution  # noqa: E402

ADVANTAGES = "drgrpo_advantages"
LOSS = "drgrpo_loss"


def dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def call_advantages(student: Student, rewards: torch.Tensor, group_size: int) -> Outcome:
    """``drgrpo_advantages``; the rewards come back too, as they are after the call."""
    return student.call(ADVANTAGES, rewards, group_size, return_args=True)


def advantages_of(student: Student, batch: RewardBatch) -> np.ndarray:
    """The student's advantages as numbers (their type and shape are other checks' business)."""
    out = call_advantages(student, batch.rewards, batch.group_size)
    return expect.numbers(out.value, "the advantages").reshape(-1)


def call_loss(student: Student, batch: LossBatch, *, frozen_requires_grad: bool = False) -> Outcome:
    """``drgrpo_loss`` on the batch, differentiated, with the arguments as they are afterwards.

    ``logp`` requires grad, and so do the inputs that must stay frozen when
    ``frozen_requires_grad``. Every check asks for everything, so that checks sharing an example
    make the very same call, which is then made once.
    """
    return student.call(LOSS, *loss_arguments(batch, frozen_requires_grad), **LOSS_CALL, **hyper(batch))


# How every check calls drgrpo_loss: differentiated, with the arguments sent back afterwards.
LOSS_CALL = MappingProxyType({"backward": (0,), "return_args": True})


def loss_arguments(batch: LossBatch, frozen_requires_grad: bool = False) -> tuple:
    """The positional arguments of ``drgrpo_loss`` for ``batch``; ``logp`` requires grad."""
    logp = batch.logp.clone().requires_grad_(True)
    frozen = [batch.old_logp, batch.ref_logp, batch.advantages]
    if frozen_requires_grad:
        frozen = [t.clone().requires_grad_(True) for t in frozen]
    old_logp, ref_logp, advantages = frozen
    return (logp, old_logp, ref_logp, batch.mask, advantages, batch.max_len)


def hyper(batch: LossBatch) -> dict[str, float]:
    """clip_eps and beta as keyword arguments, or none when the batch relies on the defaults."""
    return {"clip_eps": batch.clip_eps, "beta": batch.beta} if batch.explicit else {}


@dataclass(frozen=True)
class LossResult:
    """The student's ``(loss, stats)`` unpacked leniently, plus the gradient w.r.t. ``logp``."""

    loss: values.Value
    stats: values.Value
    grad: values.Value | None
    grad_problem: str | None


def unpack_loss(out: Outcome) -> LossResult:
    value = out.value
    if not isinstance(value, values.SequenceValue) or value.length != 2:
        expect.fail(
            f"drgrpo_loss should return a pair (loss, stats), but it returned {values.summary(value)}",
            expected="(loss, stats)",
        )
    grad = out.grads[0] if out.grads else None
    return LossResult(value.items[0], value.items[1], grad, out.grad_problem)


def loss_value(result: LossResult) -> np.ndarray:
    data = expect.numbers(result.loss, "the loss")
    if data.size != 1:
        expect.fail(f"the loss should be a single number, but it has shape {data.shape}")
    return data.reshape(())


def logp_grad(result: LossResult, width_of: torch.Tensor) -> np.ndarray:
    """The gradient of the loss w.r.t. ``logp`` (0 when the loss does not depend on it); a
    failure when the loss cannot be differentiated at all."""
    if result.grad_problem is not None:
        expect.fail(
            f"the loss cannot be differentiated with respect to logp: {result.grad_problem}",
            hint="return the loss as a tensor that is computed from logp, not a Python number",
        )
    if result.grad is None:
        # No path from logp to the loss: its gradient is 0, and judged like any other gradient
        # (right for a batch with no valid token, wrong elsewhere).
        return np.zeros(tuple(width_of.shape))
    return expect.tensor(result.grad, "the gradient of logp").data.reshape(width_of.shape)


def stat_values(result: LossResult) -> dict[str, np.ndarray]:
    stats = result.stats
    if not isinstance(stats, values.DictValue):
        expect.fail(f"stats should be a dict, but it is {values.summary(stats)}")
    found = {}
    for key in STAT_KEYS:
        item = stats.get(key)
        if item is None:
            expect.fail(f"stats has no key {key!r} (its keys are {list(stats.keys)})")
        data = expect.numbers(item, f"stats[{key!r}]")
        if data.size != 1:
            expect.fail(f"stats[{key!r}] should be a single number, but it has shape {data.shape}")
        found[key] = data.reshape(())
    return found


@dataclass(frozen=True)
class Expected:
    """The reference's answer for a batch, in float64."""

    loss: np.ndarray
    loss_scale: float
    grad: np.ndarray
    stats: dict[str, np.ndarray]


@functools.lru_cache(maxsize=4)
def reference_loss(batch: LossBatch) -> Expected:
    """The reference on ``batch``; checks sharing an example ask for it once (the cache holds
    the batches it keys on, so an identity is never reused while cached)."""
    as64 = lambda t: t.detach().to(torch.float64)  # noqa: E731
    logp = as64(batch.logp).requires_grad_(True)
    args = (logp, as64(batch.old_logp), as64(batch.ref_logp), batch.mask, as64(batch.advantages))
    loss, stats = solution.drgrpo_loss(*args, batch.max_len, clip_eps=batch.clip_eps, beta=batch.beta)
    (grad,) = torch.autograd.grad(loss, [logp])
    valid = batch.valid
    objective, _, _ = token_objective(
        *masked_logprobs(*(a.detach() for a in args[:3]), valid), args[4], batch.clip_eps, batch.beta
    )
    magnitude = torch.where(valid, objective.abs(), torch.zeros_like(objective)).sum()
    scale = float(magnitude) / (logp.shape[0] * batch.max_len)
    return Expected(
        loss=loss.detach().numpy(),
        loss_scale=scale,
        grad=grad.numpy(),
        stats={key: value.numpy() for key, value in stats.items()},
    )


def reference_advantages(batch: RewardBatch) -> np.ndarray:
    return solution.drgrpo_advantages(batch.rewards.to(torch.float64), batch.group_size).numpy()
