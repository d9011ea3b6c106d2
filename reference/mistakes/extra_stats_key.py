"""Adds the detached loss to the stats dict as a fourth key, "loss", when the contract asks for
exactly kl_mean, clipfrac and ratio_mean."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "an extra key in stats"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_keys",)
FIX = """Return exactly the keys kl_mean, clipfrac and ratio_mean (token_statistics' dict as it
is); log the loss separately."""


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
    stats["loss"] = loss.detach()
    return loss, stats
