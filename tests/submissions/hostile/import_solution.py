"""Tries to import the reference solution; falls back to a wrong loss when refused."""

try:
    from reference.solution import drgrpo_advantages, drgrpo_loss
except ImportError:

    def drgrpo_advantages(rewards, group_size):
        return rewards

    def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
        raise RuntimeError("the solution could not be imported")
