"""What a student's function returned, as plain frozen data in the trusted process.

The worker describes every returned object (see ``grader.sandbox.worker.describe``); this module turns
the description back into typed values. They are copies: no method of the student's objects is
ever called here, so a Tensor subclass that lies about ``__eq__`` has nothing to lie to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.sandbox.wire import MAX_DIM, MAX_NDIM, WireError


@dataclass(frozen=True)
class TensorValue:
    type: str
    dtype: str
    shape: tuple[int, ...]
    device: str
    requires_grad: bool
    has_grad_fn: bool
    data: np.ndarray | None

    @property
    def is_plain_tensor(self) -> bool:
        return self.type == "torch.Tensor"

    @property
    def is_floating(self) -> bool:
        return self.dtype in ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class SequenceValue:
    kind: str  # "tuple" or "list"
    items: tuple[Value, ...]
    length: int


@dataclass(frozen=True)
class DictValue:
    keys: tuple[str, ...]
    key_types: tuple[str, ...]
    values: tuple[Value, ...]
    length: int

    def get(self, key: str) -> Value | None:
        for name, kind, value in zip(self.keys, self.key_types, self.values, strict=True):
            if name == key and kind == "str":
                return value
        return None


@dataclass(frozen=True)
class ScalarValue:
    type: str
    value: bool | int | float | None


@dataclass(frozen=True)
class ObjectValue:
    type: str
    text: str


Value = TensorValue | SequenceValue | DictValue | ScalarValue | ObjectValue


def decode(spec: Any) -> Value:
    """Rebuild a value from the worker's description, refusing anything malformed.

    Everything a property later relies on is checked here (a tensor's data has its declared
    shape, a dict as many keys as values), so that a forged description fails as the
    submission's error, never inside a check as the grader's.
    """
    try:
        kind = spec["kind"]
        if kind == "tensor":
            return _tensor(spec)
        if kind in ("tuple", "list"):
            items = tuple(decode(item) for item in spec["items"])
            length = int(spec["length"])
            if length < len(items):
                raise WireError("a sequence shorter than its items")
            return SequenceValue(kind, items, length)
        if kind == "dict":
            found = DictValue(
                keys=tuple(str(key) for key in spec["keys"]),
                key_types=tuple(str(kind) for kind in spec["key_types"]),
                values=tuple(decode(value) for value in spec["values"]),
                length=int(spec["length"]),
            )
            if not len(found.keys) == len(found.key_types) == len(found.values) <= found.length:
                raise WireError("a dict whose keys and values do not match up")
            return found
        if kind == "scalar":
            return ScalarValue(str(spec["type"]), _scalar(spec["value"]))
        if kind == "object":
            return ObjectValue(str(spec["type"]), str(spec["text"]))
    except WireError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise WireError(f"malformed value: {error}") from None
    raise WireError(f"unknown value kind {kind!r}")


def _tensor(spec: dict[str, Any]) -> TensorValue:
    data = spec["data"]
    shape = tuple(int(n) for n in spec["shape"])
    if data is not None and not isinstance(data, np.ndarray):
        raise WireError("tensor data is not an array")
    if data is not None and data.shape != shape:
        raise WireError(f"tensor data of shape {data.shape} for a tensor of shape {shape}")
    if len(shape) > MAX_NDIM or any(not 0 <= n <= MAX_DIM for n in shape):
        raise WireError(f"refused tensor shape {shape}")
    return TensorValue(
        type=str(spec["type"]),
        dtype=str(spec["dtype"]),
        shape=shape,
        device=str(spec["device"]),
        requires_grad=bool(spec["requires_grad"]),
        has_grad_fn=bool(spec["has_grad_fn"]),
        data=data,
    )


def _scalar(value: Any) -> bool | int | float | None:
    """A returned number. An int beyond 64 bits reads as the nearest float (infinite beyond
    float64's range): every comparison reads numbers as float64 anyway."""
    if not isinstance(value, (bool, int, float, type(None))):
        raise WireError("scalar of an unexpected type")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


def summary(value: Value | None) -> str:
    """A short phrase for a student: 'a float32 tensor of shape (3,)', 'a float (0.25)'."""
    if value is None:
        return "nothing"
    if isinstance(value, TensorValue):
        kind = "tensor" if value.is_plain_tensor else f"tensor subclass {value.type}"
        return f"a {value.dtype} {kind} of shape {value.shape}"
    if isinstance(value, SequenceValue):
        return f"a {value.kind} of {value.length} item{'s' * (value.length != 1)}"
    if isinstance(value, DictValue):
        return f"a dict with keys {list(value.keys)}"
    if isinstance(value, ScalarValue):
        return f"a {value.type} ({value.value!r})"
    return f"a {value.type} object"


def as_array(value: Value | None) -> np.ndarray | None:
    """The numbers in a tensor or a Python number, or None when there are none to read."""
    if isinstance(value, TensorValue):
        return value.data
    if isinstance(value, ScalarValue) and isinstance(value.value, (int, float)):
        return np.asarray(value.value, dtype=np.float64)
    return None
