"""The trusted engine: calling the submission, drawing inputs, running checks in shared
Hypothesis runs and in shards."""
