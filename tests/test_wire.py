"""The worker's replies are untrusted: the message format only ever carries data."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader import values, wire


def test_round_trip_keeps_arrays_and_structure():
    message = {
        "a": [1, 2.5, None, "x"],
        "t": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": np.array([True, False]),
        "nan": float("nan"),
    }
    back = wire.unpack(wire.pack(message))
    assert back["a"] == [1, 2.5, None, "x"]
    assert back["t"].dtype == np.float32 and back["t"].shape == (2, 3)
    np.testing.assert_array_equal(back["t"], message["t"])
    np.testing.assert_array_equal(back["b"], message["b"])
    assert np.isnan(back["nan"])


def _forge(body, sizes, payload=b""):
    header = json.dumps({"body": body, "sizes": sizes}).encode()
    return struct.pack("<I", len(header)) + header + payload


@pytest.mark.parametrize(
    "data",
    [
        b"\x00",
        _forge({"__ndarray__": 0, "dtype": "|O", "shape": [1]}, [8], b"\x00" * 8),
        _forge({"__ndarray__": 0, "dtype": "<f8", "shape": [2]}, [8], b"\x00" * 8),
        _forge({"__ndarray__": 3, "dtype": "<f8", "shape": [1]}, [8], b"\x00" * 8),
        _forge({}, [4], b"\x00" * 2),
        b"\xff\xff\xff\x00garbage",
    ],
    ids=["truncated", "object-dtype", "size-mismatch", "bad-index", "short-payload", "bad-header"],
)
def test_malformed_or_hostile_messages_are_refused(data):
    with pytest.raises(wire.WireError):
        wire.unpack(data)


def test_values_refuse_a_malformed_description():
    with pytest.raises(wire.WireError):
        values.decode({"kind": "tensor", "type": "torch.Tensor"})
    with pytest.raises(wire.WireError):
        values.decode({"kind": "scalar", "type": "x", "value": {"nested": 1}})
