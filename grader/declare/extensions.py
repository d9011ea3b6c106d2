"""Instructors' own checks, from files outside the grader (``--properties PATH``).

A properties file is trusted code, like ``properties/``: it is imported here, in the grader's
process, before the shards fork, and its checks then run exactly as the built-in ones do (the
student's functions still only ever run in a worker). A folder stands for its ``*.py`` files in
name order, except those whose name starts with ``_``, which the others may import as helpers:
a file's folder is on the import path while it loads.

Anything wrong with a file (missing, does not import, declares a bad check, declares none, or
reuses a check id) is a ``UsageError`` that names the file and says what to fix.

The option itself, ``--properties``, is ``grader.options.add_properties``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import sys
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from grader.declare.checks import Check, DeclarationError, defined_in, exercise_checks, unique
from grader.errors import UsageError
from grader.exercise import Exercise
from grader.exercise import load as load_exercise

# Loaded modules live under this package-like prefix in sys.modules, one name per file path.
PREFIX = "grader_properties_"


def files(paths: Iterable[Path]) -> list[Path]:
    """The properties files that ``paths`` stand for, each once, in the order given."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
            if not inside:
                raise UsageError(f"--properties {path}: the folder holds no .py file")
            found += inside
        elif path.is_file():
            if path.suffix != ".py":
                raise UsageError(f"--properties {path}: not a Python file (.py)")
            found.append(path)
        else:
            raise UsageError(f"--properties {path}: no such file or folder")
    unique_files: dict[Path, Path] = {}
    for path in found:
        unique_files.setdefault(path.resolve(), path)
    return list(unique_files.values())


def _module_name(path: Path) -> str:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    return f"{PREFIX}{path.stem}_{digest}"


def _import(path: Path) -> ModuleType:
    """Import one file as a module of its own (once per process, like any import)."""
    name = _module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"--properties {path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout holds the report, and nothing else
            spec.loader.exec_module(module)
    except DeclarationError as error:
        del sys.modules[name]
        raise UsageError(f"--properties {path}: {error}{_where(error, path)}") from error
    except (Exception, SystemExit) as error:
        del sys.modules[name]
        raise UsageError(
            f"--properties {path}: importing it raised {type(error).__name__}: {error}{_where(error, path)}"
        ) from error
    finally:
        sys.path.remove(folder)
    return module


def _where(error: BaseException, path: Path) -> str:
    """`` (line N)``: the last line of ``path`` in the error's traceback, if any."""
    if isinstance(error, SyntaxError) and error.lineno:
        return f" (line {error.lineno})"
    resolved = str(path.resolve())
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == resolved]
    return f" (line {lines[-1]})" if lines else ""


def load(paths: Sequence[Path], functions: Sequence[str] | None = None) -> tuple[Check, ...]:
    """The checks the properties files at ``paths`` define, in file and definition order, each
    on one of ``functions`` (the exercise's; None: any)."""
    checks: list[Check] = []
    for path in files(paths):
        defined = defined_in(_import(path))
        if not defined:
            raise UsageError(f"--properties {path}: defines no check (declare one with @check(...))")
        for c in defined:
            if functions is not None and c.target not in functions:
                line = c.source.rpartition(":")[2]
                raise UsageError(
                    f"--properties {path}: check(): target={c.target!r} is invalid; expected one of "
                    f"{tuple(functions)} (line {line})"
                )
        checks += defined
    return tuple(checks)


def all_checks(paths: Sequence[Path] = (), exercise: Exercise | None = None) -> tuple[Check, ...]:
    """The exercise's checks (default: the configured one's), then those of the properties
    files, each on one of the exercise's functions; every id once."""
    exercise = exercise or load_exercise()
    try:
        return unique(exercise_checks(exercise) + load(paths, tuple(exercise.functions)))
    except DeclarationError as error:
        raise UsageError(str(error)) from error
