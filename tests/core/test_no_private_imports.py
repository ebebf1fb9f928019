"""No module of the product reaches into another's private names: neither `from x import _name`
nor `module._name` on an imported module. A name with a leading underscore may change without
notice; what another module needs is made public where it lives. Dunder names (__version__)
are public. Only the product's own modules count: another library's underscores are its to
document (sys._current_frames is). An import-linter contract cannot see names, only modules,
hence this walk.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ops.structure_metrics import ROOT, product_files

# Known cases, each "path: module.name", until they are made public. Empty it, never add to it.
ALLOWED: set[str] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a `from ... import` names, relative imports resolved against `module`."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imported_modules(tree: ast.Module, module: str, is_package: bool, known: set[str]):
    """Name bound in this file -> the module it is, for every import that binds a module."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an expression such as `apps.memories.browse` or `browse` names, if any."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = _dotted(node.value, bound)
        return f"{parent}.{node.attr}" if parent else None
    return None


def private_reaches(root: Path = ROOT) -> list[str]:
    """Every cross-module private name, as "path: module.name"."""
    files = product_files(root)
    known = {_module_name(path, root) for path in files}
    found = []
    for path in files:
        module, is_package = _module_name(path, root), path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        bound = _imported_modules(tree, module, is_package, known)
        where = str(path.relative_to(root))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(node, module, is_package)
                found += [
                    f"{where}: {source}.{alias.name}"
                    for alias in node.names
                    if _private(alias.name) and source in known and source != module
                ]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                owner = _dotted(node.value, bound)
                if owner in known and owner != module:
                    found.append(f"{where}: {owner}.{node.attr}")
    return sorted(set(found))


def test_no_module_reaches_into_another_modules_private_names():
    found = private_reaches()
    assert [f for f in found if f not in ALLOWED] == []


def test_the_allowed_cases_still_exist():
    """An allowed case that is gone leaves the list: it only shrinks."""
    assert ALLOWED - set(private_reaches()) == set()


def test_the_walk_sees_both_ways_in(tmp_path):
    package = tmp_path / "apps" / "shop"
    package.mkdir(parents=True)
    (tmp_path / "memoryhub").mkdir()
    (tmp_path / "apps" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "stock.py").write_text("_count = 1\n__all__ = []\n\ndef _own():\n    return _own\n")
    (package / "orders.py").write_text(
        "import apps.shop.stock\n"
        "from . import stock\n"
        "from .stock import _count, __all__\n"
        "import sys\n"
        "from django.db import connection\n\n"
        "def total():\n"
        "    return stock._own(), apps.shop.stock._count, connection._private, stock.__all__\n"
        "    sys._getframe()\n"
    )
    assert private_reaches(tmp_path) == [
        "apps/shop/orders.py: apps.shop.stock._count",
        "apps/shop/orders.py: apps.shop.stock._own",
    ]
