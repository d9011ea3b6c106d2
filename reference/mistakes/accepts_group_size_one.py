"""Rejects only group sizes below 1, so group_size == 1 is accepted and every advantage
is silently 0 instead of raising ValueError."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "group_size == 1 accepted"
TARGET = "drgrpo_advantages"
IDEA = "group_size_validation"
CAUGHT_BY = ("advantages_invalid_group_size",)
FIX = """Reject group_size < 2 (and any group size that does not divide rewards.numel()) with a
ValueError: a group of one has no peers to compare with, so its advantage means nothing."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 1 or rewards.numel() % group_size != 0:
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
    return loss, token_statistics(ratio, kl, valid, clip_eps)
