"""Forges well-formed replies whose fields have the wrong types or counts, straight to the
grader's channel (file descriptor 3) with the request's own sequence number: an exception
described by lists and mappings for the advantages, a loss with no gradient for any of its
arguments."""

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
    header = header.replace(b'"body": {', b'"body": {"seq": "%s", ' % _sequence_number().encode(), 1)
    message = struct.pack("<I", len(header)) + header
    with socket.socket(fileno=os.dup(3)) as channel:
        channel.sendall(struct.pack("<Q", len(message)) + message)


def drgrpo_advantages(rewards, group_size):
    _forge(
        b'{"body": {"ok": false, "error": {"type": ["ValueError"], "message": {"a": 1}, '
        b'"traceback": [1, 2], "is_value_error": "yes"}}, "sizes": []}'
    )
    raise RuntimeError("forged")


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    _forge(
        b'{"body": {"ok": true, "result": {"kind": "scalar", "type": "float", "value": 0.0}, '
        b'"grads": []}, "sizes": []}'
    )
    raise RuntimeError("forged")
