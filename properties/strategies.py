"""Hypothesis strategies for the exercise's inputs.

Hypothesis draws the structure (shapes, group sizes, mask kind, dtype, clip_eps, beta, the
garbage in the padding) and a seed for the values, which NumPy then fills in (response
lengths with empty and full rows over-weighted, scores rounded to two decimals so that a
counterexample reads easily). Each Hypothesis draw costs about as much as the student's call
on this size of input, so drawing every element would multiply the cost of a grade for no
better coverage; the shrinker still minimizes what matters to a student: the shapes, the
settings and, through the ``plain`` switch, whether simple values already show the bug.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from hypothesis import strategies as st

from grader.declare.checks import Inputs

DTYPES = (torch.float64, torch.float32)
CLIP_EPS = (0.2, 0.1, 0.3, 0.05, 0.5)
BETAS = (0.04, 0.0, 0.1, 0.5)
# What padded positions hold: Dr. GRPO's padding must change nothing, whatever it holds.
GARBAGE = ("zero", "nan", "inf", "-inf", "huge", "mixed")
MASK_KINDS = ("bool", "float", "int")
# How unlikely a drawn old score may be: past the point where exp() underflows to 0.
DEEPEST_LOGP = {torch.float32: -110.0, torch.float64: -760.0}


@dataclass(frozen=True)
class RewardBatch:
    """``rewards`` [B*G] in contiguous groups of ``group_size``."""

    rewards: torch.Tensor
    group_size: int

    @property
    def groups(self) -> int:
        return self.rewards.numel() // self.group_size


@dataclass(frozen=True, eq=False)  # hashed by identity: see properties.common.reference_loss
class LossBatch:
    """The arguments of ``drgrpo_loss``. ``explicit`` says whether clip_eps and beta are passed
    (when not, the defaults 0.2 and 0.04 apply)."""

    logp: torch.Tensor
    old_logp: torch.Tensor
    ref_logp: torch.Tensor
    mask: torch.Tensor
    advantages: torch.Tensor
    max_len: int
    clip_eps: float = 0.2
    beta: float = 0.04
    explicit: bool = True

    @property
    def valid(self) -> torch.Tensor:
        return self.mask.bool()

    def take(self, rows: slice) -> LossBatch:
        """The responses ``rows`` alone, with the same max_len and settings."""
        return replace(
            self,
            logp=self.logp[rows],
            old_logp=self.old_logp[rows],
            ref_logp=self.ref_logp[rows],
            mask=self.mask[rows],
            advantages=self.advantages[rows],
        )

    def with_padding(self, garbage: str, seed: int = 0) -> LossBatch:
        """The same batch with ``garbage`` at every padded position of the three scores."""
        rng = np.random.default_rng(seed)
        return replace(
            self,
            logp=_pad(self.logp, self.valid, garbage, rng),
            old_logp=_pad(self.old_logp, self.valid, garbage, rng),
            ref_logp=_pad(self.ref_logp, self.valid, garbage, rng),
        )


def _round(values: np.ndarray) -> np.ndarray:
    return np.round(values, 2)


def _garbage(shape: tuple[int, ...], garbage: str, rng: np.random.Generator) -> np.ndarray:
    if garbage == "mixed":
        choices = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 7.5])
        return choices[rng.integers(0, len(choices), size=shape)]
    value = {"zero": 0.0, "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "huge": 1e30}[garbage]
    return np.full(shape, value)


def _pad(scores: torch.Tensor, valid: torch.Tensor, garbage: str, rng: np.random.Generator) -> torch.Tensor:
    fill = torch.from_numpy(_garbage(tuple(scores.shape), garbage, rng)).to(scores.dtype)
    return torch.where(valid, scores, fill)


def _log_ratios(rng: np.random.Generator, shape: tuple[int, ...], clip_eps: float) -> np.ndarray:
    """log(ratio) spread across both sides of ``1 +/- clip_eps`` for the drawn ``clip_eps``: a
    ratio ``1 +/- f * clip_eps`` with ``f`` from 0.1 to 3, so tokens lie just inside, just
    outside and well outside the clip range (and a check of the clip range with another width
    sees a difference); a quarter lie far outside, up to 1.5 nats."""
    above = rng.random(shape) < 0.5
    spread = clip_eps * rng.uniform(0.1, 3.0, size=shape)
    ratio = np.where(above, 1.0 + spread, np.maximum(1.0 - spread, 0.05))
    far = rng.uniform(0.5, 1.5, size=shape) * np.where(above, 1.0, -1.0)
    return np.where(rng.random(shape) < 0.25, far, np.log(ratio))


@st.composite
def reward_batches(
    draw: st.DrawFn, *, max_groups: int = 4, max_group_size: int = 4, dtypes: tuple = DTYPES
) -> RewardBatch:
    """Groups with B == G and B != G, binary (verifier-style) or real-valued rewards."""
    dtype = draw(st.sampled_from(dtypes))
    groups = draw(st.integers(1, max_groups))
    size = draw(st.integers(2, max_group_size))
    kind = draw(st.sampled_from(("binary", "real")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "binary":
        values = rng.integers(0, 2, size=groups * size).astype(np.float64)
    else:
        values = _round(rng.uniform(-2.0, 2.0, size=groups * size))
    return RewardBatch(torch.from_numpy(values).to(dtype), size)


@st.composite
def loss_batches(
    draw: st.DrawFn,
    *,
    on_policy: bool = False,
    garbage: tuple[str, ...] = GARBAGE,
    max_rows: int = 6,
    max_width: int = 6,
    empty: bool | None = None,
) -> LossBatch:
    """Batches for ``drgrpo_loss``.

    They reach the corners: rows with no valid token and full rows, ``L < max_len`` and
    ``L == max_len``, prefix and scattered masks (bool, float or int), ratios spread across both
    sides of ``1 +/- clip_eps`` and far outside it with advantages of both signs, old scores so
    unlikely that exp() of them underflows, reference scores several nats away, and garbage in
    the padding. ``on_policy`` makes ``logp == old_logp == ref_logp``; ``empty=True`` masks out
    everything, ``empty=False`` keeps at least one valid token.
    """
    dtype = draw(st.sampled_from(DTYPES))
    rows = draw(st.integers(1, max_rows))
    width = draw(st.integers(1, max_width))
    max_len = width + draw(st.integers(0, 3))
    scattered = draw(st.booleans())
    mask_kind = draw(st.sampled_from(MASK_KINDS))
    explicit = draw(st.booleans())
    clip_eps = draw(st.sampled_from(CLIP_EPS)) if explicit else 0.2
    beta = draw(st.sampled_from(BETAS)) if explicit else 0.04
    fill = draw(st.sampled_from(garbage))
    plain = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    if scattered:
        valid = rng.random((rows, width)) < 0.6
    else:
        # Response lengths with the corners over-weighted: empty rows and full rows.
        lengths = np.where(
            rng.random(rows) < 0.5, rng.choice([0, width], size=rows), rng.integers(0, width + 1, size=rows)
        )
        valid = np.arange(width)[None, :] < lengths[:, None]
    if empty is True:
        valid[:] = False
    elif empty is False and not valid.any():
        valid[0, 0] = True

    shape = (rows, width)
    if plain:
        old = np.full(shape, -1.0)
        # Round log-ratios that still fall on both sides of each drawn clip range.
        log_ratio = rng.choice([-1.0, -0.15, 0.0, 0.15, 0.25, 1.0], size=shape)
        ref_shift = np.full(shape, 0.5)
        advantages = rng.choice([-1.0, 1.0], size=rows)
    else:
        old = _round(rng.uniform(-3.0, -0.05, size=shape))
        # Some tokens with very unlikely old scores: exp() of them underflows to 0 (below about
        # -104 in float32, -745 in float64), which only a ratio taken as exp(logp - old) survives.
        # Drawn as flags, so that a shrunk counterexample has ordinary scores when it can.
        if draw(st.booleans()):
            deepest = DEEPEST_LOGP[dtype]
            deep = rng.random(shape) < 0.3
            old = np.where(deep, _round(rng.uniform(deepest, 0.85 * deepest, size=shape)), old)
        log_ratio = _round(_log_ratios(rng, shape, clip_eps))
        # Reference scores up to several nats away on both sides, so that k3 reaches 10 and more.
        far = draw(st.booleans()) & (rng.random(shape) < 0.4)
        reach = np.where(far, 6.0, 1.0)
        ref_shift = _round(rng.uniform(-1.0, 1.0, size=shape) * reach)
        advantages = _round(rng.normal(0.0, 1.0, size=rows))
    logp = _round(old + log_ratio)
    if on_policy:
        old, ref = logp, logp
    else:
        ref = _round(logp + ref_shift)
    scores = np.stack([logp, old, ref])
    scores = np.where(valid, scores, _garbage(scores.shape, fill, rng))
    logp_t, old_t, ref_t = torch.from_numpy(scores).to(dtype).unbind(0)

    mask_t = torch.from_numpy(valid)
    if mask_kind == "float":
        mask_t = mask_t.to(dtype)
    elif mask_kind == "int":
        mask_t = mask_t.to(torch.int64)
    return LossBatch(
        logp=logp_t,
        old_logp=old_t,
        ref_logp=ref_t,
        mask=mask_t,
        advantages=torch.from_numpy(advantages).to(dtype),
        max_len=max_len,
        clip_eps=clip_eps,
        beta=beta,
        explicit=explicit,
    )


# The inputs the built-in checks share: checks that draw from the same Inputs run together,
# each seeing every example (grader.engine.runner).
SCALES = (2.0, 0.5, 10.0, -1.0, 3.0)
SHIFTS = (1.0, -3.0, 0.5, 10.0)
REWARDS = Inputs(
    "rewards",
    batch=reward_batches(),
    c=st.sampled_from(SCALES),
    shift=st.sampled_from(SHIFTS),
    seed=st.integers(0, 2**16),
    bad=st.one_of(st.integers(-3, 1), st.integers(2, 12)),
)
# At least one valid token: a batch with none is loss_zero_valid_tokens' case, and judged there only.
LOSS_INPUTS = Inputs(
    "loss",
    batch=loss_batches(empty=False),
    garbage=st.sampled_from(GARBAGE[1:]),
    extra=st.integers(1, 3),
    other_lengths=st.integers(0, 2**16),
)
# Clean padding here: garbage is loss_padding_isolated's business, and these checks' feedback
# should be about token weights and empty batches, not about nan.
ON_POLICY = Inputs("on_policy", batch=loss_batches(on_policy=True, empty=False, garbage=("zero",)))
NO_VALID_TOKENS = Inputs("no_valid_tokens", batch=loss_batches(empty=True, garbage=("zero",)))
