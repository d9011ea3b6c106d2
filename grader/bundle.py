"""``python -m grader bundle gradescope OUT.zip``: the autograder zip that Gradescope builds its
image from.

    python -m grader bundle gradescope OUT.zip [--rubric FILE]

The zip holds ``setup.sh`` (run once when the image is built: a venv, the CPU build of torch
first, then the grader from the zip's own copy), ``run_autograder`` (run per submission:
``python -m grader.autograders gradescope``, after writing a results file that says the grader
failed, so that one exists even if Python cannot start), and ``grader-src/``: only what grading
needs (the ``grader`` package and the exercise's, ``Exercise.packages``, ``pyproject.toml`` and
the README). The reference solution and the mistake catalogue (which names a failing student's
mistake) ship too, and ``setup.sh`` makes them root-only once installed. No tests or examples:
their correct variants would be readable on the image. ``--rubric`` is checked now and shipped
as the exercise's default rubric.
"""

from __future__ import annotations

import argparse
import stat
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader.errors import UsageError
from grader.exercise import Exercise, load
from grader.options import EXIT_PASSED, add_rubric

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "grader-src"
DATA = ("*.py", "*.json", "*.toml")

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the image.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
home="${DRGRPO_HOME:-/opt/drgrpo-grader}"  # outside /tmp: workers get a private /tmp
python=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    apt-get update && apt-get install -y python3.11 python3.11-venv
    python=python3.11
fi
"$python" -m venv "$home/venv"
"$home/venv/bin/python" -m pip install --quiet --upgrade pip
"$home/venv/bin/python" -m pip install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
"$home/venv/bin/python" -m pip install --quiet "$here/grader-src"
# Student code runs as other users: the installed solution and mistake catalogue, and the zip's
# copy, are root's alone (grades would do the former too; the image should not wait for one).
"$home/venv/bin/python" -c 'from grader.engine.student import hide_secrets; hide_secrets()'
chmod -R go-rwx "$here"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this per submission, as root: grade /autograder/submission/*.py into
# /autograder/results/results.json. AUTOGRADER_ROOT, DRGRPO_HOME and DRGRPO_PYTHON move things.
root="${AUTOGRADER_ROOT:-/autograder}"
python="${DRGRPO_PYTHON:-${DRGRPO_HOME:-/opt/drgrpo-grader}/venv/bin/python}"
mkdir -p "$root/results"
# Written first, replaced by the grader's own: a valid file even if Python cannot start.
cat > "$root/results/results.json" <<'JSON'
{
  "score": 0.0,
  "output": "The autograder could not run (this is not your fault); course staff can see why.",
  "visibility": "visible",
  "stdout_visibility": "hidden",
  "tests": []
}
JSON
cd "$root"
AUTOGRADER_ROOT="$root" "$python" -m grader.autograders gradescope
"""


def shipped_files(exercise: Exercise | None = None, root: Path = ROOT) -> Iterator[tuple[Path, str]]:
    """(file, name in the zip) for the grader's own copy."""
    exercise = exercise or load()
    yield root / "pyproject.toml", f"{SOURCE}/pyproject.toml"
    yield root / "README.md", f"{SOURCE}/README.md"
    for package in ("grader", *exercise.packages):
        for pattern in DATA:
            for path in sorted((root / package).rglob(pattern)):
                relative = path.relative_to(root).as_posix()
                if "__pycache__" in path.parts:
                    continue
                yield path, f"{SOURCE}/{relative}"


def _add(archive: zipfile.ZipFile, name: str, data: bytes, *, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # the same bytes every build
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_gradescope(out: Path, rubric: Path | None = None, exercise: Exercise | None = None) -> list[str]:
    """Write the zip; the names it holds."""
    exercise = exercise or load()
    default = f"{SOURCE}/{exercise.rubric}"
    staff = None
    if rubric is not None:
        from grader.api import rubric_checks

        # A bad rubric is refused now (UsageError), not at a student's grade.
        rubric_checks(rubric, exercise=exercise)
        staff = rubric.read_bytes()
    with zipfile.ZipFile(out, "w") as archive:
        _add(archive, "setup.sh", SETUP_SH.encode(), executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        for path, name in shipped_files(exercise):
            _add(archive, name, staff if (staff is not None and name == default) else path.read_bytes())
        return archive.namelist()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader bundle", description=__doc__.splitlines()[0])
    parser.add_argument("platform", choices=("gradescope",))
    parser.add_argument("out", type=Path, help="the zip to write")
    add_rubric(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        names = build_gradescope(args.out, args.rubric)
    except (UsageError, OSError) as error:
        parser.error(str(error))
    print(f"wrote {args.out}: {len(names)} files; upload it as the assignment's autograder")
    return EXIT_PASSED
