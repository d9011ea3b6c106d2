"""Length-prefixed messages over a socket, in the format of :mod:`grader.sandbox.wire`."""

from __future__ import annotations

import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from grader.sandbox import wire

_LENGTH = struct.Struct("<Q")
MAX_MESSAGE = 256 * 1024 * 1024
WATCH_S = 0.1  # how often ``receive`` calls its ``while_waiting`` while no data arrives


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

    def receive(self, timeout: float | None = None, while_waiting: Callable[[], None] | None = None) -> Any:
        """The next message; ``timeout`` bounds the whole message, not each chunk of it.

        ``while_waiting`` (with a ``timeout``) is called every ``WATCH_S`` seconds in which no
        data arrives: whatever it raises ends the wait (the sender's CPU budget is spent, say).
        An oversized message is refused after its first bytes, before the rest is received.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        (length,) = _LENGTH.unpack(self._read(_LENGTH.size, deadline, while_waiting))
        if length > MAX_MESSAGE:
            raise wire.WireError(f"message of {length} bytes is too large")
        prefix = self._read(min(length, wire.HEADER_PREFIX), deadline, while_waiting)
        wire.header_length(prefix)
        return wire.unpack(prefix + self._read(length - len(prefix), deadline, while_waiting))

    def _read(self, size: int, deadline: float | None, while_waiting: Callable[[], None] | None) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            if deadline is not None:
                self._wait(deadline, while_waiting)
            try:
                chunk = self.sock.recv(min(size - len(chunks), 1 << 20))
            except ConnectionError:
                chunk = b""
            if not chunk:
                raise EOFError("the other end closed the channel")
            chunks += chunk
        return bytes(chunks)

    def _wait(self, deadline: float, while_waiting: Callable[[], None] | None) -> None:
        """Until data can be read: ``ChannelTimeout`` at ``deadline``, ``while_waiting`` meanwhile."""
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            pause = remaining if while_waiting is None else min(remaining, WATCH_S)
            if select.select([self.sock], [], [], pause)[0]:
                return
            if pause >= remaining:
                raise ChannelTimeout
            while_waiting()

    def close(self) -> None:
        self.sock.close()
