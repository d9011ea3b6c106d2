"""Plain JSON data for reports: tensors, arrays, drawn inputs and returned values.

Numbers are written in the shortest form that reads back to the same value in their own dtype
(``0.1``, not ``0.10000000149011612``), and ``nan``/``inf`` as strings, since JSON has no such
numbers.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from grader.compare import values


def number(x: Any) -> Any:
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(str(x)) if isinstance(x, np.floating) else float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x + 0.0  # -0.0 reads as 0.0


def array(data: np.ndarray) -> Any:
    """Nested lists of readable numbers."""
    if data.ndim == 0:
        return number(data[()])
    return [array(row) if row.ndim else number(row[()]) for row in data]


def tensor(t: torch.Tensor) -> dict[str, Any]:
    data = t.detach().cpu()
    if data.dtype in (torch.bfloat16, torch.float16):
        data = data.float()
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("torch."),
        "values": array(data.numpy()),
    }


def inputs(obj: Any) -> Any:
    """Drawn inputs (dataclasses of tensors and numbers) as JSON data."""
    if isinstance(obj, torch.Tensor):
        return tensor(obj)
    if isinstance(obj, np.ndarray):
        return {"shape": list(obj.shape), "dtype": str(obj.dtype), "values": array(obj)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {field.name: inputs(getattr(obj, field.name)) for field in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(key): inputs(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [inputs(item) for item in obj]
    if isinstance(obj, torch.dtype):
        return str(obj).removeprefix("torch.")
    if obj is None or isinstance(obj, (bool, int, float, np.generic)):
        return number(obj) if obj is not None else None
    return str(obj)


def value(v: values.Value | None) -> Any:
    """A returned value as JSON data: tensors with their metadata and numbers."""
    if v is None:
        return None
    if isinstance(v, values.TensorValue):
        out: dict[str, Any] = {
            "type": v.type,
            "shape": list(v.shape),
            "dtype": v.dtype,
            "requires_grad": v.requires_grad,
        }
        if v.data is not None:
            out["values"] = array(v.data)
        return out
    if isinstance(v, values.SequenceValue):
        return {"type": v.kind, "items": [value(item) for item in v.items]}
    if isinstance(v, values.DictValue):
        return {"type": "dict", "items": {k: value(x) for k, x in zip(v.keys, v.values, strict=True)}}
    if isinstance(v, values.ScalarValue):
        return {"type": v.type, "value": number(v.value) if v.value is not None else None}
    return {"type": v.type, "repr": v.text}
