"""drgrpo_loss without the clip_eps and beta parameters; advantages take the arguments swapped."""

from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(group_size, rewards):
    grouped = rewards.reshape(-1, group_size)
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len):
    valid = mask.bool()
    objective, ratio, kl = token_objective(
        *masked_logprobs(logp, old_logp, ref_logp, valid), advantages, 0.2, 0.04
    )
    loss = -(objective * valid).sum() / (logp.shape[0] * max_len)
    return loss, token_statistics(ratio, kl, valid, 0.2)
