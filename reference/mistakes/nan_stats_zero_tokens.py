"""Averages the stats by dividing by the valid-token count without clamping it, so a batch with
no valid token gives 0 / 0 = nan for every stat."""

import torch

from reference.provided import masked_logprobs, token_objective

NAME = "stats are nan with no valid token"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_zero_without_tokens",)
FIX = """Divide by the valid-token count clamped to at least 1 (count.clamp(min=1)), so that
with no valid token the stats are 0 / 1 = 0, or use token_statistics."""


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
    ratio, kl = ratio.detach(), kl.detach()
    count = valid.sum().to(ratio.dtype)
    stats = {
        "kl_mean": torch.where(valid, kl, torch.zeros_like(kl)).sum() / count,
        "clipfrac": (valid & ((ratio - 1).abs() > clip_eps)).sum().to(ratio.dtype) / count,
        "ratio_mean": torch.where(valid, ratio, torch.zeros_like(ratio)).sum() / count,
    }
    return loss, stats
