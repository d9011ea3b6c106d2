"""Clamps a detached ratio for the clipped branch. The loss's value is right, but where the
ratio is inside the clip range both branches are equal, torch.minimum shares the gradient
between them, and the detached one drops its half: every unclipped token learns at half speed."""

import torch

from reference.provided import masked_logprobs, token_statistics

NAME = "clipped branch detached"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_clipped_surrogate", "loss_equal_token_weights", "loss_matches_reference")
FIX = """Clamp the ratio itself, not ratio.detach(): torch.clamp already sends no gradient where it
clips, and inside the range the clipped branch must carry its share."""


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
    surrogate = torch.minimum(ratio * adv, ratio.detach().clamp(1 - clip_eps, 1 + clip_eps) * adv)
    log_ratio = ref_logp - logp
    kl = log_ratio.exp() - log_ratio - 1
    total = torch.where(valid, surrogate - beta * kl, torch.zeros_like(kl)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
