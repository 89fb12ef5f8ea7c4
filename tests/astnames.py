"""What a source file imports and names, read from its syntax tree (the house tests: which
module may import which, tests/test_structure.py, tests/test_house.py,
tests/transport/test_channels.py)."""

from __future__ import annotations

import ast
from pathlib import Path


def imports(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in the file (TYPE_CHECKING blocks and functions
    too), and each name imported from a module as `module.name` (`from engine import flow`
    imports engine.flow)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def names(path: Path) -> set[str]:
    """What `path` imports (`imports`, and each imported name alone) and every name and
    attribute it uses."""
    found = imports(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found
