"""Exercises other than Dr. GRPO, graded through the same engine to show that nothing in
``grader/`` is particular to one exercise (``--exercise tests.exercises.NAME.exercise:EXERCISE``)."""
