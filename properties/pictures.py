"""The exercise's two pictures in the HTML report (``Exercise.pictures``): their data, computed
with the student's own functions beside the reference, and the HTML that draws them.

- Token weights: the per-token gradient weight of two responses of adjustable lengths, with
  equal advantages, under GRPO (``grpo_reference_loss``) and under Dr. GRPO (the student's
  ``drgrpo_loss`` and the reference). Every pair of lengths on a small grid is computed during
  the grade, so the HTML report can switch between them offline.
- Difficulty bias: the advantage of a correct and of an incorrect response as the fraction of
  correct responses in a group varies, standardized (GRPO's ``grpo_reference_advantages``) vs
  only centered (the student's ``drgrpo_advantages`` and the reference).

The student's functions run in their worker, as in the checks; the rest runs here. The result
is plain JSON data for ``Report.visuals``; a call that fails leaves ``None`` and a note. The page
draws them with Plotly; the length control switches between precomputed token weights, so the
page needs no network and no server.
"""

from __future__ import annotations

import html
import json
from typing import Any

import numpy as np
import torch

from grader.engine.student import Student
from grader.errors import SubmissionBroken, SubmissionRaised, SubmissionTimedOut
from grader.report.html import figure_html
from properties.common import solution
from reference.provided import grpo_reference_advantages, grpo_reference_loss

LENGTHS = (1, 2, 3, 5, 8, 10, 15, 20, 25, 30)
MAX_LEN = 30
DEFAULT_LENGTHS = (5, 20)
GROUP_SIZE = 8
_STOPS = (SubmissionBroken, SubmissionRaised, SubmissionTimedOut)


def collect(student: Student) -> dict[str, Any]:
    """Both pictures' data, with ``student``'s functions (``grader.engine.visuals.collect`` gives it
    a worker of its own and the plots' time budget)."""
    return {"token_weights": token_weights(student), "difficulty": difficulty(student)}


def _batch(lengths: tuple[int, int]) -> tuple[torch.Tensor, ...]:
    """Two responses at the on-policy point, equal advantages of 1, padded to the longer one."""
    width = max(lengths)
    logp = torch.full((2, width), -1.0, dtype=torch.float64)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    return logp, logp.clone(), logp.clone(), mask, torch.ones(2, dtype=torch.float64)


def _weights(grad: torch.Tensor | np.ndarray, lengths: tuple[int, int]) -> list[list[float]]:
    """Each response's per-token weight (minus the gradient, as the advantages are 1)."""
    grad = np.asarray(grad, dtype=np.float64).reshape(2, -1)
    return [[float(-g) for g in grad[i, :n]] for i, n in enumerate(lengths)]


def _reference_weights(loss_fn: Any, lengths: tuple[int, int], *extra: int) -> list[list[float]]:
    logp, old, ref, mask, adv = _batch(lengths)
    logp.requires_grad_(True)
    loss, _ = loss_fn(logp, old, ref, mask, adv, *extra)
    (grad,) = torch.autograd.grad(loss, [logp])
    return _weights(grad.numpy(), lengths)


def token_weights(student: Student) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    problem = None
    for a in LENGTHS:
        for b in LENGTHS:
            lengths = (a, b)
            mine = None
            if problem is None:
                try:
                    mine = _student_weights(student, lengths)
                except _STOPS as stop:
                    problem = _why(stop)
            pairs[f"{a},{b}"] = {
                "grpo": _reference_weights(grpo_reference_loss, lengths),
                "reference": _reference_weights(solution.drgrpo_loss, lengths, MAX_LEN),
                "student": mine,
            }
    return {
        "lengths": list(LENGTHS),
        "default": list(DEFAULT_LENGTHS),
        "max_len": MAX_LEN,
        "pairs": pairs,
        "problem": problem,
    }


def _student_weights(student: Student, lengths: tuple[int, int]) -> list[list[float]] | None:
    logp, old, ref, mask, adv = _batch(lengths)
    out = student.call("drgrpo_loss", logp.requires_grad_(True), old, ref, mask, adv, MAX_LEN, backward=(0,))
    grad = out.grads[0] if out.grads else None
    if grad is None or getattr(grad, "data", None) is None or grad.data.size != logp.numel():
        return None
    return _weights(grad.data, lengths)


def difficulty(student: Student) -> dict[str, Any]:
    """Advantages of a correct and an incorrect response in a group of ``GROUP_SIZE`` 0/1
    rewards, for every number of correct responses from 1 to G - 1."""
    rows: dict[str, list[Any]] = {"fraction": [], "grpo": [], "reference": [], "student": []}
    problem = None
    for correct in range(1, GROUP_SIZE):
        rewards = (torch.arange(GROUP_SIZE) < correct).to(torch.float64)
        rows["fraction"].append(correct / GROUP_SIZE)
        rows["grpo"].append(_pair(grpo_reference_advantages(rewards, GROUP_SIZE).numpy()))
        rows["reference"].append(_pair(solution.drgrpo_advantages(rewards, GROUP_SIZE).numpy()))
        mine = None
        if problem is None:
            try:
                out = student.call("drgrpo_advantages", rewards, GROUP_SIZE)
                data = getattr(out.value, "data", None)
                mine = _pair(data.reshape(-1)) if data is not None and data.size == GROUP_SIZE else None
            except _STOPS as stop:
                problem = _why(stop)
        rows["student"].append(mine)
    return {"group_size": GROUP_SIZE, **rows, "problem": problem}


def _pair(advantages: np.ndarray) -> list[float]:
    """[the correct response's advantage, the incorrect one's] (correct ones come first)."""
    return [float(advantages[0]), float(advantages[-1])]


def _why(stop: BaseException) -> str:
    why = str(getattr(stop, "message", None) or stop)
    if isinstance(stop, SubmissionTimedOut):
        return f"the plots' calls ran out of their time budget ({why})"
    return why


_SCRIPT = """
const TOKENS = %(tokens)s;
function tokenSeries(pair) {
  const none = [[], []];
  return [pair.grpo[0], pair.grpo[1], (pair.student || none)[0], (pair.student || none)[1],
          pair.reference[0], pair.reference[1]];
}
function updateTokens() {
  const a = TOKENS.lengths[+document.getElementById('length-1').value];
  const b = TOKENS.lengths[+document.getElementById('length-2').value];
  document.getElementById('length-1-value').textContent = a;
  document.getElementById('length-2-value').textContent = b;
  const series = tokenSeries(TOKENS.pairs[a + ',' + b]);
  const names = ['GRPO', 'GRPO', 'your drgrpo_loss', 'your drgrpo_loss', 'reference', 'reference'];
  Plotly.restyle('token-weights', {
    x: series.map(s => s.map((_, i) => i + 1)),
    y: series,
    name: names.map((n, i) => n + ', response ' + (i %% 2 + 1) + ' (' + (i %% 2 ? b : a) + ' tokens)'),
  }, [0, 1, 2, 3, 4, 5]);
}
for (const id of ['length-1', 'length-2']) {
  document.getElementById(id).addEventListener('input', updateTokens);
}
"""


def draw(visuals: dict[str, Any]) -> str:
    """The two pictures' section of the HTML report."""
    tokens, difficulty = visuals["token_weights"], visuals["difficulty"]
    lengths = tokens["lengths"]
    first, second = (lengths.index(n) for n in tokens["default"])
    slider = (
        "<div class='control'><label for='length-{k}'>Response {k}: "
        "<span id='length-{k}-value'>{n}</span> tokens</label> "
        "<input type='range' id='length-{k}' min='0' max='{top}' step='1' value='{i}'></div>"
    )
    parts = [
        "<h2>Token weights</h2>",
        "<p>The gradient weight of each token of two responses with equal advantages (1), at the "
        f"on-policy point, with max_len = {tokens['max_len']}. Under GRPO a token of a long "
        "response weighs less than a token of a short one; under Dr. GRPO every token weighs "
        "1 / (N * max_len), whatever its response's length. Move the lengths:</p>",
        slider.format(k=1, n=lengths[first], top=len(lengths) - 1, i=first),
        slider.format(k=2, n=lengths[second], top=len(lengths) - 1, i=second),
    ]
    if tokens.get("problem"):
        parts.append(f"<p>Your drgrpo_loss could not be drawn: {_e(tokens['problem'])}</p>")
    parts.append(figure_html("token-weights", _token_figure(tokens, lengths[first], lengths[second])))
    parts += [
        "<h2>Difficulty bias</h2>",
        f"<p>The advantage of a correct and of an incorrect response in a group of "
        f"{difficulty['group_size']} with 0/1 rewards, as the fraction of correct responses varies. "
        "GRPO's division by the group's std blows up the advantages of questions that are almost "
        "always right or almost always wrong; Dr. GRPO only centers them.</p>",
    ]
    if difficulty.get("problem"):
        parts.append(f"<p>Your drgrpo_advantages could not be drawn: {_e(difficulty['problem'])}</p>")
    parts.append(figure_html("difficulty-bias", _difficulty_figure(difficulty)))
    data = json.dumps(tokens, allow_nan=False).replace("</", "<\\/")
    parts.append(f"<script>{_SCRIPT % {'tokens': data}}</script>")
    return "\n".join(parts)


def _e(text: Any) -> str:
    return html.escape(str(text))


def _token_figure(tokens: dict[str, Any], a: int, b: int) -> Any:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    pair = tokens["pairs"][f"{a},{b}"]
    mine = pair["student"] or [[], []]
    figure = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        subplot_titles=("GRPO (grpo_reference_loss)", "Dr. GRPO (your drgrpo_loss, reference dotted)"),
    )
    series = [
        (pair["grpo"], "GRPO", 1, "solid"),
        (mine, "your drgrpo_loss", 2, "solid"),
        (pair["reference"], "reference", 2, "dot"),
    ]
    colors = ("#1f77b4", "#ff7f0e")
    for weights, label, column, dash in series:
        for i, row in enumerate(weights):
            figure.add_trace(
                go.Scatter(
                    x=list(range(1, len(row) + 1)),
                    y=row,
                    mode="lines+markers",
                    name=f"{label}, response {i + 1} ({(a, b)[i]} tokens)",
                    line={"color": colors[i], "dash": dash},
                ),
                row=1,
                col=column,
            )
    figure.update_xaxes(title_text="token position", range=[0, tokens["max_len"] + 1])
    figure.update_yaxes(title_text="gradient weight per token", row=1, col=1)
    figure.update_layout(margin={"t": 40}, legend={"orientation": "h", "y": -0.2})
    return figure


def _difficulty_figure(difficulty: dict[str, Any]) -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    x = difficulty["fraction"]
    sources = [("grpo", "GRPO (std-scaled)", "solid"), ("student", "your drgrpo_advantages", "solid")]
    sources.append(("reference", "Dr. GRPO reference", "dot"))
    for key, label, dash in sources:
        for index, which, color in ((0, "correct", "#2a8a3a"), (1, "incorrect", "#c0392b")):
            y = [None if row is None else row[index] for row in difficulty[key]]
            width = 3 if key == "grpo" else 2
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="lines+markers",
                    name=f"{label}: {which} response",
                    line={"color": color, "dash": dash if key != "grpo" else "dash", "width": width},
                    opacity=0.6 if key == "grpo" else 1.0,
                )
            )
    figure.update_xaxes(title_text="fraction of correct responses in the group")
    figure.update_yaxes(title_text="advantage")
    figure.update_layout(margin={"t": 20}, legend={"orientation": "h", "y": -0.2})
    return figure
