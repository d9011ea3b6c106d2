"""Divides the centered rewards by the group's population standard deviation plus an eps "to keep
the scale stable". Whichever std and whichever eps, that is GRPO's difficulty normalization
again: questions that are almost always right or almost always wrong (a small std) get their
advantages blown up, and multiplying the rewards by c no longer multiplies the advantages by c."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "population std scaling (difficulty bias)"
TARGET = "drgrpo_advantages"
IDEA = "std_scaling"
CAUGHT_BY = ("advantages_match_reference", "advantages_scale_linear")
FIX = """Drop the division: Dr. GRPO's advantage is only r_i - mean(rewards of i's group)."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    centered = grouped - grouped.mean(dim=1, keepdim=True)
    scale = grouped.std(dim=1, unbiased=False, keepdim=True) + 1e-4
    return (centered / scale).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
