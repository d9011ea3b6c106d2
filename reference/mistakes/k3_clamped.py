"""Clamps the k3 estimate to [-10, 10], as some RL libraries do for stability: the exercise's
k3 has no clamp, so a token whose reference score is a few nats above its log-prob gets too
small a penalty and no KL gradient."""

import torch

from reference.provided import masked_logprobs, token_statistics

NAME = "k3 KL estimate clamped"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "stats_match_reference")
FIX = """Use k3 = exp(ref_logp - logp) - (ref_logp - logp) - 1 as it is, without a clamp."""


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
    log_ratio = ref_logp - logp
    kl = (log_ratio.exp() - log_ratio - 1).clamp(-10.0, 10.0)
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
