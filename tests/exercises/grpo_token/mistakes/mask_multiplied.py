"""Multiplies the surrogate by the mask instead of selecting the padding away: right while the
padding holds ordinary numbers, nan as soon as it holds inf or nan (inf * 0 is nan)."""

import torch

NAME = "padding multiplied by the mask"
TARGET = "grpo_token_objective"
CAUGHT_BY = ("token_objective_ignores_padding",)
FIX = """Select the padding away with torch.where before computing from it; never multiply by the mask."""


def grpo_token_objective(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp.detach())
    adv = advantages.detach()[:, None]
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
    return surrogate * mask.to(surrogate.dtype)
