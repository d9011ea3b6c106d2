"""Reshapes the rewards to [G, B] and averages over the first axis, so a group is every
B-th reward instead of G adjacent ones; the shapes still work out when B == G."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "strided instead of contiguous groups"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_match_reference", "advantages_groups_sum_to_zero", "advantages_groups_independent")
FIX = """Groups are contiguous: rewards[k*G:(k+1)*G] is group k, so reshape to [B, G] with
reshape(-1, group_size) and take the mean over dim=1."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(group_size, -1)
    return (grouped - grouped.mean(dim=0, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
