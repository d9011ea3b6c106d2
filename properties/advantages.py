"""Properties of ``drgrpo_advantages``: group-centered rewards, no std scaling."""

from __future__ import annotations

import numpy as np
import torch

from properties.authoring import (
    ADVANTAGES,
    REWARDS,
    RewardBatch,
    SubmissionRaised,
    advantages_of,
    call_advantages,
    check,
    display,
    dtype_name,
    expect,
    reference_advantages,
    values,
)

NO_STD = "Dr. GRPO only subtracts the group mean: do not divide by the group's standard deviation."


@check(target=ADVANTAGES, points=8, inputs=REWARDS)
def advantages_match_reference(student, batch: RewardBatch) -> None:
    """Each advantage is the reward minus the mean reward of its group, with no std scaling."""
    expect.close(
        advantages_of(student, batch),
        reference_advantages(batch),
        what="the advantages",
        dtype=dtype_name(batch.rewards),
        scale=float(batch.rewards.abs().max()),
        hint=NO_STD,
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_scale_linear(student, batch: RewardBatch, c: float) -> None:
    """Multiplying every reward by c multiplies every advantage by c: reward scale stays a knob."""
    base = advantages_of(student, batch)
    scaled = advantages_of(student, RewardBatch(batch.rewards * c, batch.group_size))
    expect.close(
        scaled,
        c * base,
        what=f"the advantages of the rewards times {c:g}",
        dtype=dtype_name(batch.rewards),
        scale=abs(c) * float(batch.rewards.abs().max()),
        hint="std scaling cancels any reward scale; " + NO_STD,
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_shift_invariant(student, batch: RewardBatch, shift: float) -> None:
    """Adding the same number to every reward leaves the advantages unchanged."""
    base = advantages_of(student, batch)
    shifted = advantages_of(student, RewardBatch(batch.rewards + shift, batch.group_size))
    expect.close(
        shifted,
        base,
        what=f"the advantages of the rewards plus {shift:g}",
        dtype=dtype_name(batch.rewards),
        scale=float((batch.rewards.abs() + abs(shift)).max()),
        hint="subtract each group's mean reward",
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_groups_sum_to_zero(student, batch: RewardBatch) -> None:
    """Within every group, the advantages sum to zero."""
    adv = advantages_of(student, batch)
    if adv.size != batch.rewards.numel():
        expect.fail(f"expected {batch.rewards.numel()} advantages, got {adv.size}")
    sums = adv.reshape(batch.groups, batch.group_size).sum(axis=1)
    expect.close(
        sums,
        np.zeros(batch.groups),
        what="the sum of each group's advantages",
        dtype=dtype_name(batch.rewards),
        scale=batch.group_size * float(batch.rewards.abs().max()),
        hint="center each group on its own mean (groups are contiguous: rewards[k*G:(k+1)*G])",
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_groups_independent(student, batch: RewardBatch, seed: int) -> None:
    """Changing the rewards of other groups does not change a group's advantages."""
    if batch.groups < 2:
        batch = RewardBatch(torch.cat([batch.rewards, batch.rewards.flip(0)]), batch.group_size)
    g = batch.group_size
    noise = torch.from_numpy(np.random.default_rng(seed).integers(1, 5, size=batch.rewards.numel()))
    other = batch.rewards + noise.to(batch.rewards.dtype)
    other[:g] = batch.rewards[:g]
    first = advantages_of(student, batch)
    changed = advantages_of(student, RewardBatch(other, g))
    expect.close(
        changed[:g],
        first[:g],
        what="the first group's advantages after the other groups' rewards changed",
        dtype=dtype_name(batch.rewards),
        scale=float(other.abs().max()),
        hint="use only each group's own rewards (no batch-wide mean or std)",
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_shape_dtype_device(student, batch: RewardBatch) -> None:
    """The advantages are a tensor of shape [B*G], in the rewards' order, dtype and device."""
    out = call_advantages(student, batch.rewards, batch.group_size).value
    adv = expect.tensor(out, "the advantages")
    n = batch.rewards.numel()
    wanted = f"a tensor of shape ({n},) (B*G, no group axis), dtype {dtype_name(batch.rewards)}"
    if adv.shape != (n,):
        expect.fail(
            f"the advantages have shape {adv.shape}, expected ({n},)",
            expected=wanted,
            actual=display.value(out),
        )
    if adv.dtype != dtype_name(batch.rewards):
        expect.fail(
            f"the advantages have dtype {adv.dtype}, but the rewards are {dtype_name(batch.rewards)}",
            expected=wanted,
            actual=display.value(out),
            hint="do not cast: compute in the rewards' dtype",
        )
    if adv.device != str(batch.rewards.device):
        expect.fail(f"the advantages are on {adv.device}, the rewards on {batch.rewards.device}")
    # The rewards' order, judged without judging the values (other checks' business): reversing
    # each group's rewards reverses its advantages, position for position.
    reversed_groups = batch.rewards.reshape(-1, batch.group_size).flip(1).reshape(-1)
    turned = advantages_of(student, RewardBatch(reversed_groups, batch.group_size))
    expect.close(
        turned.reshape(-1, batch.group_size)[:, ::-1].reshape(-1),
        adv.data,
        what="the advantages of the rewards with each group reversed, turned back",
        dtype=adv.dtype,
        scale=float(batch.rewards.abs().max()),
        hint="advantage i belongs to reward i: keep the rewards' order (no sorting, no transposed groups)",
    )


@check(target=ADVANTAGES, points=3, inputs=REWARDS)
def advantages_input_untouched(student, batch: RewardBatch) -> None:
    """The rewards tensor is not modified in place."""
    out = call_advantages(student, batch.rewards, batch.group_size)
    after = expect.tensor(out.args_after[0], "the rewards after the call")
    expect.exact(
        after.data,
        batch.rewards.numpy(),
        what="the rewards after the call",
        hint="compute new tensors (r - mean) instead of editing rewards in place (-=, sub_)",
    )


@check(target=ADVANTAGES, points=4, inputs=REWARDS)
def advantages_invalid_group_size(student, batch: RewardBatch, bad: int) -> None:
    """A group size below 2, or one that does not divide the number of rewards, raises ValueError."""
    n = batch.rewards.numel()
    if bad >= 2 and n % bad == 0:
        bad = n + 1
    try:
        out = call_advantages(student, batch.rewards, bad)
    except SubmissionRaised as raised:
        if raised.error.get("is_value_error"):
            return
        expect.fail(
            f"with group_size={bad} and {n} rewards, it raised {raised.error.get('type')} "
            "instead of ValueError",
            expected="ValueError",
            actual=raised.error.get("type"),
        )
    expect.fail(
        f"with group_size={bad} and {n} rewards, it returned {values.summary(out.value)} "
        "instead of raising ValueError",
        expected="ValueError",
        actual=display.value(out.value),
        hint="check group_size >= 2 and rewards.numel() % group_size == 0, and raise ValueError",
    )
