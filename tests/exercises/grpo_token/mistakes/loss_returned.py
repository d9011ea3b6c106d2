"""Returns the per-token loss, minus the clipped surrogate, where the objective to maximize is
asked for: every value and gradient has the wrong sign."""

import torch

NAME = "loss returned instead of the objective"
TARGET = "grpo_token_objective"
CAUGHT_BY = ("token_objective_matches_reference", "token_objective_on_policy")
FIX = """Return min(ratio * A, clipped ratio * A) itself: the caller negates it to make a loss."""


def grpo_token_objective(logp, old_logp, advantages, mask, clip_eps=0.2):
    valid = mask.bool()
    zeros = torch.zeros_like(logp)
    ratio = torch.exp(torch.where(valid, logp - old_logp.detach(), zeros))
    adv = advantages.detach()[:, None]
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
    return torch.where(valid, -surrogate, zeros)
