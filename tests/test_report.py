"""Reports validate against the published JSON Schema, and the text rendering reads well."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import MISTAKES, SOLUTION, SUBMISSIONS, TEMPLATE

from grader.render import render_json, render_text

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "grader" / "report.schema.json").read_text())


def validate(report: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


@pytest.mark.parametrize(
    "path",
    [
        SOLUTION,
        TEMPLATE,
        MISTAKES / "multiply_by_mask.py",
        SUBMISSIONS / "broken" / "syntax_error.py",
        SUBMISSIONS / "broken" / "raises_in_loss.py",
    ],
    ids=lambda p: p.stem,
)
def test_reports_match_the_schema(graded, path):
    report = graded(path)
    data = json.loads(render_json(report))
    validate(data)
    assert data["score"] == sum(c["score"] for c in data["checks"])
    assert sum(data["summary"].values()) == len(data["checks"]) == 20


def test_the_schema_rejects_a_broken_report(graded):
    data = json.loads(render_json(graded(SOLUTION)))
    data["checks"][0]["status"] = "ok"
    with pytest.raises(jsonschema.ValidationError):
        validate(data)


def test_text_report_shows_counterexample_expected_and_actual(graded):
    text = render_text(graded(MISTAKES / "multiply_by_mask.py"))
    assert "FAIL    loss_padding_isolated (0/8)" in text
    assert "smallest input that shows it:" in text
    assert "expected:" in text and "actual:" in text
    assert "hint:" in text


def test_json_report_has_no_bare_nan(graded):
    text = render_json(graded(MISTAKES / "multiply_by_mask.py"))
    assert "NaN" not in text and "Infinity" not in text
    assert '"nan"' in text
