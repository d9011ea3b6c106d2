"""A correct loss that takes 4 s on the HTML report's plot inputs only (two responses at the
on-policy point, advantages of 1, max_len 30): 100 such calls would hold a grade for minutes.
Its advantages are not written yet."""

import time

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards, group_size):
    raise NotImplementedError


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    if logp.shape[0] == 2 and max_len == 30 and bool((logp == -1).all() and (advantages == 1).all()):
        time.sleep(4)
    valid = mask.bool()
    logp, old_logp, ref_logp = masked_logprobs(logp, old_logp, ref_logp, valid)
    objective, ratio, kl = token_objective(logp, old_logp, ref_logp, advantages, clip_eps, beta)
    total = torch.where(valid, objective, torch.zeros_like(objective)).sum()
    loss = -total / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, clip_eps)
