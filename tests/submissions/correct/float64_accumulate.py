"""Does all the arithmetic in float64 for accuracy and casts the results back to the input dtype,
so the returned advantages, loss and stats still have the dtype they were given."""

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"group_size {group_size} does not split {rewards.numel()} rewards")
    grouped = rewards.double().reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1).to(rewards.dtype)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    valid = mask.bool()
    scores = masked_logprobs(logp.double(), old_logp.double(), ref_logp.double(), valid)
    objective, ratio, kl = token_objective(*scores, advantages.double(), clip_eps, beta)
    total = torch.where(valid, objective, 0.0).sum()
    loss = (-total / (logp.shape[0] * max_len)).to(logp.dtype)
    stats = token_statistics(ratio, kl, valid, clip_eps)
    return loss, {key: value.to(logp.dtype) for key, value in stats.items()}
