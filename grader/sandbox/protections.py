"""What keeps student code in its place on this machine: the limits a worker gets, whether it
can run as a user of its own, what an exercise asks of its workers (``Confinement``), and what
the report says of all that (``protections``)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import os
import stat
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.sandbox.confine import ROOT, cgroups_available


@dataclass(frozen=True)
class Limits:
    """Bounds on what student code may do. Per check, ``Check.timeout_s`` applies too."""

    call_timeout_s: float = 10.0  # one call into the submission
    call_cpu_s: float = 2.0  # the CPU time one call may use (a correct one uses milliseconds)
    total_timeout_s: float = 600.0  # the whole grade: later checks are skipped
    plots_timeout_s: float = 30.0  # the plots' calls together (--format html), within the grade's
    memory_bytes: int = 3 * 1024**3  # the worker's address space (torch itself takes ~0.7 GB)
    output_bytes: int = 64 * 1024  # what the report keeps of the submission's output
    file_bytes: int = 16 * 1024**2  # the largest file the worker may write (its output too)
    disk_bytes: int = 64 * 1024**2  # each private temporary directory, the work directory too
    processes: int = 64  # processes the worker's user may run (when privileges are dropped)
    open_files: int = 256  # file descriptors the worker may hold
    niceness: int = 10  # a spinning worker yields the CPU to the grader and to other grades
    cgroups: bool = True  # as root: a memory, pids and cpu control group per worker
    cpu_share: float = 0.25  # with cgroups: a worker's CPU weight beside the grader's
    drop_privileges: bool = True  # as root: run student code as an unprivileged user
    namespaces: bool = True  # as root: no network, private /tmp, /var/tmp and /dev/shm
    minimal_root: bool = True  # with namespaces: the worker sees only Python, torch and the grader


# Student code runs as a uid of its own per worker, with no login and no files but its work
# directory: workers cannot signal each other, and the process limit counts one worker alone.
UID_BASE = 1_900_000_000


UID_RANGE = 100_000_000


def _others_can_read(path: str) -> bool:
    """Whether a user with no special rights can read ``path`` (every folder above included)."""
    target = Path(path).resolve()
    try:
        for folder in target.parents:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
        mode = target.stat().st_mode
    except OSError:
        return False
    wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & wanted == wanted


@functools.cache
def code_paths() -> tuple[str, ...]:
    """What a worker must still read after dropping privileges: Python, torch, the grader
    (found once per process: every spawn asks, and an installation does not move)."""
    torch = importlib.util.find_spec("torch")  # found, not imported: that costs seconds
    assert torch is not None and torch.origin is not None
    return (sysconfig.get_paths()["stdlib"], str(Path(torch.origin).parent.parent), ROOT)


def can_drop_privileges() -> bool:
    """Whether workers can run unprivileged: the grader is root, and Python, torch and the
    grader are installed where any user can read them."""
    return os.geteuid() == 0 and all(_others_can_read(p) for p in code_paths())


def solution_copies() -> list[str]:
    """Where this installation holds, readable by any user, what is as good as the solution:
    its git history (which has ``reference/solution.py``), its examples and the tests'
    correct submissions. A git clone has them; a wheel or the Gradescope bundle does not."""
    root = Path(ROOT)
    found = [root / "examples", root / "tests" / "submissions"]
    git = root / ".git"
    if git.is_file():  # a worktree: "gitdir: <its folder in the main repository's .git>"
        with contextlib.suppress(OSError, ValueError):
            folder = Path(git.read_text().split("gitdir:", 1)[1].strip())
            common = folder / "commondir"
            git = (folder / common.read_text().strip()).resolve() if common.exists() else folder
    found.append(git / "objects")
    return [str(path) for path in found if path.exists() and _others_can_read(str(path))]


def protections(limits: Limits, isolated: bool = False, minimal_root: bool = False) -> dict[str, Any]:
    """What keeps student code in its place on this machine, for the report. ``isolated``: the
    workers got namespaces of their own, ``minimal_root``: a root that shows them only Python,
    torch and the grader (they say so before running any student code)."""
    dropped = limits.drop_privileges and can_drop_privileges()
    copies = [] if minimal_root else solution_copies()
    if dropped:
        missing = (
            []
            if isolated
            else [
                "student code can use the network and the shared /tmp",
                "no disk quota beyond the file size limit",
                "student code sees other processes' command lines in /proc, and System V IPC",
            ]
        )
        if not minimal_root:
            missing.append("student code can read every file of the machine that any user can read")
        if not (limits.cgroups and cgroups_available()):
            missing.append(
                "no control group per worker: memory in memfd or shared memory escapes the memory "
                "limit, and a spinning worker is only niced"
            )
        if copies:
            missing.append(
                "copies of the solution are readable by student code: "
                f"{', '.join(copies)} (install the grader without them, as the Gradescope bundle is)"
            )
    else:
        why = (
            "the grader is not root"
            if os.geteuid() != 0
            else "Python or the grader is installed where other users cannot read it"
        )
        missing = [
            f"student code runs as the grader's own user ({why})",
            "the reference solution's source is readable by that user",
            "the grader's files are writable if that user can write them",
            "the process limit is not enforced",
            "student code can use the network and the shared /tmp",
            "no disk quota beyond the file size limit",
        ]
    return {
        "separate_process": True,
        "unprivileged_user": "a uid of its own per worker" if dropped else None,
        "solution_unreadable": dropped and not copies,
        "private_network_and_tmp": isolated,
        "minimal_root": minimal_root,
        "limits": dataclasses.asdict(limits),
        "not_available": missing,
    }


@dataclass(frozen=True)
class Confinement:
    """What an exercise asks of its workers: the folders of the packages a student's code may
    import besides Python, torch and the grader (``packages``), the modules it must never
    import (``secret_modules``), and the files to make readable by root only before any
    worker runs unprivileged (``secret_files``: the solution and its near-answers)."""

    packages: tuple[str, ...] = ()
    secret_modules: tuple[str, ...] = ()
    secret_files: tuple[str, ...] = ()


def hide_files(paths: Sequence[str]) -> None:
    """When workers run unprivileged, make ``paths`` readable by root only."""
    if not can_drop_privileges():
        return
    for path in paths:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
