"""Subtracts a fixed baseline of 0.5 from every reward ("the middle of a 0/1 reward") instead of
each group's own mean. It agrees with the group mean only for a group that is exactly half
right: in a question the model almost always solves, every correct response gets +0.5 and is
reinforced although it is no better than its peers, so the advantages no longer sum to zero
within a group, and adding the same constant to every reward changes them, although such a
shift says nothing about which response was better."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "a constant baseline instead of the group mean"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_match_reference", "advantages_shift_invariant", "advantages_groups_sum_to_zero")
FIX = """Subtract each group's own mean reward: reshape the rewards to [B, G] and take
rewards - rewards.mean(dim=1, keepdim=True); the baseline must move with the group."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    return rewards - 0.5


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
