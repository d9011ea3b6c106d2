"""What a student's function returned, as plain frozen data in the trusted process.

The worker describes every returned object (see ``grader.worker.describe``); this module turns
the description back into typed values. They are copies: no method of the student's objects is
ever called here, so a Tensor subclass that lies about ``__eq__`` has nothing to lie to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.wire import WireError


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
    """Rebuild a value from the worker's description, refusing anything malformed."""
    try:
        kind = spec["kind"]
        if kind == "tensor":
            data = spec["data"]
            if data is not None and not isinstance(data, np.ndarray):
                raise WireError("tensor data is not an array")
            return TensorValue(
                type=str(spec["type"]),
                dtype=str(spec["dtype"]),
                shape=tuple(int(n) for n in spec["shape"]),
                device=str(spec["device"]),
                requires_grad=bool(spec["requires_grad"]),
                has_grad_fn=bool(spec["has_grad_fn"]),
                data=data,
            )
        if kind in ("tuple", "list"):
            return SequenceValue(kind, tuple(decode(item) for item in spec["items"]), int(spec["length"]))
        if kind == "dict":
            return DictValue(
                keys=tuple(str(key) for key in spec["keys"]),
                key_types=tuple(str(kind) for kind in spec["key_types"]),
                values=tuple(decode(value) for value in spec["values"]),
                length=int(spec["length"]),
            )
        if kind == "scalar":
            value = spec["value"]
            if not isinstance(value, (bool, int, float, type(None))):
                raise WireError("scalar of an unexpected type")
            return ScalarValue(str(spec["type"]), value)
        if kind == "object":
            return ObjectValue(str(spec["type"]), str(spec["text"]))
    except (KeyError, TypeError, ValueError) as error:
        raise WireError(f"malformed value: {error}") from None
    raise WireError(f"unknown value kind {kind!r}")


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
