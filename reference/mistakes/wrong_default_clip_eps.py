"""Declares clip_eps=0.1 as the default instead of 0.2, so callers relying on the default get
a narrower clip range."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "wrong default clip_eps"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference",)
FIX = """Declare clip_eps=0.2 (and beta=0.04) as the defaults, as the exercise's signature
does."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.1, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
