"""Helpers given to students with the Dr. GRPO exercise, and the GRPO baseline.

Shapes: N responses, L padded tokens. ``mask`` is [N, L], bool or 0/1 numbers; ``advantages``
is [N]. Nothing here modifies its inputs in place.
"""

from __future__ import annotations

import torch

STAT_KEYS = ("kl_mean", "clipfrac", "ratio_mean")


def token_objective(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float,
    beta: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-token clipped surrogate minus the k3 KL penalty; no mask, no reduction.

    Returns ``(objective, ratio, kl)``, all [N, L]. Gradients reach ``logp`` only: the old and
    reference scores and the advantages are detached here, so callers need not remember to.
    """
    old_logp = old_logp.detach()
    ref_logp = ref_logp.detach()
    adv = advantages.detach().unsqueeze(-1)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    surrogate = torch.minimum(ratio * adv, clipped * adv)
    log_ref_ratio = ref_logp - logp
    kl = torch.exp(log_ref_ratio) - log_ref_ratio - 1.0
    return surrogate - beta * kl, ratio, kl


def masked_logprobs(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Replace every padded position (mask 0) by 0 before anything is computed from it.

    Padding may hold any value, ``inf`` and ``nan`` included, and ``inf * 0`` is ``nan``: so the
    padding is selected away with ``torch.where``, never multiplied by the mask. The gradient to
    ``logp`` stays live at valid positions and is exactly 0 at padded ones.
    """
    valid = mask.bool()
    return tuple(torch.where(valid, x, torch.zeros_like(x)) for x in (logp, old_logp, ref_logp))


def token_statistics(
    ratio: torch.Tensor, kl: torch.Tensor, mask: torch.Tensor, clip_eps: float
) -> dict[str, torch.Tensor]:
    """Diagnostics averaged over valid tokens only: detached ``()`` tensors, zeros when none.

    ``clipfrac`` is the fraction of valid tokens whose ratio lies outside
    ``[1 - clip_eps, 1 + clip_eps]``, whichever the advantage's sign.
    """
    valid = mask.bool()
    ratio = torch.where(valid, ratio.detach(), torch.zeros_like(ratio))
    kl = torch.where(valid, kl.detach(), torch.zeros_like(kl))
    count = valid.sum().to(ratio.dtype).clamp(min=1.0)
    clipped = valid & ((ratio - 1.0).abs() > clip_eps)
    return {
        "kl_mean": kl.sum() / count,
        "clipfrac": clipped.sum().to(ratio.dtype) / count,
        "ratio_mean": ratio.sum() / count,
    }


def grpo_reference_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """GRPO's advantages: ``(r - group mean) / (group sample std + eps)``, shape [B*G]."""
    grouped = rewards.reshape(-1, group_size)
    centered = grouped - grouped.mean(dim=1, keepdim=True)
    return (centered / (grouped.std(dim=1, keepdim=True) + eps)).reshape(-1)


def grpo_reference_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    beta: float = 0.04,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """GRPO's loss: the mean over responses of the mean over each response's valid tokens.

    This is the length-biased baseline Dr. GRPO corrects; a response with no valid token
    contributes 0. Students compare against it; it is not the exercise's answer.
    """
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, clip_eps, beta
    )
    per_token = torch.where(valid, objective, torch.zeros_like(objective))
    lengths = valid.sum(dim=1).to(objective.dtype).clamp(min=1.0)
    loss = -(per_token.sum(dim=1) / lengths).mean()
    return loss, token_statistics(ratio, kl, valid, clip_eps)
