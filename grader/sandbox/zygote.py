"""Processes for student code: a zygote that forks workers, and the grader's handle on one.

The zygote is a fresh interpreter (started with ``-I``, a minimal environment and no inherited
file descriptors) that imports torch and then only forks: every worker starts with torch ready,
in milliseconds, and its memory holds nothing of the grader's (no reference solution, no
expected values, no environment secrets). Its only torch operations are a single-threaded
warm-up, which starts no thread pool, so the forks stay clean.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.errors import CpuBudgetSpent, SubmissionBroken, SubmissionTimedOut, corrupted_reply_message
from grader.sandbox import channel, wire
from grader.sandbox.confine import (
    ROOT,
    cgroup_cpu_counter,
    confine_worker,
    cpu_seconds,
    leave_cgroups,
    remove_leftovers,
)
from grader.sandbox.protections import (
    UID_BASE,
    UID_RANGE,
    Confinement,
    Limits,
    can_drop_privileges,
    code_paths,
    hide_files,
)

_MAX_FD = 1024


_ZYGOTE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from grader.sandbox.zygote import zygote_main; zygote_main(int(sys.argv[2]))"
)


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
        confinement: Confinement | None = None,
    ) -> WorkerProcess:
        """Fork a worker that will serve ``submission`` from a private temporary directory,
        with copies of the files ``beside`` next to it (under their own names), confined as
        ``confinement`` says."""
        confinement = confinement or Confinement()
        hide_files(confinement.secret_files)  # before the worker exists
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        output = tempfile.TemporaryFile(prefix="drgrpo-output-")  # noqa: SIM115 - kept by the handle
        workdir = tempfile.mkdtemp(prefix="drgrpo-worker-")
        # The worker reads its own copies, in a directory only it (and the grader) can use.
        copies = [os.path.join(workdir, os.path.basename(f)) for f in (submission, *beside)]
        held = _held(confinement)
        try:
            for original, copy in zip((submission, *beside), copies, strict=True):
                Path(copy).write_bytes(read_submission(original, limits.file_bytes, held))
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
            "code_paths": list(code_paths()),
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
            [sys.executable, "-I", "-c", _ZYGOTE, ROOT, str(theirs.fileno())],
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
    root = Path(ROOT)
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
    root = Path(ROOT)
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
                    leave_cgroups(command["pid"])
                if reply["status"] is not None and mine.get(command["pid"], {}).get("uid") is None:
                    mine.pop(command["pid"], None)  # without a uid of its own, nothing is left
            elif command["op"] == "sweep":
                reply = {"ok": _sweep(command["uid"])}
                for pid in [pid for pid, spawn in mine.items() if spawn["uid"] == command["uid"]]:
                    leave_cgroups(pid)
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
        leave_cgroups(pid)
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
        isolated = confine_worker(command)
        from grader.sandbox import worker

        connection = channel.Channel(socket.socket(fileno=3))
        worker.serve(connection, command["path"], isolated, command["secret_modules"])
        code = 0
    finally:
        os._exit(code)
