"""The Dr. GRPO exercise, as the grader's engine receives it (``grader.exercise.Exercise``)."""

from __future__ import annotations

from pathlib import Path

from grader.exercise import Exercise, Pictures

NOTES = """\
Solved: both of Dr. GRPO's corrections are in place.

What the two corrections do, and why
- Length: GRPO divides each response's token objective by that response's length, so a token
  of a 20-token wrong answer is penalized 4x less than a token of a 5-token one: long wrong
  answers are penalized less and grow. Dividing the batch's summed objective by the fixed
  N * max_len gives every valid token the same weight, whatever its response's length, and no
  response's length changes another's weights.
- Difficulty: GRPO divides centered rewards by the group's standard deviation, so questions
  that are almost always right or almost always wrong (a small std) are up-weighted. Only
  centering keeps each question's weight honest, and makes reward scale a real knob again:
  multiplying the rewards by c multiplies the advantages by c.

What to explore next
- DAPO's valid-token average: divide by the number of valid tokens in the batch instead of
  N * max_len. Within a batch every token weighs the same too; across batches the weight
  changes with how long the responses are. Compare the gradients of the two on batches of
  short and of long responses.
- Gradient scale versus reward improvement: N * max_len makes gradients smaller than GRPO's
  when responses are short. Track the gradient norm and the mean reward over a training run
  and ask which learning rate makes the two losses comparable.
- `python -m grader experiment length` shows a toy training run of both; remember that one
  run's trend is not a result.
"""

EXERCISE = Exercise(
    name="drgrpo",
    title="Dr. GRPO",
    functions={
        "drgrpo_advantages": ("rewards", "group_size"),
        "drgrpo_loss": ("logp", "old_logp", "ref_logp", "mask", "advantages", "max_len"),
    },
    check_modules=("properties.advantages", "properties.loss", "properties.stats"),
    root=Path(__file__).resolve().parent.parent,
    template="student_template/drgrpo.py",
    rubric="properties/rubric.toml",
    solution="reference.solution",
    catalogue="reference.mistakes",
    probes="properties.probes:PROBES",
    notes=NOTES,
    pictures=Pictures(collect="properties.pictures:collect", draw="properties.pictures:draw"),
    # Loss checks draw bigger inputs and differentiate.
    costs={"drgrpo_advantages": 1.0, "drgrpo_loss": 2.0},
    provided=("reference/__init__.py", "reference/provided.py"),
    worker_packages=("reference",),
    authoring="properties.authoring",
    commands={"experiment": "reference.experiment"},
)
