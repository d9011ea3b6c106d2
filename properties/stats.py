"""Properties of the ``stats`` dict that ``drgrpo_loss`` returns beside the loss."""

from __future__ import annotations

import numpy as np

from grader.authoring import (
    LOSS,
    LOSS_INPUTS,
    NO_VALID_TOKENS,
    LossBatch,
    call_loss,
    check,
    display,
    dtype_name,
    expect,
    reference_loss,
    stat_values,
    unpack_loss,
    values,
)
from reference.provided import STAT_KEYS

VALID_ONLY = "average over valid tokens only (mask 1), never over padding"


@check(target=LOSS, points=3, inputs=LOSS_INPUTS)
def stats_keys(student, batch: LossBatch) -> None:
    """stats has exactly the keys kl_mean, clipfrac and ratio_mean."""
    stats = unpack_loss(call_loss(student, batch)).stats
    if not isinstance(stats, values.DictValue):
        expect.fail(
            f"stats should be a dict, but it is {values.summary(stats)}",
            expected=list(STAT_KEYS),
            actual=display.value(stats),
        )
    if sorted(stats.keys) != sorted(STAT_KEYS) or set(stats.key_types) != {"str"}:
        missing = sorted(set(STAT_KEYS) - set(stats.keys))
        extra = sorted(set(stats.keys) - set(STAT_KEYS))
        expect.fail(
            f"stats has keys {list(stats.keys)}: missing {missing}, unexpected {extra}",
            expected=list(STAT_KEYS),
            actual=list(stats.keys),
        )


@check(target=LOSS, points=4, inputs=LOSS_INPUTS)
def stats_detached_scalars(student, batch: LossBatch) -> None:
    """Each stat is a detached floating tensor of shape ()."""
    stats = unpack_loss(call_loss(student, batch)).stats
    if not isinstance(stats, values.DictValue):
        expect.fail(f"stats should be a dict, but it is {values.summary(stats)}")
    for key, item in zip(stats.keys, stats.values, strict=True):
        what = f"stats[{key!r}]"
        stat = expect.tensor(item, what, hint="keep the tensor: do not call .item()")
        if not stat.is_floating or stat.shape != ():
            expect.fail(
                f"{what} is {values.summary(item)}, expected a floating tensor of shape ()",
                actual=display.value(item),
            )
        if stat.requires_grad or stat.has_grad_fn:
            expect.fail(
                f"{what} is attached to the autograd graph (requires_grad=True)",
                expected="a detached tensor",
                actual=display.value(item),
                hint="detach the diagnostics (token_statistics does): they are not trained on",
            )


@check(target=LOSS, points=5, inputs=LOSS_INPUTS)
def stats_match_reference(student, batch: LossBatch) -> None:
    """The stats equal the reference's averages over valid tokens: kl_mean, ratio_mean, and
    clipfrac, the fraction of valid tokens with |ratio - 1| > clip_eps."""
    found = stat_values(unpack_loss(call_loss(student, batch)))
    expected = reference_loss(batch).stats
    for key in STAT_KEYS:
        expect.close(
            found[key],
            expected[key],
            what=f"stats[{key!r}]",
            dtype=dtype_name(batch.logp),
            hint=VALID_ONLY
            if key != "clipfrac"
            else "count every valid token with abs(ratio - 1) > clip_eps, whatever the "
            "advantage's sign, and divide by the number of valid tokens",
        )


@check(target=LOSS, points=3, inputs=NO_VALID_TOKENS)
def stats_zero_without_tokens(student, batch: LossBatch) -> None:
    """With no valid token, all three stats are 0 (not nan)."""
    found = stat_values(unpack_loss(call_loss(student, batch)))
    for key, value in found.items():
        expect.exact(
            value.astype(np.float64),
            np.zeros(()),
            what=f"stats[{key!r}] with no valid token",
            hint="divide by max(count, 1): 0 / 0 is nan",
        )
