"""Running the checks on both cores: shards of checks in forked copies of the trusted process.

A check's cost is mostly Hypothesis and the reference (in the trusted process) plus the
student's call (in the worker), one after the other. With one worker per shard, two shards keep
two cores busy. Each check has its own seed, so its result does not depend on its shard.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.declare.checks import Check, by_inputs
from grader.report.model import CheckResult
from grader.sandbox.zygote import ZygoteLink


@dataclass(frozen=True)
class ShardResult:
    results: list[CheckResult]
    output: str
    load_error: dict[str, Any] | None
    isolated: bool
    minimal_root: bool = False


Runner = Callable[[Sequence[Check], ZygoteLink], ShardResult]


def _cost(group: list[Check], costs: Mapping[str, float]) -> float:
    """A rough relative cost: a check's, per target, as the exercise says (``Exercise.costs``),
    and checks that share their inputs share most of the work."""
    return costs.get(group[0].target, 1.0) * (1 + 0.5 * (len(group) - 1))


def split(checks: Sequence[Check], jobs: int, costs: Mapping[str, float] | None = None) -> list[list[Check]]:
    """Balance the checks over ``jobs`` shards, costliest first, deterministically; checks that
    share their inputs stay together."""
    groups = by_inputs(checks)
    shards: list[list[Check]] = [[] for _ in range(max(1, min(jobs, len(groups))))]
    loads = [0.0] * len(shards)
    weights = [_cost(group, costs or {}) for group in groups]
    for weight, group in sorted(zip(weights, groups, strict=True), key=lambda pair: pair[0], reverse=True):
        lightest = loads.index(min(loads))
        shards[lightest].extend(group)
        loads[lightest] += weight
    return shards


def run_sharded(
    checks: Sequence[Check],
    run: Runner,
    zygote: ZygoteLink,
    jobs: int,
    costs: Mapping[str, float] | None = None,
) -> ShardResult:
    """Run ``run`` on each shard, the first here and the others in forked children; their
    results together, in the order of ``checks``."""
    shards = split(checks, jobs, costs)
    children = [_fork(shard, run, zygote) for shard in shards[1:]]
    mine = run(shards[0], zygote)
    results = list(mine.results)
    outputs = [mine.output]
    for pid, fd, shard in children:
        found = _collect(pid, fd, shard)
        results += found.results
        outputs.append(found.output)
    order = {check.id: i for i, check in enumerate(checks)}
    results.sort(key=lambda result: order[result.id])
    return ShardResult(results, "".join(outputs), mine.load_error, mine.isolated, mine.minimal_root)


def fork_grading(
    zygote: ZygoteLink, work: Callable[[ZygoteLink], bytes], failed: Callable[[str], bytes]
) -> tuple[int, int]:
    """Fork a grading process with a zygote link of its own: in it, torch runs on one thread,
    and what ``work(link)`` returns (or, if it raised, what ``failed(traceback)`` makes of it,
    with exit code 1) goes down a pipe. Returns the child's pid and the pipe's read end."""
    link = zygote.connect()
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with torch's idle threads
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        code = 0
        try:
            import torch

            torch.set_num_threads(1)
            data = work(link)
        except BaseException:
            code = 1
            data = failed(traceback.format_exc()[-4000:])
        try:
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(data)
        finally:
            os._exit(code)
    os.close(write_fd)
    link.close()
    return pid, read_fd


def _fork(shard: list[Check], run: Runner, zygote: ZygoteLink) -> tuple[int, int, list[Check]]:
    pid, read_fd = fork_grading(
        zygote,
        lambda link: json.dumps({"ok": True, **dataclasses.asdict(run(shard, link))}).encode(),
        lambda error: json.dumps({"ok": False, "error": error}).encode(),
    )
    return pid, read_fd, shard


def _collect(pid: int, fd: int, shard: list[Check]) -> ShardResult:
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        payload = json.loads(data)
    except ValueError:
        payload = {"ok": False, "error": "a grading process ended without a result"}
    if payload.get("ok"):
        return ShardResult(
            [CheckResult(**r) for r in payload["results"]],
            payload["output"],
            payload["load_error"],
            payload["isolated"],
            payload["minimal_root"],
        )
    message = f"internal grader error (not your fault): {payload['error']}"
    results = [
        CheckResult(
            id=c.id,
            title=c.title,
            description=c.description,
            target=c.target,
            status="error",
            score=0.0,
            max_score=c.points,
            visibility=c.visibility,
            message=message,
            error_source="grader",
        )
        for c in shard
    ]
    return ShardResult(results, "", None, False)
