"""Takes the mean over all N * L positions of the masked objective, so it divides by the padded
width L instead of max_len. L is an accident of batching (the longest response, or the padding
the collator chose): adding padding columns shrinks every token's gradient."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "padded width L instead of max_len"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights", "loss_fixed_denominator")
FIX = """Sum the masked objective and divide by N * max_len, using the max_len argument;
.mean() over the padded [N, L] tensor divides by N * L."""


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
    per_token = torch.where(valid, objective, torch.zeros_like(objective))
    loss = -per_token.mean()
    return loss, token_statistics(ratio, kl, valid, clip_eps)
