"""The submission as properties see it: call a function by name, get plain data back.

Every call crosses to the worker process and back. Arguments go as NumPy copies (a tensor's
``requires_grad`` flag included), so nothing the student does to them can reach the grader's
own tensors, and results come back as the frozen values of ``grader.compare.values``.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from grader.compare import values
from grader.errors import (
    CpuBudgetSpent,
    SubmissionBroken,
    SubmissionRaised,
    SubmissionTimedOut,
    corrupted_reply_message,
    not_implemented_message,
)
from grader.exercise import Exercise, load
from grader.sandbox import wire
from grader.sandbox.protections import Confinement, Limits, hide_files
from grader.sandbox.zygote import WorkerProcess, ZygoteLink


@dataclass(frozen=True)
class Outcome:
    """One call's result: the returned value, gradients per argument, arguments afterwards."""

    value: values.Value
    grads: tuple[values.Value | None, ...] | None = None
    grad_problem: str | None = None
    args_after: tuple[values.Value, ...] | None = None


@dataclass(frozen=True)
class Loaded:
    """What loading the submission showed."""

    ok: bool
    error: dict[str, Any] | None = None
    functions: dict[str, dict[str, Any]] = field(default_factory=dict)
    isolated: bool = False  # the worker has no network and temporary directories of its own
    minimal_root: bool = False  # the worker sees only Python, torch and the grader of the host


@functools.cache
def confinement(exercise: Exercise) -> Confinement:
    """What ``exercise`` asks of its workers: its worker packages importable, its secret
    modules neither importable nor (when workers run unprivileged) readable."""
    return Confinement(
        packages=tuple(folder for name in exercise.worker_packages for folder in _files(name, package=True)),
        secret_modules=exercise.secret_modules,
        secret_files=tuple(path for name in exercise.secret_modules for path in _files(name)),
    )


def hide_secrets(exercise: Exercise | None = None) -> None:
    """Make the exercise's secret files (default: the configured exercise's) readable by root
    only, when workers run unprivileged; grading does it too, before each worker starts."""
    hide_files(confinement(exercise or load()).secret_files)


def _files(module: str, package: bool = False) -> list[str]:
    """The folder of a package (``package``), else the files that hold a module's code: its
    source and bytecode, every file of a package's. Nothing for a module not installed."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # ValueError: a stand-in (grader.exercise.withhold) has no spec
        spec = None
    if spec is None:
        return []
    if spec.submodule_search_locations:
        folders = [Path(p) for p in spec.submodule_search_locations]
        if package:
            return [str(f) for f in folders]
        return [str(f) for folder in folders for f in (*folder.glob("*.py"), *folder.glob("__pycache__/*"))]
    if package or spec.origin is None:
        return []
    source = Path(spec.origin)
    return [str(source), *map(str, source.parent.glob(f"__pycache__/{source.stem}.*"))]


def _argument(value: Any) -> dict[str, Any]:
    if isinstance(value, torch.Tensor):
        return {
            "array": value.detach().cpu().numpy(),
            "dtype": str(value.dtype).removeprefix("torch."),
            "requires_grad": value.requires_grad,
        }
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    raise TypeError(f"cannot send a {type(value).__name__} to the submission")


def request(
    function: str,
    *args: Any,
    backward: tuple[int, ...] | None = None,
    return_args: bool = False,
    **kwargs: Any,
) -> bytes:
    """One call request for the worker, packed: the same call always packs to the same bytes."""
    return wire.pack(
        {
            "op": "call",
            "function": function,
            "args": [_argument(arg) for arg in args],
            "kwargs": {name: _argument(arg) for name, arg in kwargs.items()},
            "backward": None if backward is None else list(backward),
            "return_args": return_args,
        }
    )


def outcome(reply: dict[str, Any], arguments: int | None = None) -> Outcome:
    """A successful reply as typed values (raises ``KeyError``, ``TypeError`` or ``WireError``
    when it is malformed). ``arguments``: how many the call had, so as many gradients and
    arguments-after must come back."""
    grads = reply.get("grads")
    after = reply.get("args_after")
    problem = reply.get("grad_problem")
    found = Outcome(
        value=values.decode(reply["result"]),
        grads=None if grads is None else tuple(None if g is None else values.decode(g) for g in grads),
        grad_problem=None if problem is None else str(problem),
        args_after=None if after is None else tuple(values.decode(a) for a in after),
    )
    for part in (found.grads, found.args_after):
        if arguments is not None and part is not None and len(part) != arguments:
            raise wire.WireError(f"{len(part)} values for {arguments} arguments")
    return found


def error_fields(error: Any) -> dict[str, Any]:
    """The student's exception as the worker described it, each field of the type and size the
    report needs: a forged reply may hold anything there."""
    if not isinstance(error, dict):
        raise wire.WireError("an error that is not described as a mapping")
    return {
        "type": str(error.get("type"))[:200],
        "message": str(error.get("message"))[:2000],
        "traceback": str(error.get("traceback") or "")[-4000:],
        "is_value_error": error.get("is_value_error") is True,
        "not_implemented": error.get("not_implemented") is True,
    }


def checked_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """A call's reply with its errors in the form the grader reads (``WireError`` when they are
    malformed); its values are decoded, and checked, by ``outcome``."""
    if not isinstance(reply.get("ok"), bool):
        raise wire.WireError("a reply without a status")
    checked = dict(reply)
    for key in ("error", "grad_error"):
        if checked.get(key) is not None:
            checked[key] = error_fields(checked[key])
    return checked


def loaded(reply: dict[str, Any], sandbox: dict[str, bool]) -> Loaded:
    """What the reply to ``load`` says, refusing one that is malformed (``sandbox``: what the
    worker said of it before running student code)."""
    if reply.get("ok") is not True:
        return Loaded(ok=False, error=error_fields(reply.get("error") or {}), **sandbox)
    found = reply.get("functions")
    if not isinstance(found, dict) or not all(isinstance(entry, dict) for entry in found.values()):
        raise wire.WireError("the functions found are not described as mappings")
    functions = {
        str(name): {"present": entry.get("present") is True, "callable": entry.get("callable") is True}
        for name, entry in found.items()
    }
    return Loaded(ok=True, functions=functions, **sandbox)


class Student:
    """A loaded submission behind a worker process, replaced whenever it crashes or hangs."""

    def __init__(
        self, zygote: ZygoteLink, path: str, limits: Limits, exercise: Exercise | None = None
    ) -> None:
        self.path = path
        self.limits = limits
        self.exercise = exercise or load()
        self._zygote = zygote
        self._worker: WorkerProcess | None = None
        self._output: list[str] = []
        self.loaded = self._start()
        self.examples = 0
        self.deadline: float | None = None  # the running check's time budget (monotonic)
        self.total_deadline: float | None = None  # the whole grade's
        self._replies: dict[bytes, dict[str, Any]] = {}  # this example's calls
        # A function that hung once is not called again: every later check would wait as long.
        self._hung: dict[str, str] = {}
        self._probes: dict[bytes, dict[str, Any]] = {}  # diagnosis probes, asked once each

    def begin_example(self) -> None:
        """A new Hypothesis example: count it, and forget the previous example's calls."""
        self.examples += 1
        self._replies.clear()

    def _start(self) -> Loaded:
        try:
            self._worker = self._zygote.spawn(self.path, self.limits, confinement=confinement(self.exercise))
            reply = self._worker.request({"op": "load", "functions": list(self.exercise.functions)})
            return loaded(reply, self._worker.sandbox)
        except (SubmissionBroken, SubmissionTimedOut) as stop:
            message = stop.message
        except wire.WireError as error:
            message = corrupted_reply_message(error)
        sandbox = self._worker.sandbox if self._worker else {}
        self._retire()  # whatever it is doing, nothing more is asked of it
        return Loaded(ok=False, error={"type": "LoadError", "message": message, "traceback": ""}, **sandbox)

    def _live_worker(self) -> WorkerProcess:
        if self._worker is None or not self._worker.alive:
            self._retire()
            loaded = self._start()
            if not loaded.ok:
                reason = (loaded.error or {}).get("message")
                raise SubmissionBroken(
                    f"your file could not be loaded again after its process ended ({reason})"
                )
        assert self._worker is not None
        return self._worker

    def require(self, function: str) -> None:
        """Stop the check at once when ``function`` cannot be called at all."""
        if not self.loaded.ok:
            error = self.loaded.error or {}
            raise SubmissionBroken(
                f"your file could not be loaded: {error.get('type')}: {error.get('message')}",
                traceback=error.get("traceback"),
            )
        if function in self._hung:
            raise SubmissionTimedOut(
                f"not run: {function} already hung on an earlier input ({self._hung[function]})"
            )
        entry = self.loaded.functions.get(function, {})
        if not entry.get("present"):
            raise SubmissionBroken(f"your file does not define {function}")
        if not entry.get("callable"):
            raise SubmissionBroken(f"{function} in your file is not a function")

    def call(
        self,
        function: str,
        *args: Any,
        backward: tuple[int, ...] | None = None,
        return_args: bool = False,
        **kwargs: Any,
    ) -> Outcome:
        """Call ``function(*args, **kwargs)`` in the worker.

        ``backward`` is the index path of the output to differentiate (``(0,)`` for the loss of
        ``(loss, stats)``); gradients come back for every tensor argument with
        ``requires_grad``. ``return_args`` asks for the arguments as they are after the call.
        Raises ``SubmissionRaised`` when the student's code raises.
        """
        self.require(function)
        data = request(function, *args, backward=backward, return_args=return_args, **kwargs)
        # Checks sharing an example often make the very same call: it is made once.
        reply = self._replies.get(data)
        if reply is None:
            reply = self.reply(function, data)
            self._replies[data] = reply
        if not reply.get("ok"):
            error = dict(reply.get("error") or {})
            if error.get("not_implemented"):
                raise SubmissionBroken(not_implemented_message(function), traceback=error.get("traceback"))
            raise SubmissionRaised(function, error)
        if reply.get("grad_error"):
            raise SubmissionRaised(f"the backward pass through {function}", reply["grad_error"])
        try:
            return outcome(reply, len(args))
        except (KeyError, TypeError, wire.WireError) as error:
            self._retire()  # it wrote to the channel: its own reply may still be on the way
            raise SubmissionBroken(corrupted_reply_message(error)) from None

    def reply(self, function: str, data: bytes, *, remember_hang: bool = True) -> dict[str, Any]:
        """The worker's raw reply to one packed call request (see ``request``).

        A function that hangs is not called again by later checks, unless ``remember_hang`` is
        false (a diagnosis probe must not change the grade)."""
        timeout_s = self._call_timeout()
        try:
            return checked_reply(self._live_worker().request(data, timeout_s=timeout_s))
        except wire.WireError as error:
            self._retire()
            raise SubmissionBroken(corrupted_reply_message(error)) from None
        except SubmissionTimedOut as hang:
            # Only at the call's own limits, not when the check's budget ran out.
            own_limit = isinstance(hang, CpuBudgetSpent) or timeout_s >= self.limits.call_timeout_s
            if remember_hang and own_limit:
                self._hung[function] = hang.message
            raise

    def probe(self, function: str, data: bytes) -> dict[str, Any]:
        """The raw reply to a diagnosis probe (outside any example), asked once per submission.

        Raises ``SubmissionBroken`` or ``SubmissionTimedOut`` when the function cannot answer.
        """
        if data not in self._probes:
            self.require(function)
            deadline, self.deadline = self.deadline, None  # the failed check's budget is spent
            try:
                self._probes[data] = self.reply(function, data, remember_hang=False)
            finally:
                self.deadline = deadline
        return self._probes[data]

    def example_calls(self) -> list[tuple[bytes, dict[str, Any]]]:
        """The calls made for the current example, as (packed request, raw reply) pairs."""
        return list(self._replies.items())

    def _call_timeout(self) -> float:
        """The time one call may take: the call limit, within the check's and the grade's."""
        deadlines = [d for d in (self.deadline, self.total_deadline) if d is not None]
        if not deadlines:
            return self.limits.call_timeout_s
        remaining = min(deadlines) - time.monotonic()
        if remaining <= 0:
            raise SubmissionTimedOut("the check ran out of its time budget: your code is too slow")
        return min(self.limits.call_timeout_s, remaining)

    def _retire(self) -> None:
        if self._worker is not None:
            self._output.append(self._worker.captured_output())
            self._worker.kill()
            self._worker = None

    def close(self) -> str:
        """Stop the worker; return everything the submission printed."""
        self._retire()
        return "".join(self._output)
