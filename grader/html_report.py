"""``--format html``: the report as one self-contained page, readable offline.

The summary, a card per check (status, the property in words, the counterexample as small
tables, the diagnosis, the reproduction snippet), and the exercise's two pictures drawn with
Plotly from ``Report.visuals`` (the student's own functions beside the reference). Plotly's
JavaScript is inlined, the data embedded, and the length control switches between precomputed
token weights: the page needs no network and no server.
"""

from __future__ import annotations

import html
import json
from typing import Any

from grader.notes import LOCKED
from grader.render import summary_line
from grader.report import CheckResult, Report
from grader.visibility import for_students

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222; }
.summary { font-size: 1.2rem; margin-bottom: 1rem; }
.card { border: 1px solid #ccc; border-left: 6px solid #999; border-radius: 4px;
        padding: .6rem 1rem; margin: .7rem 0; }
.card.passed { border-left-color: #2a8a3a; } .card.failed { border-left-color: #c0392b; }
.card.error, .card.timeout { border-left-color: #d68910; } .card.skipped { border-left-color: #888; }
.status { font-weight: bold; margin-right: .6rem; } .points { float: right; color: #555; }
.diagnosis { background: #fdf2e9; border-radius: 4px; padding: .5rem .8rem; margin: .5rem 0; }
table { border-collapse: collapse; margin: .2rem 0 .6rem; font-family: monospace; }
td, th { border: 1px solid #ddd; padding: 1px 6px; text-align: right; }
th { background: #f4f4f4; text-align: left; }
pre { background: #f6f6f6; padding: .6rem; overflow-x: auto; }
.notes { background: #eef7ee; padding: .8rem 1rem; border-radius: 4px; white-space: pre-wrap; }
.locked { background: #f4f4f4; padding: .8rem 1rem; border-radius: 4px; }
.control { margin: .3rem 0; } .control input { width: 20rem; vertical-align: middle; }
"""

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


def render_html(report: Report) -> str:
    """The whole page. Plotly is imported only here: other formats do not need it."""
    from plotly.offline import get_plotlyjs

    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>drgrpo-grader: {_e(report.submission)}</title><style>{_STYLE}</style>",
        f"<script>{get_plotlyjs()}</script></head><body>",
        f"<h1>Dr. GRPO exercise: {_e(report.submission)}</h1>",
        f"<p class='summary'><b>{report.score:g} / {report.max_score:g} points</b> ({_e(counts)})</p>",
    ]
    if report.internal_error:
        parts.append(
            f"<p>The grader itself failed (this is not your fault):</p><pre>{_e(report.internal_error)}</pre>"
        )
    if report.load_error:
        parts.append(
            f"<p>Your file could not be loaded:</p><pre>{_e(json.dumps(report.load_error, indent=1))}</pre>"
        )
    if report.solved and report.notes:
        parts.append(f"<h2>Solved</h2><div class='notes'>{_e(report.notes)}</div>")
    else:
        parts.append(f"<p class='locked'>{_e(LOCKED)}</p>")
    parts.append("<h2>Checks</h2>")
    parts += [_card(for_students(result)) for result in report.checks]
    if report.visuals:
        parts.append(_pictures(report.visuals))
    if report.submission_output.strip():
        parts.append(f"<h2>What your code printed</h2><pre>{_e(report.submission_output)}</pre>")
    parts.append(f"<p><small>{_e(summary_line(report))}</small></p></body></html>")
    return "\n".join(parts) + "\n"


def _e(text: Any) -> str:
    return html.escape(str(text))


def _card(result: CheckResult) -> str:
    lines = [
        f"<div class='card {result.status}' id='check-{result.id}'>",
        f"<span class='points'>{result.score:g} / {result.max_score:g}</span>",
        f"<span class='status'>{result.status.upper()}</span><code>{_e(result.id)}</code>",
        f"<p>{_e(result.title)}</p>",
    ]
    if result.status != "passed":
        lines.append(f"<p><b>{_e(result.message)}</b></p>")
        if result.hint:
            lines.append(f"<p>Hint: {_e(result.hint)}</p>")
        if result.diagnosis:
            d = result.diagnosis
            lines.append(
                f"<div class='diagnosis'><b>Diagnosis: {_e(d['name'])}.</b> {_e(d['explanation'])}"
                f"<br><b>What to change:</b> {_e(d['fix'])}</div>"
            )
        example = result.counterexample or {}
        if example.get("inputs"):
            lines.append("<details open><summary>Smallest input that shows it</summary>")
            lines.append(_inputs(example["inputs"]))
            for key in ("expected", "actual"):
                if key in example:
                    lines.append(f"<div><b>{key}</b>{_data(example[key])}</div>")
            lines.append("</details>")
        if result.reproduce:
            lines.append(
                "<details><summary>Reproduce it (python -m grader SUBMISSION --reproduce "
                f"{_e(result.id)} prints it)</summary><pre>{_e(result.reproduce)}</pre></details>"
            )
        if result.traceback:
            lines.append(f"<details><summary>Traceback</summary><pre>{_e(result.traceback)}</pre></details>")
    lines.append("</div>")
    return "\n".join(lines)


def _inputs(inputs: dict[str, Any]) -> str:
    scalars = []
    blocks = []
    for name, value in inputs.items():
        if isinstance(value, dict) and "values" in value:
            label = f"{name} ({value.get('dtype')}, shape {tuple(value.get('shape', ()))})"
            blocks.append(f"<div>{_e(label)}{_data(value['values'])}</div>")
        elif isinstance(value, dict):
            blocks.append(f"<div><b>{_e(name)}</b>{_inputs(value)}</div>")
        else:
            scalars.append(f"<tr><th>{_e(name)}</th><td>{_e(json.dumps(value))}</td></tr>")
    table = f"<table>{''.join(scalars)}</table>" if scalars else ""
    return table + "".join(blocks)


def _data(value: Any) -> str:
    """Numbers as a table (a vector as one row, a matrix as rows); anything else as JSON."""
    matrix = isinstance(value, list) and value and all(isinstance(row, list) for row in value)
    if matrix and all(not isinstance(x, (list, dict)) for row in value for x in row):
        rows = "".join("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in row) + "</tr>" for row in value)
        return f"<table>{rows}</table>"
    if isinstance(value, list) and all(not isinstance(x, (list, dict)) for x in value):
        return "<table><tr>" + "".join(f"<td>{_e(x)}</td>" for x in value) + "</tr></table>"
    return f"<pre>{_e(json.dumps(value, indent=1))}</pre>"


def _pictures(visuals: dict[str, Any]) -> str:
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
    parts.append(_figure("token-weights", _token_figure(tokens, lengths[first], lengths[second])))
    parts += [
        "<h2>Difficulty bias</h2>",
        f"<p>The advantage of a correct and of an incorrect response in a group of "
        f"{difficulty['group_size']} with 0/1 rewards, as the fraction of correct responses varies. "
        "GRPO's division by the group's std blows up the advantages of questions that are almost "
        "always right or almost always wrong; Dr. GRPO only centers them.</p>",
    ]
    if difficulty.get("problem"):
        parts.append(f"<p>Your drgrpo_advantages could not be drawn: {_e(difficulty['problem'])}</p>")
    parts.append(_figure("difficulty-bias", _difficulty_figure(difficulty)))
    data = json.dumps(tokens, allow_nan=False).replace("</", "<\\/")
    parts.append(f"<script>{_SCRIPT % {'tokens': data}}</script>")
    return "\n".join(parts)


def _figure(div_id: str, figure: Any) -> str:
    spec = figure.to_json().replace("</", "<\\/")
    return (
        f"<div id='{div_id}' style='height:420px'></div><script>(function() {{ const f = {spec}; "
        f"Plotly.newPlot('{div_id}', f.data, f.layout, {{displaylogo: false, responsive: true}}); }})();"
        "</script>"
    )


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
