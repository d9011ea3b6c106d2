"""Averages the stats over all N * L positions, padding included, instead of over the valid tokens
only. Padding dilutes them (clipfrac and kl_mean look smaller than they are, ratio_mean drifts
towards the padding's ratio), and they change with the padded width."""

import torch

from reference.provided import masked_logprobs, token_objective

NAME = "stats averaged over padding"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_match_reference", "stats_zero_without_tokens")
FIX = """Average over valid tokens only: sum where the mask is 1 and divide by the number of
valid tokens (at least 1), as token_statistics does."""


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
    stats = {
        "kl_mean": kl.mean(),
        "clipfrac": ((ratio - 1).abs() > clip_eps).to(ratio.dtype).mean(),
        "ratio_mean": ratio.mean(),
    }
    return loss, stats
