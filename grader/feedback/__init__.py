"""Feedback on a failed check: the diagnosis, replays on trusted code, and the reproduction snippet."""
