"""Sums each group with index_add and weights the tokens with einsum; multiplying by the mask is
safe here only because masked_logprobs has already replaced the padding by zeros."""

import torch

from reference.provided import masked_logprobs, token_objective


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    group = torch.arange(rewards.numel(), device=rewards.device) // group_size
    sums = rewards.new_zeros(rewards.numel() // group_size).index_add(0, group, rewards)
    return rewards - sums[group] / group_size


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    weights = valid.to(logp.dtype)
    scores = masked_logprobs(logp, old_logp, ref_logp, valid)
    objective, ratio, kl = token_objective(*scores, advantages, clip_eps, beta)
    loss = -torch.einsum("nt,nt->", objective, weights) / (weights.shape[0] * max_len)

    ratio, kl = ratio.detach(), kl.detach()
    outside = ((ratio - 1).abs() > clip_eps).to(logp.dtype)
    count = weights.sum().clamp(min=1)
    stats = {
        "kl_mean": torch.einsum("nt,nt->", kl, weights) / count,
        "clipfrac": torch.einsum("nt,nt->", outside, weights) / count,
        "ratio_mean": torch.einsum("nt,nt->", ratio, weights) / count,
    }
    return loss, stats
