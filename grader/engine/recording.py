"""Drawn inputs recorded once and replayed for every submission of a batch.

A shared run (``grader.engine.runner``) asks Hypothesis for up to ``max_examples`` inputs from a seed
of its own. Hypothesis' choices depend on the seed and on how each example ended, and in a
shared run every example ends normally (the members' failures are caught), until every member
has failed. So the inputs a shared run sees are the same for every submission: a batch draws
them once, here, and each grade walks the same list instead of running Hypothesis again, which
is most of the trusted process's work for a submission that passes. A check that fails is
still run again with Hypothesis, to shrink, exactly as without a recording; and a recording
made for another seed or budget is never used. A check with inputs of its own is not replayed:
it runs with Hypothesis from the start, and replaying it first would call the submission more
often (printing twice, or a second timeout) when it fails.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.declare.checks import Check, by_inputs
from grader.engine.drawing import check_seed, hypothesis_test


@dataclass(frozen=True)
class Recording:
    """The inputs drawn for each shared run: (inputs name, seed, budget) -> drawn values."""

    draws: Mapping[tuple[str, int, int], tuple[dict[str, Any], ...]]

    def examples(self, name: str, seed: int, budget: int) -> Iterator[dict[str, Any]] | None:
        """Fresh copies of the recorded inputs, in Hypothesis' order; None if not recorded."""
        found = self.draws.get((name, seed, budget))
        if found is None:
            return None
        return (copy.deepcopy(drawn) for drawn in found)


def shared_budget(members: Sequence[Check], max_examples: int) -> int:
    return max(c.max_examples or max_examples for c in members)


def record(checks: Sequence[Check], *, seed: int, max_examples: int) -> Recording:
    """Draw, without any submission, what each shared run of ``checks`` would draw."""

    draws = {}
    for members in by_inputs(checks):
        if len(members) == 1:
            continue  # a check alone runs with Hypothesis, which shrinks its failures
        inputs = members[0].inputs
        seen: list[dict[str, Any]] = []

        def keep(_: Any, drawn: dict[str, Any], seen: list[dict[str, Any]] = seen) -> None:
            seen.append(copy.deepcopy(drawn))

        test_seed = check_seed(seed, inputs.name)
        budget = shared_budget(members, max_examples)
        hypothesis_test(inputs, keep, test_seed, budget)(_NoStudent())
        draws[(inputs.name, test_seed, budget)] = tuple(seen)
    return Recording(draws)


class _NoStudent:
    """Stands in for the student while recording: only counts examples."""

    examples = 0

    def begin_example(self) -> None:
        self.examples += 1
