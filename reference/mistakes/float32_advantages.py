"""Converts the rewards to float32 with .float() before centering, so float64 rewards
come back as float32 advantages and lose precision."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "advantages cast to float32"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_shape_dtype_device", "advantages_match_reference")
FIX = """Do not cast with .float(): compute in the rewards' own dtype, so float64 rewards give
float64 advantages."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.float().reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
