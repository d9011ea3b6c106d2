"""``python -m grader experiment length``: a display-only toy run that writes a plot and says
plainly what it does not show."""

from __future__ import annotations

import math

from grader.cli import _commands
from reference import experiment


def test_length_experiment_writes_a_plot_and_its_caveats(tmp_path, capsys):
    assert _commands()["experiment"] == "reference.experiment"  # the exercise's own command
    target = tmp_path / "length.html"
    assert experiment.main(["length", "--steps", "8", "--seeds", "2", "-o", str(target)]) == 0
    printed = capsys.readouterr().out
    page = target.read_text()
    assert "<script src" not in page and "Plotly.newPlot" in page
    assert "One run's trend is not a result" in printed
    assert "EOS handling" in printed and "learning rate" in printed and "noise" in printed
    assert "GRPO" in printed and "Dr. GRPO" in printed


def test_runs_are_reproducible_and_measure_incorrect_lengths():
    setup = experiment.Setup(steps=5, seeds=1)
    first = experiment.run("grpo", 0, setup)
    assert first == experiment.run("grpo", 0, setup)
    assert len(first) == 5
    assert all(1 <= x <= setup.max_len for x in first if not math.isnan(x))
    assert experiment.run("drgrpo", 0, setup) != first
