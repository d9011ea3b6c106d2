"""Subtracts the group means from the rewards in place (rewards -= ...), which
overwrites the caller's rewards tensor."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "rewards centered in place"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_input_untouched",)
FIX = """Compute a new tensor, rewards - means, instead of rewards -= ...: the caller still
needs its rewards after the call."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    means = rewards.reshape(-1, group_size).mean(dim=1)
    rewards -= means.repeat_interleave(group_size)
    return rewards


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
