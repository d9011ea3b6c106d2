"""Centers each group through a [B, G] view broadcast back with expand_as, and sums the masked
objective per response before summing over responses and dividing by max_len, then by N."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.shape[0] % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.shape[0]} rewards")
    grouped = rewards.view(-1, group_size)
    return rewards - grouped.mean(dim=1, keepdim=True).expand_as(grouped).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask != 0
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    per_response = torch.where(valid, objective, torch.zeros_like(objective)).sum(dim=1)
    loss = -per_response.sum() / max_len / len(per_response)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
