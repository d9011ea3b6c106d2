"""Divides the summed objective by max_len only and forgets N, the number of responses. Tokens
still weigh the same whatever their response's length, but the loss and its gradient grow with
the batch size, so the learning rate would have to change with it."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "no N in the denominator"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights")
FIX = """Divide by N * max_len, with N = logp.shape[0] the number of responses in the batch."""


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
    loss = -total / max_len
    return loss, token_statistics(ratio, kl, valid, clip_eps)
