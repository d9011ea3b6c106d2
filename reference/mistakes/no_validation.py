"""Does not validate group_size: a group size of 1 silently gives all-zero advantages,
and 0, negative or non-dividing sizes fail inside reshape with a RuntimeError, not a ValueError."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "group_size not validated"
TARGET = "drgrpo_advantages"
IDEA = "group_size_validation"
CAUGHT_BY = ("advantages_invalid_group_size",)
FIX = """Check group_size before reshaping: raise ValueError when it is below 2 or does not
divide rewards.numel()."""


def drgrpo_advantages(rewards, group_size):
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
