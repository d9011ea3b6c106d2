"""Subtracts the mean reward of the whole batch instead of each group's mean. Advantages must
compare a response only with the other responses to the same prompt: with a batch mean, an easy
prompt's responses all look good and a hard prompt's all look bad, the groups leak into each
other, and a group's advantages no longer sum to zero."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "batch mean instead of group mean"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_match_reference", "advantages_groups_sum_to_zero", "advantages_groups_independent")
FIX = """Reshape the rewards to [B, G] (groups are contiguous) and subtract the mean over
dim=1, with keepdim=True, then flatten back to [B*G]."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    return rewards - rewards.mean()


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
