"""Counts a token in clipfrac only when its ratio is above 1 + clip_eps. Tokens whose ratio fell
below 1 - clip_eps are outside the clip range too, so clipfrac understates how often the clip
is active."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "clipfrac counted on one side only"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_token_averages", "stats_match_reference")
FIX = """Count every valid token with abs(ratio - 1) > clip_eps: below 1 - clip_eps as well as
above 1 + clip_eps."""


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
    stats = token_statistics(ratio, kl, valid, clip_eps)
    above = valid & (ratio.detach() > 1 + clip_eps)
    stats["clipfrac"] = above.sum().to(ratio.dtype) / valid.sum().clamp(min=1)
    return loss, stats
