"""Dr. GRPO's two normalization corrections: your implementation.

GRPO normalizes twice, and both normalizations bias training ("Understanding R1-Zero-Like
Training", Liu et al. 2025, sections 3.1-3.2):

* Difficulty bias: dividing group-centered rewards by the group's standard deviation up-weights
  questions that are almost always right or almost always wrong. Dr. GRPO only centers.
* Length bias: averaging the token objective within each response gives every token of a long
  response a smaller weight, so long wrong answers are penalized less. Dr. GRPO sums the masked
  token objective over the batch and divides by one fixed constant, ``N * max_len``.

Shapes: B prompts, G responses per prompt (adjacent in the batch), N = B * G responses, L padded
tokens per response. Fill in the two functions below; the helpers imported here are provided
and correct. Grade your file with ``python -m grader drgrpo.py``.
"""

from __future__ import annotations

import torch

from reference.provided import masked_logprobs, token_objective, token_statistics  # noqa: F401


def drgrpo_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Group-centered advantages, without std scaling.

    Args:
        rewards: floating tensor of shape [B * G]. Groups are contiguous:
            ``rewards[k * G:(k + 1) * G]`` are the G responses to prompt k.
        group_size: G, the number of responses per prompt.

    Returns:
        A tensor of shape [B * G], in the same order, dtype and device as ``rewards``:
        ``A_i = r_i - mean(rewards of i's group)``. No division by the standard deviation, and
        no group axis in the result. Multiplying all rewards by c multiplies the advantages by c.

    Raises:
        ValueError: if ``group_size < 2``, or if it does not divide the number of rewards.

    ``rewards`` must not be modified in place.
    """
    raise NotImplementedError("drgrpo_advantages is not implemented yet")


def drgrpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    max_len: int,
    clip_eps: float = 0.2,
    beta: float = 0.04,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The Dr. GRPO token loss, divided by the fixed constant ``N * max_len``.

    Args:
        logp: [N, L] log-probabilities of the sampled tokens under the policy being trained.
            The only input gradients flow to.
        old_logp: [N, L] the same under the policy that sampled the responses.
        ref_logp: [N, L] the same under the frozen reference policy (for the KL penalty).
        mask: [N, L], bool or 0/1 numbers: 1 at real tokens, 0 at padding. Padded positions may
            hold any value in the three score tensors, ``inf`` and ``nan`` included.
        advantages: [N] one advantage per response.
        max_len: the generation limit (a positive int, ``L <= max_len``). Not the longest
            response in the batch, not the padded width L.
        clip_eps: the PPO clip range.
        beta: the weight of the KL penalty.

    Returns:
        ``(loss, stats)`` where

        * ``loss`` is a scalar tensor of shape ``()`` with the dtype of ``logp``:
          ``-(1 / (N * max_len)) * sum over i, t of mask[i, t] * objective[i, t]``, with the
          per-token objective of ``token_objective``. With no valid token at all, ``loss`` is 0
          and ``loss.backward()`` still works.
        * ``stats`` is a dict with exactly the keys ``kl_mean``, ``clipfrac`` and
          ``ratio_mean``: detached floating tensors of shape ``()``, averaged over valid tokens
          only (``clipfrac`` is the fraction with ``abs(ratio - 1) > clip_eps``), all 0 when
          there is no valid token. ``token_statistics`` computes them.

    Padding must change nothing: not the loss, not the gradient (exactly 0 at padded
    positions), not the stats. Isolate it before computing the token objective
    (``masked_logprobs``), because ``inf * 0`` is ``nan``. Gradients reach ``logp`` only, and
    no input may be modified in place.
    """
    raise NotImplementedError("drgrpo_loss is not implemented yet")
