"""Loops over the groups for the advantages and over the responses for the loss, keeping only each
response's valid tokens by boolean indexing, so padding never enters any computation."""

import torch


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or len(rewards) % group_size != 0:
        raise ValueError(f"cannot split {len(rewards)} rewards into groups of {group_size}")
    advantages = torch.empty_like(rewards)
    for start in range(0, len(rewards), group_size):
        group = rewards[start : start + group_size]
        advantages[start : start + group_size] = group - group.mean()
    return advantages


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    total = logp.new_zeros(())
    ratios, kls = [], []
    for i in range(logp.shape[0]):
        row = valid[i]
        new, old, ref = logp[i][row], old_logp[i][row].detach(), ref_logp[i][row].detach()
        adv = advantages[i].detach()
        ratio = torch.exp(new - old)
        surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
        kl = torch.exp(ref - new) - (ref - new) - 1
        total = total + (surrogate - beta * kl).sum()
        ratios.append(ratio.detach())
        kls.append(kl.detach())
    loss = -total / (logp.shape[0] * max_len)

    ratio, kl = torch.cat(ratios), torch.cat(kls)
    count = max(ratio.numel(), 1)
    stats = {
        "kl_mean": kl.sum() / count,
        "clipfrac": ((ratio - 1).abs() > clip_eps).sum().to(logp.dtype) / count,
        "ratio_mean": ratio.sum() / count,
    }
    return loss, stats
