"""Every report format, by name: what ``--format`` chooses from.

Each renderer is a pure function of the ``Report`` (and of the ``Exercise``, for those that
take one: the text report says whether names come on submission, the HTML page draws the
exercise's pictures). They are named here as ``"module:function"`` and imported when used, so
that the command line knows the names without importing any renderer.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.exercise import Exercise
    from grader.report.model import Report

FORMATS: dict[str, str] = {
    "json": "grader.report.render:render_json",
    "text": "grader.report.render:render_text",
    "html": "grader.report.html:render_html",
    "gradescope": "grader.report.platforms:render_gradescope",
    "prairielearn": "grader.report.platforms:render_prairielearn",
    "junit": "grader.report.platforms:junit",
    "autolab": "grader.report.platforms:render_autolab",
}


def render(name: str, report: Report, exercise: Exercise | None = None) -> str:
    """``report`` in the format called ``name``."""
    module, _, function = FORMATS[name].partition(":")
    renderer = getattr(importlib.import_module(module), function)
    if "exercise" in inspect.signature(renderer).parameters:
        return renderer(report, exercise=exercise)
    return renderer(report)
