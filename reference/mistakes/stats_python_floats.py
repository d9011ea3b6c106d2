"""Converts the stats to Python floats with .item() for logging, instead of returning them as
detached () tensors."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "stats as Python floats"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_detached_scalars",)
FIX = """Return the stats as detached 0-dimensional tensors (token_statistics' dict as it is);
convert with .item() only where you log them."""


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
    return loss, {key: value.item() for key, value in stats.items()}
