"""Properties of ``drgrpo_loss``: the token loss divided by the fixed ``N * max_len``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from properties.authoring import (
    LOSS,
    LOSS_CALL,
    LOSS_INPUTS,
    NO_VALID_TOKENS,
    ON_POLICY,
    LossBatch,
    LossResult,
    call_loss,
    check,
    display,
    dtype_name,
    expect,
    logp_grad,
    loss_arguments,
    loss_value,
    reference_loss,
    stat_values,
    unpack_loss,
)

DENOMINATOR = (
    "divide the summed masked objective by N * max_len, the fixed generation limit: not by each "
    "response's length, the number of valid tokens, the padded width L or the longest response"
)
ISOLATE = (
    "isolate padding before computing anything from it (masked_logprobs, or torch.where): "
    "multiplying by the mask is not enough, because inf * 0 is nan"
)
EMPTY_ROW = (
    "a response with no valid token must add nothing to the loss: dividing by its own number of "
    "tokens gives 0 / 0 = nan; sum over the batch and divide once by N * max_len"
)
UNDERFLOW = (
    "for an unlikely token exp(logp) and exp(old_logp) both underflow to 0, and 0 / 0 is nan: "
    "take the ratio as exp(logp - old_logp)"
)
SIGN = (
    "the loss is minus the objective: loss = -(sum of (surrogate - beta * k3)) / (N * max_len); "
    "check the sign of each term"
)
CLIP = (
    "take min(ratio * A, clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A) per token: the clamped "
    "branch has no gradient, so a token already past the bound in its advantage's direction "
    "stops pushing (token_objective does this)"
)
KL_TERM = (
    "each valid token adds beta * k3 to the loss (over N * max_len), with k3 = exp(ref_logp - "
    "logp) - (ref_logp - logp) - 1 computed from logp itself: not clamped, not reversed, not detached"
)
DETACHED = (
    "the loss's value is right but its gradient is not: part of it is detached (.detach(), "
    ".item(), .data) or rebuilt from numbers, so autograd does not see how it depends on logp"
)


def _factor(actual: np.ndarray, expected: np.ndarray) -> float | None:
    """The one factor ``actual / expected`` where both are set, or None when there is none."""
    keep = np.abs(expected) > 1e-9 * max(float(np.max(np.abs(expected), initial=0.0)), 1e-30)
    if not keep.any() or np.any((np.abs(actual) > 0) & ~keep):
        return None
    ratios = actual[keep] / expected[keep]
    if ratios[0] == 0 or not np.allclose(ratios, ratios[0], rtol=1e-3, atol=0.0):
        return None
    return float(ratios[0])


def loss_hint(
    batch: LossBatch,
    grad: np.ndarray,
    expected_grad: np.ndarray,
    loss: np.ndarray | None = None,
    expected_loss: np.ndarray | None = None,
    scale: float | None = None,
) -> str | None:
    """The hint that the failing input supports: an empty row, garbage padding or an unlikely
    token behind a nan; a loss whose value is right but whose gradient is not (a detached part);
    a sign flip; a wrong factor, overall or per response. None when the input shows none of
    these: a wrong hint is worse than none. ``scale`` is the size of the loss's terms."""
    valid = batch.valid.numpy()
    empty = ~valid.any(axis=1)
    if not np.isfinite(grad).all() or (loss is not None and not np.isfinite(loss)):
        broken_rows = ~np.isfinite(grad).all(axis=1)
        if empty.any() and not (broken_rows & ~empty).any():
            return EMPTY_ROW
        scores = np.stack([t.numpy() for t in (batch.logp, batch.old_logp, batch.ref_logp)])
        if not np.isfinite(scores[:, ~valid]).all():
            return ISOLATE
        if (np.exp(batch.old_logp.numpy()[valid]) == 0).any():
            return UNDERFLOW
        return None
    if not np.abs(expected_grad[valid]).max(initial=0.0) > 0:
        return None
    factor = _factor(grad[valid], expected_grad[valid])
    if factor is not None and np.isclose(factor, 1.0, rtol=1e-3):
        return None  # the gradient is right: nothing to say about it
    if loss is not None and expected_loss is not None:
        size = float(np.abs(expected_loss)) if scale is None else scale
        if abs(float(expected_loss)) > 1e-3 * size and np.isclose(loss, expected_loss, rtol=1e-3, atol=0):
            return DETACHED
    if factor is not None:
        return SIGN if np.isclose(factor, -1.0, rtol=1e-3) else DENOMINATOR
    per_row = [_factor(grad[i][valid[i]], expected_grad[i][valid[i]]) for i in np.flatnonzero(~empty)]
    return DENOMINATOR if all(f is not None and f > 0 for f in per_row) else None


@check(target=LOSS, points=6, inputs=LOSS_INPUTS)
def loss_matches_reference(student, batch: LossBatch) -> None:
    """The loss and its gradient equal the reference's, for any clip_eps and beta."""
    result = unpack_loss(call_loss(student, batch))
    expected = reference_loss(batch)
    dtype = dtype_name(batch.logp)
    loss, grad = loss_value(result), logp_grad(result, batch.logp)
    hint = loss_hint(batch, grad, expected.grad, loss, expected.loss, expected.loss_scale)
    expect.close(loss, expected.loss, what="the loss", dtype=dtype, scale=expected.loss_scale, hint=hint)
    what = "the gradient of the loss with respect to logp"
    expect.close(grad, expected.grad, what=what, dtype=dtype, hint=hint)


def _token_grad_expectation(batch: LossBatch) -> np.ndarray:
    n = batch.logp.shape[0]
    weights = -batch.advantages.to(torch.float64).numpy()[:, None] / (n * batch.max_len)
    return np.where(batch.valid.numpy(), weights, 0.0)


@check(target=LOSS, points=7, inputs=ON_POLICY)
def loss_equal_token_weights(student, batch: LossBatch) -> None:
    """At the on-policy point every valid token of response i gets gradient -A_i / (N * max_len),
    whatever the response's length."""
    result = unpack_loss(call_loss(student, batch))
    grad = logp_grad(result, batch.logp)
    expected = _token_grad_expectation(batch)
    # At the on-policy point each valid token adds -A_i / (N * max_len) to the loss too.
    hint = loss_hint(batch, grad, expected, loss_value(result), expected.sum(), float(np.abs(expected).sum()))
    expect.close(
        grad,
        expected,
        what="the per-token gradient with respect to logp",
        dtype=dtype_name(batch.logp),
        hint="every valid token has the same weight 1 / (N * max_len); " + DENOMINATOR
        if hint == DENOMINATOR
        else hint,
    )


def _batch_scores(batch: LossBatch) -> tuple[np.ndarray, ...]:
    """logp, old_logp, ref_logp and the advantages in float64, as the student received them."""
    tensors = (batch.logp, batch.old_logp, batch.ref_logp, batch.advantages)
    return tuple(t.to(torch.float64).numpy() for t in tensors)


def _beta_zero(student, batch: LossBatch) -> LossResult:
    """The student's loss on ``batch`` with beta = 0, and clip_eps as drawn or left to its default."""
    hyper = {"clip_eps": batch.clip_eps, "beta": 0.0} if batch.explicit else {"beta": 0.0}
    return unpack_loss(student.call(LOSS, *loss_arguments(batch), **LOSS_CALL, **hyper))


def _own_weights(student, batch: LossBatch) -> np.ndarray:
    """Each token's weight in the student's own loss: its gradient at the on-policy point with
    every advantage -1 and beta = 0, which is 1 / (N * max_len) in Dr. GRPO. The clip and KL
    checks judge each token relative to it, so that a wrong denominator or sign is judged by
    the checks about those, not once more by these."""
    minus_one = torch.full_like(batch.advantages, -1.0)
    on_policy = replace(batch, old_logp=batch.logp, ref_logp=batch.logp, advantages=minus_one)
    return logp_grad(_beta_zero(student, on_policy), batch.logp)


@check(target=LOSS, points=6, inputs=LOSS_INPUTS)
def loss_clipped_surrogate(student, batch: LossBatch) -> None:
    """With beta = 0, a valid token whose ratio is outside the clip range on the side its
    advantage pushes gets gradient exactly 0; any other valid token gets its on-policy gradient
    times its ratio (-A * ratio / (N * max_len))."""
    batch = batch.with_padding("zero")
    weights = _own_weights(student, batch)
    grad = logp_grad(_beta_zero(student, batch), batch.logp)
    logp, old, _, advantages = _batch_scores(batch)
    valid = batch.valid.numpy()
    ratio = np.exp(np.where(valid, logp - old, 0.0))
    adv = advantages[:, None]
    low, high = 1.0 - batch.clip_eps, 1.0 + batch.clip_eps
    clipped = ((adv > 0) & (ratio > high)) | ((adv < 0) & (ratio < low))
    expected = np.where(valid & ~clipped, -adv * ratio * weights, 0.0)
    # A ratio within rounding of a clip bound may fall on either side: not judged.
    on_bound = np.isclose(ratio, low, rtol=1e-4, atol=0) | np.isclose(ratio, high, rtol=1e-4, atol=0)
    expected = np.where(valid & on_bound, grad, expected)
    expect.close(
        grad,
        expected,
        what=f"the per-token gradient with beta = 0 and clip_eps = {batch.clip_eps:g}",
        dtype=dtype_name(batch.logp),
        hint=CLIP,
    )


@check(target=LOSS, points=5, inputs=LOSS_INPUTS)
def loss_kl_term(student, batch: LossBatch) -> None:
    """With all advantages 0, each valid token adds beta * k3 to the loss, k3 = exp(ref - logp)
    - (ref - logp) - 1, and beta * (1 - exp(ref - logp)) to the gradient, weighed as on-policy
    (1 / (N * max_len))."""
    batch = batch.with_padding("zero")
    weights = _own_weights(student, batch)
    beta = batch.beta or 0.1  # the KL term must weigh something
    batch = replace(batch, advantages=torch.zeros_like(batch.advantages), beta=beta)
    result = unpack_loss(call_loss(student, batch))
    loss = loss_value(result)  # a loss that is not a number fails before its gradient is asked for
    logp, _, ref, _ = _batch_scores(batch)
    valid = batch.valid.numpy()
    log_ratio = np.where(valid, ref - logp, 0.0)
    k3 = np.exp(log_ratio) - log_ratio - 1.0
    expected_loss = np.asarray(beta * (weights * k3).sum())
    expected_grad = np.where(valid, beta * -np.expm1(log_ratio) * weights, 0.0)
    grad = logp_grad(result, batch.logp)
    hint = DETACHED if np.isclose(loss, expected_loss, rtol=1e-3, atol=0) else KL_TERM
    dtype = dtype_name(batch.logp)
    what = f"with every advantage 0 and beta = {beta:g}"
    expect.close(loss, expected_loss, what=f"the loss {what}", dtype=dtype, hint=hint)
    expect.close(grad, expected_grad, what=f"the per-token gradient {what}", dtype=dtype, hint=hint)


def _widen(batch: LossBatch, extra: int) -> LossBatch:
    """``extra`` more padded columns, within max_len."""
    pad = lambda t, v: torch.cat([t, torch.full((t.shape[0], extra), v, dtype=t.dtype)], dim=1)  # noqa: E731
    return replace(
        batch,
        logp=pad(batch.logp, -1.0),
        old_logp=pad(batch.old_logp, -1.0),
        ref_logp=pad(batch.ref_logp, -1.0),
        mask=pad(batch.mask, 0),
    )


@check(target=LOSS, points=7, inputs=LOSS_INPUTS)
def loss_fixed_denominator(student, batch: LossBatch, extra: int, other_lengths: int) -> None:
    """The denominator is the fixed N * max_len: more padding, or other responses being longer or
    shorter, leaves a response's per-token gradient unchanged."""
    # Clean padding (isolation is another check's business), and room to pad within max_len:
    # where max_len leaves room, this is loss_padding_isolated's clean call, made once.
    batch = batch.with_padding("zero")
    room = batch.max_len - batch.logp.shape[1]
    if room:
        extra = min(extra, room)
    else:
        batch = replace(batch, max_len=batch.max_len + extra)
    first = logp_grad(unpack_loss(call_loss(student, batch)), batch.logp)
    dtype = dtype_name(batch.logp)

    wider = _widen(batch, extra)
    padded = logp_grad(unpack_loss(call_loss(student, wider)), wider.logp)
    expect.close(
        padded[:, : batch.logp.shape[1]],
        first,
        dtype=dtype,
        hint=DENOMINATOR,
        what=f"the per-token gradient after adding {extra} padded columns (same max_len)",
    )

    # Response 0 keeps its tokens; the others get new lengths.
    rng = np.random.default_rng(other_lengths)
    mask = batch.valid.clone()
    mask[1:] = torch.from_numpy(rng.random(tuple(mask[1:].shape)) < 0.5)
    if torch.equal(mask, batch.valid) or not mask.any():
        # Some change, and never a batch without any valid token (loss_zero_valid_tokens' case).
        mask[1:] = ~batch.valid[1:]
        if not mask.any():
            mask[1:] = True
    relengthened = replace(batch, mask=mask.to(batch.mask.dtype))
    changed = logp_grad(unpack_loss(call_loss(student, relengthened)), batch.logp)
    expect.close(
        changed[0],
        first[0],
        dtype=dtype,
        hint=DENOMINATOR,
        what="response 0's per-token gradient after the other responses' lengths changed",
    )


@check(target=LOSS, points=7, inputs=LOSS_INPUTS)
def loss_padding_isolated(student, batch: LossBatch, garbage: str) -> None:
    """Whatever padded positions hold (huge numbers, inf, nan), the loss, the gradient and the
    stats do not change, and the gradient at padded positions is exactly 0."""
    clean = unpack_loss(call_loss(student, batch.with_padding("zero")))
    dirty = unpack_loss(call_loss(student, batch.with_padding(garbage, seed=len(garbage))))
    dtype = dtype_name(batch.logp)
    what = f"with {garbage} in the padding"
    expect.close(
        loss_value(dirty),
        loss_value(clean),
        what=f"the loss {what}",
        dtype=dtype,
        scale=float(np.abs(loss_value(clean))),
        hint=ISOLATE,
    )
    grad = logp_grad(dirty, batch.logp)
    expect.exact(
        np.where(batch.valid.numpy(), 0.0, grad),
        np.zeros_like(grad),
        what=f"the gradient at padded positions {what}",
        hint=ISOLATE,
    )
    expect.close(grad, logp_grad(clean, batch.logp), what=f"the gradient {what}", dtype=dtype, hint=ISOLATE)
    clean_stats = stat_values(clean)
    for key, value in stat_values(dirty).items():
        expect.close(value, clean_stats[key], what=f"stats[{key!r}] {what}", dtype=dtype, hint=ISOLATE)


@check(target=LOSS, points=4, inputs=NO_VALID_TOKENS)
def loss_zero_valid_tokens(student, batch: LossBatch) -> None:
    """With no valid token at all, the loss is 0 and backward still works (zero gradient)."""
    result = unpack_loss(call_loss(student, batch))
    expect.exact(
        loss_value(result),
        np.zeros(()),
        what="the loss with no valid token",
        hint="sum over the valid tokens (there are none) and divide by N * max_len: the loss is 0, not nan",
    )
    grad = logp_grad(result, batch.logp)
    expect.exact(grad, np.zeros_like(grad), what="the gradient with no valid token")


@check(target=LOSS, points=4, inputs=LOSS_INPUTS)
def loss_frozen_inputs(student, batch: LossBatch) -> None:
    """Gradients reach logp only: old_logp, ref_logp and the advantages get none, even when they
    require grad."""
    out = call_loss(student, batch, frozen_requires_grad=True)
    unpack_loss(out)
    for index, name in ((1, "old_logp"), (2, "ref_logp"), (4, "advantages")):
        grad = out.grads[index] if out.grads else None
        if grad is None:
            continue
        data = expect.tensor(grad, f"the gradient of {name}").data
        if np.any(data != 0):
            expect.fail(
                f"{name} received a gradient (largest {display.number(np.nanmax(np.abs(data)))}): "
                "it must stay frozen",
                expected="no gradient",
                actual=display.array(data),
                hint=f"detach {name} (token_objective does this for you)",
            )


@check(target=LOSS, points=2, inputs=LOSS_INPUTS)
def loss_inputs_untouched(student, batch: LossBatch) -> None:
    """No input tensor is modified in place, by the loss or by its backward pass."""
    out = call_loss(student, batch)
    names = ("logp", "old_logp", "ref_logp", "mask", "advantages")
    sent = (batch.logp, batch.old_logp, batch.ref_logp, batch.mask, batch.advantages)
    for name, before, after in zip(names, sent, out.args_after, strict=False):
        expect.exact(
            expect.tensor(after, f"{name} after the call").data,
            before.numpy(),
            what=f"{name} after the call",
            hint="build new tensors (torch.where, masked_fill) instead of editing inputs "
            "in place (masked_fill_, [...] =, *=)",
        )


@check(target=LOSS, points=2, inputs=LOSS_INPUTS)
def loss_return_structure(student, batch: LossBatch) -> None:
    """drgrpo_loss returns (loss, stats) with loss a differentiable scalar tensor of shape (),
    in the dtype of logp."""
    out = call_loss(student, batch)
    result = unpack_loss(out)
    loss = expect.tensor(result.loss, "the loss", hint="return the tensor, not loss.item()")
    want = dtype_name(batch.logp)
    expected = f"a {want} tensor of shape () that requires grad"
    if not loss.is_plain_tensor:
        expect.fail(f"the loss is a {loss.type}, not a plain torch.Tensor", expected=expected)
    if loss.shape != ():
        expect.fail(
            f"the loss has shape {loss.shape}, expected () (a 0-dimensional tensor)",
            expected=expected,
            actual=display.value(result.loss),
            hint="reduce with .sum() and do not reshape or keepdim",
        )
    if loss.dtype != want:
        expect.fail(
            f"the loss has dtype {loss.dtype}, but logp is {want}",
            expected=expected,
            actual=display.value(result.loss),
            hint="keep logp's dtype: do not cast",
        )
    if not loss.requires_grad:
        expect.fail(
            "the loss does not require grad, so training could not use it",
            expected=expected,
            actual=display.value(result.loss),
            hint="do not detach the loss or rebuild it from numbers",
        )
