"""Clips the ratio before multiplying by the advantage: min(ratio, clamp(ratio)) * A. For a
positive advantage that is the clipped surrogate, but for a negative one the minimum of the
ratios picks the wrong branch: a token whose ratio fell below 1 - clip_eps keeps pushing, and
one above 1 + clip_eps stops."""

import torch

from reference.provided import masked_logprobs, token_statistics

NAME = "minimum of the ratios, not of the surrogates"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_clipped_surrogate", "loss_matches_reference")
FIX = """Take the minimum of the two surrogates, min(ratio * A, clamp(ratio, 1 - clip_eps, 1 +
clip_eps) * A): multiply by the advantage first, then take the minimum."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    logp, old_logp, ref_logp = masked_logprobs(logp, old_logp.detach(), ref_logp.detach(), valid)
    adv = advantages.detach().unsqueeze(1)
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio, ratio.clamp(1 - clip_eps, 1 + clip_eps)) * adv
    log_ratio = ref_logp - logp
    kl = log_ratio.exp() - log_ratio - 1
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
