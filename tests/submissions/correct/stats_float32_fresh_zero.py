"""Returns the stats in float32 whatever logp's dtype (a fair choice for diagnostics: the
exercise asks for floating scalars), and, with no valid token at all, a fresh zero loss that
does not depend on logp: its gradient is missing, which is the same as a zero gradient."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    stats = {key: value.float() for key, value in token_statistics(ratio, kl, valid, clip_eps).items()}
    if not valid.any():
        return torch.zeros((), dtype=logp.dtype, requires_grad=True), stats
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    return -total / (logp.shape[0] * max_len), stats
