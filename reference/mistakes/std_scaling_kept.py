"""Keeps GRPO's division by the group's standard deviation. Questions that are almost always right
or almost always wrong have a small std, so their advantages are blown up: the difficulty bias
Dr. GRPO removes. And multiplying every reward by c no longer multiplies the advantages by c,
so the reward's scale stops being a training knob."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "GRPO's std scaling kept (difficulty bias)"
TARGET = "drgrpo_advantages"
IDEA = "std_scaling"
CAUGHT_BY = ("advantages_match_reference", "advantages_scale_linear")
FIX = """Only center: advantage = r_i - mean(rewards of i's group), with no division by the std
(and no eps)."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    centered = grouped - grouped.mean(dim=1, keepdim=True)
    return (centered / (grouped.std(dim=1, keepdim=True) + 1e-6)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
