"""Accumulates the per-response sums into a logp.new_zeros(1) buffer, so the loss has shape [1]
instead of being a () scalar."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "loss of shape [1]"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_return_structure",)
FIX = """Reduce with .sum() to a 0-dimensional tensor instead of accumulating into
new_zeros(1): the loss must have shape ()."""


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
    per_token = torch.where(valid, objective, torch.zeros_like(objective))
    total = logp.new_zeros(1)
    for row in per_token:
        total = total + row.sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
