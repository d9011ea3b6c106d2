"""A second, small exercise: GRPO's per-token clipped surrogate, one function, three checks."""
