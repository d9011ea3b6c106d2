"""Comparing and displaying values: the frozen values a worker sends back, their display, and
the one tolerance rule."""
