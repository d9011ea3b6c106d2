"""The checks of the GRPO token objective exercise: one against the reference, two without it.

Inputs are small and drawn element by element, so that a counterexample reads at a glance:
log-ratios inside and well outside every clip range, advantages of both signs and 0, masks
with empty and full rows (bool, float or int), float32 and float64, ``clip_eps`` passed or left
to its default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
import torch
from hypothesis import strategies as st

from grader.authoring import Inputs, Outcome, Student, check, expect
from tests.exercises.grpo_token import reference

TARGET = "grpo_token_objective"
DTYPES = (torch.float64, torch.float32)
# None: the check leaves clip_eps to the function's default, 0.2.
CLIP_EPS = (None, 0.2, 0.1, 0.3)
# Every ratio is at least 0.04 from every clip bound: rounding never decides which side it is on.
LOG_RATIOS = (0.0, 0.05, -0.05, 0.15, -0.15, 0.6, -0.6, 1.5, -1.5)
OLD_LOGP = (-0.5, -1.0, -2.25, -4.0)
ADVANTAGES = (1.0, -1.0, 0.5, -2.0, 0.0)
MASK_KINDS = (torch.bool, torch.float32, torch.int64)
# What padded positions hold in the padding check.
GARBAGE = (float("nan"), float("inf"), float("-inf"), 1e30)

SIGN = "return the objective to maximize, min(ratio * A, clipped ratio * A), not the loss (minus it)"
ISOLATE = (
    "select the padding away before computing anything from it (torch.where): multiplying by "
    "the mask is not enough, because inf * 0 and nan * 0 are nan, in the value and in the gradient"
)


@dataclass(frozen=True, eq=False)  # hashed by identity: see expected()
class TokenBatch:
    """The arguments of ``grpo_token_objective``; ``clip_eps`` None leaves it to the default."""

    logp: torch.Tensor
    old_logp: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    clip_eps: float | None

    @property
    def valid(self) -> np.ndarray:
        return self.mask.bool().numpy()

    def padded_with(self, value: float) -> TokenBatch:
        """The same batch with ``value`` at every padded position of ``logp`` and ``-value`` at
        those of ``old_logp`` (so that a huge value overflows their difference too)."""
        invalid = ~self.mask.bool()
        return replace(
            self,
            logp=self.logp.masked_fill(invalid, value),
            old_logp=self.old_logp.masked_fill(invalid, -value),
        )


@st.composite
def token_batches(draw: st.DrawFn) -> TokenBatch:
    n, length = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    dtype = draw(st.sampled_from(DTYPES))

    def pick(values: tuple, count: int) -> list:
        return draw(st.lists(st.sampled_from(values), min_size=count, max_size=count))

    old = torch.tensor(pick(OLD_LOGP, n * length), dtype=dtype).reshape(n, length)
    logp = old + torch.tensor(pick(LOG_RATIOS, n * length), dtype=dtype).reshape(n, length)
    mask = torch.tensor(pick((True, False), n * length)).reshape(n, length)
    return TokenBatch(
        logp=logp,
        old_logp=old,
        advantages=torch.tensor(pick(ADVANTAGES, n), dtype=dtype),
        mask=mask.to(draw(st.sampled_from(MASK_KINDS))),
        clip_eps=draw(st.sampled_from(CLIP_EPS)),
    )


TOKENS = Inputs("grpo_tokens", batch=token_batches(), garbage=st.sampled_from(GARBAGE))


def _dtype(batch: TokenBatch) -> str:
    return str(batch.logp.dtype).removeprefix("torch.")


@dataclass(frozen=True)
class Result:
    """The student's objective and its summed gradient with respect to ``logp``, as numbers."""

    objective: np.ndarray
    grad: np.ndarray


def call(student: Student, batch: TokenBatch) -> Result:
    """``grpo_token_objective`` on the batch, its output summed and differentiated w.r.t. ``logp``."""
    keywords = {} if batch.clip_eps is None else {"clip_eps": batch.clip_eps}
    logp = batch.logp.clone().requires_grad_(True)
    out = student.call(TARGET, logp, batch.old_logp, batch.advantages, batch.mask, backward=(), **keywords)
    objective = expect.tensor(out.value, "the objective").data
    if objective.shape != tuple(batch.logp.shape):
        expect.fail(
            f"the objective should have logp's shape {list(batch.logp.shape)}, one value per token "
            f"(no reduction), but it has shape {list(objective.shape)}"
        )
    return Result(objective, _grad(out, batch.logp.shape))


def _grad(out: Outcome, shape: torch.Size) -> np.ndarray:
    if out.grad_problem is not None:
        expect.fail(
            f"the objective cannot be differentiated with respect to logp: {out.grad_problem}",
            hint="compute the objective from logp with torch operations, without .detach() or .item()",
        )
    grad = out.grads[0] if out.grads else None
    if grad is None:  # no path from logp: its gradient is 0, judged like any other
        return np.zeros(tuple(shape))
    return expect.tensor(grad, "the gradient of logp").data.reshape(tuple(shape))


@functools.lru_cache(maxsize=4)
def expected(batch: TokenBatch) -> Result:
    """The reference on ``batch``, in float64, in this trusted process."""
    logp = batch.logp.detach().to(torch.float64).requires_grad_(True)
    old, advantages = (t.to(torch.float64) for t in (batch.old_logp, batch.advantages))
    clip_eps = 0.2 if batch.clip_eps is None else batch.clip_eps
    objective = reference.grpo_token_objective(logp, old, advantages, batch.mask, clip_eps)
    (grad,) = torch.autograd.grad(objective.sum(), [logp])
    return Result(objective.detach().numpy(), grad.numpy())


@check(target=TARGET, points=4, inputs=TOKENS)
def token_objective_matches_reference(student, batch: TokenBatch) -> None:
    """The objective and its gradient with respect to logp equal the reference's, for any clip_eps."""
    result, wanted = call(student, batch), expected(batch)
    dtype = _dtype(batch)
    expect.close(result.objective, wanted.objective, what="the objective", dtype=dtype)
    expect.close(
        result.grad, wanted.grad, what="the gradient of the objective with respect to logp", dtype=dtype
    )


@check(target=TARGET, points=3, inputs=TOKENS)
def token_objective_on_policy(student, batch: TokenBatch) -> None:
    """When logp equals old_logp, every real token of response i has objective A_i and gradient
    A_i, and every padded token has objective 0 and gradient 0."""
    batch = replace(batch, old_logp=batch.logp)
    result = call(student, batch)
    advantages = np.broadcast_to(batch.advantages.to(torch.float64).numpy()[:, None], result.grad.shape)
    wanted = np.where(batch.valid, advantages, 0.0)
    flipped = wanted.any() and np.allclose(result.grad, -wanted, rtol=1e-3, atol=0.0)
    hint = SIGN if flipped else None
    dtype = _dtype(batch)
    expect.close(result.objective, wanted, what="the on-policy objective", dtype=dtype, hint=hint)
    expect.close(
        result.grad, wanted, what="the on-policy gradient with respect to logp", dtype=dtype, hint=hint
    )


@check(target=TARGET, points=3, inputs=TOKENS)
def token_objective_ignores_padding(student, batch: TokenBatch, garbage: float) -> None:
    """Padded tokens may hold anything, inf and nan included: their objective and gradient are
    exactly 0, and the real tokens' are as with zeros in the padding."""
    clean = call(student, batch.padded_with(0.0))
    dirty = call(student, batch.padded_with(garbage))
    valid, dtype = batch.valid, _dtype(batch)
    for name, got, wanted in (
        ("objective", dirty.objective, clean.objective),
        ("gradient with respect to logp", dirty.grad, clean.grad),
    ):
        what = f"with {garbage:g} in the padding, the {name}"
        # Exactly 0 at padded tokens (real ones set to 0 here), then the real tokens alone.
        expect.exact(np.where(valid, 0.0, got), np.zeros(valid.shape), what=what, hint=ISOLATE)
        expect.close(
            np.where(valid, got, 0.0), np.where(valid, wanted, 0.0), what=what, dtype=dtype, hint=ISOLATE
        )
