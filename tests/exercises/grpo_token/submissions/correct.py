"""A correct submission, written unlike the reference: the pessimistic surrogate as minus the
larger of the two losses, padding cleared with masked_fill on the log-ratio."""

import torch


def grpo_token_objective(logp, old_logp, advantages, mask, clip_eps=0.2):
    padding = ~mask.bool()
    log_ratio = (logp - old_logp.detach()).masked_fill(padding, 0.0)
    ratio = log_ratio.exp()
    adv = advantages.detach()[:, None]
    losses = torch.maximum(-adv * ratio, -adv * ratio.clamp(1 - clip_eps, 1 + clip_eps))
    return (-losses).masked_fill(padding, 0.0)
