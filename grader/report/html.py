"""``--format html``: the report as one self-contained page, readable offline.

The summary, a card per check (status, the property in words, the counterexample as small
tables, the diagnosis, the reproduction snippet), and the exercise's pictures, drawn from
``Report.visuals`` by the exercise (``Exercise.pictures``). Plotly's JavaScript is inlined and the
data embedded: the page needs no network and no server.
"""

from __future__ import annotations

import html
import json
from typing import Any

from grader.exercise import Exercise, resolve
from grader.report.model import CheckResult, Report
from grader.report.notes import LOCKED
from grader.report.render import summary_line
from grader.report.visibility import for_students

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


def render_html(report: Report, exercise: Exercise | None = None) -> str:
    """The whole page; ``exercise`` (None: unknown) titles it and draws its pictures. Plotly is
    imported only here: other formats do not need it."""
    from plotly.offline import get_plotlyjs

    heading = f"{exercise.title} exercise" if exercise is not None else "Grading report"
    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>drgrpo-grader: {_e(report.submission)}</title><style>{_STYLE}</style>",
        f"<script>{get_plotlyjs()}</script></head><body>",
        f"<h1>{_e(heading)}: {_e(report.submission)}</h1>",
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
    if report.visuals and exercise is not None and exercise.pictures is not None:
        parts.append(resolve(exercise.pictures.draw)(report.visuals))
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


def figure_html(div_id: str, figure: Any) -> str:
    """A Plotly figure as a div and the script that draws it (Plotly's script is in the page's head)."""
    spec = figure.to_json().replace("</", "<\\/")
    return (
        f"<div id='{div_id}' style='height:420px'></div><script>(function() {{ const f = {spec}; "
        f"Plotly.newPlot('{div_id}', f.data, f.layout, {{displaylogo: false, responsive: true}}); }})();"
        "</script>"
    )
