"""Length-prefixed messages over a socket, in the format of :mod:`grader.sandbox.wire`."""

from __future__ import annotations

import select
import socket
import struct
import time
from typing import Any

from grader.sandbox import wire

_LENGTH = struct.Struct("<Q")
MAX_MESSAGE = 256 * 1024 * 1024


class ChannelTimeout(TimeoutError):
    """No complete message arrived in time."""


class Channel:
    """One end of a socket pair; ``receive`` raises ``EOFError`` when the peer is gone."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.setblocking(True)

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else wire.pack(message)
        self.sock.sendall(_LENGTH.pack(len(data)) + data)

    def receive(self, timeout: float | None = None) -> Any:
        """The next message; ``timeout`` bounds the whole message, not each chunk of it.

        An oversized message is refused after its first bytes, before the rest is received.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        (length,) = _LENGTH.unpack(self._read(_LENGTH.size, deadline))
        if length > MAX_MESSAGE:
            raise wire.WireError(f"message of {length} bytes is too large")
        prefix = self._read(min(length, wire.HEADER_PREFIX), deadline)
        wire.header_length(prefix)
        return wire.unpack(prefix + self._read(length - len(prefix), deadline))

    def _read(self, size: int, deadline: float | None) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            if deadline is not None:
                remaining = max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self.sock], [], [], remaining)
                if not ready:
                    raise ChannelTimeout
            try:
                chunk = self.sock.recv(min(size - len(chunks), 1 << 20))
            except ConnectionError:
                chunk = b""
            if not chunk:
                raise EOFError("the other end closed the channel")
            chunks += chunk
        return bytes(chunks)

    def close(self) -> None:
        self.sock.close()
