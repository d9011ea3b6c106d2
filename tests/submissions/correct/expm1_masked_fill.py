"""Groups the rewards with unfold and isolates padding with out-of-place masked_fill; the k3 KL is
written as expm1(d) - d, which is more accurate when the reference and policy scores are close."""

import torch

from reference.provided import token_statistics


def drgrpo_advantages(rewards, group_size):
    if group_size < 2 or len(rewards) % group_size != 0:
        raise ValueError(f"group_size must be >= 2 and divide {len(rewards)}, got {group_size}")
    groups = rewards.unfold(0, group_size, group_size)
    return (groups - groups.mean(dim=1, keepdim=True)).flatten()


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    pad = ~mask.bool()
    logp = logp.masked_fill(pad, 0.0)
    old_logp = old_logp.detach().masked_fill(pad, 0.0)
    ref_logp = ref_logp.detach().masked_fill(pad, 0.0)
    adv = advantages.detach().unsqueeze(1)

    ratio = (logp - old_logp).exp()
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
    diff = ref_logp - logp
    kl = torch.expm1(diff) - diff
    objective = (surrogate - beta * kl).masked_fill(pad, 0.0)
    loss = objective.sum().neg() / (objective.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, ~pad, clip_eps)
