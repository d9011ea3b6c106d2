"""Computes the loss with the caller's clip_eps but counts clipfrac against a hard-coded 0.2:
the stats are right only with the default clip range."""

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "clipfrac against a hard-coded 0.2"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("stats_match_reference",)
FIX = """Pass the clip_eps argument to token_statistics (or compare |ratio - 1| with clip_eps)
instead of the literal 0.2."""


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
    total = objective.where(valid, objective.new_zeros(())).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, 0.2)
