"""Forges replies whose tensors have absurd shapes, written straight to the grader's channel
(file descriptor 3), with the request's own sequence number: an array of shape (2**70, 0) for
the advantages, a tensor of infinite length (JSON's Infinity) for the loss."""

import os
import socket
import struct
import sys


def _sequence_number() -> str:
    """The sequence number of the request being answered (the reply must echo it), read from
    a caller's ``request`` variable in the worker."""
    frame = sys._getframe(1)
    while frame is not None:
        request = frame.f_locals.get("request")
        if isinstance(request, dict) and "seq" in request:
            return str(request["seq"])
        frame = frame.f_back
    return ""


def _forge(header: bytes) -> None:
    message = struct.pack("<I", len(header)) + header
    with socket.socket(fileno=os.dup(3)) as channel:
        channel.sendall(struct.pack("<Q", len(message)) + message)


def _tensor(shape: str, data: str) -> bytes:
    return (
        f'{{"body": {{"seq": "{_sequence_number()}", "ok": true, '
        '"result": {"kind": "tensor", "type": "torch.Tensor", "dtype": "float64", '
        f'"shape": {shape}, "device": "cpu", "requires_grad": false, "has_grad_fn": false, '
        f'"data": {data}}}}}, "sizes": [0]}}'
    ).encode()


def drgrpo_advantages(rewards, group_size):
    _forge(_tensor(f"[{2**70}, 0]", f'{{"__ndarray__": 0, "dtype": "<f8", "shape": [{2**70}, 0]}}'))
    return rewards


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    _forge(_tensor("[Infinity]", "null"))
    return logp.sum(), {}
