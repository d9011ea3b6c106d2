"""The student release: installed into a clean venv, it grades a correct file with every local
check passed, and no file of it can compute the reference's output.

Building it and installing it costs about a minute; ``-m "not release"`` deselects this module.
The venv is clean (no system site-packages, no access to this repository); its dependencies
(torch, NumPy, Hypothesis...) come from this interpreter's site-packages through a ``.pth``
file of links that leaves the grader itself out, so that nothing has to be downloaded or
unpacked again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers import MISTAKES, ROOT, SOLUTION, SUBMISSIONS, validate

from grader import release
from grader.api import builtin_checks

pytestmark = [pytest.mark.release, pytest.mark.e2e]

NEEDS_REFERENCE = {
    "advantages_match_reference",
    "loss_matches_reference",
    "stats_match_reference",
}
FAST = ["--max-examples", "20"]


def _dependencies(into: Path) -> Path:
    """A folder of links to this interpreter's installed packages, the grader's own left out."""
    site = Path(sysconfig.get_paths()["purelib"])
    into.mkdir()
    for entry in site.iterdir():
        name = entry.name.lower()
        if "drgrpo" in name or name.startswith("__editable__") or name.endswith(".pth"):
            continue
        (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the release folder, the python of a clean venv it is installed in)."""
    base = tmp_path_factory.mktemp("release")
    folder = base / "drgrpo-student"
    release.build(folder)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "dependencies.pth").write_text(f"{_dependencies(base / 'deps')}\n")
    # This interpreter's pip installs into the venv: one command, as a student's would.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--no-index", str(folder)],
        check=True, capture_output=True, text=True, cwd=base,
    )  # fmt: skip
    return folder, python


def _run(python: Path, *args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        [python, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _answer_lines() -> set[str]:
    """The code lines of the solution and of every catalogued mistake that are not the provided
    helpers' or the template's."""
    given = (ROOT / "reference" / "provided.py").read_text() + (
        ROOT / "student_template" / "drgrpo.py"
    ).read_text()
    found = set()
    for path in [SOLUTION, *sorted(MISTAKES.glob("*.py"))]:
        for line in path.read_text().splitlines():
            code = line.strip()
            if (
                len(code) >= 25
                and not code.startswith(("#", "def ", "from ", "import "))
                and code not in given
            ):
                found.add(code)
    return found


def test_the_release_holds_no_secret_file_and_no_line_of_the_answer(installed):
    folder, _ = installed
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert "drgrpo.py" in files and "reference/provided.py" in files and "grader/cli.py" in files
    assert {f for f in files if f.startswith("properties/")} == {
        f"properties/{p.name}" for p in (ROOT / "properties").glob("*.py")
    } | {"properties/rubric.toml"}
    for secret in ("reference/solution.py", "grader/feedback/diagnosis.py", "grader/audit.py"):
        assert secret not in files
    assert not [f for f in files if f.startswith(("reference/mistakes", "tests/", "examples/"))]
    answer = _answer_lines()
    assert len(answer) > 100
    texts = {f: (folder / f).read_text() for f in files}
    leaks = [(f, line) for f, text in texts.items() for line in answer if line in text]
    assert leaks == []


PROBE = """
import importlib, pkgutil, sys, torch
import grader, properties, reference
from grader.errors import ReferenceWithheld
from grader.api import builtin_checks
from grader.exercise import load

assert load().student_release() and not load().has_catalogue()
assert len(builtin_checks()) == {checks}
for package in (grader, properties, reference):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name != "grader.__main__":
            importlib.import_module(info.name)
rewards = torch.tensor([1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
logp = torch.full((2, 3), -1.0, dtype=torch.float64, requires_grad=True)
loss_args = (logp, logp.detach(), logp.detach(), torch.ones(2, 3, dtype=torch.bool), torch.ones(2), 4)
computed = []
for name, module in sorted(sys.modules.items()):
    for function, args in (("drgrpo_advantages", (rewards, 2)), ("drgrpo_loss", loss_args)):
        if callable(getattr(module, function, None)):
            try:
                getattr(module, function)(*args)
            except (ReferenceWithheld, NotImplementedError):
                continue
            computed.append(f"{{name}}.{{function}}")
print("computed:", computed)
for secret in ("reference.mistakes", "reference.mistakes.per_response_mean"):
    try:
        importlib.import_module(secret)
    except ImportError:
        continue
    print("imported", secret)
"""


def test_no_module_of_the_release_computes_the_answer(installed, tmp_path):
    _, python = installed
    plain = _run(python, "-c", "import reference.solution", cwd=tmp_path)
    assert (
        plain.returncode == 1 and "ModuleNotFoundError: No module named 'reference.solution'" in plain.stderr
    )
    probe = _run(python, "-c", PROBE.format(checks=len(builtin_checks())), cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout == "computed: []\n"


def test_a_correct_file_passes_every_local_check(installed, tmp_path):
    _, python = installed
    mine = shutil.copy(SUBMISSIONS / "correct" / "python_loops.py", tmp_path / "drgrpo.py")
    done = _run(python, "-m", "grader", mine, *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    validate(report)
    later = {c["id"] for c in report["checks"] if c.get("graded_on_submission")}
    assert later == NEEDS_REFERENCE
    assert all(c["status"] == "passed" for c in report["checks"] if c["id"] not in later)
    assert all(c["status"] == "skipped" and c["score"] == 0 for c in report["checks"] if c["id"] in later)
    deferred = sum(c["max_score"] for c in report["checks"] if c["id"] in later)
    here = 100 - deferred
    assert f"{here:g}/{here:g} points checked here, {deferred:g} more graded on submission" in done.stderr


def test_a_wrong_file_fails_locally_with_its_names_on_submission(installed, tmp_path):
    folder, python = installed
    mine = shutil.copy(MISTAKES / "per_response_mean.py", tmp_path / "drgrpo.py")
    done = _run(python, "-m", "grader", mine, "--format", "text", *FAST, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "FAIL    loss_equal_token_weights (0/7)" in done.stdout
    assert "diagnosis" not in done.stdout and "come with the grade on submission" in done.stdout
    template = _run(python, "-m", "grader", "drgrpo.py", "--format", "text", *FAST, cwd=folder)
    assert template.returncode == 1, template.stderr
    assert len(template.stdout.splitlines()) < 15, template.stdout
    hidden = _run(python, "-m", "grader", mine, "--reproduce", "loss_matches_reference", *FAST, cwd=tmp_path)
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout.startswith("SKIPPED loss_matches_reference: graded on submission")
    staff = _run(python, "-m", "grader", "audit", cwd=tmp_path)
    assert staff.returncode == 2 and "not in this release" in staff.stderr
