"""drgrpo_loss dereferences a null pointer through ctypes."""

import ctypes


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError("bad group size")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    return ctypes.string_at(0), {}
