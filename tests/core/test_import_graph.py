"""The apps depend on each other in one direction only: no import circle between apps.

Every import counts, at module level or inside a function: a function-local import defers the
loading but the module still needs the other app to work, and the circle this test guards
against (memories services -> jobs -> memories services) ran through function-local imports.
Only imports under `if TYPE_CHECKING:` are left out (they never run). Migrations are left out
too: Django orders them by their declared dependencies, not by imports.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

APPS = Path(__file__).resolve().parents[2] / "apps"

# Dependencies known to close a circle, each with its reason and the way out. Any other circle
# fails; an allowance that is no longer needed fails too, so it is removed once fixed.
ALLOWED_EDGES: dict[tuple[str, str], str] = {}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_modules(path: Path, module: str) -> list[str]:
    """Absolute names of the modules `path` imports (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.append(".".join(base + ([node.module] if node.module else [])))
            else:
                found.append(node.module or "")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return found


def app_dependencies() -> dict[str, dict[str, list[str]]]:
    """{app: {other app: [files of app that import it]}}."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(APPS.rglob("*.py")):
        relative = path.relative_to(APPS.parent)
        if "migrations" in relative.parts:
            continue
        app = relative.parts[1]
        module = ".".join(relative.with_suffix("").parts)
        for name in _imported_modules(path, module):
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "apps" and parts[1] != app:
                graph[app][parts[1]].append(str(relative))
    return graph


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(app: str) -> list[str] | None:
        state[app] = "open"
        stack.append(app)
        for other in sorted(graph.get(app, {})):
            if state.get(other) == "open":
                return stack[stack.index(other) :] + [other]
            if other not in state and (cycle := visit(other)):
                return cycle
        stack.pop()
        state[app] = "done"
        return None

    for app in sorted(graph):
        if app not in state and (cycle := visit(app)):
            return cycle
    return None


def test_no_import_cycle_between_apps():
    graph = app_dependencies()
    for source, target in ALLOWED_EDGES:
        assert graph.get(source, {}).pop(target, None), f"{source} -> {target} is gone: drop it"
    cycle = find_cycle(graph)
    if cycle:
        steps = [
            f"{a} -> {b} (e.g. {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:], strict=False)
        ]
        raise AssertionError("Import cycle between apps:\n" + "\n".join(steps))


def test_core_and_jobs_are_infrastructure():
    """The bottom rooms import no domain app: domain apps register into them instead."""
    graph = app_dependencies()
    assert dict(graph.get("core", {})) == {}, (
        "apps.core imports a domain app; register into a core seam instead "
        "(apps.core.health, apps.core.permissions)"
    )
    assert set(graph.get("jobs", {})) <= {"core"}, (
        "apps.jobs imports a domain app; keep the job body in the app it serves and register it "
        "from that app's ready() with apps.jobs.services.register_job"
    )


def test_the_checker_sees_a_cycle_and_function_local_imports(tmp_path):
    module = tmp_path / "a.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from apps.x import skipped\n"
        "def f():\n    from apps.b import late\n"
        "from .sibling import near\n"
    )
    assert _imported_modules(module, "apps.a.mod") == ["typing", "apps.b", "apps.a.sibling"]
    assert find_cycle({"a": {"b": ["f"]}, "b": {"c": ["g"]}, "c": {"a": ["h"]}}) == [
        "a",
        "b",
        "c",
        "a",
    ]
    assert find_cycle({"a": {"b": ["f"]}, "b": {}}) is None
