"""The shape of the product code, in three counts: imports inside functions, functions longer
than LONG_FUNCTION lines, and "issue N" references in runtime code (git and docs keep history).

    .venv/bin/python -m ops.structure_metrics     # the counts and where they are

tests/core/test_structure.py holds the house to its limits.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("apps", "memoryhub")
LONG_FUNCTION = 80
ISSUE_REFERENCE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


@dataclass
class Shape:
    local_imports: list[str] = field(default_factory=list)  # "path:line"
    long_functions: list[str] = field(default_factory=list)  # "path:name (lines)"
    issue_references: list[str] = field(default_factory=list)  # "path:line"


def product_files(root: Path = ROOT) -> list[Path]:
    """The product's Python files; migrations are Django's, generated and ordered by it."""
    files = (path for folder in PRODUCT for path in sorted((root / folder).rglob("*.py")))
    return [path for path in files if "migrations" not in path.parts]


def measure(root: Path = ROOT) -> Shape:
    shape = Shape()
    for path in product_files(root):
        name = str(path.relative_to(root))
        source = path.read_text()
        local: set[int] = set()  # an import inside nested functions counts once
        for node in ast.walk(ast.parse(source, filename=name)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines = node.end_lineno - node.lineno + 1
            if lines > LONG_FUNCTION:
                shape.long_functions.append(f"{name}:{node.name} ({lines})")
            local.update(
                inner.lineno
                for inner in ast.walk(node)
                if isinstance(inner, ast.Import | ast.ImportFrom)
            )
        shape.local_imports += [f"{name}:{line}" for line in sorted(local)]
        shape.issue_references += [
            f"{name}:{number}"
            for number, text in enumerate(source.splitlines(), 1)
            if ISSUE_REFERENCE.search(text)
        ]
    return shape


def main() -> None:
    shape = measure()
    for title, items in [
        ("function-local imports", shape.local_imports),
        (f"functions over {LONG_FUNCTION} lines", shape.long_functions),
        ('"issue N" references', shape.issue_references),
    ]:
        print(f"{title}: {len(items)}")
        for item in items:
            print(f"  {item}")


if __name__ == "__main__":
    main()
