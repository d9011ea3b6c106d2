"""Inputs drawn for diagnosis: a few fixed calls that tell the catalogued mistakes apart.

When a check fails, a catalogued mistake is named only if the submission answers like it on
the failing example *and* on every one of these calls. Each call is made the way the checks
make it (``properties.common``), so the replies compare part by part. Together they reach what
separates the mistakes: several groups with B != G, float32 and float64, rewards that are not
binary, invalid group sizes of every kind; responses of different lengths with ``L < max_len``,
scattered and empty masks of each mask type, inf and nan in the padding, ratios outside the
clip range and between clip_eps and 0.2, reference scores several nats away, log-probs whose
exp() underflows, explicit and default ``clip_eps`` and ``beta``, inputs that should stay frozen.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from grader.engine.student import request
from properties.common import ADVANTAGES, LOSS, LOSS_CALL, hyper, loss_arguments
from properties.strategies import LossBatch


def _rewards(seed: int, groups: int, size: int, dtype: torch.dtype, binary: bool) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    if binary:  # verifier rewards, each group with as many correct answers as its index + 1
        values = (np.arange(size)[None, :] <= np.arange(groups)[:, None] % (size - 1)).astype(float)
    else:
        values = np.round(rng.uniform(-2.0, 2.0, size=(groups, size)), 2)
    return torch.from_numpy(values.reshape(-1)).to(dtype)


def _loss_batch(
    seed: int,
    *,
    valid: np.ndarray,
    max_len: int,
    dtype: torch.dtype = torch.float64,
    mask_dtype: torch.dtype = torch.bool,
    padding: str = "zero",
    clip_eps: float = 0.2,
    beta: float = 0.04,
    explicit: bool = True,
    on_policy: bool = False,
    unlikely: bool = False,
) -> LossBatch:
    rng = np.random.default_rng(seed)
    shape = valid.shape
    old = np.round(rng.uniform(-3.0, -0.05, size=shape), 2)
    if unlikely:  # exp() of these underflows to 0 in float32
        old = np.round(rng.uniform(-115.0, -105.0, size=shape), 2)
    # Ratios inside the clip range, between clip_eps and 0.2, and far outside it, on both sides.
    log_ratio = np.round(rng.choice([0.01, -0.02, 0.15, -0.13, 0.6, -0.7, 1.2], size=shape), 2)
    logp = old + log_ratio
    # Reference scores near and several nats away.
    ref = np.round(logp + rng.uniform(-1.0, 1.0, size=shape) * rng.choice([1.0, 4.0], size=shape), 2)
    if on_policy:
        old, ref = logp, logp
    advantages = np.round(rng.normal(0.0, 1.0, size=shape[0]), 2)
    as_tensor = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float64)).to(dtype)  # noqa: E731
    mask = torch.from_numpy(valid)
    batch = LossBatch(
        logp=as_tensor(logp),
        old_logp=as_tensor(old),
        ref_logp=as_tensor(ref),
        mask=mask if mask_dtype == torch.bool else mask.to(mask_dtype),
        advantages=as_tensor(advantages),
        max_len=max_len,
        clip_eps=clip_eps,
        beta=beta,
        explicit=explicit,
    )
    return batch.with_padding(padding, seed)


def _prefix(lengths: list[int], width: int) -> np.ndarray:
    return np.arange(width)[None, :] < np.asarray(lengths)[:, None]


@functools.cache
def advantage_probes() -> tuple[bytes, ...]:
    """Calls of ``drgrpo_advantages``, packed (made once per process)."""
    call = lambda rewards, size: request(ADVANTAGES, rewards, size, return_args=True)  # noqa: E731
    real = _rewards(1, 3, 4, torch.float64, binary=False)
    return (
        call(real, 4),
        call(_rewards(2, 2, 3, torch.float32, binary=True), 3),
        call(_rewards(3, 4, 2, torch.float64, binary=False), 2),
        call(real, 1),
        call(real, 0),
        call(real, 5),
    )


@functools.cache
def loss_probes() -> tuple[bytes, ...]:
    """Calls of ``drgrpo_loss``, packed (made once per process)."""
    scattered = np.random.default_rng(7).random((3, 4)) < 0.6
    scattered[0, 0] = True
    batches = [
        (_loss_batch(11, valid=_prefix([5, 2, 0, 3], 5), max_len=7, clip_eps=0.1, beta=0.1), True),
        (
            _loss_batch(
                12, valid=scattered, max_len=4, dtype=torch.float32, mask_dtype=torch.float32, padding="mixed"
            ),
            False,
        ),
        (_loss_batch(13, valid=_prefix([1, 6], 6), max_len=9, mask_dtype=torch.int64, padding="inf"), False),
        (_loss_batch(14, valid=_prefix([0, 0], 3), max_len=3, clip_eps=0.3, beta=0.5), False),
        (_loss_batch(15, valid=_prefix([4, 1, 2], 4), max_len=6, padding="nan", explicit=False), True),
        (_loss_batch(16, valid=_prefix([3, 2], 3), max_len=5, on_policy=True, beta=0.0), False),
        (_loss_batch(17, valid=_prefix([3, 1], 3), max_len=4, dtype=torch.float32, unlikely=True), False),
    ]
    return tuple(
        request(LOSS, *loss_arguments(batch, frozen), **LOSS_CALL, **hyper(batch))
        for batch, frozen in batches
    )


PROBES = {ADVANTAGES: advantage_probes, LOSS: loss_probes}
