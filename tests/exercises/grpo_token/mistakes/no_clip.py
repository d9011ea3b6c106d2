"""Returns the unclipped surrogate ratio * A: the clip range is ignored, so a token far from the
sampling policy keeps pushing the policy further."""

import torch

NAME = "no clipping"
TARGET = "grpo_token_objective"
CAUGHT_BY = ("token_objective_matches_reference",)
FIX = """Take min(ratio * A, clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A) per token."""


def grpo_token_objective(logp, old_logp, advantages, mask, clip_eps=0.2):
    valid = mask.bool()
    zeros = torch.zeros_like(logp)
    ratio = torch.exp(torch.where(valid, logp - old_logp.detach(), zeros))
    return torch.where(valid, ratio * advantages.detach()[:, None], zeros)
