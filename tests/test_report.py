"""Reports validate against the published JSON Schema, and the text rendering reads well."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest
from helpers import BIASED, CHECK_COUNT, MISTAKES, SOLUTION, SUBMISSIONS, TEMPLATE, validate

from grader.report.render import printable, render_json, render_text
from grader.report.visibility import for_students


@pytest.mark.e2e
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
    assert sum(data["summary"].values()) == len(data["checks"]) == CHECK_COUNT


@pytest.mark.e2e
def test_the_schema_rejects_a_broken_report(graded):
    data = json.loads(render_json(graded(SOLUTION)))
    data["checks"][0]["status"] = "ok"
    with pytest.raises(jsonschema.ValidationError):
        validate(data)


@pytest.mark.e2e
def test_text_report_shows_counterexample_expected_and_actual(graded):
    text = render_text(graded(MISTAKES / "multiply_by_mask.py"))
    assert "FAIL    loss_padding_isolated (0/7)" in text
    assert "smallest input that shows it:" in text
    assert "expected:" in text and "actual:" in text
    assert "hint:" in text


@pytest.mark.e2e
def test_json_report_has_no_bare_nan(graded):
    text = render_json(graded(MISTAKES / "multiply_by_mask.py"))
    assert "NaN" not in text and "Infinity" not in text
    assert '"nan"' in text


@pytest.mark.e2e
def test_an_untouched_template_gets_one_line_per_function(graded):
    report = graded(TEMPLATE)
    text = render_text(report)
    assert len(text.splitlines()) < 15
    assert "drgrpo_advantages: not implemented yet" in text
    assert "drgrpo_loss: not implemented yet" in text
    assert "withheld" not in text and "Traceback" not in text
    # A hidden check of a missing function says why it did not run, not that it hides something.
    hidden = [for_students(c) for c in report.checks if c.visibility != "visible"]
    assert hidden and all("not implemented yet" in c.message for c in hidden)


@pytest.mark.e2e
def test_a_half_done_attempt_fits_on_a_screen_and_explains_its_mistake_once(graded):
    path = BIASED
    text = render_text(graded(path))
    assert len(text.splitlines()) < 60
    assert text.count("what to change:") == 1
    assert text.count("(explained above)") >= 1
    # The command stays on one line, however long the path, so it can be copied whole.
    assert f"python -m grader {path} --reproduce loss_equal_token_weights\n" in text
    assert "explicit" not in text and "import torch" not in text  # the snippet only on request


@pytest.mark.e2e
def test_checks_that_end_in_the_same_error_point_to_the_first(graded):
    report = graded(SUBMISSIONS / "broken" / "raises_in_loss.py")
    text = render_text(report)
    errors = [c for c in report.checks if c.status == "error" and c.visibility == "visible"]
    messages = {c.message for c in errors}
    assert len(errors) > len(messages) >= 1
    # The first check of each error says it in full; each later one in one line pointing to it.
    assert text.count("one past the last") == len(messages)
    first = errors[0].id
    later = [c.id for c in errors if c.message == errors[0].message][1:]
    for check_id in later:
        assert f"ERROR   {check_id} (0/" in text
    assert text.count(f"-> the same error as {first}, above") == len(later)


def test_printable_drops_what_a_terminal_would_obey():
    assert printable("\x1b[2K\r\x1b[32m100/100 PASS\x1b[0m\u202e\x07") == "100/100 PASS"
    assert printable("kept\n\tas is: [[-0.5]]") == "kept\n\tas is: [[-0.5]]"


@pytest.mark.e2e
def test_a_submissions_output_cannot_forge_the_text_report(graded):
    forged = "\x1b[1A\x1b[2K\rdrgrpo-grader: 100/100\n"
    report = dataclasses.replace(graded(TEMPLATE), submission_output=forged)
    text = render_text(report)
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines()[0].endswith(f"0/100 points ({CHECK_COUNT} error)")


@pytest.mark.e2e
def test_the_metadata_states_the_hypothesis_settings_in_force(graded):
    from grader.engine.drawing import grading_settings

    stated = graded(SOLUTION).grader["hypothesis"]
    settings = grading_settings(100)
    assert stated["derandomized"] is settings.derandomize is False
    assert stated["database"] is settings.database is None
    assert stated["max_examples"] == settings.max_examples
    assert "sha256" in stated["seeding"]
