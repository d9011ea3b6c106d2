"""A worker's confinement, set up in the worker before any student code runs: resource limits,
namespaces (network, IPC, mounts), control groups, a minimal root; the CPU time it used; and
what it leaves behind, removed after it ends where it had no namespaces of its own."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import re
import resource
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# Where the grader package (and, in a clone, the exercise's) is importable from, for the zygote.
ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds the grader package


def cgroup_cpu_counter(pid: int) -> str | None:
    """The file counting the CPU time of worker ``pid``'s own control group, every process of
    it included (v1's ``cpuacct.usage``, v2's ``cpu.stat``), or None when it has none."""
    own = "/" + _CGROUP_NAME.format(pid=pid)
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if not path.endswith(own):
            continue
        if "cpuacct" in controllers.split(","):
            return os.path.join(CGROUPS, "cpuacct", path.lstrip("/"), "cpuacct.usage")
        if controllers == "":
            return os.path.join(CGROUPS, path.lstrip("/"), "cpu.stat")
    return None


def cpu_seconds(pid: int, counter: str | None) -> float:
    """The CPU time worker ``pid`` has used: its control group's (``counter``, which counts
    every process of the worker) or else its own and its waited-for children's
    (``/proc/PID/stat``); 0 once it is gone."""
    try:
        if counter is None:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return sum(int(ticks) for ticks in fields[11:15]) / _CLOCK_TICKS  # user, system, children's
        text = Path(counter).read_text()
        if counter.endswith("cpuacct.usage"):
            return int(text) / 1e9
        return int(text.split("usage_usec", 1)[1].split()[0]) / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


# Directories any user may write to: without a mount namespace, what a worker leaves there
# outlives it unless it is deleted; with one, each gets a private, empty tmpfs instead.
SHARED_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/crash", "/dev/mqueue")


_SYSV_IPC = {"shm": "shmid", "sem": "semid", "msg": "msqid"}  # /proc/sysvipc/<file>: id column


_IPC_RMID = 0


def remove_leftovers(uid: int) -> None:
    """Delete what ``uid`` left in the shared temporary directories, and its System V shared
    memory, semaphores and message queues: where the worker had no namespaces of its own, they
    would otherwise outlive it (and carry data to a later grade). Its processes are dead by
    now, so nothing races this; links are removed, never followed."""
    _remove_ipc(uid)
    for folder in SHARED_TEMPORARY:
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)


def _remove_ipc(uid: int) -> None:
    """Remove the System V IPC objects that ``uid`` owns or created (as root: the zygote's or
    the grader's rights)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, column in _SYSV_IPC.items():
        try:
            header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        for row in rows:
            fields = dict(zip(header.split(), row.split(), strict=False))
            if str(uid) not in (fields.get("uid"), fields.get("cuid")):
                continue
            ident = int(fields[column])
            if kind == "sem":
                libc.semctl(ident, 0, _IPC_RMID)
            else:
                getattr(libc, f"{kind}ctl")(ident, _IPC_RMID, None)


# A worker's own control groups, under the grader's: the machine's limits on the grader still
# hold, and the worker's memory counts what RLIMIT_AS does not see (memfd, shared memory, tmpfs).
CGROUPS = "/sys/fs/cgroup"


_CGROUP_NAME = "drgrpo-worker-{pid}"


# What each controller is told, per cgroup version: v1's memory, pids and cpu hierarchies, or v2.
_CGROUP_LIMITS = {
    "memory": {"memory.limit_in_bytes": "memory_bytes", "memory.memsw.limit_in_bytes": "memory_bytes"},
    "pids": {"pids.max": "processes"},
    "cpu": {"cpu.shares": "cpu_shares"},
    "cpuacct": {},  # nothing to set: it counts the CPU time that a call's budget is read from
    "": {
        "memory.max": "memory_bytes",
        "memory.swap.max": "no_swap",
        "pids.max": "processes",
        "cpu.weight": "cpu_weight",
    },
}


def _cgroup_bases() -> dict[str, str]:
    """The grader's own cgroup directory per controller (v1), or ``""`` for cgroup v2."""
    bases = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            if controller not in _CGROUP_LIMITS:
                continue
            mount = os.path.join(CGROUPS, controller) if controller else CGROUPS
            base = os.path.join(mount, path.lstrip("/"))
            if os.path.isfile(os.path.join(base, "cgroup.procs")):
                bases[controller] = base
    if "memory" in bases:
        bases.pop("", None)  # a hybrid machine: v1 holds the controllers
    return bases


def _join_cgroups(limits: dict[str, Any]) -> None:  # pragma: no cover - worker, as root
    """Move this worker into control groups of its own with the limits, where the kernel lets it."""
    values = {
        "memory_bytes": limits["memory_bytes"],
        "processes": limits["processes"],
        "cpu_shares": max(2, int(1024 * limits["cpu_share"])),
        "cpu_weight": max(1, int(100 * limits["cpu_share"])),
        "no_swap": 0,
    }
    for controller, base in _cgroup_bases().items():
        where = os.path.join(base, _CGROUP_NAME.format(pid=os.getpid()))
        try:
            os.mkdir(where, 0o700)
            for name, key in _CGROUP_LIMITS[controller].items():
                with contextlib.suppress(OSError):
                    Path(where, name).write_text(str(values[key]))
            Path(where, "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            continue


def leave_cgroups(pid: int) -> None:
    """Remove a finished worker's control groups (those still holding a process stay)."""
    for base in _cgroup_bases().values():
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(base, _CGROUP_NAME.format(pid=pid)))


@functools.cache
def cgroups_available() -> bool:
    """Whether workers can get a memory cgroup of their own here (root, and a writable hierarchy)."""
    base = _cgroup_bases().get("memory") or _cgroup_bases().get("")
    if base is None or os.geteuid() != 0:
        return False
    probe = os.path.join(base, _CGROUP_NAME.format(pid=f"probe-{os.getpid()}"))
    try:
        os.mkdir(probe)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return True


_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000


_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 16384, 1 << 18


def _isolate(
    workdir: str, uid: int, limits: dict[str, Any], code_paths: list[str]
) -> dict[str, bool]:  # pragma: no cover - worker, as root
    """Namespaces of its own: a network (none), IPC, and mounts where the worker sees either a
    minimal root (``_enter_minimal_root``) or the host's files with private, empty temporary
    directories; and a work directory of its own. Each temporary directory is a tmpfs of at
    most ``disk_bytes``, so that no submission can fill the machine's disk; the work
    directory's files (the submission) are carried into the new one. Without a minimal root, a
    shared directory that holds Python, torch or the grader stays shared (hiding it would break
    imports). Returns ``isolated`` (all of it is in place) and ``minimal_root``; nothing
    changes where the kernel refuses the namespaces."""
    libc = ctypes.CDLL(None, use_errno=True)

    def mount_tmpfs(where: str, options: str) -> None:
        size = f"size={limits['disk_bytes']},nr_inodes=4096,{options}".encode()
        if libc.mount(b"tmpfs", where.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, size):
            raise OSError(ctypes.get_errno(), f"cannot mount a private {where}")

    carried = {}  # read before anything is mounted over them
    for name in os.listdir(workdir):
        with open(os.path.join(workdir, name), "rb") as source:
            carried[name] = source.read()
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC) != 0:
        return {"isolated": False, "minimal_root": False}
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return {"isolated": False, "minimal_root": False}
    minimal = limits["minimal_root"] and _enter_minimal_root(libc, workdir, mount_tmpfs, code_paths)
    complete = minimal
    if not minimal:
        complete = _hide_processes(libc, "/proc")
        for shared in SHARED_TEMPORARY:
            if any(Path(p).resolve().is_relative_to(Path(shared).resolve()) for p in code_paths):
                complete = False
            elif os.path.isdir(shared) and not os.path.islink(shared):
                mount_tmpfs(shared, "mode=1777")
    os.makedirs(workdir, exist_ok=True)
    mount_tmpfs(workdir, f"mode=0700,uid={uid},gid={uid}")
    for name, data in carried.items():
        with open(os.path.join(workdir, name), "wb") as copy:
            copy.write(data)
        os.chown(os.path.join(workdir, name), uid, uid)
    os.chdir(workdir)  # the new one: the old working directory is the host's, under the mount
    return {"isolated": complete, "minimal_root": minimal}


# What a minimal root shows of the host besides Python, torch and the grader (read-only).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf")


_DEVICES = ("null", "zero", "full", "random", "urandom")


_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}  # system call numbers: glibc has no wrapper


_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MNT_DETACH = 1, 32, 4096, 2


def root_binds(code_paths: list[str]) -> list[str]:
    """The host's folders a worker's minimal root shows, read-only: the system's programs and
    libraries, Python (the venv's prefix too), torch, the ``grader`` package and the exercise's
    packages (``Confinement.packages``, among ``code_paths``); not the rest of the grader's
    folder, where a git clone's history, examples and tests hold the solution. Folders inside
    another are left out."""
    wanted = [str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, *code_paths) if p != ROOT]
    wanted.append(str(Path(ROOT) / "grader"))
    chosen = [path for path in _SYSTEM if os.path.lexists(path)]
    for path in sorted(set(wanted), key=len):
        if not any(Path(path).is_relative_to(parent) for parent in chosen):
            chosen.append(path)
    return chosen


def _enter_minimal_root(
    libc: ctypes.CDLL, new: str, mount_tmpfs: Callable[[str, str], None], code_paths: list[str]
) -> bool:  # pragma: no cover - worker, as root
    """Make a tmpfs at ``new`` (the work directory's folder, a mount point of this namespace
    only) the worker's root, holding read-only binds of ``root_binds``, a few files of /etc,
    the harmless devices, a /proc that shows the worker's own processes only, and private
    temporary directories; then ``pivot_root`` into it and drop the host's root. Returns False,
    having changed nothing outside ``new``, where any of it is refused."""
    machine = os.uname().machine
    if machine not in _PIVOT_ROOT:
        return False

    def bind(source: str, read_only: bool = True) -> None:
        target = new + source
        if os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            Path(target).touch()
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
        if libc.mount(source.encode(), target.encode(), None, _MS_BIND | _MS_REC, None) or (
            read_only and libc.mount(None, target.encode(), None, flags, None)
        ):
            raise OSError(ctypes.get_errno(), f"cannot bind {source}")

    try:
        mount_tmpfs(new, "mode=0755")
        for shared in SHARED_TEMPORARY:
            if os.path.isdir(shared) and not os.path.islink(shared):
                os.makedirs(new + shared)
                mount_tmpfs(new + shared, "mode=1777")
        etc = [f"/etc/{name}" for name in _ETC if os.path.lexists(f"/etc/{name}")]
        for source in [*root_binds(code_paths), *etc]:
            if os.path.islink(source):  # /bin -> usr/bin, /etc/localtime -> /usr/share/...
                os.makedirs(os.path.dirname(new + source), exist_ok=True)
                os.symlink(os.readlink(source), new + source)
            else:
                bind(source)
        for device in _DEVICES:
            bind(f"/dev/{device}", read_only=False)
        os.makedirs(new + "/proc")
        if not _hide_processes(libc, new + "/proc"):
            return False
        os.makedirs(new + "/.old")
        if libc.syscall(_PIVOT_ROOT[machine], new.encode(), (new + "/.old").encode()):
            return False
    except OSError:
        return False
    os.chdir("/")
    libc.umount2(b"/.old", _MNT_DETACH)
    os.rmdir("/.old")
    return True


def _hide_processes(libc: ctypes.CDLL, where: str) -> bool:  # pragma: no cover - worker, as root
    """A proc of the worker's own at ``where``, where a user sees only its own processes
    (``hidepid=2``): not the command lines of other grades, which name classmates' files. Only
    where each mount of proc has its own options (Linux 5.8 and later): before, the option
    would apply to the host's /proc too."""
    release = tuple(int(part) for part in re.findall(r"\d+", os.uname().release)[:2])
    if release < (5, 8):
        return False
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return libc.mount(b"proc", where.encode(), b"proc", flags, b"hidepid=2") == 0


def confine_worker(command: dict[str, Any]) -> dict[str, bool]:  # pragma: no cover - runs in the worker
    """Kernel-enforced limits, then (as root) namespaces and the unprivileged user, for good.
    Returns whether the namespaces are in place (``isolated``), and a minimal root."""
    limits, uid, workdir = command["limits"], command["uid"], command["workdir"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    os.setpriority(os.PRIO_PROCESS, 0, limits["niceness"])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails, it does not kill
    os.environ.clear()
    os.environ.update({"HOME": workdir, "TMPDIR": workdir, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    isolated = {"isolated": False, "minimal_root": False}
    if uid is not None:
        if limits["cgroups"]:
            _join_cgroups(limits)  # before the minimal root hides /sys
        if limits["namespaces"]:
            isolated = _isolate(workdir, uid, limits, command["code_paths"] + command["packages"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    return isolated
