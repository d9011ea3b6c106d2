"""A student's correct Dr. GRPO solution, written from the template."""

from __future__ import annotations

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"cannot split {rewards.numel()} rewards into groups of {group_size}")
    groups = rewards.view(-1, group_size)
    return (groups - groups.mean(dim=1, keepdim=True)).view(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    logp, old_logp, ref_logp = masked_logprobs(logp, old_logp, ref_logp, valid)
    objective, ratio, kl = token_objective(logp, old_logp, ref_logp, advantages, clip_eps, beta)
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
