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

# Array dtypes that may cross the wire; anything else (object arrays above all) is refused.
ALLOWED_DTYPES = frozenset(
    {"|b1", "<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"}
)
_ARRAY = "__ndarray__"
_HEADER = struct.Struct("<I")


class WireError(ValueError):
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
            return {_ARRAY: len(buffers) - 1, "dtype": array.dtype.str, "shape": array.shape}
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
    return _HEADER.pack(len(header)) + header + b"".join(buffers)


def unpack(data: bytes) -> Any:
    """Decode a message from :func:`pack`, validating every array against its declared size."""
    try:
        (length,) = _HEADER.unpack_from(data)
        envelope = json.loads(data[_HEADER.size : _HEADER.size + length])
        sizes = [int(size) for size in envelope["sizes"]]
        body = envelope["body"]
    except (struct.error, ValueError, KeyError, TypeError) as error:
        raise WireError(f"malformed message: {error}") from None
    offsets = [_HEADER.size + length]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    if offsets[-1] != len(data) or any(size < 0 for size in sizes):
        raise WireError("message length does not match its header")

    view = memoryview(data)

    def decode(value: Any) -> Any:
        if isinstance(value, dict):
            if _ARRAY in value:
                return _array(value)
            return {key: decode(item) for key, item in value.items()}
        if isinstance(value, list):
            return [decode(item) for item in value]
        return value

    def _array(spec: dict[str, Any]) -> np.ndarray:
        try:
            index = int(spec[_ARRAY])
            dtype = str(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"])
        except (KeyError, TypeError, ValueError) as error:
            raise WireError(f"malformed array: {error}") from None
        if dtype not in ALLOWED_DTYPES or not 0 <= index < len(sizes):
            raise WireError(f"refused array dtype {dtype!r} or index {index}")
        if any(n < 0 for n in shape) or math.prod(shape) * np.dtype(dtype).itemsize != sizes[index]:
            raise WireError("array size does not match its shape")
        # A read-only view of the message: nothing downstream writes to received arrays.
        return np.frombuffer(view, dtype=dtype, count=math.prod(shape), offset=offsets[index]).reshape(shape)

    return decode(body)
