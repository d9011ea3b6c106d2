"""Writes the k3 estimator with the log-ratio the wrong way round, exp(logp - ref) - (logp - ref)
- 1, which estimates KL(ref || policy) instead of KL(policy || ref)."""

import torch

from reference.provided import masked_logprobs, token_statistics

NAME = "k3 KL estimator reversed"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "stats_match_reference")
FIX = """Use the log-ratio ref_logp - logp: kl = exp(ref_logp - logp) - (ref_logp - logp) - 1,
or call token_objective, which computes it for you."""


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
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
    log_ratio = logp - ref_logp
    kl = log_ratio.exp() - log_ratio - 1
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
