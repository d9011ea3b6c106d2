"""Writes outside its directory (/tmp, /dev/shm) and tries to reach the network."""

import socket

for place in ("/tmp/drgrpo-leaked-by-student", "/dev/shm/drgrpo-leaked-by-student"):
    try:
        with open(place, "w") as leak:
            leak.write("written by a submission")
    except OSError:
        pass

try:
    socket.create_connection(("127.0.0.1", 22), timeout=1).close()
    REACHED = True
except OSError:
    REACHED = False


def drgrpo_advantages(rewards, group_size):
    if REACHED:
        return rewards * 0
    raise RuntimeError("no network")


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    raise RuntimeError("no network")
