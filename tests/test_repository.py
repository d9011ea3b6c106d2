"""The repository's own rules: the README, the docs and CI agree, and unit tests start no process."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "RESULTS.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(path: Path) -> str:
    """The text of a Markdown file without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file."""
    headings = re.findall(r"^#+ (.+)$", prose(path), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def section(path: Path, title: str) -> str:
    """One ``## title`` section of a Markdown file."""
    return re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", path.read_text(), flags=re.M | re.S)[1]


def test_ci_runs_the_quick_start_and_the_readmes_test_command():
    script = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in script if line.startswith(("python -m grader", "python -m pytest"))]
    quick_start = section(README, "Quick start")
    (test_command,) = re.findall(r"python -m pytest[^\n&]*", quick_start)
    assert test_command.strip() in commands
    assert all(command in quick_start for command in commands), commands


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_the_docs_reaches_a_file_and_heading(document):
    for target in LINK.findall(prose(document)):
        if target.startswith(("http://", "https://")):
            continue
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        assert path.exists(), f"{document.name}: {target} names no file"
        assert not anchor or anchor in anchors(path), f"{document.name}: {target} names no heading"


def test_a_unit_test_that_starts_a_process_fails():
    with pytest.raises(AssertionError, match="mark it e2e"):
        subprocess.run(["true"], check=False)
