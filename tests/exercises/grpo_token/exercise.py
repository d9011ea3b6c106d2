"""The GRPO token objective exercise, as the grader's engine receives it.

Graded with ``python -m grader --exercise tests.exercises.grpo_token.exercise:EXERCISE FILE``:
nothing in ``grader/`` names it, which is the point of it.
"""

from __future__ import annotations

from pathlib import Path

from grader.exercise import Exercise

EXERCISE = Exercise(
    name="grpo_token",
    title="GRPO token objective",
    functions={"grpo_token_objective": ("logp", "old_logp", "advantages", "mask", "clip_eps")},
    check_modules=("tests.exercises.grpo_token.checks",),
    root=Path(__file__).resolve().parent,
    template="template.py",
    rubric="rubric.toml",
    solution="tests.exercises.grpo_token.reference",
    catalogue="tests.exercises.grpo_token.mistakes",
    notes="Solved: the clipped surrogate keeps each token's update within the clip range.",
)
