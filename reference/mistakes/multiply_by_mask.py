"""Isolates padding by multiplying the scores by the mask instead of selecting them away. Padded
positions may hold anything, inf and nan included, and inf * 0 is nan (and so is exp(inf) * 0):
one bad padded value turns the whole loss and gradient into nan."""

from reference.provided import token_objective, token_statistics

NAME = "padding multiplied by the mask (inf * 0 = nan)"
TARGET = "drgrpo_loss"
CAUGHT_BY = ("loss_padding_isolated", "loss_matches_reference")
FIX = """Select the padding away before computing anything from it: masked_logprobs, or
torch.where(mask.bool(), x, torch.zeros_like(x)), and torch.where again on the objective."""


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    weights = mask.to(logp.dtype)
    objective, ratio, kl = token_objective(
        logp * weights, old_logp * weights, ref_logp * weights, advantages, clip_eps, beta
    )
    loss = -(objective * weights).sum() / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, mask, clip_eps)
