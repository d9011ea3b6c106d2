"""Naming the wrong idea behind a failed check, from the catalogue of classic mistakes.

A failed check says that a submission is wrong; a diagnosis says which idea is wrong. The
catalogued mistakes (``Exercise.catalogue``) are complete wrong submissions of our own, so they
run here, in the trusted process, on the very calls the failing example made to the student's
worker, and on a few more calls drawn for the purpose (``Exercise.probes``), for which the
student's worker is asked too. A mistake is named only when the student's replies agree with
its replies on every one of those calls, within the dtype's tolerance, and when no mistake of
another idea agrees as well: a correct submission or an unrelated bug is never given a name.

Only failing checks pay for this, and the student's answers to the probes are asked for once
per submission (``Student.probe``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.declare.mistakes import Mistake
from grader.engine.student import Student
from grader.errors import SubmissionBroken, SubmissionTimedOut
from grader.exercise import resolve
from grader.feedback import replay
from grader.sandbox import wire


@dataclass(frozen=True)
class Diagnosis:
    """The catalogued mistake a submission makes, as the report shows it."""

    id: str
    name: str
    explanation: str
    fix: str

    @classmethod
    def of(cls, mistake: Mistake) -> Diagnosis:
        return cls(mistake.id, mistake.name, mistake.explanation, mistake.fix)


def diagnose(
    target: str,
    student: Student,
    calls: list[tuple[bytes, dict[str, Any]]],
    *,
    mistakes: Sequence[Mistake] | None = None,
    probes: Mapping[str, Callable[[], list[bytes]]] | None = None,
) -> Diagnosis | None:
    """The mistake the student's ``target`` makes, judged from the failing example's ``calls``
    (packed request, the student's reply) and the probes; None unless exactly one idea fits.
    ``mistakes`` and ``probes`` default to the exercise's (``student.exercise``)."""
    exercise = student.exercise
    if mistakes is None:
        mistakes = exercise.mistakes()
    if probes is None:
        probes = resolve(exercise.probes) if exercise.probes else {}
    matching = _agreeing([m for m in mistakes if m.target == target], calls)
    for data in probes[target]() if matching and target in probes else ():
        try:
            reply = student.probe(target, data)
        except (SubmissionBroken, SubmissionTimedOut):
            return None
        matching = _agreeing(matching, [(data, reply)])
        if not matching:
            return None
    if not matching or len({m.idea for m in matching}) != 1:
        return None
    return Diagnosis.of(matching[0])


def _agreeing(mistakes: list[Mistake], calls: list[tuple[bytes, dict[str, Any]]]) -> list[Mistake]:
    """The mistakes whose replies to every call agree with the student's."""
    found = []
    for mistake in mistakes:
        module = mistake.module()
        if all(_agrees(module, data, reply) for data, reply in calls):
            found.append(mistake)
    return found


def _agrees(module: Any, data: bytes, reply: dict[str, Any]) -> bool:
    function = wire.unpack(data)["function"]
    if not hasattr(module, function):
        return False
    return replay.agree(reply, replay.replay(module, data), replay.call_dtype(data))
