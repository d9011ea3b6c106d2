"""Raises while the file is being imported."""

raise RuntimeError("work in progress")
