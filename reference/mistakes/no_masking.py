"""Ignores the mask in the loss and sums the token objective over every position, padding
included. Padded positions then add made-up tokens to every response (and nan or inf when they
hold it), and a batch with no valid token still has a loss."""

from reference.provided import token_objective, token_statistics

NAME = "no padding isolation"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_matches_reference", "loss_padding_isolated", "loss_zero_valid_tokens")
FIX = """Isolate padding with masked_logprobs (or torch.where) before token_objective, and sum
the objective only where mask is 1."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    objective, ratio, kl = token_objective(logp, old_logp, ref_logp, advantages, clip_eps, beta)
    loss = -objective.sum() / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, mask, clip_eps)
