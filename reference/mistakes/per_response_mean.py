"""Keeps GRPO's length normalization: averages each response's objective over its own valid
tokens, then averages over responses. A token of a 20-token response then weighs 4x less than a
token of a 5-token response with the same advantage, so long wrong answers are penalized less
per token and grow: the length bias Dr. GRPO removes."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "per-response mean (GRPO's length bias)"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights")
FIX = """Do not divide by each response's length: sum the masked objective over the whole batch
and divide once by the fixed N * max_len."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    per_token = torch.where(valid, objective, torch.zeros_like(objective))
    lengths = valid.sum(dim=1).clamp(min=1)
    loss = -(per_token.sum(dim=1) / lengths).mean()
    return loss, token_statistics(ratio, kl, valid, clip_eps)
