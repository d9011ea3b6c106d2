"""``python -m grader experiment length``: a toy run of GRPO's length bias. Shown, never graded.

The toy: each response to a prompt is correct or not by a coin whose bias depends on the prompt
only (correctness does not depend on length), and then the policy writes tokens until it emits
EOS, with an EOS logit per position, one set for correct responses and one for incorrect ones
(a policy that "knows" when it is wrong, as a language model can). Rewards are 0/1. The same
policy is trained with GRPO (std-scaled advantages, per-response token mean) and with Dr. GRPO
(centered advantages, sum over the batch / (N * max_len)), with Adam, over several seeds, and
the mean length of incorrect responses is plotted over steps for both.

In expectation Dr. GRPO's gradient leaves the lengths alone here (the score function has mean
zero whatever the advantage), while GRPO's 1 / length weighting penalizes a short incorrect
response more per token than a long one, so incorrect responses drift longer. Both losses come
from the reference (``reference.provided``, ``reference.solution``); nothing of the student's
runs here.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

CAVEATS = """\
What this shows, and what it does not:
- It is a toy. One run's trend is not a result: look at the spread over seeds, and expect
  other seeds to give other curves.
- Learned length in real training depends on EOS handling (truncation at max_len, whether an
  unfinished response is rewarded), the learning rate and optimizer, the reward design, and
  noise. Change any of them and these curves change.
- What the exercise grades is exact: the gradient weight of each token. This curve is only one
  consequence of it, in one simple setting."""


@dataclass(frozen=True)
class Setup:
    """The toy's knobs (see ``--help``)."""

    steps: int = 150
    seeds: int = 5
    prompts: int = 8
    group_size: int = 8
    max_len: int = 24
    lr: float = 0.05
    start_length: float = 8.0


def _sample(eos_logits: torch.Tensor, correct: torch.Tensor, max_len: int, generator: torch.Generator):
    """Lengths, the [N, max_len] mask and the per-token log-probabilities of sampled responses."""
    n = correct.numel()
    p_eos = torch.sigmoid(eos_logits[correct.long()])  # [N, max_len], one row of logits per branch
    stops = torch.rand(n, max_len, generator=generator, dtype=p_eos.dtype) < p_eos.detach()
    stops[:, -1] = True  # the generation limit ends every response
    lengths = stops.float().argmax(dim=1) + 1
    positions = torch.arange(1, max_len + 1)[None, :]
    mask = positions <= lengths[:, None]
    last = positions == lengths[:, None]
    # The token at the limit is forced: it carries no choice, so no log-probability.
    forced = last & (lengths[:, None] == max_len)
    token_logp = torch.where(last, torch.log(p_eos), torch.log1p(-p_eos))
    token_logp = torch.where(forced, torch.zeros_like(token_logp), token_logp)
    return lengths, mask, token_logp


def run(method: str, seed: int, setup: Setup) -> list[float]:
    """Mean length of the incorrect responses at every step of one training run."""
    from reference import provided, solution

    generator = torch.Generator().manual_seed(seed)
    start = -math.log(setup.start_length - 1.0)  # EOS probability 1 / start_length per token
    eos_logits = torch.full((2, setup.max_len), start, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([eos_logits], lr=setup.lr)
    n = setup.prompts * setup.group_size
    curve = []
    for _ in range(setup.steps):
        difficulty = torch.rand(setup.prompts, generator=generator, dtype=torch.float64) * 0.8 + 0.1
        chance = difficulty.repeat_interleave(setup.group_size)
        correct = torch.rand(n, generator=generator, dtype=torch.float64) < chance
        lengths, mask, logp = _sample(eos_logits, correct, setup.max_len, generator)
        rewards = correct.to(torch.float64)
        frozen = logp.detach()
        if method == "grpo":
            advantages = provided.grpo_reference_advantages(rewards, setup.group_size)
            loss, _ = provided.grpo_reference_loss(logp, frozen, frozen, mask, advantages, beta=0.0)
        else:
            advantages = solution.drgrpo_advantages(rewards, setup.group_size)
            loss, _ = solution.drgrpo_loss(logp, frozen, frozen, mask, advantages, setup.max_len, beta=0.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        wrong = ~correct
        curve.append(float(lengths[wrong].float().mean()) if wrong.any() else math.nan)
    return curve


def plot(curves: dict[str, list[list[float]]], setup: Setup, path: Path) -> None:
    """One self-contained HTML page (Plotly, inlined): the mean over seeds with each seed faint."""
    import plotly.graph_objects as go

    figure = go.Figure()
    colors = {"GRPO": "#c0392b", "Dr. GRPO": "#1f77b4"}
    steps = list(range(1, setup.steps + 1))
    for label, runs in curves.items():
        for i, curve in enumerate(runs):
            figure.add_trace(
                go.Scatter(
                    x=steps,
                    y=curve,
                    mode="lines",
                    line={"color": colors[label], "width": 1},
                    opacity=0.25,
                    name=f"{label}, seed {i}",
                    showlegend=False,
                )
            )
        mean = torch.tensor(runs).nanmean(dim=0).tolist()
        figure.add_trace(
            go.Scatter(x=steps, y=mean, mode="lines", line={"color": colors[label], "width": 3}, name=label)
        )
    figure.update_layout(
        title=f"Toy run: mean length of incorrect responses ({len(next(iter(curves.values())))} seeds, "
        f"mean bold, each seed faint)",
        xaxis_title="training step",
        yaxis_title="mean length of incorrect responses (tokens)",
    )
    caveats = "<br>".join(CAVEATS.splitlines())
    path.write_text(
        figure.to_html(include_plotlyjs=True, full_html=True).replace(
            "</body>", f"<p style='font-family:sans-serif'>{caveats}</p></body>"
        )
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader experiment",
        description="Display-only experiments (never graded). 'length': a toy GRPO vs Dr. GRPO run.",
    )
    parser.add_argument("name", choices=("length",), help="the experiment to run")
    parser.add_argument("-o", "--output", type=Path, default=Path("length_experiment.html"))
    parser.add_argument("--steps", type=int, default=Setup.steps)
    parser.add_argument("--seeds", type=int, default=Setup.seeds)
    parser.add_argument("--lr", type=float, default=Setup.lr)
    args = parser.parse_args(list(argv))
    if args.steps < 1 or args.seeds < 1 or not args.lr > 0:
        parser.error(
            f"--steps and --seeds must be >= 1 and --lr > 0, got {args.steps}, {args.seeds}, {args.lr}"
        )
    setup = Setup(steps=args.steps, seeds=args.seeds, lr=args.lr)
    started = time.monotonic()
    curves = {
        label: [run(method, seed, setup) for seed in range(setup.seeds)]
        for label, method in (("GRPO", "grpo"), ("Dr. GRPO", "drgrpo"))
    }
    plot(curves, setup, args.output)
    elapsed = time.monotonic() - started
    print(f"Toy length experiment: {setup.seeds} seeds x {setup.steps} steps, {elapsed:.1f} s")
    print(f"Mean length of incorrect responses (start about {setup.start_length:g} tokens):")
    for label, runs in curves.items():
        finals = torch.tensor([curve[-10:] for curve in runs]).nanmean(dim=1)
        per_seed = ", ".join(f"{x:.1f}" for x in finals.tolist())
        print(f"  {label:9s} over the last 10 steps: {float(finals.mean()):.1f} (seeds: {per_seed})")
    print(f"Plot written to {args.output} (open it in a browser; it needs no network).")
    print()
    print(CAVEATS)
    return 0
