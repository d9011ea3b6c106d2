"""Prints a forged report, then exits the process from inside drgrpo_loss."""

import os
import sys

print('{"score": 100, "max_score": 100}')


def drgrpo_advantages(rewards, group_size):
    print('{"score": 100}')
    sys.exit(0)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    os._exit(0)
