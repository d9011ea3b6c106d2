"""Properties of ``drgrpo_loss``: the token loss divided by the fixed ``N * max_len``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from grader.authoring import (
    LOSS,
    LOSS_INPUTS,
    NO_VALID_TOKENS,
    ON_POLICY,
    LossBatch,
    call_loss,
    check,
    display,
    dtype_name,
    expect,
    logp_grad,
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


@check(target=LOSS, points=10, inputs=LOSS_INPUTS)
def loss_matches_reference(student, batch: LossBatch) -> None:
    """The loss and its gradient equal the reference's, for any clip_eps and beta."""
    result = unpack_loss(call_loss(student, batch))
    expected = reference_loss(batch)
    dtype = dtype_name(batch.logp)
    loss, grad = loss_value(result), logp_grad(result, batch.logp)
    hint = DENOMINATOR if np.isfinite(loss) and np.isfinite(grad).all() else ISOLATE
    expect.close(loss, expected.loss, what="the loss", dtype=dtype, scale=expected.loss_scale, hint=hint)
    what = "the gradient of the loss with respect to logp"
    expect.close(grad, expected.grad, what=what, dtype=dtype, hint=hint)


def _token_grad_expectation(batch: LossBatch) -> np.ndarray:
    n = batch.logp.shape[0]
    weights = -batch.advantages.to(torch.float64).numpy()[:, None] / (n * batch.max_len)
    return np.where(batch.valid.numpy(), weights, 0.0)


@check(target=LOSS, points=8, inputs=ON_POLICY)
def loss_equal_token_weights(student, batch: LossBatch) -> None:
    """At the on-policy point every valid token of response i gets gradient -A_i / (N * max_len),
    whatever the response's length."""
    result = unpack_loss(call_loss(student, batch))
    expect.close(
        logp_grad(result, batch.logp),
        _token_grad_expectation(batch),
        what="the per-token gradient with respect to logp",
        dtype=dtype_name(batch.logp),
        hint="every valid token has the same weight 1 / (N * max_len); " + DENOMINATOR,
    )


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


@check(target=LOSS, points=8, inputs=LOSS_INPUTS)
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
    if torch.equal(mask, batch.valid):
        mask[1:] = ~mask[1:]
    relengthened = replace(batch, mask=mask.to(batch.mask.dtype))
    changed = logp_grad(unpack_loss(call_loss(student, relengthened)), batch.logp)
    expect.close(
        changed[0],
        first[0],
        dtype=dtype,
        hint=DENOMINATOR,
        what="response 0's per-token gradient after the other responses' lengths changed",
    )


@check(target=LOSS, points=8, inputs=LOSS_INPUTS)
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


@check(target=LOSS, points=5, inputs=LOSS_INPUTS)
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


@check(target=LOSS, points=3, inputs=LOSS_INPUTS)
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


@check(target=LOSS, points=4, inputs=LOSS_INPUTS)
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
