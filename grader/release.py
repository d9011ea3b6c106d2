"""``python -m grader release OUT``: the student release, a folder that students install with
one command and grade their file with, offline, as often as they like.

    python -m grader release OUT [--rubric FILE] [--zip]

It holds the exercise's template (as ``NAME.py``), its provided helpers (``Exercise.provided``),
the grader, the exercise's checks and rubric; not the reference solution, the catalogue of
mistakes (each a line from the answer), the examples or the tests (their correct variants).
Checks that compare with the reference's numbers are reported as graded on submission (the
solution's stand-in raises ``ReferenceWithheld``: ``grader.exercise.withhold``), diagnosis
says that names come on submission, and no file holds a value the reference computed. What
ships is an allow-list (``shipped_files``): a file added to the repository later stays out
until it is named here.
"""

from __future__ import annotations

import argparse
import shutil
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader.errors import UsageError
from grader.exercise import Exercise, load
from grader.options import EXIT_PASSED, add_exercise, add_rubric

ROOT = Path(__file__).resolve().parent.parent
# Commands and modules for staff: they need the solution or the catalogue, or grade others' files.
STAFF_ONLY = ("audit.py", "batch.py", "bundle.py", "feedback/diagnosis.py", "release.py")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}-grader-student"
version = "{version}"
description = "Grade your {title} exercise locally (the student release of drgrpo-grader)."
readme = "README.md"
requires-python = ">=3.11"
dependencies = {dependencies}

[tool.setuptools.packages.find]
include = {packages}

[tool.setuptools.package-data]
grader = ["report.schema.json"]
{rubric_package} = ["{rubric_file}"]
"""

README = """\
# The {title} exercise: your starting point and a local grader

Write your functions in `{file}`, then grade your file here, as often as you like:

```bash
python3 -m venv .venv && . .venv/bin/activate
pip install --extra-index-url https://download.pytorch.org/whl/cpu .   # CPU torch and the grader
python -m grader {file} --format text
```

Every check of the course's grade runs here, except the few that compare your numbers with
the reference solution's: they show as `LATER` (graded on submission), never as failures.
A failed check shows its smallest failing input, what was expected and what your code gave,
and `python -m grader {file} --reproduce CHECK_ID` prints a script that replays it. The
name of a classic mistake, when your code makes one, comes with the grade on submission.
`python -m grader --help` lists the options (`--format html` writes a page to open offline).
"""


def _check_packages(exercise: Exercise) -> list[str]:
    """The packages that hold the exercise's checks (and its description)."""
    return sorted({name.split(".")[0] for name in exercise.check_modules})


def shipped_files(exercise: Exercise | None = None, root: Path = ROOT) -> Iterator[tuple[Path, str]]:
    """(file, path in the release), every one named on purpose."""
    exercise = exercise or load()
    for path in sorted((root / "grader").rglob("*.py")):
        name = path.relative_to(root / "grader").as_posix()
        if name not in STAFF_ONLY and "__pycache__" not in path.parts:
            yield path, f"grader/{name}"
    yield root / "grader" / "report.schema.json", "grader/report.schema.json"
    for package in _check_packages(exercise):
        for path in sorted((exercise.root / package).glob("*.py")):
            yield path, f"{package}/{path.name}"
    yield exercise.path(exercise.rubric), exercise.rubric
    for name in exercise.provided:
        yield exercise.path(name), name
    yield exercise.path(exercise.template), exercise.submission_name


def build(
    out: Path, rubric: Path | None = None, root: Path = ROOT, exercise: Exercise | None = None
) -> list[str]:
    """Write the release folder ``out`` (which must not exist yet); the paths it holds."""
    exercise = exercise or load()
    staff = None
    if rubric is not None:
        from grader.api import rubric_checks

        rubric_checks(rubric, exercise=exercise)  # a bad rubric is refused now (UsageError)
        staff = rubric.read_bytes()
    if out.exists():
        raise FileExistsError(f"{out} already exists: give a new folder")
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    written = []
    for path, name in shipped_files(exercise, root):
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if staff is not None and name == exercise.rubric:
            target.write_bytes(staff)
        else:
            shutil.copyfile(path, target)
        written.append(name)
    dependencies = "[" + ", ".join(f'"{d}"' for d in project["dependencies"]) + "]"
    packages = ["grader", *_check_packages(exercise), *(p.split("/")[0] for p in exercise.provided)]
    rubric_package, _, rubric_file = exercise.rubric.rpartition("/")
    (out / "pyproject.toml").write_text(
        PYPROJECT.format(
            name=exercise.name,
            title=exercise.title,
            version=project["version"],
            dependencies=dependencies,
            packages="[" + ", ".join(f'"{p}*"' for p in sorted(set(packages))) + "]",
            rubric_package=rubric_package.replace("/", "."),
            rubric_file=rubric_file,
        )
    )
    (out / "README.md").write_text(README.format(title=exercise.title, file=exercise.submission_name))
    return [*written, "pyproject.toml", "README.md"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader release", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (it must not exist)")
    add_exercise(parser)
    add_rubric(parser)
    parser.add_argument("--zip", action="store_true", help="also write OUT.zip, the folder zipped")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        names = build(args.out, args.rubric, exercise=load(args.exercise))
    except (UsageError, OSError) as error:
        parser.error(str(error))
    print(f"wrote {args.out}: {len(names)} files; students install it with: pip install {args.out}")
    if args.zip:
        archive = shutil.make_archive(str(args.out), "zip", args.out.parent, args.out.name)
        print(f"wrote {archive}")
    return EXIT_PASSED
