"""Divides by N times the longest response in the batch rather than by N * max_len, the generation
limit. The constant then depends on the batch: when a long response joins or leaves the batch,
every other token's gradient changes, which is a length bias again, only a batch-wide one."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "longest response instead of max_len"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights")
FIX = """Use the max_len argument (the caller's fixed generation limit), not the longest
response: loss = -sum / (N * max_len)."""


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
    longest = max(int(valid.sum(dim=1).max()), 1)
    loss = -total / (logp.shape[0] * longest)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
