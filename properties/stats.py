"""Properties of the ``stats`` dict that ``drgrpo_loss`` returns beside the loss."""

from __future__ import annotations

import numpy as np
import torch

from properties.authoring import (
    LOSS,
    LOSS_INPUTS,
    NO_VALID_TOKENS,
    LossBatch,
    LossResult,
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
BOTH_SIDES = (
    "count every valid token with abs(ratio - 1) > clip_eps, whatever the advantage's sign, and "
    "divide by the number of valid tokens"
)


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


@check(target=LOSS, points=3, inputs=LOSS_INPUTS)
def stats_detached_scalars(student, batch: LossBatch) -> None:
    """Each stat is a detached floating tensor of shape (), float32 or float64."""
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
        if expect.rtol_for(stat.dtype) > expect.rtol_for("float32"):
            expect.fail(
                f"{what} is {stat.dtype}: a diagnostic needs at least float32 precision",
                expected="a float32 or float64 tensor of shape ()",
                actual=display.value(item),
                hint="keep the dtype of logp (or use float32 or float64)",
            )
        if stat.requires_grad or stat.has_grad_fn:
            expect.fail(
                f"{what} is attached to the autograd graph (requires_grad=True)",
                expected="a detached tensor",
                actual=display.value(item),
                hint="detach the diagnostics (token_statistics does): they are not trained on",
            )


def _dtype(result: LossResult, key: str, batch: LossBatch) -> str:
    """The dtype whose tolerance a stat gets: logp's, or the stat's own when it is coarser (any
    floating dtype of at least float32 precision is a fair choice for a diagnostic)."""
    item = result.stats.get(key) if isinstance(result.stats, values.DictValue) else None
    own = getattr(item, "dtype", None) or dtype_name(batch.logp)
    return max(own, dtype_name(batch.logp), key=expect.rtol_for)


@check(target=LOSS, points=3, inputs=LOSS_INPUTS)
def stats_match_reference(student, batch: LossBatch) -> None:
    """The stats equal the reference's averages over valid tokens: kl_mean, ratio_mean, and
    clipfrac, the fraction of valid tokens with |ratio - 1| > clip_eps."""
    result = unpack_loss(call_loss(student, batch))
    found = stat_values(result)
    expected = reference_loss(batch).stats
    for key in STAT_KEYS:
        expect.close(
            found[key],
            expected[key],
            what=f"stats[{key!r}]",
            dtype=_dtype(result, key, batch),
            hint=VALID_ONLY if key != "clipfrac" else BOTH_SIDES,
        )


def _splits(valid: np.ndarray) -> list[int]:
    """The row indices k where rows [:k] and [k:] both hold a valid token."""
    has = valid.any(axis=1)
    return [k for k in range(1, len(has)) if has[:k].any() and has[k:].any()]


@check(target=LOSS, points=3, inputs=LOSS_INPUTS)
def stats_token_averages(student, batch: LossBatch, other_lengths: int) -> None:
    """The stats are averages over valid tokens: split a batch in two, and the whole batch's
    stats are the two parts' stats weighted by their numbers of valid tokens. clipfrac counts the
    valid tokens whose ratio lies outside [1 - clip_eps, 1 + clip_eps], on either side."""
    batch = batch.with_padding("zero")
    whole = unpack_loss(call_loss(student, batch))
    found = stat_values(whole)
    valid = batch.valid.numpy()

    # clipfrac, from its definition; a ratio within rounding of a bound may count either way.
    log_ratio = (batch.logp.to(torch.float64) - batch.old_logp.to(torch.float64)).numpy()
    distance = np.abs(np.expm1(log_ratio[valid])) - batch.clip_eps
    tokens = int(valid.sum())
    fewest, most = int((distance > 1e-4).sum()), int((distance > -1e-4).sum())
    clipfrac = float(found["clipfrac"])
    if not fewest / tokens - 1e-6 <= clipfrac <= most / tokens + 1e-6:
        expect.fail(
            f"stats['clipfrac'] is {display.number(clipfrac)}, but {fewest} of the {tokens} valid "
            f"tokens have a ratio outside [{1 - batch.clip_eps:g}, {1 + batch.clip_eps:g}]",
            expected=display.number(fewest / tokens),
            actual=display.number(clipfrac),
            hint=BOTH_SIDES,
        )

    splits = _splits(valid)
    if not splits:
        return
    k = splits[other_lengths % len(splits)]
    counts = valid[:k].sum(), valid[k:].sum()
    parts = [
        stat_values(unpack_loss(call_loss(student, batch.take(rows)))) for rows in (slice(k), slice(k, None))
    ]
    for key in STAT_KEYS:
        combined = (counts[0] * parts[0][key] + counts[1] * parts[1][key]) / (counts[0] + counts[1])
        expect.close(
            found[key],
            combined,
            what=f"stats[{key!r}] of the whole batch, from those of responses [0, {k}) "
            f"({counts[0]} valid tokens) and [{k}, {len(valid)}) ({counts[1]})",
            dtype=_dtype(whole, key, batch),
            hint="average over all the batch's valid tokens at once, not response by response: "
            "a response with more valid tokens weighs more",
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
