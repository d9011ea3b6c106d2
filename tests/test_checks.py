"""Declaring a check: validated when defined, with errors that name the argument and value."""

from __future__ import annotations

import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.checks import Check, check, collect


def _property():
    @given(x=st.integers())
    def some_property(student, x):
        """A sentence for the student.

        More detail."""

    return some_property


def test_a_declaration_becomes_a_frozen_check():
    declared = check(target="drgrpo_loss", points=3)(_property())
    assert isinstance(declared, Check)
    assert declared.id == "some_property"
    assert declared.title == "A sentence for the student."
    assert declared.description == "More detail."
    assert (declared.points, declared.visibility) == (3.0, "visible")
    with pytest.raises(AttributeError):
        declared.points = 5


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"target": "drgrpo_los", "points": 1}, "target='drgrpo_los'"),
        ({"target": "drgrpo_loss", "points": -1}, "points=-1"),
        ({"target": "drgrpo_loss", "points": True}, "points=True"),
        ({"target": "drgrpo_loss", "points": 1, "visibility": "secret"}, "visibility='secret'"),
        ({"target": "drgrpo_loss", "points": 1, "timeout_s": 0}, "timeout_s=0"),
        ({"target": "drgrpo_loss", "points": 1, "max_examples": 0}, "max_examples=0"),
        ({"target": "drgrpo_loss", "points": 1, "id": "Bad Id"}, "id='Bad Id'"),
    ],
)
def test_bad_arguments_are_rejected_when_defined(arguments, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        check(**arguments)


def test_check_needs_a_hypothesis_test_with_a_docstring():
    def plain_function(student):
        """Not a Hypothesis test."""

    with pytest.raises(TypeError, match="above @given"):
        check(target="drgrpo_loss", points=1)(plain_function)

    @given(x=st.integers())
    def undocumented(student, x):
        pass

    with pytest.raises(ValueError, match="docstring"):
        check(target="drgrpo_loss", points=1)(undocumented)


def test_duplicate_ids_are_an_error(monkeypatch):
    first = types.ModuleType("first_checks")
    second = types.ModuleType("second_checks")
    first.a = check(target="drgrpo_loss", points=1)(_property())
    second.b = check(target="drgrpo_loss", points=1)(_property())
    monkeypatch.setitem(__import__("sys").modules, "first_checks", first)
    monkeypatch.setitem(__import__("sys").modules, "second_checks", second)
    with pytest.raises(ValueError, match="duplicate check id 'some_property'"):
        collect(["first_checks", "second_checks"])


def test_builtin_checks_cover_the_exercise():
    from grader.api import builtin_checks

    checks = builtin_checks()
    assert len(checks) == 20
    assert sum(c.points for c in checks) == 100
    assert {c.target for c in checks} == {"drgrpo_advantages", "drgrpo_loss"}
    assert all(c.title.endswith(".") for c in checks)
