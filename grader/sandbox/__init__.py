"""The sandbox: worker processes, their confinement and the wire between them. It imports
nothing of the grader but its errors."""
