"""Opens files until refused, and reports how many it held and how nice it was made."""

import os


def _probe() -> str:
    held = []
    try:
        while len(held) < 100_000:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    for fd in held:
        os.close(fd)
    return f"opened {len(held)} files at niceness {os.getpriority(os.PRIO_PROCESS, 0)}"


def drgrpo_advantages(rewards, group_size):
    raise RuntimeError(_probe())


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    raise RuntimeError(_probe())
