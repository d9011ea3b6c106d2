"""Platform entry points end to end, in each platform's directory layout under a temporary
directory: the Gradescope zip's own ``run_autograder``, and the PrairieLearn entry point."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from helpers import CHECK_COUNT, GRADESCOPE, HOSTILE, IS_ROOT, MISTAKES, PRAIRIELEARN, ROOT, SUBMISSIONS, WHY

from grader import autograders
from grader.bundle import build_gradescope

WRONG = MISTAKES / "no_masking.py"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The Gradescope zip, built by the command and unzipped with its file modes."""
    where = tmp_path_factory.mktemp("bundle")
    done = subprocess.run(
        [sys.executable, "-m", "grader", "bundle", "gradescope", str(where / "autograder.zip")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    source = where / "source"
    with zipfile.ZipFile(where / "autograder.zip") as archive:
        for info in archive.infolist():
            archive.extract(info, source)
            os.chmod(source / info.filename, info.external_attr >> 16 & 0o777)
    return source


def run_autograder(bundle: Path, root: Path, files: dict[str, Path | str], **env: str) -> dict:
    """Gradescope's run: the submission's files in ``root/submission``, the zip's script run as
    it is, with the zip's own copy of the grader; the results file, validated."""
    (root / "submission").mkdir(parents=True)
    for name, content in files.items():
        target = root / "submission" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content.read_text() if isinstance(content, Path) else content)
    environment = {
        **os.environ,
        "AUTOGRADER_ROOT": str(root),
        "DRGRPO_PYTHON": sys.executable,
        "PYTHONPATH": str(bundle / "grader-src"),
        **env,
    }
    subprocess.run(
        [str(bundle / "run_autograder")], cwd=root, env=environment, capture_output=True, timeout=600
    )
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.Draft202012Validator(GRADESCOPE).validate(results)
    return results


@pytest.mark.e2e
def test_the_zip_holds_what_gradescope_runs_and_nothing_that_gives_answers(bundle):
    names = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert {
        "setup.sh",
        "run_autograder",
        "grader-src/pyproject.toml",
        "grader-src/reference/solution.py",
        "grader-src/reference/mistakes/per_response_mean.py",  # diagnosis names mistakes from it
    } <= names
    assert "grader-src/properties/rubric.toml" in names
    assert not any(n.startswith(("grader-src/tests", "grader-src/examples")) for n in names)
    for script in ("setup.sh", "run_autograder"):
        assert (bundle / script).stat().st_mode & stat.S_IXUSR
        assert subprocess.run(["bash", "-n", str(bundle / script)]).returncode == 0
    setup = (bundle / "setup.sh").read_text()
    assert setup.index("torch==2.13.0") < setup.index("grader-src")  # CPU torch first
    assert setup.index("grader-src") < setup.index("hide_secrets()")


@pytest.mark.e2e
def test_run_autograder_grades_the_submission_with_the_zips_grader(bundle, tmp_path, graded):
    results = run_autograder(bundle, tmp_path / "autograder", {"drgrpo.py": WRONG})
    assert results["score"] == graded(WRONG).score < 100
    assert len(results["tests"]) == CHECK_COUNT
    # The zip's copy names the mistake on a visible check that catches it.
    padding = next(t for t in results["tests"] if t["name"].startswith("loss_padding_isolated"))
    assert "no padding isolation" in padding["output"], padding["output"]


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({}, "no .py file"),
        ({"a.py": "x = 1\n", "b.py": "y = 2\n"}, "several .py files"),
        ({"drgrpo.py": SUBMISSIONS / "broken" / "syntax_error.py"}, "could not be loaded"),
        ({"drgrpo.py": SUBMISSIONS / "hostile" / "forge_report_and_exit.py"}, "0/100"),
    ],
    ids=["nothing", "two_files", "syntax_error", "forged_report"],
)
def test_run_autograder_always_writes_a_valid_file(bundle, tmp_path, files, says):
    results = run_autograder(bundle, tmp_path / "autograder", files)
    assert results["score"] == 0 and says in results["output"]


@pytest.fixture(scope="module")
def readable_bundle(bundle) -> Iterator[Path]:
    """The unzipped bundle where other users can read it, as setup.sh installs the grader (pytest's
    temporary directories are root's alone): the workers' unprivileged users must import it."""
    where = Path(tempfile.mkdtemp(prefix="drgrpo-bundle-", dir="/var/tmp"))
    os.chmod(where, 0o755)
    shutil.copytree(bundle, where / "source")
    yield where / "source"
    shutil.rmtree(where)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "name", ["read_solution_file", "use_mistake_catalogue", "fork_storm", "find_solution_copies"]
)
def test_hostile_files_lose_their_points_under_the_zips_grader_too(readable_bundle, tmp_path, name):
    if not IS_ROOT:
        pytest.skip(WHY)
    submission = {"drgrpo.py": HOSTILE / f"{name}.py"}
    results = run_autograder(readable_bundle, tmp_path / "autograder", submission)
    assert len(results["tests"]) == CHECK_COUNT and results["score"] < 50


@pytest.mark.e2e
def test_run_autograder_writes_one_even_when_python_cannot_start(bundle, tmp_path):
    results = run_autograder(
        bundle, tmp_path / "autograder", {"drgrpo.py": WRONG}, DRGRPO_PYTHON="/nonexistent"
    )
    assert results["score"] == 0 and "could not run" in results["output"]


@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_a_crash_of_the_grader_still_writes_results(tmp_path, monkeypatch, platform):
    monkeypatch.setenv("AUTOGRADER_ROOT" if platform == "gradescope" else "GRADE_ROOT", str(tmp_path))

    def broken() -> None:
        raise RuntimeError("the grader broke")

    monkeypatch.setattr("grader.sandbox.zygote.Zygote", broken)
    assert autograders.run(platform) == 2
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    jsonschema.Draft202012Validator(GRADESCOPE if platform == "gradescope" else PRAIRIELEARN).validate(
        results
    )
    assert "not your fault" in json.dumps(results)


def run_prairielearn(root: Path, files: dict[str, Path]) -> dict:
    (root / "student").mkdir(parents=True)
    for name, source in files.items():
        (root / "student" / name).write_text(source.read_text())
    subprocess.run(
        [sys.executable, "-m", "grader.autograders", "prairielearn"],
        cwd=ROOT,
        env={**os.environ, "GRADE_ROOT": str(root)},
        capture_output=True,
        timeout=600,
    )
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.Draft202012Validator(PRAIRIELEARN).validate(results)
    return results


@pytest.mark.e2e
def test_prairielearn_entry_point_keeps_the_attempt_when_nothing_can_be_graded(tmp_path):
    syntax = run_prairielearn(tmp_path / "syntax", {"drgrpo.py": SUBMISSIONS / "broken" / "syntax_error.py"})
    assert syntax["gradable"] is False and "SyntaxError" in syntax["format_errors"][0]
    nothing = run_prairielearn(tmp_path / "nothing", {})
    assert nothing["gradable"] is False and "no .py file" in nothing["format_errors"][0]


@pytest.mark.e2e
def test_bundle_checks_the_rubric_and_ships_it(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[checks.stats_keys]\nvisibility = 'never'\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "bundle",
            "gradescope",
            str(tmp_path / "a.zip"),
            "--rubric",
            str(bad),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "visibility='never'" in done.stderr
    good = tmp_path / "good.toml"
    good.write_text("[checks.stats_keys]\npoints = 9\n")
    build_gradescope(tmp_path / "b.zip", good)
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        assert archive.read("grader-src/properties/rubric.toml") == good.read_bytes()


WEAKER = [
    "student code runs as the grader's own user (the grader is not root)",
    "the reference solution's source is readable by that user",
    "student code can use the network and the shared /tmp",
]


@pytest.mark.e2e
@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_a_weaker_sandbox_is_one_warning_line_in_the_staff_log(tmp_path, monkeypatch, capsys, platform):
    import functools

    from grader import api

    monkeypatch.setenv("AUTOGRADER_ROOT" if platform == "gradescope" else "GRADE_ROOT", str(tmp_path))
    folder = tmp_path / ("submission" if platform == "gradescope" else "student")
    folder.mkdir()
    shutil.copy(MISTAKES / "per_response_mean.py", folder / "drgrpo.py")
    strong = api.protections
    monkeypatch.setattr(api, "protections", lambda *a, **k: {**strong(*a, **k), "not_available": WEAKER})
    monkeypatch.setattr(api, "grade", functools.partial(api.grade, max_examples=5))
    assert autograders.run(platform) == 0
    log = capsys.readouterr()
    assert [line for line in log.err.splitlines() if "warning" in line] == [
        "drgrpo-grader: warning: a weaker sandbox than it could be: " + WEAKER[0] + "; " + WEAKER[2]
        + " (all in the JSON report's grader.sandbox.not_available)"
    ]  # fmt: skip
    # Staff read the log; the results students see say nothing of it.
    assert "grader's own user" not in (tmp_path / "results" / "results.json").read_text()
