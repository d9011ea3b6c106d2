"""Diagnosis precision, and reproduction snippets that run, replay the failing calls and embed
none of the reference's values; ``--reproduce``.

The grades come from the session-cached ``graded`` fixture with default options, which the
grading tests ask for too: diagnosing the whole catalogue costs nothing more here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from helpers import BIASED, HOSTILE, ROOT, SOLUTION, SUBMISSIONS, TEMPLATE, fixtures, run
from helpers import MISTAKES as MISTAKE_FOLDER

from grader.api import builtin_checks
from grader.compare import values
from grader.feedback import diagnosis, replay, snippet
from grader.report.render import render_text
from grader.sandbox import wire
from properties.common import ADVANTAGES
from properties.exercise import EXERCISE
from properties.probes import PROBES, advantage_probes
from reference import solution
from reference.mistakes import Mistake, catalogue

MISTAKES = catalogue()
NOT_CATALOGUED = fixtures("unrelated") + fixtures("broken") + [TEMPLATE]
NOT_WRONG = [*fixtures("correct"), SOLUTION]


def not_passed(report):
    return [c for c in report.checks if c.status in ("failed", "error")]


def test_every_check_catches_a_catalogued_mistake():
    caught = {check_id for m in MISTAKES for check_id in m.caught_by}
    assert caught == {c.id for c in builtin_checks()}


def test_every_mistake_explains_itself_and_says_what_to_change():
    for mistake in MISTAKES:
        assert len(mistake.explanation) > 60, mistake.id
        assert len(mistake.fix) > 30, mistake.id
        assert mistake.idea, mistake.id


@pytest.mark.e2e
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_each_mistake_is_named_on_every_check_it_fails(graded, mistake: Mistake):
    failing = not_passed(graded(mistake.path))
    assert failing
    named = {c.id: (c.diagnosis or {}).get("id") for c in failing}
    assert named == {c.id: mistake.id for c in failing}
    for result in failing:
        assert result.diagnosis["name"] == mistake.name
        assert result.diagnosis["fix"] == mistake.fix
        assert result.reproduce, result.id


@pytest.mark.e2e
@pytest.mark.parametrize("path", NOT_CATALOGUED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_other_bugs_get_no_diagnosis(graded, path):
    failing = not_passed(graded(path))
    assert failing, "the fixture must fail some check"
    assert [c.id for c in failing if c.diagnosis] == []


@pytest.mark.e2e
@pytest.mark.parametrize("path", NOT_WRONG, ids=lambda p: p.stem)
def test_correct_submissions_get_no_diagnosis(graded, path):
    report = graded(path)
    assert report.solved and report.notes
    assert all(c.diagnosis is None and c.reproduce is None for c in report.checks)


@pytest.mark.e2e
def test_the_bundled_length_biased_example_is_diagnosed(graded):
    report = graded(BIASED)
    assert {c.diagnosis["id"] for c in not_passed(report)} == {"per_response_mean"}
    assert not report.solved and report.notes is None


def _tensor(data, dtype="float32"):
    return values.TensorValue("torch.Tensor", dtype, data.shape, "cpu", False, False, data)


def test_agreement_is_dtype_aware_and_strict_beyond_rounding():
    base = np.array([0.1234567, -2.5, 1e-3])
    rounding = base * (1 + 3e-7)  # float32 rounding noise
    assert replay._same(_tensor(rounding), _tensor(base), 1e-4, "returns")
    # A denominator off by one token in nine (the smallest classic mistake) never agrees.
    assert not replay._same(_tensor(base * 9 / 8), _tensor(base), 1e-4, "returns")
    assert not replay._same(_tensor(rounding, "float64"), _tensor(base, "float64"), 1e-10, "returns")
    assert not replay._same(_tensor(base, "float64"), _tensor(base), 1e-4, "returns")  # dtype
    nan = np.array([np.nan, 1.0])
    assert replay._same(_tensor(nan), _tensor(nan.copy()), 1e-4, "returns")
    assert not replay._same(_tensor(np.array([0.0, 1.0])), _tensor(nan), 1e-4, "returns")

    # The stats' keys may come in any order; their values still count.
    def stats(keys, scale=1.0):
        numbers = tuple(_tensor(np.array(scale * len(k))) for k in keys)
        return values.DictValue(tuple(keys), ("str",) * len(keys), numbers, len(keys))

    assert replay._same(stats(["kl_mean", "clipfrac"]), stats(["clipfrac", "kl_mean"]), 1e-4, "returns")
    assert not replay._same(stats(["kl_mean", "clipfrac"]), stats(["clipfrac", "kl_mean"], 2.0), 1e-4, "x")
    # No gradient and a zero gradient say the same.
    assert replay._same(None, _tensor(np.zeros(3)), 1e-4, "grad 1")
    assert not replay._same(None, _tensor(np.ones(3)), 1e-4, "grad 1")


@pytest.mark.e2e
def test_text_report_shows_diagnosis_and_snippet(graded):
    text = render_text(graded(MISTAKE_FOLDER / "multiply_by_mask.py"))
    assert "diagnosis: padding multiplied by the mask (inf * 0 = nan)." in text
    assert "what to change: Select the padding away" in text
    # The command that prints the snippet, not the snippet itself.
    assert "--reproduce loss_padding_isolated" in " ".join(text.split())
    assert "SUBMISSION = " not in text
    assert "The exercise notes unlock when every required check passes." in text


# Mistakes of every kind of mismatch: values, an exception's type, an edited input, a type,
# gradients that should not exist.
REPRODUCED = (
    "per_response_mean",
    "no_validation",
    "inplace_rewards",
    "stats_python_floats",
    "group_axis_kept",
    "old_logp_not_detached",
)


def _run_trusted(code: str) -> subprocess.CompletedProcess:
    """Run snippets for our own fixtures (the catalogue, the reference) in a plain Python, as a
    student runs theirs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _snippets(graded) -> list[tuple[str, str]]:
    found = []
    for mistake in MISTAKES:
        if mistake.id in REPRODUCED:
            result = not_passed(graded(mistake.path))[0]
            found.append((mistake, result.reproduce))
    return found


@pytest.mark.e2e
def test_snippets_run_and_replay_every_call(graded):
    snippets = _snippets(graded)
    assert len(snippets) == len(REPRODUCED)
    for mistake, code in snippets:
        assert "reference.solution" not in code and "reference.mistakes" not in code
        assert f"SUBMISSION = {str(mistake.path)!r}" in code
    # One process for all of them (each imports torch once otherwise).
    script = "\n".join(f"print('=== {m.id}')\nexec({code!r}, {{}})" for m, code in snippets)
    ran = _run_trusted(script)
    assert ran.returncode == 0, ran.stderr
    sections = ran.stdout.split("=== ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [m.id for m, _ in snippets]
    for section in sections:
        assert "call 1 of " in section and " said: " in section, section
        assert " returned:" in section or " raised " in section, section
    shown = {m.id: section for (m, _), section in zip(snippets, sections, strict=True)}
    assert "rewards was changed in place" in shown["inplace_rewards"]
    assert "logp.grad:" in shown["per_response_mean"]


_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*(?:e-?\d+)?|\d+e-?\d+)(?![\w.])")


def _numbers(found) -> set[str]:
    """Every number in a reply's parts, as a snippet would write it."""
    out = set()
    for value in found.values():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, values.TensorValue) and item.data is not None:
                out |= set(_NUMBER.findall(snippet._literal(np.asarray(item.data, dtype=np.float64))))
            elif isinstance(item, values.SequenceValue):
                stack += item.items
            elif isinstance(item, values.DictValue):
                stack += item.values
    return out


def test_a_snippet_embeds_no_value_the_reference_computes():
    """Only the inputs and the message: neither the reference's answers to the calls, nor the
    student's own replies (the snippet computes those when it runs)."""
    checked = 0
    for mistake in MISTAKES:
        module = mistake.module()
        for data in PROBES[mistake.target]():
            reply = replay.replay(module, data)
            code = snippet.snippet("some_check", str(mistake.path), [(data, reply)], "the message")
            request = wire.unpack(data)
            sent = set()
            for spec in [*request["args"], *request["kwargs"].values()]:
                found = np.asarray(spec["array"] if "array" in spec else spec["value"], dtype=np.float64)
                sent |= set(_NUMBER.findall(snippet._literal(found)))
            computed = _numbers(replay.parts(replay.replay(solution, data))) | _numbers(replay.parts(reply))
            leaked = (computed - sent) & set(_NUMBER.findall(code))
            assert not leaked, (mistake.id, leaked)
            checked += len(computed - sent)
    assert checked > 100  # the calls do compute numbers that are not among their inputs


RAISES_IN_ADVANTAGES = """
from reference.provided import masked_logprobs, token_objective, token_statistics


def drgrpo_advantages(rewards, group_size):
    raise RuntimeError("not yet")


def drgrpo_loss(logp, old_logp, ref_logp, mask, advantages, max_len, clip_eps=0.2, beta=0.04):
    raise RuntimeError("not yet either")
"""


@pytest.mark.e2e
def test_reproduce_option_replays_the_call_of_the_message(tmp_path):

    done = run(
        MISTAKE_FOLDER / "per_response_mean.py",
        "--reproduce",
        "loss_equal_token_weights",
        "--max-examples",
        10,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAILED loss_equal_token_weights: the per-token gradient")
    assert "SUBMISSION = " in done.stdout  # the snippet, printed for the student to keep
    trusted = done.stdout.split("as the grader saw them:")[1]
    assert "call 1 of 1: drgrpo_loss" in trusted and "logp.grad: a float64 tensor" in trusted
    unknown = run(SUBMISSIONS / "correct" / "python_loops.py", "--reproduce", "no_such_check")
    assert unknown.returncode == 2 and "unknown check id" in unknown.stderr

    # A function that raises: the snippet replays the call and says so, and does not crash.
    raising = tmp_path / "raises.py"
    raising.write_text(RAISES_IN_ADVANTAGES)
    done = run(raising, "--reproduce", "advantages_scale_linear", "--max-examples", 5)
    assert done.returncode == 1, done.stderr
    assert done.stdout.endswith("call 1 of 1: drgrpo_advantages\n  raised RuntimeError: not yet\n")
    code = done.stdout.split("run it with python):\n\n")[1].split("What your functions gave")[0]
    ran = _run_trusted(code)
    assert ran.returncode == 0, ran.stderr
    assert "drgrpo_advantages raised RuntimeError: not yet" in ran.stdout


@pytest.mark.e2e
def test_reproduce_option_shows_no_number_of_a_hidden_check():

    done = run(
        MISTAKE_FOLDER / "per_response_mean.py", "--reproduce", "loss_matches_reference", "--max-examples", 10
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == (
        "FAILED loss_matches_reference: failed (details withheld: this check's counterexample "
        "would give the answer away)\nnothing to replay: its details are withheld\n"
    )


@pytest.mark.e2e
def test_reproduce_option_judges_in_the_trusted_process():
    """A submission that patches every comparison it can reach still shows its own (wrong)
    values: what --reproduce prints about them is written by the grader, not by its code."""

    done = run(HOSTILE / "monkeypatch_comparisons.py", "--reproduce", "loss_equal_token_weights")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAILED loss_equal_token_weights: ")
    trusted = done.stdout.split("as the grader saw them:")[1]
    assert re.search(r"logp.grad: a float(32|64) tensor of shape \(\d+, \d+\) \[\[0.0", trusted), trusted


class Replayed:
    """A stand-in for a student's worker: its replies come from a trusted module replayed here."""

    exercise = EXERCISE

    def __init__(self, module) -> None:
        self.module = module

    def probe(self, function: str, data: bytes) -> dict:
        return replay.replay(self.module, data)


def _diagnose(module, target: str, **catalogue):
    first = PROBES[target]()[0]
    return diagnosis.diagnose(target, Replayed(module), [(first, replay.replay(module, first))], **catalogue)


def _load(path):
    spec = importlib.util.spec_from_file_location(f"fixture_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_diagnosis_in_process_names_each_mistake_and_nothing_else():
    for mistake in MISTAKES:
        found = _diagnose(mistake.module(), mistake.target)
        assert found is not None and found.id == mistake.id, mistake.id
    for target in PROBES:
        assert _diagnose(solution, target) is None
        for path in fixtures("unrelated"):
            assert _diagnose(_load(path), target) is None, path.stem


def test_only_one_idea_is_ever_named():
    # With valid group sizes only, the two ways of not validating group_size answer alike.
    valid_only = {ADVANTAGES: lambda: advantage_probes()[:3]}
    found = _diagnose(solution, ADVANTAGES, probes=valid_only)
    assert found is not None and found.id == "accepts_group_size_one"
    # Were they two ideas, neither would be named.
    split = tuple(replace(m, idea=m.id) for m in MISTAKES)
    assert _diagnose(solution, ADVANTAGES, probes=valid_only, mistakes=split) is None
