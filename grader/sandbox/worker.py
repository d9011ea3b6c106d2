"""The worker: the only process that imports and runs student code.

It receives plain data (NumPy arrays and numbers), builds the tensors, calls the student's
function, runs the backward pass when asked, and sends back plain data describing whatever came
out. It never sees the reference solution, the properties or the expected values.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
import torch

from grader.sandbox import channel, wire

MAX_DEPTH = 4
MAX_ITEMS = 64
MAX_PARTS = 4096  # described objects per value: 64 items at each of 4 levels would be 16 million
TOO_LARGE = {
    "type": "ReplyTooLarge",
    "message": "what your function returned or raised is too large to describe to the grader "
    "(return tensors and a few numbers, not large nested structures or huge names)",
    "traceback": "",
}


def _secret(module: str, secrets: Sequence[str]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in secrets)


class _SecretBlocker(importlib.abc.MetaPathFinder):
    """Refuses to import the exercise's secret modules (its reference solution and catalogued
    mistakes) inside the worker."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = tuple(secrets)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if _secret(fullname, self.secrets):
            raise ImportError(f"{fullname} is not available to submissions")
        return None


def _type_name(value: Any) -> str:
    cls = type(value)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    return str(name)[:200]


def describe(value: Any, depth: int = 0, budget: list[int] | None = None) -> dict[str, Any]:
    """Plain data for any object the student returned (tensors as NumPy copies), at most
    ``MAX_PARTS`` objects of it (``budget``: how many are left, shared by the recursion)."""
    budget = [MAX_PARTS] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return {"kind": "object", "type": _type_name(value), "text": "(too many parts to show)"}
    if depth > MAX_DEPTH:
        return {"kind": "object", "type": _type_name(value), "text": "(nested too deeply)"}
    if isinstance(value, torch.Tensor):
        return _describe_tensor(value)
    if isinstance(value, bool) or value is None:
        return {"kind": "scalar", "type": _type_name(value), "value": value}
    if isinstance(value, (int, float)) and type(value) in (int, float):
        return {"kind": "scalar", "type": _type_name(value), "value": value}
    if type(value) in (tuple, list):
        items = [describe(item, depth + 1, budget) for item in value[:MAX_ITEMS]]
        return {"kind": type(value).__name__, "items": items, "length": len(value)}
    if type(value) is dict:
        keys = list(value)[:MAX_ITEMS]
        return {
            "kind": "dict",
            "keys": [key if type(key) is str else repr(key)[:80] for key in keys],
            "key_types": [_type_name(key) for key in keys],
            "values": [describe(value[key], depth + 1, budget) for key in keys],
            "length": len(value),
        }
    try:
        text = repr(value)[:200]
    except Exception:
        text = "(unprintable)"
    return {"kind": "object", "type": _type_name(value), "text": text}


def _describe_tensor(tensor: torch.Tensor) -> dict[str, Any]:
    with torch._C.DisableTorchFunctionSubclass():
        plain = torch.Tensor.detach(tensor)
        dtype = str(plain.dtype).removeprefix("torch.")
        info = {
            "kind": "tensor",
            "type": _type_name(tensor),
            "dtype": dtype,
            "shape": list(plain.shape),
            "device": str(plain.device),
            "requires_grad": bool(torch.Tensor.requires_grad.__get__(tensor)),
            "has_grad_fn": torch.Tensor.grad_fn.__get__(tensor) is not None,
        }
        if plain.is_complex() or plain.layout != torch.strided:
            info["data"] = None
            return info
        plain = plain.cpu()
        if plain.dtype in (torch.bfloat16, torch.float16):
            plain = plain.float()
        info["data"] = plain.contiguous().numpy().copy()
        return info


def _error(exc: BaseException, submission: str) -> dict[str, Any]:
    """The student's exception, with only the traceback frames from their own file."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [frame for frame in frames if os.path.abspath(frame.filename) == submission]
    lines = traceback.format_list(own) + traceback.format_exception_only(type(exc), exc)
    text = "".join(lines).replace(submission, os.path.basename(submission))
    return {
        "type": _type_name(exc),
        "message": str(exc)[:2000],
        "traceback": text[-4000:],
        "is_value_error": isinstance(exc, ValueError),
        "not_implemented": isinstance(exc, NotImplementedError),
    }


def _tensor(spec: dict[str, Any]) -> torch.Tensor:
    tensor = torch.from_numpy(np.array(spec["array"])).to(getattr(torch, spec["dtype"]))
    return tensor.requires_grad_(bool(spec.get("requires_grad")))


def _argument(spec: dict[str, Any]) -> Any:
    return _tensor(spec) if "array" in spec else spec["value"]


class Worker:
    """Serves one submission: ``load`` once, then any number of ``call`` requests."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.module: ModuleType | None = None

    def load(self, functions: list[str]) -> dict[str, Any]:
        spec = importlib.util.spec_from_file_location("submission", self.path)
        if spec is None or spec.loader is None:
            return {
                "ok": False,
                "error": {"type": "ImportError", "message": "not a Python file", "traceback": ""},
            }
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            return {"ok": False, "error": _error(exc, self.path)}
        self.module = module
        found = {}
        for name in functions:
            function = getattr(module, name, None)
            found[name] = {"present": function is not None, "callable": callable(function)}
        return {"ok": True, "functions": found}

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        function = getattr(self.module, request["function"])
        args = [_argument(spec) for spec in request["args"]]
        kwargs = {name: _argument(spec) for name, spec in request["kwargs"].items()}
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            return {"ok": False, "error": _error(exc, self.path)}
        reply: dict[str, Any] = {"ok": True, "result": describe(result)}
        if request.get("backward") is not None:
            reply.update(self._backward(result, request["backward"], args))
        if request.get("return_args"):
            reply["args_after"] = [describe(arg) for arg in args]
        return reply

    def _backward(self, result: Any, path: list[int], args: list[Any]) -> dict[str, Any]:
        """Gradients of ``result[path]`` with respect to every argument that requires grad."""
        output = result
        try:
            for index in path:
                output = output[index]
        except BaseException:
            return {"grad_problem": "the output to differentiate could not be found"}
        if not isinstance(output, torch.Tensor):
            return {"grad_problem": f"it is a {_type_name(output)}, not a tensor"}
        if not output.requires_grad:
            return {"grad_problem": "it does not require grad (it was detached from logp)"}
        wanted = [i for i, arg in enumerate(args) if isinstance(arg, torch.Tensor) and arg.requires_grad]
        try:
            # The sum, not a seed of ones: the same gradients, without the lazy import (0.9 s)
            # that a seed tensor costs a process that has not paid it yet (the trusted process
            # replays calls through this code, grader.feedback.replay).
            total = output if output.ndim == 0 else output.sum()
            grads = torch.autograd.grad(total, [args[i] for i in wanted], allow_unused=True)
        except BaseException as exc:
            return {"grad_error": _error(exc, self.path)}
        described: list[Any] = [None] * len(args)
        for i, grad in zip(wanted, grads, strict=True):
            described[i] = None if grad is None else describe(grad)
        return {"grads": described}


def serve(
    connection: channel.Channel,
    path: str,
    sandbox: dict[str, bool] | None = None,
    secret_modules: Sequence[str] = (),
) -> None:
    """Answer requests until the grader closes the channel. ``sandbox``: whether the worker has
    namespaces of its own (``isolated``) and a ``minimal_root``, said first, before any student
    code runs (afterwards, that code could write anything to the channel). ``secret_modules``
    cannot be imported here."""
    sys.meta_path.insert(0, _SecretBlocker(secret_modules))
    for name in [name for name in sys.modules if _secret(name, secret_modules)]:
        del sys.modules[name]
    connection.send({"op": "ready", **(sandbox or {})})
    worker = Worker(path)
    while True:
        try:
            request = connection.receive()
        except EOFError:
            return
        if request["op"] == "load":
            reply = worker.load(request["functions"])
        elif request["op"] == "call":
            reply = worker.call(request)
        else:
            reply = {"ok": False, "error": {"type": "ProtocolError", "message": request["op"]}}
        sys.stdout.flush()
        sys.stderr.flush()
        reply["seq"] = request.get("seq")  # which request this answers (see WorkerProcess.request)
        try:
            data = wire.pack(reply)
        except wire.WireError:
            data = wire.pack({"ok": False, "error": TOO_LARGE, "seq": reply["seq"]})
        connection.send(data)
