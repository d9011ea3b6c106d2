"""The HTML report: its content, and the page itself in headless Chromium (no console errors, both
plots drawn, the length control changing the token-weight plot)."""

from __future__ import annotations

import shutil

import pytest
from helpers import BIASED
from helpers import CORRECT_EXAMPLE as CORRECT

from grader.report.html import render_html
from properties.exercise import EXERCISE

pytestmark = pytest.mark.e2e

OPTIONS = {"max_examples": 10, "visuals": True}


@pytest.fixture(scope="module")
def biased_page(graded) -> str:
    return render_html(graded(BIASED, **OPTIONS), EXERCISE)


def test_page_is_self_contained_with_cards_and_diagnosis(biased_page, graded):
    report = graded(BIASED, **OPTIONS)
    assert "<script src" not in biased_page and "<link" not in biased_page
    for result in report.checks:
        assert f"id='check-{result.id}'" in biased_page
    assert "Diagnosis: per-response mean (GRPO&#x27;s length bias)." in biased_page
    assert "What to change:" in biased_page
    assert "id='token-weights'" in biased_page and "id='difficulty-bias'" in biased_page
    assert "The exercise notes unlock when every required check passes." in biased_page


def test_visuals_use_the_students_functions(graded):
    visuals = graded(BIASED, **OPTIONS).visuals
    pair = visuals["token_weights"]["pairs"]["5,20"]
    # GRPO's per-response mean in the student's loss: 1 / (N * length) per token.
    assert pair["student"][0] == pytest.approx([1 / 10] * 5)
    assert pair["student"][1] == pytest.approx([1 / 40] * 20)
    assert pair["reference"][1] == pytest.approx([1 / 60] * 20)
    for grpo, mine in zip(pair["grpo"], pair["student"], strict=True):
        assert mine == pytest.approx(grpo)
    difficulty = visuals["difficulty"]
    for mine, reference in zip(difficulty["student"], difficulty["reference"], strict=True):
        assert mine == pytest.approx(reference)
    assert difficulty["grpo"][0][0] > 2 * difficulty["reference"][0][0]  # std scaling blows it up


def test_solved_page_shows_the_notes(graded):
    page = render_html(graded(CORRECT, max_examples=10), EXERCISE)
    assert "<h2>Solved</h2>" in page and "DAPO" in page
    assert "id='token-weights'" not in page  # no visuals asked for


def _browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver, options, driver


def test_page_works_in_headless_chromium(biased_page, tmp_path):
    webdriver, options, driver_path = _browser()
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    profile = tmp_path / "profile"
    profile.mkdir()
    options.add_argument(f"--user-data-dir={profile}")
    page = tmp_path / "report.html"
    page.write_text(biased_page)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    try:
        browser.get(page.as_uri())
        traces = "return document.getElementById(arguments[0]).data.map(t => Array.from(t.y || []));"
        before = browser.execute_script(traces, "token-weights")
        assert len(before) == 6 and [len(y) for y in before] == [5, 20, 5, 20, 5, 20]
        assert len(browser.execute_script(traces, "difficulty-bias")) == 6

        control = browser.find_element(By.ID, "length-1")
        control.send_keys(Keys.ARROW_RIGHT)  # 5 -> 8 tokens
        after = browser.execute_script(traces, "token-weights")
        assert browser.find_element(By.ID, "length-1-value").text == "8"
        assert [len(y) for y in after] == [8, 20, 8, 20, 8, 20]
        assert after != before
        assert after[2] == pytest.approx([1 / 16] * 8)  # the student's loss: 1 / (N * length)
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []
    finally:
        browser.quit()
