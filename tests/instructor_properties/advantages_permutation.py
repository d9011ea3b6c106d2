"""An instructor's own check, kept outside the grader (the worked example of docs/instructors.md).

Grade with it:  python -m grader SUBMISSION.py --properties tests/instructor_properties
Audit it:       python -m grader audit --properties tests/instructor_properties
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from properties.authoring import ADVANTAGES, RewardBatch, advantages_of, check, expect, reward_batches


@check(
    target=ADVANTAGES,
    points=2,
    visibility="visible",
    inputs={"batch": reward_batches(), "seed": st.integers(0, 2**16)},
)
def advantages_permutation_equivariant(student, batch: RewardBatch, seed: int) -> None:
    """Shuffling the responses inside a group shuffles their advantages the same way.

    A response's advantage depends on its own reward and on the rewards of its group, not on
    where it sits in the group: groups are the G adjacent rewards rewards[k*G:(k+1)*G].
    """
    g = batch.group_size
    rng = np.random.default_rng(seed)
    order = np.concatenate([k * g + rng.permutation(g) for k in range(batch.groups)])
    shuffled = RewardBatch(batch.rewards[torch.from_numpy(order)], g)

    base = advantages_of(student, batch)
    if base.size != batch.rewards.numel():
        expect.fail(f"expected {batch.rewards.numel()} advantages, got {base.size}")
    # Shuffling reorders each group's sum, which then rounds differently: allow the rounding of
    # the dtype the student computed in (a wrong dtype is advantages_shape_dtype_device's business).
    expect.close(
        advantages_of(student, shuffled),
        base[order],
        what=f"the advantages of the rewards shuffled within each group (new order {order.tolist()})",
        dtype=str(base.dtype),
        scale=float(batch.rewards.abs().max()),
        hint="a group is G adjacent rewards; center each reward on the mean of its own group",
    )
