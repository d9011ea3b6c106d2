"""The reference solution of the GRPO token objective exercise (staff only: the grader keeps it
out of the workers' reach, as it does Dr. GRPO's)."""

from __future__ import annotations

import torch


def grpo_token_objective(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float = 0.2,
) -> torch.Tensor:
    """``min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A)`` per valid token, 0 at padding.

    Padding is selected away before anything is computed from it, never multiplied by the mask:
    ``inf * 0`` is ``nan``, and so is the gradient through it.
    """
    valid = mask.bool()
    zeros = torch.zeros_like(logp)
    logp = torch.where(valid, logp, zeros)
    old_logp = torch.where(valid, old_logp.detach(), zeros)
    adv = advantages.detach().unsqueeze(-1)
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * adv)
    return torch.where(valid, surrogate, zeros)
