"""Computes the ratio, the clipped surrogate and the k3 KL by hand, without the helpers: padding
is selected away with torch.where first, and torch.where also picks the smaller surrogate term."""

import torch


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    means = rewards.reshape(-1, group_size).mean(dim=1)
    return rewards - means.repeat_interleave(group_size)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    logp = torch.where(valid, logp, 0.0)
    old_logp = torch.where(valid, old_logp.detach(), 0.0)
    ref_logp = torch.where(valid, ref_logp.detach(), 0.0)
    adv = advantages.detach()[:, None]

    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv
    surrogate = torch.where(unclipped <= clipped, unclipped, clipped)
    log_ref = ref_logp - logp
    kl = torch.exp(log_ref) - log_ref - 1
    objective = torch.where(valid, surrogate - beta * kl, 0.0)
    loss = -objective.sum() / (logp.shape[0] * max_len)

    ratio, kl = ratio.detach(), kl.detach()
    count = valid.sum().clamp(min=1).to(logp.dtype)
    outside = valid & ((ratio - 1).abs() > clip_eps)
    stats = {
        "kl_mean": torch.where(valid, kl, 0.0).sum() / count,
        "clipfrac": outside.sum().to(logp.dtype) / count,
        "ratio_mean": torch.where(valid, ratio, 0.0).sum() / count,
    }
    return loss, stats
