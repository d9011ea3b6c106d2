"""Imports a module that does not exist."""

import torch_grpo_helpers  # noqa: F401


def drgrpo_advantages(rewards, group_size):
    return rewards


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    return logp.sum(), {}
