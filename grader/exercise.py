"""The exercise the engine grades, described once.

Everything the grader knows of an exercise is in one ``Exercise``: the functions students write,
the modules that declare its checks, its reference solution and catalogue of mistakes, its
template, rubric, notes and pictures. The engine receives it and names nothing of its own: the
Dr. GRPO exercise is ``properties.exercise:EXERCISE``, the default below, and another exercise is
graded with ``--exercise module:NAME`` (or the ``GRADER_EXERCISE`` environment variable).

Code that must not be imported before it is needed (the solution, the pictures, the catalogue)
is named as ``"module"`` or ``"module:attribute"`` and imported on first use.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.errors import GraderError, ReferenceWithheld, UsageError

DEFAULT = "properties.exercise:EXERCISE"
ENVIRONMENT = "GRADER_EXERCISE"


@dataclass(frozen=True)
class Pictures:
    """The exercise's pictures in the HTML report: ``collect(student_call, deadline)`` returns
    their data (plain JSON, computed with the student's functions beside the reference; it is
    ``Report.visuals``), ``draw(visuals)`` returns the HTML that shows it."""

    collect: str  # "module:function"
    draw: str  # "module:function"


@dataclass(frozen=True, eq=False)
class Exercise:
    """One exercise, as the engine grades it.

    ``functions`` maps each function a student writes to its parameter names (a check's
    ``target`` is one of them; a replay snippet names the arguments). ``root`` is the folder the
    paths are relative to. ``solution`` and ``catalogue`` are staff only: a worker can never
    import them, the student release leaves them out, and ``grader.engine.student.hide_secrets``
    makes their files readable by root only. ``provided`` are the files a student gets beside the template;
    ``worker_packages`` the packages a student's code may import from the grader's
    installation (besides the standard library and torch).
    """

    name: str  # the submission's file name is f"{name}.py", as the template's
    title: str  # how people call the exercise, in the CLI's help
    functions: Mapping[str, tuple[str, ...]]
    check_modules: tuple[str, ...]
    root: Path
    template: str  # the student template, relative to root
    rubric: str  # the default rubric file, relative to root
    solution: str  # the reference solution's module
    catalogue: str | None = None  # a module with ``catalogue() -> Sequence[Mistake]``
    probes: str | None = None  # "module:NAME", the diagnosis' extra calls
    notes: str = ""  # unlocked when every required check passes
    pictures: Pictures | None = None
    costs: Mapping[str, float] = field(default_factory=dict)  # relative cost of a check, per target
    provided: tuple[str, ...] = ()  # files given to students, relative to root
    worker_packages: tuple[str, ...] = ()
    authoring: str | None = None  # the module instructors import the exercise's helpers from
    commands: Mapping[str, str] = field(default_factory=dict)  # its own commands: name -> module with main()
    address: str = ""  # how --exercise names it: set by ``load``

    def __post_init__(self) -> None:
        if not self.functions or not self.check_modules:
            raise ExerciseError(f"exercise {self.name!r}: it needs functions and check modules")

    @property
    def submission_name(self) -> str:
        return f"{self.name}.py"

    @property
    def packages(self) -> tuple[str, ...]:
        """The top-level packages that hold the exercise: its checks, reference, catalogue,
        provided files and the packages its workers import."""
        modules = [*self.check_modules, self.solution, self.catalogue or "", *self.worker_packages]
        modules += [path.split("/")[0] for path in self.provided]
        return tuple(sorted({m.split(".")[0] for m in modules if m}))

    @property
    def secret_modules(self) -> tuple[str, ...]:
        """Modules a worker must never import: each holds the answer or a line away from it."""
        return tuple(m for m in (self.solution, self.catalogue) if m)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def student_release(self) -> bool:
        """This installation lacks the reference solution (``python -m grader release``)."""
        return not _present(self.solution)

    def has_catalogue(self) -> bool:
        return self.catalogue is not None and _present(self.catalogue)

    def mistakes(self) -> tuple[Any, ...]:
        """The catalogued mistakes (``grader.declare.mistakes.Mistake``), none without a catalogue."""
        return tuple(resolve(self.catalogue).catalogue()) if self.catalogue else ()

    def withhold_solution(self) -> None:
        """In the student release, put a stand-in where the solution would be, whose functions
        raise ``ReferenceWithheld`` (the checks that compare with it are graded on submission).
        Done before the check modules are imported, which import the solution."""
        withhold(self.solution)


class ExerciseError(GraderError, ValueError):
    """An exercise is described wrongly, or cannot be found."""


def _present(module: str) -> bool:
    if module in sys.modules:
        return not getattr(sys.modules[module], "__withheld__", False)
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _withheld(*args: object, **kwargs: object) -> None:
    raise ReferenceWithheld


def _stand_in_attribute(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return _withheld


def withhold(module: str) -> None:
    """Make ``import module`` give a stand-in when the module is not installed: any function
    taken from it raises ``ReferenceWithheld``."""
    if module in sys.modules or _present(module):
        return
    stand_in = types.ModuleType(module, "Stands in for a module this installation does not hold.")
    stand_in.__withheld__ = True  # type: ignore[attr-defined]
    stand_in.__getattr__ = _stand_in_attribute  # type: ignore[method-assign]
    sys.modules[module] = stand_in
    parent, _, leaf = module.rpartition(".")
    if parent:
        setattr(importlib.import_module(parent), leaf, stand_in)


def resolve(spec: str) -> Any:
    """``"module:attribute"`` -> the attribute; ``"module"`` -> the module."""
    module, _, attribute = spec.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


@functools.cache
def load(spec: str | None = None) -> Exercise:
    """The exercise ``spec`` names (``module:NAME``); by default ``GRADER_EXERCISE``'s, else
    Dr. GRPO's. Raises ``UsageError`` when it cannot be found."""
    spec = spec or os.environ.get(ENVIRONMENT) or DEFAULT
    try:
        found = resolve(spec)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"--exercise {spec}: cannot import it ({type(error).__name__}: {error})") from None
    if not isinstance(found, Exercise):
        raise UsageError(f"--exercise {spec}: is a {type(found).__name__}, not an Exercise")
    return dataclasses.replace(found, address=spec)
