"""Uses the leave-one-out (RLOO) baseline, the mean of the other responses of the group. It is
unbiased and centered, but equals G / (G - 1) times the exercise's advantage: Dr. GRPO
subtracts the mean of the whole group, the response itself included."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "leave-one-out (RLOO) baseline"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_match_reference",)
FIX = """Subtract the mean of the whole group (the response itself included): grouped -
grouped.mean(dim=1, keepdim=True)."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    others = (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)
    return (grouped - others).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
