"""Declaring checks: the decorator, collection, rubrics, and instructors' own properties files."""
