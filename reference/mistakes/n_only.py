"""Sums each response's masked objective and averages over responses: it divides by N but never by
max_len. Tokens weigh the same whatever their response's length, but the gradient is max_len
times too large, so its scale depends on the generation limit."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "no max_len in the denominator"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights")
FIX = """Divide the summed masked objective by N * max_len, not by N alone."""


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
    loss = -per_token.sum(dim=1).mean()
    return loss, token_statistics(ratio, kl, valid, clip_eps)
