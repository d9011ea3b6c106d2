"""Returns loss.item(), a Python float, instead of the loss tensor, so the caller cannot call
backward() on it."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "loss returned as a Python float"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_return_structure", "loss_matches_reference")
FIX = """Return the loss tensor itself; call .item() only where you log it. The caller needs
loss.backward()."""


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
    loss = -total / (logp.shape[0] * max_len)
    return loss.item(), token_statistics(ratio, kl, valid, clip_eps)
