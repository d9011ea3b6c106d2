"""Submissions written to beat the grader: each gets a valid report with points off, in bounded
time, without touching the grader's files or reaching the reference solution."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import CHECK_COUNT, HOSTILE, IS_ROOT, ROOT, SOLUTION, SUBMISSIONS, WHY, validate

from grader.api import grade
from grader.report.render import render_json
from grader.sandbox.confine import SHARED_TEMPORARY, cgroups_available
from grader.sandbox.protections import Limits, solution_copies

# Unless student code runs as an unprivileged user (the grader is root, and Python and the
# grader are installed where that user can read them), nothing stops these from reaching the
# grader's files or processes.
NEEDS_ROOT = {
    "escapes_session",
    "fill_disk",
    "network_and_tmp",
    "fork_storm",
    "kill_parents",
    "read_solution_file",
    "use_mistake_catalogue",
    "write_grader_package",
    "find_solution_copies",
    "read_other_cmdlines",
    "sysv_ipc_left_behind",
    "leave_files_behind",
}
# Attacks that only a minimal root for the worker stops: without one, where they succeed, the
# report must say so (see the test of the report's claims).
ADMITTED = {"find_solution_copies"}


def snapshot() -> dict[str, str]:
    """Every file of the grader's packages, with its content hash."""
    found = {}
    for package in ("grader", "reference", "properties"):
        for path in sorted((ROOT / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def by_target(report, target):
    return [c for c in report.checks if c.target == target]


def loss_checks(report):
    return by_target(report, "drgrpo_loss")


EXPECTATIONS = {
    "forge_report_and_exit": lambda r: (
        r.load_error["type"] == "SystemExit" and all(c.status == "error" for c in r.checks)
    ),
    "os_exit_in_loss": lambda r: (
        all(c.status == "error" for c in loss_checks(r)) and "exited with code 3" in loss_checks(r)[0].message
    ),
    "infinite_loop": lambda r: (
        all(c.status == "timeout" for c in loss_checks(r))
        and all(c.status == "passed" for c in by_target(r, "drgrpo_advantages"))
    ),
    # Stopped at its call's CPU budget where its worker has a control group (which counts the
    # child's CPU time), else at the call's wall-clock limit.
    "spins_in_child": lambda r: (
        all(c.status == "timeout" for c in loss_checks(r))
        and all(c.status == "passed" for c in by_target(r, "drgrpo_advantages"))
    ),
    "memory_hog": lambda r: all(c.status == "error" for c in loss_checks(r)),
    "segfault": lambda r: "SIGSEGV" in loss_checks(r)[0].message,
    "fork_storm": lambda r: all(c.score == 0 for c in by_target(r, "drgrpo_advantages")),
    "output_flood": lambda r: "[output cut at" in r.submission_output and len(r.submission_output) < 70_000,
    "monkeypatch_comparisons": lambda r: (
        {"advantages_match_reference", "loss_matches_reference"}
        <= {c.id for c in r.checks if c.status == "failed"}
    ),
    "lying_tensor": lambda r: (
        {"advantages_match_reference", "loss_return_structure"}
        <= {c.id for c in r.checks if c.status == "failed"}
    ),
    "escapes_session": lambda r: {c.id: c.status for c in r.checks}["advantages_match_reference"] == "failed",
    "network_and_tmp": lambda r: r.score == 0 and "no network" in r.checks[0].message,
    "import_solution": lambda r: all("could not be imported" in c.message for c in loss_checks(r)),
    "read_solution_file": lambda r: (
        r.score == 0 and all("could not be read" in c.message for c in loss_checks(r))
    ),
    # Four private directories of 64 MiB each: it cannot write more than 256 MiB anywhere.
    "fill_disk": lambda r: _bytes_written(r) <= 4 * Limits().disk_bytes,
    "use_mistake_catalogue": lambda r: (
        r.score == 0 and all("could not be read" in c.message for c in loss_checks(r))
    ),
    "write_grader_package": lambda r: r.score < r.max_score,
    "close_channels": lambda r: all(c.status == "error" for c in loss_checks(r)),
    "keyboard_interrupt": lambda r: (
        "KeyboardInterrupt" in by_target(r, "drgrpo_advantages")[0].message
        and "SystemExit" in loss_checks(r)[0].message
    ),
    # With a uid of its own it can signal nothing but itself.
    "kill_parents": lambda r: (
        all(c.status == "passed" for c in by_target(r, "drgrpo_advantages"))
        and {c.id: c.status for c in loss_checks(r)}["loss_matches_reference"] != "passed"
    ),
    # Its edits land on the worker's copies of earlier inputs: nothing the grader holds changes.
    "keeps_references": lambda r: (
        all(c.status == "passed" for c in by_target(r, "drgrpo_advantages"))
        and {c.id: c.status for c in loss_checks(r)}["loss_matches_reference"] == "failed"
        and {c.id: c.status for c in loss_checks(r)}["loss_inputs_untouched"] == "passed"
    ),
    # Forged replies, written to the grader's channel: each is the submission's error, read no
    # further than its bounds (a 64 MiB header is refused after its first 12 bytes).
    "forge_nested_lists": lambda r: (
        all(c.status == "passed" for c in by_target(r, "drgrpo_advantages"))
        and all(c.status == "error" and "larger than 1048576" in c.message for c in loss_checks(r))
    ),
    "forge_deep_nesting": lambda r: (
        all(
            c.status == "error" and "nested more than 64" in c.message
            for c in by_target(r, "drgrpo_advantages")
        )
        and all(c.status == "error" and "nested too deeply" in c.message for c in loss_checks(r))
    ),
    "forge_absurd_shapes": lambda r: (
        all("refused array shape" in c.message for c in by_target(r, "drgrpo_advantages"))
        and all("infinity" in c.message for c in loss_checks(r))
        and all(c.status == "error" for c in r.checks)
    ),
    # Each call answered twice, first by a forged reply that echoes the request's sequence
    # number: the worker's own reply then answers no request, and is never read as the next
    # call's answer (the check that wants a ValueError gets it before any forgery).
    "forge_reply_twice": lambda r: _all_errors_say(r, "a reply to another request"),
    "forge_load_reply": lambda r: (
        "corrupted reply" in r.load_error["message"] and all(c.status == "error" for c in r.checks)
    ),
    # Its fields are read as the report needs them (the schema holds; see also test_wire); the
    # worker's own reply that follows answers no request.
    "forge_reply_fields": lambda r: (
        all(c.status == "error" and "corrupted reply" in c.message for c in r.checks)
        and all("0 values for 6 arguments" in c.message for c in loss_checks(r))
    ),
    # The grader copies the submission itself, never what a link points to.
    "symlink_to_solution": lambda r: (
        "symbolic link" in r.load_error["message"] and all(c.status == "error" for c in r.checks)
    ),
    "find_solution_copies": lambda r: (
        _all_errors_say(r, "no copy of the solution")
        if r.grader["sandbox"]["minimal_root"]
        else "student code can read every file of the machine that any user can read"
        in r.grader["sandbox"]["not_available"]
    ),
    # In a /proc of its own (hidepid=2) a worker sees its own processes only.
    "read_other_cmdlines": lambda r: (
        not r.grader["sandbox"]["private_network_and_tmp"] or _all_errors_say(r, "of 0 other processes")
    ),
    # In an IPC namespace of its own, no worker finds what another left (see also the test of
    # what outlives a grade).
    "sysv_ipc_left_behind": lambda r: (
        not r.grader["sandbox"]["private_network_and_tmp"] or _all_errors_say(r, "left a segment")
    ),
    "leave_files_behind": lambda r: _all_errors_say(r, "left files in"),
    "open_many_files": lambda r: all(
        0 < _opened(c.message)[0] < Limits().open_files and _opened(c.message)[1] == Limits().niceness
        for c in r.checks
        if c.id != "advantages_invalid_group_size"
    ),
    # The worker describes at most 4096 parts of a value, and replaces a reply it cannot send.
    "returns_huge_structure": lambda r: _all_errors_say(r, "too large to describe to the grader"),
    # Slow on the plots' inputs only: the checks do not see it (see the test of the plots).
    "slow_on_plots": lambda r: all(c.status == "passed" for c in loss_checks(r)),
}
NAMES = sorted(p.stem for p in HOSTILE.glob("*.py"))


def _all_errors_say(report, words: str) -> bool:
    """Every check ended in the submission's error saying ``words``, but the check that wants
    a ValueError (it fails on any other exception)."""
    errors = [c for c in report.checks if c.id != "advantages_invalid_group_size"]
    return all(c.status == "error" and words in c.message for c in errors)


def _opened(message: str) -> tuple[int, int]:
    """(files opened, niceness) as open_many_files says them."""
    found = re.search(r"opened (\d+) files at niceness (\d+)", message)
    return (int(found[1]), int(found[2])) if found else (-1, -1)


def _bytes_written(report) -> int:
    return int(report.checks[0].message.split("wrote ")[1].split()[0])


def test_every_hostile_fixture_has_an_expectation():
    assert sorted(EXPECTATIONS) == NAMES
    assert len(NAMES) >= 15


@pytest.mark.e2e
@pytest.mark.parametrize("name", NAMES)
def test_hostile_submission_gets_a_valid_report_with_points_off(graded, name):
    if name in NEEDS_ROOT and not IS_ROOT:
        pytest.skip(WHY)
    before = snapshot()
    started = time.monotonic()
    report = graded(HOSTILE / f"{name}.py")
    assert time.monotonic() - started < 60
    validate(json.loads(render_json(report)))
    assert report.internal_error is None
    assert [c.id for c in report.checks if c.error_source == "grader"] == []
    assert len(report.checks) == CHECK_COUNT
    if name not in ADMITTED or report.grader["sandbox"]["minimal_root"]:
        assert report.score < report.max_score
    assert EXPECTATIONS[name](report), [(c.id, c.status, c.message) for c in report.checks]
    assert snapshot() == before, "the submission changed the grader's files"


@pytest.mark.e2e
def test_the_plots_keep_to_their_time_budget(graded):
    """``--format html`` calls the student's functions about 110 more times: a submission slow
    only there is stopped by the plots' own budget, not after minutes."""
    limits = Limits(plots_timeout_s=6.0)
    report = graded(HOSTILE / "slow_on_plots.py", visuals=True, limits=limits)
    tokens = report.visuals["token_weights"]
    assert "time budget" in tokens["problem"], tokens["problem"]
    drawn = [pair for pair in tokens["pairs"].values() if pair["student"] is not None]
    assert 0 < len(drawn) <= 2  # 4 s each: the third would end after the budget
    assert report.visuals["difficulty"]["problem"] is not None
    assert report.grader["total_time_s"] < 60
    validate(json.loads(render_json(report)))


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["infinite_loop", "spins_in_child"])
def test_a_spinner_is_stopped_by_its_cpu_budget_long_before_the_wall_clock(zygote, name):
    """However loaded the machine, a spinner cannot keep a core for the whole wall-clock limit:
    its call's CPU time (which the load does not stretch) stops it at the budget. A child's CPU
    time counts only in the worker's control group before the child ends."""
    if name == "spins_in_child" and not (IS_ROOT and cgroups_available()):
        pytest.skip("needs root and control groups: the CPU time of the worker's children")
    limits = Limits(call_cpu_s=0.5, call_timeout_s=60.0)
    started = time.monotonic()
    report = grade(HOSTILE / f"{name}.py", zygote=zygote, only=["loss_matches_reference"], limits=limits)
    (check,) = report.checks
    assert check.status == "timeout", check.message
    assert "more than 0.5 s of CPU time in one call" in check.message, check.message
    assert time.monotonic() - started < limits.call_timeout_s


@pytest.mark.e2e
@pytest.mark.skipif(not (IS_ROOT and cgroups_available()), reason="needs root and a writable memory cgroup")
def test_a_memory_cgroup_stops_what_the_address_space_limit_does_not_see(graded):
    """System V shared memory, once detached, is outside RLIMIT_AS: only the worker's own memory
    cgroup stops a submission that hoards it. Slow (it fills GiBs in every worker it gets), so
    graded here with one check and longer call limits (filling them takes seconds of CPU time),
    not with the other hostile files."""
    options = {"only": ("loss_return_structure",), "max_examples": 1}
    hoarder = SUBMISSIONS / "hostile_slow" / "shm_beyond_memory_limit.py"
    free = Limits(call_timeout_s=60.0, call_cpu_s=60.0, cgroups=False)
    (escaped,) = graded(hoarder, limits=free, **options).checks
    assert "shared memory holds 3584 MiB" in escaped.message, escaped.message
    bounded = Limits(call_timeout_s=60.0, call_cpu_s=60.0)
    report = graded(hoarder, limits=bounded, **options)
    (stopped,) = report.checks
    assert stopped.status == "error" and "holds" not in stopped.message, stopped.message
    assert not any("control group" in line for line in report.grader["sandbox"]["not_available"])


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
def test_the_solution_is_hidden_from_the_unprivileged_user(graded):
    graded(HOSTILE / "read_solution_file.py")
    for secret in [ROOT / "reference" / "solution.py", *(ROOT / "reference" / "mistakes").glob("*.py")]:
        assert secret.stat().st_mode & 0o077 == 0, secret
    sandbox = graded(HOSTILE / "read_solution_file.py").grader["sandbox"]
    assert sandbox["unprivileged_user"]
    assert sandbox["solution_unreadable"] == (sandbox["minimal_root"] or solution_copies() == [])


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
@pytest.mark.parametrize("minimal_root", [True, False], ids=["minimal-root", "host-root"])
def test_the_report_claims_the_solution_unreadable_only_when_no_copy_is_reachable(zygote, minimal_root):
    """A git clone also holds the solution in .git, and correct files in examples/ and tests/:
    with a minimal root the worker cannot see them; without one, the report lists them and
    does not claim that the solution is unreadable."""
    report = grade(
        HOSTILE / "find_solution_copies.py",
        zygote=zygote,
        only=["loss_matches_reference"],
        limits=Limits(minimal_root=minimal_root),
    )
    sandbox = report.grader["sandbox"]
    if not sandbox["private_network_and_tmp"]:
        pytest.skip("the kernel refuses the namespaces here")
    copies = solution_copies()
    if minimal_root:
        assert sandbox["minimal_root"] and sandbox["solution_unreadable"]
        assert "no copy of the solution" in report.checks[0].message
    else:
        assert not sandbox["minimal_root"]
        assert sandbox["solution_unreadable"] == (copies == [])
        assert all(any(copy in note for note in sandbox["not_available"]) for copy in copies)
        if copies:  # then the attack works, and the report has said so
            assert report.checks[0].status == "passed"


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_nothing_a_worker_leaves_outlives_the_grade(zygote, namespaces):
    """Files in the directories any user may write to, and System V IPC objects: with
    namespaces they are private to the worker, without them they are deleted when it ends."""
    leaks = [Path(folder) / "drgrpo-left-by-student" for folder in SHARED_TEMPORARY]
    for leak in leaks:
        leak.unlink(missing_ok=True)
    limits = Limits(namespaces=namespaces)
    for name, left in [("leave_files_behind", "/run/lock"), ("sysv_ipc_left_behind", "left a segment")]:
        report = grade(
            HOSTILE / f"{name}.py", zygote=zygote, only=["advantages_match_reference"], limits=limits
        )
        assert left in report.checks[0].message  # it did leave something
    assert [leak for leak in leaks if leak.exists()] == []
    key = str(0x5EED13)
    for kind in ("shm", "msg"):
        rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        assert [row for row in rows if row.split()[0] == key] == []


@pytest.mark.e2e
def test_the_workers_of_a_grading_process_that_died_are_cleaned_up(zygote):
    """A batch kills a grading process that overruns; its workers must not outlive it."""
    link = zygote.connect()
    worker = link.spawn(str(HOSTILE / "escapes_session.py"), Limits())
    worker.request({"op": "load", "functions": ["drgrpo_advantages"]})
    rewards = {"array": np.zeros(4), "dtype": "float64", "requires_grad": False}
    call = {"function": "drgrpo_advantages", "args": [rewards, {"value": 2}], "kwargs": {}}
    worker.request({"op": "call", **call, "backward": None, "return_args": False})
    deadline = time.monotonic() + 15
    while "escaped pid " not in worker.captured_output():  # the escaped process is running
        assert time.monotonic() < deadline, "the fixture did not leave a process behind"
        time.sleep(0.05)
    escaped = int(worker.captured_output().split("escaped pid ")[1].split()[0])
    link.close()  # gone, without cleaning up after its worker
    while Path(worker.workdir).exists() or _running(worker.pid):
        assert time.monotonic() < deadline, "the worker or its directory outlived its grading process"
        time.sleep(0.05)
    if IS_ROOT:  # what it left running as its uid is gone too
        while _running(escaped):
            assert time.monotonic() < deadline, f"the escaped process {escaped} is still running"
            time.sleep(0.05)
    worker.channel.close()


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.e2e
def test_workers_leave_no_directories_behind(graded, tmp_path):
    leftovers = set(Path("/tmp").glob("drgrpo-worker-*"))
    graded(HOSTILE / "keeps_references.py")
    assert set(Path("/tmp").glob("drgrpo-worker-*")) <= leftovers


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
def test_processes_left_behind_are_killed(zygote):
    report = grade(HOSTILE / "escapes_session.py", zygote=zygote, only=["advantages_match_reference"])
    pid = int(report.submission_output.split("escaped pid ")[1].split()[0])
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
        except FileNotFoundError:
            state = "gone"
        if state in ("gone", "Z") or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert state in ("gone", "Z"), f"the escaped process {pid} is still running ({state})"


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
def test_nothing_is_written_to_the_shared_temporary_directories(zygote):
    leaks = [Path("/tmp/drgrpo-leaked-by-student"), Path("/dev/shm/drgrpo-leaked-by-student")]
    for leak in leaks:
        leak.unlink(missing_ok=True)
    report = grade(HOSTILE / "network_and_tmp.py", zygote=zygote, only=["advantages_match_reference"])
    if not report.grader["sandbox"]["private_network_and_tmp"]:
        pytest.skip("Python or the grader lives in a shared temporary directory, which stays shared")
    assert [leak for leak in leaks if leak.exists()] == []


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
def test_without_namespaces_what_a_worker_left_in_shared_directories_is_removed(zygote):
    leaks = [Path("/tmp/drgrpo-leaked-by-student"), Path("/dev/shm/drgrpo-leaked-by-student")]
    for leak in leaks:
        leak.unlink(missing_ok=True)
    limits = Limits(namespaces=False)
    report = grade(
        HOSTILE / "network_and_tmp.py", zygote=zygote, only=["advantages_match_reference"], limits=limits
    )
    assert not report.grader["sandbox"]["private_network_and_tmp"]
    assert "no disk quota beyond the file size limit" in report.grader["sandbox"]["not_available"]
    assert [leak for leak in leaks if leak.exists()] == []


@pytest.mark.e2e
@pytest.mark.skipif(not IS_ROOT, reason=WHY)
def test_a_submission_cannot_fill_the_disk(zygote):
    report = grade(HOSTILE / "fill_disk.py", zygote=zygote, only=["advantages_match_reference"])
    if not report.grader["sandbox"]["private_network_and_tmp"]:
        pytest.skip("Python or the grader lives in a shared temporary directory, which stays shared")
    assert 0 < _bytes_written(report) <= 4 * Limits().disk_bytes
    assert list(Path("/tmp").glob("drgrpo-fill-*")) == []


@pytest.mark.e2e
@pytest.mark.parametrize("link", ["linked-folder", "hard-link"])
def test_a_grader_file_reached_through_a_link_is_refused(zygote, tmp_path, link):
    """``O_NOFOLLOW`` guards the file's own name only: through a folder that is a symbolic link
    (``tests/submissions/hostile_links/reference`` leads to the grader's ``reference``), or as a
    hard link, the solution would open as a regular file. A file of the grader's own installation,
    reached by another path than its own, is refused, saying why."""
    if link == "hard-link":
        path = tmp_path / "drgrpo.py"
        try:
            os.link(SOLUTION, path)
        except OSError as error:
            pytest.skip(f"cannot make a hard link to the solution here ({error.strerror})")
    else:
        path = SUBMISSIONS / "hostile_links" / "reference" / "solution.py"
    report = grade(path, zygote=zygote, only=["advantages_match_reference"])
    validate(json.loads(render_json(report)))
    assert "reached through a link" in report.load_error["message"], report.load_error
    assert "reference/solution.py" in report.load_error["message"]
    assert report.score == 0 and report.checks[0].status == "error"
