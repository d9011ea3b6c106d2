"""The exercise's reference code.

`reference.provided` holds the helpers students are given; `reference.solution` holds the
secret reference solution. This package deliberately imports neither, so that importing the
helpers never loads the solution.
"""
