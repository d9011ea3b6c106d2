"""Passes a hard-coded 0.2 to token_objective instead of the clip_eps argument, so the loss
ignores the caller's clip range."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "clip_eps hard-coded"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference",)
FIX = """Pass the clip_eps argument through to token_objective (and token_statistics) instead
of the literal 0.2."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, 0.2, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
