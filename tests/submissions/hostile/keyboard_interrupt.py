"""Raises KeyboardInterrupt and SystemExit, as if to stop the grader."""

import sys


def drgrpo_advantages(rewards, group_size):
    raise KeyboardInterrupt


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    sys.exit("stop grading")
