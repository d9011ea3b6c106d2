"""The grader's packages are layers: each module imports only from its own layer and those below
it, no module reaches itself back through others (no import cycle), and nothing in the engine
names the exercise it grades (``grader.exercise.Exercise`` carries all of that).

Read from the source (``ast``), every import counts, those inside functions too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

from helpers import ROOT

from properties.exercise import EXERCISE

GRADER = ROOT / "grader"

# Lowest first. A top-level module of grader/ not named here is a command or a public entry
# point (api, authoring, cli, batch, audit, ...): the top layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("grader.errors", "grader.exercise"),  # the root of the errors; the exercise, described once
    ("grader.sandbox",),  # worker processes and the wire: nothing of the grader but its errors
    ("grader.compare",),  # the values a worker sends back, their display, the tolerance rule
    ("grader.declare",),  # the check decorator, rubrics, instructors' properties files
    ("grader.report",),  # the report's model and its renderers
    ("grader.engine",),  # calling the submission, drawing inputs, running the checks
    ("grader.feedback",),  # diagnosis, replays, snippets
    ("grader",),  # the commands and the public entry points
)

# Imports inside a function, each for a reason that was measured or that the release imposes.
DEFERRED = {
    "grader.cli": "the zygote starts before the grader imports torch (benchmarks/cold_grade.py)",
    "grader.audit": "the zygote starts first, as in the CLI",
    "grader.batch": "the zygote starts first, as in the CLI",
    "grader.autograders": "the zygote starts first, as in the CLI",
    "grader.bundle": "building the zip needs torch only to check a --rubric",
    "grader.release": "building the release needs torch only to check a --rubric",
    "grader.feedback.explain": "diagnosis is staff only: the student release does not ship it",
    "grader.sandbox.zygote": "the worker module imports torch; the grader imports the zygote's module early",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(), str(p)) for p in sorted(GRADER.rglob("*.py"))}


def _imported(node: ast.Import | ast.ImportFrom, known: Iterable[str]) -> set[str]:
    """The grader modules an import statement loads (``from grader.x import y``: ``grader.x.y``
    when that is a module, else ``grader.x``)."""
    known = set(known)
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = node.module or ""
    found = {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known}
    if base in known and len(found) < len(node.names):
        found.add(base)
    return found


def import_graph(trees: Mapping[str, ast.Module]) -> dict[str, set[str]]:
    """Module -> the grader modules it imports, anywhere in it."""
    graph: dict[str, set[str]] = {}
    for name, tree in trees.items():
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _imported(node, trees)
        graph[name] = edges - {name}
    return graph


def deferred_imports(trees: Mapping[str, ast.Module]) -> dict[str, set[str]]:
    """Module -> the grader modules it imports inside a function."""
    found: dict[str, set[str]] = {}
    for name, tree in trees.items():
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and (inner := _imported(node, trees)):
                        found.setdefault(name, set()).update(inner)
    return found


def layer(module: str) -> int:
    """The index in ``LAYERS`` of the longest prefix that names the module."""
    best, length = len(LAYERS) - 1, 0
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def upward(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import of a module from a higher layer, as ``a -> b``."""
    return sorted(f"{a} -> {b}" for a, edges in graph.items() for b in edges if layer(b) > layer(a))


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_import_points_down_the_layers():
    assert upward(import_graph(sources())) == []


def test_no_module_imports_itself_back():
    assert cycles(import_graph(sources())) == []


def test_the_checks_fail_on_a_cycle_and_on_an_upward_import():
    graph = import_graph(sources())
    graph["grader.sandbox.wire"] = graph["grader.sandbox.wire"] | {"grader.engine.runner"}
    assert "grader.sandbox.wire -> grader.engine.runner" in upward(graph)
    assert any("grader.sandbox.wire" in component for component in cycles(graph))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_sandbox_imports_nothing_of_the_grader_but_its_errors():
    graph = import_graph(sources())
    outside = {b for a, edges in graph.items() if a.startswith("grader.sandbox") for b in edges}
    assert {b for b in outside if not b.startswith("grader.sandbox")} <= {"grader.errors"}


def test_imports_inside_functions_each_have_a_reason():
    assert set(deferred_imports(sources())) <= set(DEFERRED)


def exercise_mentions(trees: Mapping[str, ast.Module]) -> list[str]:
    """Where the modules import one of the exercise's packages, or name one of its functions or
    their parameters (as a name, an attribute, an argument, or in a string)."""
    names = set(EXERCISE.functions) | {p for ps in EXERCISE.functions.values() for p in ps}
    found = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            else:
                imported = []
            found += [f"{module} imports {m}" for m in imported if m.split(".")[0] in EXERCISE.packages]
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [f"{module} says {word!r}" for word in EXERCISE.functions if word in node.value]
            word = getattr(node, "id", None) or getattr(node, "arg", None) or getattr(node, "attr", None)
            if isinstance(node, (ast.Name, ast.arg, ast.Attribute)) and word in names:
                found.append(f"{module} names {word!r}")
    return found


def test_the_engine_names_nothing_of_the_exercise():
    """Its functions, parameters and packages are the exercise's to say: ``grader.exercise``
    names only the default exercise's address (``DEFAULT``, a string)."""
    assert exercise_mentions(sources()) == []
    leaky = ast.parse("from properties.common import LOSS\nstudent.call('drgrpo_loss', logp, mask=mask)\n")
    assert exercise_mentions({"grader.leaky": leaky}) == [
        "grader.leaky imports properties.common",
        "grader.leaky says 'drgrpo_loss'",
        "grader.leaky names 'logp'",
        "grader.leaky names 'mask'",
    ]
