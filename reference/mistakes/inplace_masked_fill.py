"""Zeroes the padding of old_logp and ref_logp with in-place masked_fill_, which overwrites the
caller's tensors (logp itself is filled out of place)."""

import torch

from reference.provided import token_objective, token_statistics

NAME = "padding zeroed in place"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_inputs_untouched",)
FIX = """Build new tensors instead of editing the caller's: masked_fill (no underscore) or
torch.where, or simply masked_logprobs."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    old_logp.masked_fill_(~valid, 0.0)
    ref_logp.masked_fill_(~valid, 0.0)
    logp = logp.masked_fill(~valid, 0.0)
    objective, ratio, kl = token_objective(logp, old_logp, ref_logp, advantages, clip_eps, beta)
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
