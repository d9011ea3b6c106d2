"""The platform formats: each platform's documented fields, one score for all four, and what
students see of a hidden check."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from helpers import BIASED, GRADESCOPE, MISTAKES, PRAIRIELEARN, SOLUTION, SUBMISSIONS

from grader.report import platforms
from grader.report.model import Report
from grader.report.render import render_text

pytestmark = pytest.mark.e2e


def gradescope_of(report: Report) -> dict:
    data = json.loads(platforms.render_gradescope(report))
    jsonschema.Draft202012Validator(GRADESCOPE).validate(data)
    return data


def prairielearn_of(report: Report) -> dict:
    text = platforms.render_prairielearn(report)
    assert len(text.encode()) < 1_000_000  # PrairieLearn's limit
    data = json.loads(text)
    jsonschema.Draft202012Validator(PRAIRIELEARN).validate(data)
    return data


def junit_of(report: Report) -> ET.Element:
    """The suite, checked against what JUnit readers rely on: counts that match the cases, one
    outcome element at most per case, with a message."""
    root = ET.fromstring(platforms.junit(report))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    for kind, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        assert int(suite.get(attribute)) == sum(case.find(kind) is not None for case in cases)
    for case in cases:
        assert case.get("name") and case.get("classname")
        outcomes = [child for child in case if child.tag in ("failure", "error", "skipped")]
        assert len(outcomes) <= 1
        assert all(o.get("message") for o in outcomes)
    return suite


def autolab_scores(report: Report) -> dict[str, float]:
    last = platforms.render_autolab(report).rstrip("\n").splitlines()[-1]
    data = json.loads(last)
    assert list(data) == ["scores"]
    assert all(isinstance(v, (int, float)) for v in data["scores"].values())
    return data["scores"]


def text_block(text: str, report: Report, check_id: str) -> str:
    """The lines of one check in the text report."""
    ids = [c.id for c in report.checks]
    after = text.split(f" {check_id} (", 1)[1]
    following = ids[ids.index(check_id) + 1 :]
    return after.split(f" {following[0]} (", 1)[0] if following else after


def suite_score(suite: ET.Element) -> float:
    return float({p.get("name"): p.get("value") for p in suite.iter("property")}["score"])


@pytest.mark.parametrize(
    "path",
    [BIASED, MISTAKES / "no_masking.py", SUBMISSIONS / "broken" / "raises_in_loss.py"],
    ids=lambda p: p.stem,
)
def test_the_four_formats_validate_and_agree_on_the_score(graded, path):
    report = graded(path)
    assert 0 < report.score < report.max_score
    gradescope = gradescope_of(report)
    prairielearn = prairielearn_of(report)
    suite = junit_of(report)
    scores = autolab_scores(report)

    assert gradescope["score"] == pytest.approx(report.score)
    assert sum(t["score"] for t in gradescope["tests"]) == pytest.approx(report.score)
    assert prairielearn["gradable"] is True
    assert prairielearn["score"] * report.max_score == pytest.approx(report.score)
    assert sum(t["points"] for t in prairielearn["tests"]) == pytest.approx(report.score)
    assert suite_score(suite) == pytest.approx(report.score)
    assert sum(scores.values()) == pytest.approx(report.score)
    # Every check appears once in each, failed ones as failed.
    failed = {c.id for c in report.checks if c.status != "passed"}
    assert {t["name"] for t in gradescope["tests"] if t["status"] == "failed"} == failed
    assert {t["name"] for t in prairielearn["tests"] if t["points"] < t["max_points"]} == failed
    assert {c.get("name") for c in suite.findall("testcase") if len(c)} == failed
    assert set(scores) == {c.id for c in report.checks}


def test_gradescope_and_prairielearn_unlock_the_notes_only_when_solved(graded):
    from properties.exercise import NOTES

    solved, biased = graded(SOLUTION), graded(BIASED)
    assert solved.solved and not biased.solved
    first_line = NOTES.splitlines()[0]
    assert first_line in gradescope_of(solved)["output"]
    assert first_line not in gradescope_of(biased)["output"]
    assert first_line in json.dumps(prairielearn_of(solved))
    assert first_line not in json.dumps(prairielearn_of(biased))


def test_a_visible_failure_shows_its_counterexample_and_a_hidden_one_does_not(graded):
    report = graded(BIASED)
    by_id = {c.id: c for c in report.checks}
    visible, hidden = by_id["loss_equal_token_weights"], by_id["loss_matches_reference"]
    assert (visible.status, visible.visibility) == ("failed", "visible")
    assert (hidden.status, hidden.visibility) == ("failed", "hidden")
    assert hidden.counterexample and hidden.message  # the JSON report keeps them for staff

    tests = {t["name"]: t for t in gradescope_of(report)["tests"]}
    assert visible.message.split(":")[0] in tests[visible.id]["output"]
    assert "smallest input" in tests[visible.id]["output"]
    shown = tests[hidden.id]
    # Counted and visible as a failure, with its points, but nothing that quotes the reference.
    assert (shown["status"], shown["score"], shown["max_score"], shown["visibility"]) == (
        "failed", 0.0, hidden.max_score, "visible",
    )  # fmt: skip
    leaks = [hidden.message, "smallest input", "expected", json.dumps(hidden.counterexample["expected"])]
    leaks.append("SUBMISSION = ")  # the reproduction snippet embeds the reference's answers
    assert hidden.reproduce and hidden.diagnosis
    for rendered in (
        shown["output"],
        json.dumps({t["name"]: t for t in prairielearn_of(report)["tests"]}[hidden.id]),
        ET.tostring(junit_of(report).find(f"testcase[@name='{hidden.id}']"), encoding="unicode"),
        text_block(render_text(report), report, hidden.id),
    ):
        assert not any(leak in rendered for leak in leaks), rendered
        # The diagnosis quotes no number: students still learn which idea is wrong.
        assert hidden.diagnosis["name"] in rendered, rendered


def test_after_due_date_is_left_to_gradescope_and_withheld_elsewhere(graded):
    report = graded(BIASED)
    later = Report(
        report.submission,
        tuple(dataclasses.replace(c, visibility="after_due_date") for c in report.checks),
        report.grader,
    )
    failed = next(c for c in later.checks if c.status == "failed")
    gradescope = {t["name"]: t for t in gradescope_of(later)["tests"]}[failed.id]
    assert gradescope["visibility"] == "after_due_date"
    assert "smallest input" in gradescope["output"]
    prairielearn = {t["name"]: t for t in prairielearn_of(later)["tests"]}[failed.id]
    assert "smallest input" not in prairielearn["output"]


@pytest.mark.parametrize("name", ["syntax_error", "raises_at_import"])
def test_a_file_that_cannot_be_loaded_is_not_gradable_on_prairielearn(graded, name):
    report = graded(SUBMISSIONS / "broken" / f"{name}.py")
    prairielearn = prairielearn_of(report)
    assert prairielearn["gradable"] is False and "score" not in prairielearn
    assert report.load_error["type"] in prairielearn["format_errors"][0]
    # The other platforms have no such notion: zero points, with the reason.
    assert gradescope_of(report)["score"] == 0 and "could not be loaded" in gradescope_of(report)["output"]
    assert sum(autolab_scores(report).values()) == 0
    assert junit_of(report).get("errors") == str(len(report.checks))


def test_an_internal_error_is_reported_as_the_graders_fault_everywhere(graded):
    broken = Report("sub.py", (), graded(BIASED).grader, internal_error="RuntimeError: boom")
    assert prairielearn_of(broken)["gradable"] is False
    assert "not your fault" in gradescope_of(broken)["output"]
    assert junit_of(broken).find("testcase/error").get("type") == "internal"
    assert autolab_scores(broken) == {}


def test_junit_survives_output_xml_cannot_hold(graded):
    report = graded(BIASED)
    noisy = dataclasses.replace(report, submission_output="\x00\x1b[31m<b>&\ud800 \x07")
    text = ET.tostring(junit_of(noisy).find("system-out"), encoding="unicode")
    assert "&lt;b&gt;&amp;" in text
