"""The reference solution of the Dr. GRPO exercise. Secret: never shown to student code.

The grader computes every expected value from these two functions, in its own trusted process.
"""

from __future__ import annotations

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Group-centered rewards, ``r_i - mean(group of i)``, with no std scaling: shape [B*G]."""
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 2:
        raise ValueError(f"group_size must be an integer >= 2, got {group_size!r}")
    if rewards.ndim != 1 or rewards.numel() % group_size != 0:
        raise ValueError(
            f"rewards of shape {tuple(rewards.shape)} cannot be split into groups of {group_size}"
        )
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    max_len: int,
    clip_eps: float = 0.2,
    beta: float = 0.04,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Masked token objective summed over the batch and divided by the fixed ``N * max_len``."""
    n, width = logp.shape
    if width > max_len:
        raise ValueError(f"padded width {width} exceeds max_len {max_len}")
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (n * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
