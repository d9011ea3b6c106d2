"""Returns the negated sum of the masked token objective over the whole batch and forgets the
constant N * max_len altogether. Every token then has the same weight, as Dr. GRPO wants, but
that weight is N * max_len times too large: the gradient's scale grows with the batch size and
the generation limit, so a learning rate tuned for one batch size is wrong for another."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics

NAME = "no denominator at all"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_equal_token_weights")
FIX = """Divide the summed masked objective by N * max_len (logp.shape[0] * max_len): the
constant keeps the loss's scale independent of the batch size and the generation limit."""


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
    loss = -torch.where(valid, objective, torch.zeros_like(objective)).sum()
    return loss, token_statistics(ratio, kl, valid, clip_eps)
