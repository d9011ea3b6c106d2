"""GRPO's per-token clipped surrogate objective: your implementation.

Shapes: N responses, L padded tokens per response. ``mask`` [N, L] (bool or 0/1 numbers) says
which tokens are real; padded positions may hold any value, ``inf`` and ``nan`` included.
"""

from __future__ import annotations

import torch


def grpo_token_objective(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float = 0.2,
) -> torch.Tensor:
    """The clipped surrogate of every token, to be maximized; no reduction.

    Args:
        logp: [N, L] log-probabilities of the sampled tokens under the policy being trained.
            The only input gradients flow to.
        old_logp: [N, L] the same under the policy that sampled the responses.
        advantages: [N] one advantage per response, shared by its tokens.
        mask: [N, L] 1 (or True) for a real token, 0 for padding.
        clip_eps: the half-width of the clip range of the ratio.

    Returns:
        [N, L], in ``logp``'s dtype: with ``ratio = exp(logp - old_logp)``,
        ``min(ratio * A_i, clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A_i)`` at every real token
        of response i, and exactly 0 at padding, whatever the padding holds (its gradient is 0 too).
    """
    raise NotImplementedError("grpo_token_objective is not implemented yet")
