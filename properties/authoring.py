"""Writing a Dr. GRPO check: the exercise's helpers beside the engine's (``grader.authoring``),
in one import (``grader.authoring`` gives these by name too)::

    from hypothesis import strategies as st

    from properties.authoring import ADVANTAGES, RewardBatch, advantages_of, check, expect, reward_batches

    @check(target=ADVANTAGES, points=2, inputs={"batch": reward_batches(), "k": st.integers(0, 9)})
    def advantages_something(student, batch: RewardBatch, k: int) -> None:
        \"\"\"The sentence a student reads when this check fails.\"\"\"
        expect.close(advantages_of(student, batch), ..., what="the advantages", dtype="float64")

Besides ``grader.authoring``'s (``check``, ``Inputs``, ``expect``, ``Student``...):

- **Targets**: ``ADVANTAGES`` and ``LOSS`` (``TARGETS``: both), the values ``target`` accepts.
- **Drawing inputs** (Hypothesis strategies): ``reward_batches`` gives a ``RewardBatch``
  (contiguous groups, B == G and B != G, binary or real rewards, float32 and float64);
  ``loss_batches`` gives a ``LossBatch`` (masks with empty and full rows, bool/float/int masks,
  log-ratios inside and far outside the clip range, ``clip_eps`` and ``beta`` passed or left at
  their defaults; ``on_policy=``, ``empty=``, ``garbage=`` narrow them). ``LossBatch.with_padding``
  puts other garbage in the padding. The built-in checks' shared inputs are ``REWARDS``,
  ``LOSS_INPUTS``, ``ON_POLICY`` and ``NO_VALID_TOKENS``; the constants ``DTYPES``, ``GARBAGE``,
  ``CLIP_EPS``, ``BETAS`` are what the strategies draw from.
- **Calling the student**: ``advantages_of(student, batch)`` (the advantages as a NumPy array),
  ``call_advantages``, ``call_loss(student, batch)`` (differentiated w.r.t. ``logp``) with
  ``unpack_loss``, ``loss_value``, ``logp_grad`` and ``stat_values`` to read its ``Outcome``.
- **Calling the reference** on the same input (in this trusted process, in float64):
  ``reference_advantages(batch)``, ``reference_loss(batch)`` (loss, gradient, stats and the
  loss's scale, as an ``Expected``).
- **Comparing**: ``dtype_name`` (the dtype ``expect.close`` takes).
"""

from __future__ import annotations

from grader.authoring import (
    VISIBILITIES,
    Check,
    CheckFailed,
    Inputs,
    Outcome,
    Student,
    SubmissionRaised,
    check,
    display,
    expect,
    values,
)
from properties.common import (
    ADVANTAGES,
    LOSS,
    LOSS_CALL,
    Expected,
    LossResult,
    advantages_of,
    call_advantages,
    call_loss,
    dtype_name,
    logp_grad,
    loss_arguments,
    loss_value,
    reference_advantages,
    reference_loss,
    stat_values,
    unpack_loss,
)
from properties.strategies import (
    BETAS,
    CLIP_EPS,
    DTYPES,
    GARBAGE,
    LOSS_INPUTS,
    NO_VALID_TOKENS,
    ON_POLICY,
    REWARDS,
    LossBatch,
    RewardBatch,
    loss_batches,
    reward_batches,
)

TARGETS = (ADVANTAGES, LOSS)

__all__ = [
    "ADVANTAGES",
    "BETAS",
    "CLIP_EPS",
    "DTYPES",
    "GARBAGE",
    "LOSS",
    "LOSS_CALL",
    "LOSS_INPUTS",
    "NO_VALID_TOKENS",
    "ON_POLICY",
    "REWARDS",
    "TARGETS",
    "VISIBILITIES",
    "Check",
    "CheckFailed",
    "Expected",
    "Inputs",
    "LossBatch",
    "LossResult",
    "Outcome",
    "RewardBatch",
    "Student",
    "SubmissionRaised",
    "advantages_of",
    "call_advantages",
    "call_loss",
    "check",
    "display",
    "dtype_name",
    "expect",
    "logp_grad",
    "loss_arguments",
    "loss_batches",
    "loss_value",
    "reference_advantages",
    "reference_loss",
    "reward_batches",
    "stat_values",
    "unpack_loss",
    "values",
]
