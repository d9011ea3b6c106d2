"""Divides by the number of valid tokens in the batch (DAPO's token-level mean) instead of the
fixed N * max_len. Within one batch every token weighs the same, but the weight depends on how
long all the batch's responses are: other responses' lengths change each token's gradient,
which Dr. GRPO's constant denominator rules out."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "token mean over the batch (DAPO)"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights", "loss_fixed_denominator")
FIX = """Divide by the fixed N * max_len instead of the number of valid tokens, so that no
response's length changes another response's weights."""


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
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / valid.sum().clamp(min=1)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
