"""Drops the KL penalty from the loss (beta = 0, as in the paper's runs) whatever beta the
caller passes."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "KL term dropped"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference",)
FIX = """Pass beta through to token_objective: the exercise keeps the KL penalty (default 0.04)
so that only the two normalizations change; beta = 0 is the caller's choice, not yours."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, 0.0
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
