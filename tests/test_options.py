"""The options shared by the commands that run checks parse the same in each (grader.options)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from grader import audit, autograders, batch, bundle, cli, options, release

# command -> (its parser, the positional arguments it needs, the shared options it takes)
COMMANDS: dict[str, tuple[Callable[[], argparse.ArgumentParser], list[str], set[str]]] = {
    "grade": (cli.build_parser, ["sub.py"], {"--seed", "--max-examples", "--rubric", "--properties", "-o"}),
    "batch": (batch.build_parser, ["subs"], {"--seed", "--max-examples", "--rubric", "--properties", "-o"}),
    "audit": (audit.build_parser, [], {"--seed", "--max-examples", "--properties", "-o"}),
    "bundle": (bundle.build_parser, ["gradescope", "out.zip"], {"--rubric"}),
    "release": (release.build_parser, ["out"], {"--rubric"}),
    "autograders": (autograders.build_parser, ["gradescope"], {"--rubric"}),
}
GIVEN = {
    "--seed": (["--seed", "7"], "seed", 7),
    "--max-examples": (["--max-examples", "3"], "max_examples", 3),
    "--rubric": (["--rubric", "staff.toml"], "rubric", Path("staff.toml")),
    "--properties": (["--properties", "a.py", "--properties", "b"], "properties", [Path("a.py"), Path("b")]),
    "-o": (["-o", "out"], "output", Path("out")),
}
# What each option is when not given.
DEFAULTS = {"seed": 0, "max_examples": 100, "rubric": None, "properties": []}


def _shared(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        a.option_strings[0]: a for a in parser._actions if a.option_strings and a.option_strings[0] in GIVEN
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_its_shared_options(command: str) -> None:
    build, positional, takes = COMMANDS[command]
    parser = build()
    assert set(_shared(parser)) == takes
    argv = positional + [word for option in sorted(takes) for word in GIVEN[option][0]]
    parsed = parser.parse_args(argv)
    for option in takes:
        _, attribute, value = GIVEN[option]
        assert getattr(parsed, attribute) == value, (command, option)
    defaults = build().parse_args(positional + (["-o", "out"] if "-o" in takes else []))  # batch needs -o
    for option in takes - {"-o"}:
        attribute = GIVEN[option][1]
        assert getattr(defaults, attribute) == DEFAULTS[attribute], (command, option)


@pytest.mark.parametrize("option", sorted(GIVEN))
def test_a_shared_option_is_declared_alike_everywhere(option: str) -> None:
    """Same flags, type, default, action and help (``-o`` says what the command writes)."""
    declared = [_shared(build())[option] for build, _, takes in COMMANDS.values() if option in takes]
    assert len(declared) >= 2
    ignored = {"dest", "container", "required"} | ({"help"} if option == "-o" else set())
    described = [{k: v for k, v in vars(a).items() if k not in ignored} | {"kind": type(a)} for a in declared]
    assert all(d == described[0] for d in described)


@pytest.mark.parametrize("command", [c for c, (_, _, takes) in COMMANDS.items() if "--max-examples" in takes])
def test_max_examples_below_one_is_refused_by_every_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    build, positional, _ = COMMANDS[command]
    with pytest.raises(SystemExit) as exited:
        build().parse_args([*positional, "-o", "out", "--max-examples", "0"])
    assert exited.value.code == options.EXIT_GRADER
    assert "must be at least 1, got 0" in capsys.readouterr().err
