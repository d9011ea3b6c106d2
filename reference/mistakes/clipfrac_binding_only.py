"""Counts a token in clipfrac only where the clip binds for its advantage's sign (ratio above 1 +
clip_eps with A > 0, below 1 - clip_eps with A < 0). That is a sensible diagnostic, but not the
exercise's: clipfrac is the fraction of valid tokens whose ratio lies outside [1 - clip_eps, 1
+ clip_eps], whichever the advantage's sign."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "clipfrac counted only where the clip binds"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_match_reference",)
FIX = """Count every valid token with abs(ratio - 1) > clip_eps, whatever the sign of its
advantage, and divide by the number of valid tokens (token_statistics does exactly this)."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    adv = advantages.detach().unsqueeze(1)
    binding = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))
    stats = token_statistics(ratio, kl, valid, clip_eps)
    stats["clipfrac"] = (valid & binding).sum().to(ratio.dtype) / valid.sum().clamp(min=1)
    return loss, stats
