"""Averages each stat over every response's own valid tokens, then over the responses. A token
of a short response then weighs more in kl_mean, clipfrac and ratio_mean than one of a long
response: the diagnostics carry the length bias the loss removed."""

import torch

from reference.provided import masked_logprobs, token_objective

NAME = "stats averaged per response"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_token_averages", "stats_match_reference")
FIX = """Average over all the batch's valid tokens at once (sum over valid tokens, divided by
their number), as token_statistics does."""


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
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    counts = valid.sum(dim=1).to(ratio.dtype)
    rows = (counts > 0).sum().clamp(min=1)

    def mean(x):
        per_row = torch.where(valid, x.detach(), torch.zeros_like(x)).sum(dim=1) / counts.clamp(min=1)
        return per_row.sum() / rows

    clipped = ((ratio - 1).abs() > clip_eps).to(ratio.dtype)
    return loss, {"kl_mean": mean(kl), "clipfrac": mean(clipped), "ratio_mean": mean(ratio)}
