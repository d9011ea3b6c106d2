"""Declaring a check: validated when defined, with errors that name the argument and value."""

from __future__ import annotations

import sys
import types

import pytest
from hypothesis import strategies as st

from grader.declare.checks import Check, Inputs, check, collect

NUMBERS = Inputs("numbers", x=st.integers(), y=st.integers())


def _body(student, x):
    """A sentence for the student.

    More detail."""


def test_a_declaration_becomes_a_frozen_check():
    declared = check(target="drgrpo_loss", points=3, inputs=NUMBERS, id="some_property")(_body)
    assert isinstance(declared, Check)
    assert declared.id == "some_property"
    assert declared.title == "A sentence for the student."
    assert declared.description == "More detail."
    assert declared.parameters == ("x",)
    assert (declared.points, declared.visibility) == (3.0, "visible")
    with pytest.raises(AttributeError):
        declared.points = 5


def test_a_mapping_of_strategies_gives_the_check_inputs_of_its_own():
    declared = check(target="drgrpo_loss", points=1, inputs={"x": st.integers()}, id="own_inputs")(_body)
    assert declared.inputs.name == "own_inputs"
    assert list(declared.inputs.strategies) == ["x"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"target": "drgrpo loss", "points": 1}, "target='drgrpo loss'"),
        ({"target": "drgrpo_loss", "points": -1}, "points=-1"),
        ({"target": "drgrpo_loss", "points": True}, "points=True"),
        ({"target": "drgrpo_loss", "points": 1, "visibility": "secret"}, "visibility='secret'"),
        ({"target": "drgrpo_loss", "points": 1, "timeout_s": 0}, "timeout_s=0"),
        ({"target": "drgrpo_loss", "points": 1, "timeout_s": True}, "timeout_s=True"),
        ({"target": "drgrpo_loss", "points": 1, "max_examples": True}, "max_examples=True"),
        ({"target": "drgrpo_loss", "points": 1, "max_examples": 0}, "max_examples=0"),
        ({"target": "drgrpo_loss", "points": 1, "id": "Bad Id"}, "id='Bad Id'"),
        ({"target": "drgrpo_loss", "points": 1, "inputs": [1, 2]}, "inputs=[1, 2]"),
    ],
)
def test_bad_arguments_are_rejected_when_defined(arguments, named):
    arguments.setdefault("inputs", NUMBERS)
    with pytest.raises(ValueError, match=named.replace("[", r"\[")):
        check(**arguments)


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="x=3 is invalid; expected a Hypothesis strategy"):
        Inputs("bad_inputs", x=3)
    with pytest.raises(ValueError, match="Inputs name='No'"):
        Inputs("No", x=st.integers())


def test_a_check_must_name_drawn_values_and_have_a_docstring():
    def wants_z(student, z):
        """Uses an undrawn value."""

    with pytest.raises(ValueError, match=r"\['z'\] are not among the inputs"):
        check(target="drgrpo_loss", points=1, inputs=NUMBERS)(wants_z)

    def undocumented(student, x):
        pass

    with pytest.raises(ValueError, match="docstring"):
        check(target="drgrpo_loss", points=1, inputs=NUMBERS)(undocumented)


def _module(name: str, source: str) -> types.ModuleType:
    """A module named ``name`` made from ``source``, as if imported from ``name.py``."""
    module = types.ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


DECLARES_SAME_ID = """
from hypothesis import strategies as st
from grader.declare.checks import check

@check(target="drgrpo_loss", points=1, inputs={"x": st.integers()}, id="same_id")
def body(student, x):
    \"\"\"A sentence.\"\"\"
"""


def test_duplicate_ids_are_an_error_naming_both_places(monkeypatch):
    monkeypatch.setitem(sys.modules, "first_checks", _module("first_checks", DECLARES_SAME_ID))
    monkeypatch.setitem(sys.modules, "second_checks", _module("second_checks", "\n\n" + DECLARES_SAME_ID))
    with pytest.raises(ValueError, match="duplicate check id 'same_id'") as raised:
        collect(["first_checks", "second_checks"])
    assert str(raised.value).endswith("defined at first_checks.py:5 and at second_checks.py:7")


def test_a_module_collects_the_checks_it_defines_not_those_it_imports(monkeypatch):
    monkeypatch.setitem(sys.modules, "defining_checks", _module("defining_checks", DECLARES_SAME_ID))
    importing = _module("importing_checks", "from defining_checks import body as borrowed")
    monkeypatch.setitem(sys.modules, "importing_checks", importing)
    assert collect(["importing_checks"]) == ()
    assert [c.id for c in collect(["defining_checks", "importing_checks"])] == ["same_id"]


def test_the_body_must_be_a_function_of_the_student_and_named_values():
    declare = check(target="drgrpo_loss", points=1, inputs=NUMBERS, id="some_check")
    with pytest.raises(ValueError, match=r"the decorated object=.* expected a function"):
        declare(_body.__doc__)

    def star_args(student, *x):
        """A sentence."""

    def no_student():
        """A sentence."""

    for body in (star_args, no_student):
        with pytest.raises(ValueError, match="must take the student first, then drawn values by name"):
            declare(body)


def test_the_sentence_a_student_reads_is_short():
    def rambling(student, x):
        pass

    rambling.__doc__ = "word " * 80
    with pytest.raises(ValueError, match="keep it under 300 and put details after a blank line"):
        check(target="drgrpo_loss", points=1, inputs=NUMBERS)(rambling)


def test_builtin_checks_cover_the_exercise():
    from grader.api import builtin_checks

    checks = builtin_checks()
    assert len(checks) == 23
    assert sum(c.points for c in checks) == 100
    assert {c.target for c in checks} == {"drgrpo_advantages", "drgrpo_loss"}
    assert all(c.title.endswith(".") for c in checks)
