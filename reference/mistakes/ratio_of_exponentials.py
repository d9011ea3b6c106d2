"""Takes the ratio as exp(logp) / exp(old_logp): for an unlikely token (log-prob below about
-104 in float32, -745 in float64) both exponentials underflow to 0 and the ratio is 0/0 = nan."""

import torch

from reference.provided import masked_logprobs, token_statistics

NAME = "ratio as a quotient of exponentials"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "stats_match_reference")
FIX = """Take the ratio as exp(logp - old_logp): the difference of log-probs is small even when
each log-prob is very negative, while exp(logp) alone underflows to 0."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    logp, old_logp, ref_logp = masked_logprobs(logp, old_logp.detach(), ref_logp.detach(), valid)
    adv = advantages.detach().unsqueeze(1)
    ratio = torch.exp(logp) / torch.exp(old_logp)
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
    log_ratio = ref_logp - logp
    kl = log_ratio.exp() - log_ratio - 1
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
