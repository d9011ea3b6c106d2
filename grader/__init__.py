"""drgrpo-grader: property-based grading of Dr. GRPO's two normalization corrections."""

__version__ = "0.1.0"
