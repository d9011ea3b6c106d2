"""The built-in checks of the Dr. GRPO exercise, one module per graded object."""

MODULES = ("properties.advantages", "properties.loss", "properties.stats")
