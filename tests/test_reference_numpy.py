"""The reference agrees with a plain NumPy float64 recomputation of the formulas in EXERCISE.md.

Values and gradients are written out independently here: the gradient of the clipped surrogate
is ``ratio * A`` where the unclipped term is the minimum (or the ratio lies inside the clip range)
and 0 elsewhere; the gradient of the k3 KL is ``1 - exp(ref - logp)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reference import provided, solution

RTOL, ATOL = 1e-12, 1e-13
GARBAGE = (np.inf, -np.inf, np.nan, 1e300, -1e300)


@dataclass(frozen=True)
class Batch:
    """Float64 scores [N, L] (anything at padding), the valid-token mask and advantages [N]."""

    logp: np.ndarray
    old: np.ndarray
    ref: np.ndarray
    valid: np.ndarray
    adv: np.ndarray

    def tensors(self, mask_kind: str = "bool") -> tuple[torch.Tensor, ...]:
        mask = torch.from_numpy(self.valid.copy())
        mask = {"bool": mask, "float": mask.double(), "int": mask.long()}[mask_kind]
        logp, old, ref, adv = (torch.tensor(a) for a in (self.logp, self.old, self.ref, self.adv))
        return logp.requires_grad_(True), old, ref, mask, adv


def close(actual, expected) -> None:
    actual = actual.detach().numpy() if isinstance(actual, torch.Tensor) else actual
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


# ---- the formulas, in NumPy -----------------------------------------------------------------


def np_masked(batch: Batch) -> list[np.ndarray]:
    return [np.where(batch.valid, x, 0.0) for x in (batch.logp, batch.old, batch.ref)]


def np_objective(logp, old, ref, adv, clip_eps, beta):
    ratio = np.exp(logp - old)
    a = adv[:, None]
    surrogate = np.minimum(ratio * a, np.clip(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref - logp
    kl = np.exp(d) - d - 1
    return surrogate - beta * kl, ratio, kl


def np_objective_grad(logp, old, ref, adv, clip_eps, beta):
    ratio = np.exp(logp - old)
    a = adv[:, None]
    unclipped, clipped = ratio * a, np.clip(ratio, 1 - clip_eps, 1 + clip_eps) * a
    inside = (ratio >= 1 - clip_eps) & (ratio <= 1 + clip_eps)
    surrogate_grad = np.where(inside | (unclipped < clipped), ratio * a, 0.0)
    return surrogate_grad - beta * (1 - np.exp(ref - logp))


def np_stats(ratio, kl, valid, clip_eps):
    count = max(valid.sum(), 1)
    return {
        "kl_mean": kl[valid].sum() / count,
        "clipfrac": (np.abs(ratio[valid] - 1) > clip_eps).sum() / count,
        "ratio_mean": ratio[valid].sum() / count,
    }


def np_loss(batch: Batch, clip_eps, beta, max_len=None):
    """Dr. GRPO's loss and gradient for ``max_len``; GRPO's per-response mean when it is None."""
    masked = np_masked(batch)
    objective, ratio, kl = np_objective(*masked, batch.adv, clip_eps, beta)
    objective = np.where(batch.valid, objective, 0.0)
    grad = -np.where(batch.valid, np_objective_grad(*masked, batch.adv, clip_eps, beta), 0.0)
    n = len(batch.adv)
    if max_len is None:
        lengths = np.maximum(batch.valid.sum(axis=1), 1)[:, None]
        loss, grad = -(objective / lengths).sum() / n, grad / (n * lengths)
    else:
        loss, grad = -objective.sum() / (n * max_len), grad / (n * max_len)
    return loss, grad, np_stats(ratio, kl, batch.valid, clip_eps)


def np_advantages(rewards, group_size, std=False):
    grouped = rewards.reshape(-1, group_size)
    centered = grouped - grouped.mean(axis=1, keepdims=True)
    if std:
        centered = centered / (grouped.std(axis=1, ddof=1, keepdims=True) + 1e-6)
    return centered.reshape(-1)


def check_stats(stats, expected) -> None:
    assert set(stats) == set(provided.STAT_KEYS)
    for key, value in stats.items():
        assert value.shape == () and value.dtype == torch.float64 and not value.requires_grad
        close(value, expected[key])


def check_loss(batch, mask_kind="bool", max_len=None, **kwargs) -> np.ndarray:
    """Dr. GRPO's loss for ``max_len``, GRPO's baseline when it is None; returns the gradient."""
    logp, old, ref, mask, adv = batch.tensors(mask_kind)
    frozen = [t.requires_grad_(True) for t in (old, ref, adv)]
    if max_len is None:
        loss, stats = provided.grpo_reference_loss(logp, old, ref, mask, adv, **kwargs)
    else:
        loss, stats = solution.drgrpo_loss(logp, old, ref, mask, adv, max_len, **kwargs)
    loss.backward()
    assert all(t.grad is None for t in frozen)
    arrays = (batch.logp, batch.old, batch.ref, batch.adv)
    for tensor, array in zip((logp, old, ref, adv), arrays, strict=True):
        np.testing.assert_array_equal(tensor.detach().numpy(), array)
    expected_loss, expected_grad, expected_stats = np_loss(
        batch, kwargs.get("clip_eps", 0.2), kwargs.get("beta", 0.04), max_len
    )
    assert loss.shape == () and loss.dtype == torch.float64
    close(loss, expected_loss)
    close(logp.grad, expected_grad)
    assert (logp.grad.numpy()[~batch.valid] == 0).all()
    check_stats(stats, expected_stats)
    return logp.grad.numpy()


def random_batch(seed: int, n: int = 6, width: int = 7, garbage: float = np.nan) -> Batch:
    rng = np.random.default_rng(seed)
    logp = -rng.exponential(1.0, (n, width))
    valid = np.arange(width) < rng.integers(0, width + 1, n)[:, None]
    valid[0], valid[-1] = True, False
    old = logp + rng.normal(0, 0.5, (n, width))
    ref = logp + rng.normal(0, 0.5, (n, width))
    scores = [np.where(valid, x, garbage) for x in (logp, old, ref)]
    return Batch(*scores, valid, rng.normal(0, 2, n))


# ---- provided helpers -----------------------------------------------------------------------


def test_token_objective_values_and_gradient():
    batch = random_batch(0, garbage=-0.5)
    logp, old, ref, _, adv = batch.tensors()
    frozen = [t.clone().requires_grad_(True) for t in (old, ref, adv)]
    objective, ratio, kl = provided.token_objective(logp, *frozen, 0.3, 0.1)
    expected = np_objective(batch.logp, batch.old, batch.ref, batch.adv, 0.3, 0.1)
    for actual, wanted in zip((objective, ratio, kl), expected, strict=True):
        close(actual, wanted)
    objective.sum().backward()
    close(logp.grad, np_objective_grad(batch.logp, batch.old, batch.ref, batch.adv, 0.3, 0.1))
    assert all(t.grad is None for t in frozen)


@pytest.mark.parametrize("garbage", GARBAGE)
def test_masked_logprobs_zeroes_padding(garbage):
    batch = random_batch(1, garbage=garbage)
    logp, old, ref, mask, _ = batch.tensors("int")
    masked = provided.masked_logprobs(logp, old, ref, mask)
    for actual, wanted in zip(masked, np_masked(batch), strict=True):
        assert actual.dtype == torch.float64
        np.testing.assert_array_equal(actual.detach().numpy(), wanted)
    masked[0].sum().backward()
    np.testing.assert_array_equal(logp.grad.numpy(), batch.valid.astype(float))


@pytest.mark.parametrize("seed", range(3))
def test_token_statistics(seed):
    batch = random_batch(seed)
    _, ratio, kl = np_objective(*np_masked(batch), batch.adv, 0.2, 0.04)
    ratio_t = torch.tensor(ratio, requires_grad=True)
    stats = provided.token_statistics(ratio_t, torch.tensor(kl), torch.tensor(batch.valid), 0.2)
    check_stats(stats, np_stats(ratio, kl, batch.valid, 0.2))


def test_token_statistics_without_tokens():
    ones = torch.ones(3, 4, dtype=torch.float64)
    stats = provided.token_statistics(2 * ones, ones, torch.zeros(3, 4), 0.2)
    check_stats(stats, dict.fromkeys(provided.STAT_KEYS, 0.0))


def test_grpo_reference_advantages_use_sample_std():
    rewards = np.array([1.0, 0.0, 0.0, 1.0, 3.0, 1.0, 2.0, 2.0])
    actual = provided.grpo_reference_advantages(torch.tensor(rewards), 4)
    close(actual, np_advantages(rewards, 4, std=True))


@pytest.mark.parametrize("mask_kind", ["bool", "float", "int"])
def test_grpo_reference_loss_per_response_mean(mask_kind):
    batch = random_batch(2, garbage=np.inf)
    assert not batch.valid[-1].any()
    check_loss(batch, mask_kind, clip_eps=0.25, beta=0.1)


# ---- the reference solution -----------------------------------------------------------------


def test_drgrpo_advantages_by_hand():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    expected = [0.5, -0.5, -0.5, 0.5, 0.25, 0.25, 0.25, -0.75]
    np.testing.assert_array_equal(solution.drgrpo_advantages(rewards, 4).numpy(), expected)


@pytest.mark.parametrize(("count", "group_size"), [(6, 1), (6, 0), (6, -2), (6, 4), (4, 8)])
def test_drgrpo_advantages_rejects_bad_group_size(count, group_size):
    with pytest.raises(ValueError):
        solution.drgrpo_advantages(torch.zeros(count), group_size)


def test_drgrpo_loss_equal_token_weights():
    """The length-bias example: lengths 5 and 20, same advantage, same per-token gradient."""
    valid = np.arange(20) < np.array([[5], [20]])
    logp = np.where(valid, -1.0, np.nan)
    grad = check_loss(Batch(logp, logp, logp, valid, np.array([-1.0, -1.0])), max_len=32)
    assert (grad[valid] == 1 / 64).all()


def test_drgrpo_loss_clip_regions():
    """Ratios inside and outside the clip range, with both advantage signs."""
    ratios = np.array([0.5, 0.9, 1.0, 1.1, 1.5])
    logp = np.full((2, 5), -1.0)
    valid = np.ones((2, 5), dtype=bool)
    batch = Batch(logp, logp - np.log(ratios), logp + 0.3, valid, np.array([1.0, -2.0]))
    grad = check_loss(batch, "float", max_len=8, clip_eps=0.2, beta=0.0)
    expected = np.array([[-0.5, -0.9, -1.0, -1.1, 0.0], [0.0, 1.8, 2.0, 2.2, 3.0]]) / 16
    np.testing.assert_allclose(grad, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("hyper", [{}, {"clip_eps": 0.15, "beta": 0.2}], ids=["defaults", "given"])
@pytest.mark.parametrize("mask_kind", ["bool", "float", "int"])
@pytest.mark.parametrize("garbage", GARBAGE)
def test_drgrpo_loss_random(mask_kind, garbage, hyper):
    check_loss(random_batch(3, garbage=garbage), mask_kind, max_len=9, **hyper)


def test_drgrpo_loss_without_tokens():
    batch = random_batch(4, garbage=-np.inf)
    empty = Batch(batch.logp, batch.old, batch.ref, np.zeros_like(batch.valid), batch.adv)
    assert not check_loss(empty, "int", max_len=7).any()


@st.composite
def batches(draw) -> Batch:
    n, width = draw(st.integers(1, 6)), draw(st.integers(1, 8))

    def scores(low: float, high: float) -> np.ndarray:
        return draw(hnp.arrays(np.float64, (n, width), elements=st.floats(low, high)))

    logp = scores(-5.0, 0.0)
    old, ref = logp - scores(-1.5, 1.5), logp - scores(-1.5, 1.5)
    valid = draw(hnp.arrays(np.bool_, (n, width)))
    garbage = draw(st.sampled_from(GARBAGE))
    adv = draw(hnp.arrays(np.float64, n, elements=st.floats(-3.0, 3.0)))
    return Batch(*(np.where(valid, x, garbage) for x in (logp, old, ref)), valid, adv)


@settings(derandomize=True, database=None, max_examples=50, deadline=None)
@given(
    batch=batches(),
    extra=st.integers(0, 8),
    clip_eps=st.floats(0.01, 0.9),
    beta=st.floats(0.0, 1.0),
    mask_kind=st.sampled_from(["bool", "float", "int"]),
)
def test_losses_match_numpy(batch, extra, clip_eps, beta, mask_kind):
    max_len = batch.valid.shape[1] + extra
    check_loss(batch, mask_kind, max_len=max_len, clip_eps=clip_eps, beta=beta)
    check_loss(batch, mask_kind, clip_eps=clip_eps, beta=beta)


@settings(derandomize=True, database=None, max_examples=50, deadline=None)
@given(groups=st.integers(1, 5), group_size=st.integers(2, 5), data=st.data())
def test_advantages_match_numpy(groups, group_size, data):
    count = groups * group_size
    rewards = data.draw(hnp.arrays(np.float64, count, elements=st.floats(-10.0, 10.0)))
    as_tensor = torch.tensor(rewards)
    close(solution.drgrpo_advantages(as_tensor, group_size), np_advantages(rewards, group_size))
    close(
        provided.grpo_reference_advantages(as_tensor, group_size),
        np_advantages(rewards, group_size, std=True),
    )
    np.testing.assert_array_equal(as_tensor.numpy(), rewards)
