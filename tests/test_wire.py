"""The worker's replies are untrusted: the message format only ever carries data."""

from __future__ import annotations

import json
import socket
import struct
import tracemalloc

import numpy as np
import pytest

from grader.compare import values
from grader.sandbox import channel, wire


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
        struct.pack("<I", 200_002) + b"[" * 100_000 + b"]" * 100_000,
        _forge([[[[[[]]]]]] * 1, []).replace(b"[[[[[[]]]]]]", b"[" * 70 + b"]" * 70),
        _forge({"__ndarray__": 0, "dtype": "<f8", "shape": [2**70, 0]}, [0]),
        _forge({"__ndarray__": 0, "dtype": "<f8", "shape": [1] * 40}, [8], b"\x00" * 8),
        _forge({"__ndarray__": 0, "dtype": "<f8", "shape": [float("inf")]}, [0]),
        _forge({}, [float("inf")]),
    ],
    ids=[
        "truncated",
        "object-dtype",
        "size-mismatch",
        "bad-index",
        "short-payload",
        "bad-header",
        "recursion",
        "too-deep",
        "huge-dimension",
        "too-many-dimensions",
        "infinite-dimension",
        "infinite-size",
    ],
)
def test_malformed_or_hostile_messages_are_refused(data):
    with pytest.raises(wire.WireError):
        wire.unpack(data)


def test_a_zero_dimensional_array_keeps_its_shape():
    assert wire.unpack(wire.pack(np.zeros((), dtype=np.float32))).shape == ()


def test_an_oversized_header_is_refused_before_it_is_parsed():
    """64 MiB of nested empty lists would take gigabytes as Python objects."""
    header = b'{"body": [' + b"[]," * (64 * 1024 * 1024 // 3) + b'[]], "sizes": []}'
    data = struct.pack("<I", len(header)) + header
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match="larger than"):
            wire.unpack(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024


def test_the_sender_refuses_what_the_receiver_would():
    with pytest.raises(wire.WireError):
        wire.pack({"text": "x" * wire.MAX_HEADER})


def test_a_channel_stops_reading_at_an_oversized_header():
    ours, theirs = socket.socketpair()
    header = struct.pack("<I", wire.MAX_HEADER + 1)
    theirs.sendall(struct.pack("<Q", 64 * 1024 * 1024) + header)  # the rest never comes
    with pytest.raises(wire.WireError):
        channel.Channel(ours).receive(timeout=5)
    ours.close()
    theirs.close()


def test_values_refuse_a_malformed_description():
    with pytest.raises(wire.WireError):
        values.decode({"kind": "tensor", "type": "torch.Tensor"})
    with pytest.raises(wire.WireError):
        values.decode({"kind": "scalar", "type": "x", "value": {"nested": 1}})
    tensor = {"kind": "tensor", "type": "torch.Tensor", "dtype": "float64", "device": "cpu"}
    tensor |= {"requires_grad": False, "has_grad_fn": False}
    for shape, data in [([float("inf")], None), ([2], np.zeros(3)), ([2**40], None)]:
        with pytest.raises(wire.WireError):
            values.decode({**tensor, "shape": shape, "data": data})
    mismatched = {"kind": "dict", "keys": ["a", "b"], "key_types": ["str"], "values": [], "length": 2}
    with pytest.raises(wire.WireError):
        values.decode(mismatched)


def test_an_int_beyond_64_bits_reads_as_a_float():
    assert values.decode({"kind": "scalar", "type": "int", "value": 10**400}).value == float("inf")
    assert values.decode({"kind": "scalar", "type": "int", "value": -(2**70)}).value == -float(2**70)
    assert values.decode({"kind": "scalar", "type": "int", "value": 3}).value == 3


def test_an_entry_added_to_a_packed_mapping_leaves_its_arrays_alone():
    packed = wire.pack({"op": "call", "args": [{"array": np.arange(5.0)}, {"value": float("nan")}]})
    back = wire.unpack(wire.with_entry(packed, "seq", "5eed"))
    assert back["seq"] == "5eed" and back["op"] == "call" and np.isnan(back["args"][1]["value"])
    np.testing.assert_array_equal(back["args"][0]["array"], np.arange(5.0))


def test_a_channel_calls_its_watcher_while_it_waits_and_stops_at_what_it_raises():
    ours, theirs = socket.socketpair()
    calls = []

    def watcher() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise InterruptedError("budget spent")

    with pytest.raises(InterruptedError):
        channel.Channel(ours).receive(timeout=10.0, while_waiting=watcher)
    assert len(calls) == 3
    theirs.close()
    ours.close()


def test_a_forged_error_is_read_field_by_field_and_not_believed():
    from grader.engine.student import error_fields

    forged = {"type": ["ValueError"], "message": {"a": 1}, "traceback": [1, 2], "is_value_error": "yes"}
    fields = error_fields(forged)
    assert all(isinstance(fields[key], str) for key in ("type", "message", "traceback"))
    assert fields["is_value_error"] is False and fields["not_implemented"] is False
    with pytest.raises(wire.WireError):
        error_fields(["not", "a", "mapping"])
