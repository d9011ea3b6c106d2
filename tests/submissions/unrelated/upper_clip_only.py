"""An unrelated bug, in no catalogue: the ratio is clipped from above only."""

import torch

from reference.provided import masked_logprobs, token_statistics


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
    surrogate = torch.minimum(ratio * adv, ratio.clamp(max=1 + clip_eps) * adv)
    log_ref = ref_logp - logp
    kl = log_ref.exp() - log_ref - 1
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    return -total / (logp.shape[0] * max_len), token_statistics(ratio, kl, valid, clip_eps)
