"""Writing a check: everything a properties file needs, in one import.

The built-in checks (``properties/``) are written with exactly this API, and so are an
instructor's own (loaded with ``python -m grader SUB.py --properties FILE_OR_FOLDER``)::

    from hypothesis import strategies as st

    from grader.authoring import ADVANTAGES, RewardBatch, advantages_of, check, expect, reward_batches

    @check(target=ADVANTAGES, points=2, inputs={"batch": reward_batches(), "k": st.integers(0, 9)})
    def advantages_something(student, batch: RewardBatch, k: int) -> None:
        \"\"\"The sentence a student reads when this check fails.\"\"\"
        expect.close(advantages_of(student, batch), ..., what="the advantages", dtype="float64")

What is here, by use (``docs/instructors.md`` walks through a whole example):

- **Declaring**: ``check`` (the decorator: ``target``, ``points``, ``inputs``, ``visibility``,
  ``timeout_s``, ``max_examples``, ``id``; validated when the check is defined), ``Inputs``
  (named strategies that checks share, one Hypothesis run for all of them), ``TARGETS`` and
  ``VISIBILITIES`` (the values ``target`` and ``visibility`` accept).
- **Drawing inputs** (Hypothesis strategies): ``reward_batches`` gives a ``RewardBatch``
  (contiguous groups, B == G and B != G, binary or real rewards, float32 and float64);
  ``loss_batches`` gives a ``LossBatch`` (masks with empty and full rows, bool/float/int masks,
  log-ratios inside and far outside the clip range, ``clip_eps`` and ``beta`` passed or left at
  their defaults; ``on_policy=``, ``empty=``, ``garbage=`` narrow them). ``LossBatch.with_padding``
  puts other garbage in the padding. The built-in checks' shared inputs are ``REWARDS``,
  ``LOSS_INPUTS``, ``ON_POLICY`` and ``NO_VALID_TOKENS``; the constants ``DTYPES``, ``GARBAGE``,
  ``CLIP_EPS``, ``BETAS`` are what the strategies draw from.
- **Calling the student** (always in the sandboxed worker; what comes back is plain data):
  ``advantages_of(student, batch)`` (the advantages as a NumPy array), ``call_advantages``,
  ``call_loss(student, batch)`` (differentiated w.r.t. ``logp``) with ``unpack_loss``,
  ``loss_value``, ``logp_grad`` and ``stat_values`` to read its ``Outcome``; ``student.call(name,
  *args, backward=(...), return_args=True, **kwargs)`` for anything else.
- **Calling the reference** on the same input (in this trusted process, in float64):
  ``reference_advantages(batch)``, ``reference_loss(batch)`` (loss, gradient, stats and the
  loss's scale, as an ``Expected``).
- **Comparing**: ``expect`` (``close`` with the dtype's tolerance and the first mismatching
  index, ``exact``, ``tensor``, ``numbers``, ``fail``), ``dtype_name`` (the dtype ``close``
  takes). A failure is a ``CheckFailed``; an exception in the student's code reaches the check as
  ``SubmissionRaised`` (catch it only when raising is the point, as for ``ValueError``).
  ``values.summary(value)`` says in words what a returned value is, and ``display.value`` /
  ``display.array`` give the JSON form a failure's ``expected`` and ``actual`` take.
"""

from __future__ import annotations

from grader import display, edition, expect, values  # noqa: F401  (edition: see grader.edition)
from grader.checks import TARGETS, VISIBILITIES, Check, Inputs, check
from grader.errors import CheckFailed, SubmissionRaised
from grader.student import Outcome, Student
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
