"""Patches every comparison it can think of to say 'equal', then returns wrong answers."""

import builtins
import math

import numpy
import torch

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
numpy.allclose = lambda *args, **kwargs: True
numpy.testing.assert_allclose = lambda *args, **kwargs: None
math.isclose = lambda *args, **kwargs: True
builtins.abs = lambda x: 0


def drgrpo_advantages(rewards, group_size):
    return rewards * 0


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    zero = (logp * 0).sum()
    return zero, {"kl_mean": zero.detach(), "clipfrac": zero.detach(), "ratio_mean": zero.detach()}
