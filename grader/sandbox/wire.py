"""The message format between the trusted grader and the worker that runs student code.

A message is JSON for the structure plus raw bytes for NumPy arrays. Nothing is ever unpickled:
the worker runs student code, so whatever it sends is untrusted and must only ever be data.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np

from grader.errors import GraderError

# Array dtypes that may cross the wire; anything else (object arrays above all) is refused.
ALLOWED_DTYPES = frozenset(
    {"|b1", "<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"}
)
_ARRAY = "__ndarray__"
_HEADER = struct.Struct("<I")
HEADER_PREFIX = _HEADER.size  # the bytes that declare the length of a message's JSON part
# Bounds on what a message may declare, checked before anything is built from it: the JSON part
# of a real message is a few kilobytes (numbers travel as raw bytes), so a hostile peer's
# megabytes of nested lists are refused unread rather than parsed into gigabytes of objects.
MAX_HEADER = 1 << 20
MAX_NESTING = 64  # JSON levels: a described value of the worker's nests about 15 deep
MAX_NDIM = 32
MAX_DIM = 1 << 31


class WireError(GraderError, ValueError):
    """A message that is not well formed (a broken or hostile peer)."""


def pack(message: Any) -> bytes:
    """Encode nested dicts, lists, strings, numbers, None and NumPy arrays."""
    buffers: list[bytes] = []

    def encode(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            array = np.ascontiguousarray(value)
            if array.dtype.byteorder == ">":
                array = array.astype(array.dtype.newbyteorder("<"))
            buffers.append(array.tobytes())
            # ``value``'s shape: ``ascontiguousarray`` makes a 0-d array 1-d.
            return {_ARRAY: len(buffers) - 1, "dtype": array.dtype.str, "shape": value.shape}
        if isinstance(value, dict):
            return {str(key): encode(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [encode(item) for item in value]
        if isinstance(value, np.generic):
            return value.item()
        return value

    header = json.dumps(
        {"body": encode(message), "sizes": [len(b) for b in buffers]}, allow_nan=True
    ).encode()
    if len(header) > MAX_HEADER:
        raise WireError(f"the message's structure takes {len(header)} bytes, more than {MAX_HEADER}")
    return _HEADER.pack(len(header)) + header + b"".join(buffers)


def with_entry(data: bytes, key: str, value: Any) -> bytes:
    """A packed mapping (``pack``'s bytes) with one more entry, its arrays' bytes untouched:
    cheaper than packing it again, for a request packed once and sent with a fresh sequence
    number each time."""
    length = header_length(data[:HEADER_PREFIX])
    header = json.loads(data[HEADER_PREFIX : HEADER_PREFIX + length])
    header["body"][key] = value
    encoded = json.dumps(header, allow_nan=True).encode()
    return _HEADER.pack(len(encoded)) + encoded + data[HEADER_PREFIX + length :]


def header_length(prefix: bytes) -> int:
    """The length of the JSON part declared by a message's first bytes (``HEADER_PREFIX`` of
    them), refused when it is over ``MAX_HEADER``: a reader can stop before receiving the rest."""
    try:
        (length,) = _HEADER.unpack_from(prefix)
    except struct.error:
        raise WireError("message too short") from None
    if length > MAX_HEADER:
        raise WireError(f"message structure of {length} bytes is larger than {MAX_HEADER}")
    return length


def unpack(data: bytes) -> Any:
    """Decode a message from :func:`pack`, validating every array against its declared size.

    Anything malformed raises ``WireError``, never another exception: the peer may be hostile.
    """
    length = header_length(data)
    try:
        envelope = json.loads(data[_HEADER.size : _HEADER.size + length])
        sizes = [int(size) for size in envelope["sizes"]]
        body = envelope["body"]
    except RecursionError:
        raise WireError("malformed message: nested too deeply") from None
    except (ValueError, KeyError, TypeError, OverflowError) as error:
        raise WireError(f"malformed message: {error}") from None
    offsets = [_HEADER.size + length]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    if offsets[-1] != len(data) or any(size < 0 for size in sizes):
        raise WireError("message length does not match its header")

    view = memoryview(data)

    def decode(value: Any, depth: int = 0) -> Any:
        if depth > MAX_NESTING:
            raise WireError(f"message nested more than {MAX_NESTING} levels deep")
        if isinstance(value, dict):
            if _ARRAY in value:
                return _array(value)
            return {key: decode(item, depth + 1) for key, item in value.items()}
        if isinstance(value, list):
            return [decode(item, depth + 1) for item in value]
        return value

    def _array(spec: dict[str, Any]) -> np.ndarray:
        try:
            index = int(spec[_ARRAY])
            dtype = str(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"][: MAX_NDIM + 1])
        except (KeyError, TypeError, ValueError, OverflowError) as error:
            raise WireError(f"malformed array: {error}") from None
        if dtype not in ALLOWED_DTYPES or not 0 <= index < len(sizes):
            raise WireError(f"refused array dtype {dtype!r} or index {index}")
        if len(shape) > MAX_NDIM or any(not 0 <= n <= MAX_DIM for n in shape):
            raise WireError(f"refused array shape (at most {MAX_NDIM} dimensions of at most {MAX_DIM})")
        if math.prod(shape) * np.dtype(dtype).itemsize != sizes[index]:
            raise WireError("array size does not match its shape")
        # A read-only view of the message: nothing downstream writes to received arrays.
        return np.frombuffer(view, dtype=dtype, count=math.prod(shape), offset=offsets[index]).reshape(shape)

    return decode(body)
