"""Returns the centered rewards with the group axis kept, shape [B, G], instead of
flattening them back to [B * G]."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "group axis kept in the advantages"
TARGET = "drgrpo_advantages"
CAUGHT_BY = ("advantages_shape_dtype_device",)
FIX = """Flatten the centered [B, G] tensor back to [B*G] with .reshape(-1) before returning
it."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return grouped - grouped.mean(dim=1, keepdim=True)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
