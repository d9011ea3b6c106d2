"""Converts the scores and advantages to float32 with .float() before computing, so a float64
batch gets a float32 loss."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "loss computed in float32"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_return_structure",)
FIX = """Do not cast with .float(): compute in logp's dtype, so float64 inputs give a float64
loss."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    logp, old_logp, ref_logp = logp.float(), old_logp.float(), ref_logp.float()
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages.float(), clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
