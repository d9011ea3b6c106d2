"""Processes for student code: a zygote that forks workers, and the grader's handle on one.

The zygote is a fresh interpreter (started with ``-I``, a minimal environment and no inherited
file descriptors) that imports torch and then only forks: every worker starts with torch ready,
in milliseconds, and its memory holds nothing of the grader's (no reference solution, no
expected values, no environment secrets). Its only torch operations are a single-threaded
warm-up, which starts no thread pool, so the forks stay clean.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import functools
import importlib.util
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import CpuBudgetSpent, SubmissionBroken, SubmissionTimedOut, corrupted_reply_message
from grader.sandbox import channel, wire

_MAX_FD = 1024
# Where the grader package (and, in a clone, the exercise's) is importable from, for the zygote.
_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds the grader package
_ZYGOTE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from grader.sandbox.zygote import zygote_main; zygote_main(int(sys.argv[2]))"
)


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


def _code_paths() -> list[str]:
    """What a worker must still read after dropping privileges: Python, torch, the grader."""
    torch = importlib.util.find_spec("torch")  # found, not imported: that costs seconds
    assert torch is not None and torch.origin is not None
    return [sysconfig.get_paths()["stdlib"], str(Path(torch.origin).parent.parent), _ROOT]


def can_drop_privileges() -> bool:
    """Whether workers can run unprivileged: the grader is root, and Python, torch and the
    grader are installed where any user can read them."""
    return os.geteuid() == 0 and all(_others_can_read(p) for p in _code_paths())


def solution_copies() -> list[str]:
    """Where this installation holds, readable by any user, what is as good as the solution:
    its git history (which has ``reference/solution.py``), its examples and the tests'
    correct submissions. A git clone has them; a wheel or the Gradescope bundle does not."""
    root = Path(_ROOT)
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


class ZygoteLink:
    """One control connection to the zygote. Each process of the grader needs its own."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def _ask(self, command: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        socket.send_fds(self.sock, [json.dumps(command).encode()], fds or [])
        reply = self.sock.recv(4096)
        if not reply:
            raise RuntimeError("the zygote process has gone away")
        return json.loads(reply)

    def spawn(
        self,
        submission: str,
        limits: Limits,
        beside: Sequence[str] = (),
        confinement: Confinement = Confinement(),
    ) -> WorkerProcess:
        """Fork a worker that will serve ``submission`` from a private temporary directory,
        with copies of the files ``beside`` next to it (under their own names), confined as
        ``confinement`` says."""
        hide_files(confinement.secret_files)  # before the worker exists
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        output = tempfile.TemporaryFile(prefix="drgrpo-output-")  # noqa: SIM115 - kept by the handle
        workdir = tempfile.mkdtemp(prefix="drgrpo-worker-")
        # The worker reads its own copies, in a directory only it (and the grader) can use.
        copies = [os.path.join(workdir, os.path.basename(f)) for f in (submission, *beside)]
        try:
            for original, copy in zip((submission, *beside), copies, strict=True):
                Path(copy).write_bytes(read_submission(original, limits.file_bytes, _held(confinement)))
        except SubmissionBroken:
            output.close()
            shutil.rmtree(workdir, ignore_errors=True)
            ours.close()
            theirs.close()
            raise
        path = copies[0]
        uid = None
        if limits.drop_privileges and can_drop_privileges():
            uid = UID_BASE + secrets.randbelow(UID_RANGE)
            for item in (workdir, *copies):
                os.chown(item, uid, uid)
        command = {
            "op": "spawn",
            "path": path,
            "workdir": workdir,
            "limits": dataclasses.asdict(limits),
            "uid": uid,
            "code_paths": _code_paths(),
            "packages": list(confinement.packages),
            "secret_modules": list(confinement.secret_modules),
        }
        try:
            pid = self._ask(command, [theirs.fileno(), output.fileno()])["pid"]
        finally:
            theirs.close()
        worker = WorkerProcess(self, pid, channel.Channel(ours), output, workdir, limits, uid)
        worker.greet()
        return worker

    def reap(self, pid: int, wait_s: float) -> int | None:
        """The wait status of a worker that has ended, or None if it is still running."""
        return self._ask({"op": "reap", "pid": pid, "wait_s": wait_s})["status"]

    def sweep(self, uid: int) -> None:
        """Kill every process running as ``uid``: what a worker left behind, even in a session
        of its own."""
        self._ask({"op": "sweep", "uid": uid})

    def connect(self) -> ZygoteLink:
        """A new, independent link, for a process about to be forked from this one."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._ask({"op": "connect"}, [theirs.fileno()])
        finally:
            theirs.close()
        return ZygoteLink(ours)

    def close(self) -> None:
        self.sock.close()


class Zygote(ZygoteLink):
    """A clean, single-purpose parent for workers; it exits when every link is closed."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
        }
        for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # machine workarounds, not secrets
            if name in os.environ:
                env[name] = os.environ[name]
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _ZYGOTE, _ROOT, str(theirs.fileno())],
            env=env,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()
        super().__init__(ours)

    def close(self) -> None:
        super().close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WorkerProcess:
    """The trusted side of one worker: requests with a timeout, and the verdict when it dies."""

    def __init__(
        self,
        zygote: ZygoteLink,
        pid: int,
        chan: channel.Channel,
        output: Any,
        workdir: str,
        limits: Limits,
        uid: int | None,
    ) -> None:
        self.zygote = zygote
        self.pid = pid
        self.channel = chan
        self.output = output
        self.workdir = workdir
        self.limits = limits
        self.uid = uid
        self.alive = True
        self.cpu_counter: str | None = None  # its control group's CPU counter, once it has one
        # Said by the worker before any student code runs (``greet``):
        self.isolated = False  # namespaces of its own
        self.minimal_root = False  # a root that shows only Python, torch and the grader

    def greet(self) -> None:
        """Read the worker's first message, sent before it runs any student code: whether its
        namespaces are in place. Only then can it be believed (later, a submission can write
        anything to the channel)."""
        try:
            hello = self.channel.receive(timeout=self.limits.call_timeout_s)
        except channel.ChannelTimeout:
            self.kill()
            raise SubmissionBroken("the process for your code did not start in time") from None
        except (EOFError, OSError, wire.WireError) as error:
            raise SubmissionBroken(self._death(error)) from None
        self.isolated = isinstance(hello, dict) and hello.get("isolated") is True
        self.minimal_root = isinstance(hello, dict) and hello.get("minimal_root") is True
        self.cpu_counter = cgroup_cpu_counter(self.pid)  # joined before it said hello

    @property
    def sandbox(self) -> dict[str, bool]:
        """What the worker said of its sandbox, as ``Loaded`` and the report take it."""
        return {"isolated": self.isolated, "minimal_root": self.minimal_root}

    def cpu_seconds(self) -> float:
        """The CPU time the worker has used so far (see ``cpu_seconds``)."""
        return cpu_seconds(self.pid, self.cpu_counter)

    def request(self, message: dict[str, Any] | bytes, timeout_s: float | None = None) -> dict[str, Any]:
        """Send a message (or one already packed) and wait for the reply, at most ``timeout_s``
        and while the worker uses at most ``limits.call_cpu_s`` of CPU time (counted from
        ``channel.WATCH_S`` in, so a call may take that much more): a spinner is stopped as soon
        as that is spent, however long a loaded machine would let it run.

        The request carries a sequence number of its own, unguessable, which the reply must
        echo: student code can write to the channel, and a reply that answers another request
        (one it forged, or the worker's own reply after one it forged) retires the worker, as
        the submission's error, rather than being read as the answer to a later request."""
        timeout_s = self.limits.call_timeout_s if timeout_s is None else timeout_s
        budget = self.limits.call_cpu_s
        seq = secrets.token_hex(8)
        if isinstance(message, bytes):
            message = wire.with_entry(message, "seq", seq)
        else:
            message = {**message, "seq": seq}
        started: list[float] = []  # the CPU time at the first look, 0.1 s in: most calls end before

        def within_budget() -> None:
            spent = self.cpu_seconds()
            if not started:
                started.append(spent)
            elif spent - started[0] > budget:
                raise CpuBudgetSpent(
                    f"your code used more than {budget:g} s of CPU time in one call and was stopped "
                    "(a correct call needs a few milliseconds: look for a loop that never ends)"
                )

        try:
            self.channel.send(message)
            reply = self.channel.receive(timeout=timeout_s, while_waiting=within_budget)
        except channel.ChannelTimeout:
            self.kill()
            raise SubmissionTimedOut(
                f"your code ran for more than {timeout_s:g} s on one call and was stopped"
            ) from None
        except CpuBudgetSpent:
            self.kill()
            raise
        except (EOFError, OSError, wire.WireError) as error:
            raise SubmissionBroken(self._death(error)) from None
        if not isinstance(reply, dict):
            raise SubmissionBroken(self._death(wire.WireError("reply is not a mapping")))
        if reply.pop("seq", None) != seq:
            error = wire.WireError("a reply to another request: something else wrote to the grader's channel")
            raise SubmissionBroken(self._death(error))
        return reply

    def _death(self, error: Exception) -> str:
        if isinstance(error, wire.WireError):  # it is running: no reason to wait for its end
            self.kill()
            return corrupted_reply_message(error)
        status = self.zygote.reap(self.pid, wait_s=1.0) if self.alive else None
        self.kill()
        if status is None:
            return "the process running your code stopped answering (it closed its channel)"
        self.alive = False
        return f"the process running your code {describe_status(status)}"

    def kill(self) -> None:
        if self.alive:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    kill(self.pid, signal.SIGKILL)
            self.zygote.reap(self.pid, wait_s=5.0)
            self.alive = False
        if self.uid is not None:
            self.zygote.sweep(self.uid)
            remove_leftovers(self.uid)
            self.uid = None
        self.channel.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def captured_output(self) -> str:
        """What the submission printed, cut to the configured size."""
        self.output.seek(0)
        data = self.output.read(self.limits.output_bytes + 1)
        return cut_output(data.decode("utf-8", errors="replace"), self.limits.output_bytes)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


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


def read_submission(path: str, limit: int, held: Sequence[Path] = ()) -> bytes:
    """The bytes of a submission file, refused (as the student's error) unless the file is a
    regular file itself: the grader, which may read anything, would otherwise copy whatever a
    symbolic link points to, the reference solution included; nor may it be one of the files
    in the folders ``held`` reached by another path than its own."""
    name = os.path.basename(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SubmissionBroken(f"{name} is a symbolic link, not a file: submit the file itself") from None
        raise SubmissionBroken(f"{name} could not be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionBroken(f"{name} is not a regular file")
        _refuse_held_file_reached_by_link(path, info, held)
        data = file.read(limit + 1)
    if len(data) > limit:
        raise SubmissionBroken(f"{name} is larger than {limit} bytes")
    return data


def _held(confinement: Confinement) -> list[Path]:
    """The folders whose files a submission must not be by another path than their own: the
    exercise's secret files' (the solution, the catalogued mistakes) and packages', the
    grader's, and a clone's correct examples and tests."""
    root = Path(_ROOT)
    folders = [Path(f).parent for f in confinement.secret_files] + [Path(p) for p in confinement.packages]
    folders += [root / "grader", root / "examples", root / "tests"]
    return sorted(set(folders))


def _refuse_held_file_reached_by_link(path: str, info: os.stat_result, held: Sequence[Path]) -> None:
    """``O_NOFOLLOW`` guards a path's last name only: through a folder on the path that is a
    symbolic link, or as a hard link, the solution opens as a regular file. Refuse a file of the
    folders ``held`` (``info``, of the opened file) reached by another path than its own; by its
    own, an instructor may still grade the solution."""
    given = os.path.abspath(path)
    if info.st_nlink == 1 and os.path.realpath(given) == given:
        return  # neither a hard link nor behind a linked folder: nothing to look for
    root = Path(_ROOT)
    for folder in held:
        for held_file in folder.rglob("*"):
            with contextlib.suppress(OSError):
                found = held_file.stat(follow_symlinks=False)
                if (found.st_dev, found.st_ino) == (info.st_dev, info.st_ino) and str(held_file) != given:
                    shown = held_file.relative_to(root) if held_file.is_relative_to(root) else held_file
                    raise SubmissionBroken(
                        f"{os.path.basename(path)} is the grader's own file {shown}, "
                        "reached through a link (a hard link, or a folder on its path that is a "
                        "symbolic link): submit a file of your own"
                    )


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


def cut_output(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, saying so where it was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut at {limit} characters]"


def describe_status(status: int) -> str:
    """A wait status in words a student understands."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        meaning = {
            "SIGSEGV": " (a segmentation fault: memory was accessed out of bounds)",
            "SIGKILL": " (killed, for example for using too much memory)",
            "SIGABRT": " (aborted)",
        }.get(name, "")
        return f"was killed by signal {name}{meaning}"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)} (for example through os._exit or a crash)"
    return f"ended with wait status {status}"


def zygote_main(fd: int) -> None:  # pragma: no cover - runs in the zygote
    """Serve the links: fork a worker per ``spawn``, report wait statuses on ``reap``, accept
    new links on ``connect``; exit when the last link closes.

    A link that closes while workers it spawned are still unaccounted for (its grading process
    died, or was killed by a batch) leaves them to the zygote: it kills them, what their users
    left running, and their files (``_abandon``)."""
    import select

    import numpy  # noqa: F401 - loaded once here rather than in every worker

    _warm_up()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    links = [socket.socket(fileno=fd)]
    # Per link, the workers it has not cleaned up after yet: pid -> the spawn command.
    spawned: dict[socket.socket, dict[int, dict[str, Any]]] = {links[0]: {}}
    while links:
        ready, _, _ = select.select(links, [], [])
        for sock in ready:
            try:
                data, fds, _, _ = socket.recv_fds(sock, 4096, 2)
            except OSError:
                data, fds = b"", []
            if not data:
                links.remove(sock)
                _abandon(spawned.pop(sock))
                sock.close()
                continue
            command = json.loads(data)
            mine = spawned[sock]
            if command["op"] == "spawn":
                pid = os.fork()
                if pid == 0:
                    for link in links:
                        link.close()
                    _worker_main(fds, command)
                mine[pid] = command
                reply: dict[str, Any] = {"pid": pid}
            elif command["op"] == "reap":
                reply = {"status": _reap(command["pid"], command["wait_s"])}
                if reply["status"] is not None:
                    _leave_cgroups(command["pid"])
                if reply["status"] is not None and mine.get(command["pid"], {}).get("uid") is None:
                    mine.pop(command["pid"], None)  # without a uid of its own, nothing is left
            elif command["op"] == "sweep":
                reply = {"ok": _sweep(command["uid"])}
                for pid in [pid for pid, spawn in mine.items() if spawn["uid"] == command["uid"]]:
                    _leave_cgroups(pid)
                    del mine[pid]
            elif command["op"] == "connect":
                link = socket.socket(fileno=fds.pop())
                links.append(link)
                spawned[link] = {}
                reply = {"ok": True}
            else:
                reply = {"error": command["op"]}
            for extra in fds:
                os.close(extra)
            sock.send(json.dumps(reply).encode())
    os._exit(0)


def _abandon(workers: dict[int, dict[str, Any]]) -> None:  # pragma: no cover - runs in the zygote
    """Clean up after workers whose grading process is gone: kill each, reap it, kill what its
    user left running, and delete its directory and what it left in the shared ones."""
    for pid, spawn in workers.items():
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
        _reap(pid, 5.0)
        if spawn["uid"] is not None:
            _sweep(spawn["uid"])
            remove_leftovers(spawn["uid"])
        _leave_cgroups(pid)
        shutil.rmtree(spawn["workdir"], ignore_errors=True)


def _sweep(uid: int) -> bool:  # pragma: no cover - runs in the zygote
    """Kill every process of ``uid``, from a child that becomes ``uid`` (kill(-1) then reaches
    exactly that user's processes)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return True


def _warm_up() -> None:  # pragma: no cover - runs in the zygote
    """Pay torch's first-call costs (lazy initialization of operators and autograd, about 0.6 s)
    once here, rather than in every worker. With one intra-op thread this starts no thread, so
    the forks stay clean."""
    import torch

    for dtype in (torch.float32, torch.float64):
        x = torch.zeros(2, 3, dtype=dtype, requires_grad=True)
        valid = torch.ones(2, 3, dtype=torch.bool)
        y = torch.where(valid, x, torch.zeros_like(x))
        ratio = torch.exp(y - y.detach())
        loss = -torch.minimum(ratio, torch.clamp(ratio, 0.8, 1.2)).sum() / 6
        (grad,) = torch.autograd.grad(loss, [x], torch.ones_like(loss))
        torch.from_numpy(grad.numpy().copy())


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


def _leave_cgroups(pid: int) -> None:
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


def _reap(pid: int, wait_s: float) -> int | None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


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
    wanted = [str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, *code_paths) if p != _ROOT]
    wanted.append(str(Path(_ROOT) / "grader"))
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


def _confine(command: dict[str, Any]) -> dict[str, bool]:  # pragma: no cover - runs in the worker
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


def _worker_main(fds: list[int], command: dict[str, Any]) -> None:  # pragma: no cover - child
    """Become the worker: own session, captured output, nothing inherited, then serve."""
    code = 70
    try:
        os.setsid()
        conn_fd, output_fd = fds
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.dup2(conn_fd, 3)
        os.closerange(4, _MAX_FD)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        os.chdir(command["workdir"])
        isolated = _confine(command)
        from grader.sandbox import worker

        connection = channel.Channel(socket.socket(fileno=3))
        worker.serve(connection, command["path"], isolated, command["secret_modules"])
        code = 0
    finally:
        os._exit(code)
