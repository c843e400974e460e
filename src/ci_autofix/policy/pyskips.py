"""Python skips found by meaning: names resolved through imports, aliases, `getattr` and bindings.

`skips(source)` parses a whole module with `ast` and returns the line of every expression that
denotes a skip or xfail (`pytest.skip`, `pytest.mark.skip/skipif/xfail`, `pytest.importorskip`,
`unittest.skip*`, `unittest.SkipTest`, `self.skipTest`), however it is spelt: `from pytest import
mark as m; @m.skip`, `pt = pytest; pt.skip()`, `getattr(pytest.mark, "sk" + "ip")`, `later =
pytest.mark.xfail`. A `getattr` on pytest, `pytest.mark` or unittest whose name is not a constant
counts as a skip: nothing honest needs it. None when the module does not parse.
"""

from __future__ import annotations

import ast

_SKIPS = frozenset(
    {
        "pytest.skip",
        "pytest.xfail",
        "pytest.importorskip",
        "pytest.mark.skip",
        "pytest.mark.skipif",
        "pytest.mark.xfail",
        "unittest.skip",
        "unittest.skipIf",
        "unittest.skipUnless",
        "unittest.expectedFailure",
        "unittest.SkipTest",
        "unittest.case.SkipTest",
        "self.skipTest",
        "_pytest.outcomes.skip",
        "_pytest.outcomes.xfail",
    }
)
_MODULES = ("pytest", "unittest", "_pytest")
_DYNAMIC = "<dynamic>"


def skips(source: str) -> list[int] | None:
    """The lines of the skip expressions in `source`, one per expression (see the module docstring)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _MODULES:
                    names[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in _MODULES:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for _ in range(3):  # bindings of bindings: `m = pytest.mark; later = m.skip`
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                resolved = _resolve(node.value, names)
                if resolved and (
                    resolved in _SKIPS or resolved == _DYNAMIC or resolved.split(".")[0] in _MODULES
                ):
                    names[node.targets[0].id] = resolved
    lines: list[int] = []
    _collect(tree, names, lines)
    return lines


def _collect(node: ast.AST, names: dict[str, str], lines: list[int]) -> None:
    if isinstance(node, ast.expr):
        resolved = _resolve(node, names)
        if resolved is not None and (resolved in _SKIPS or resolved == _DYNAMIC or _is_skip_member(resolved)):
            lines.append(node.lineno)
            return  # one expression, one skip: `pytest.mark.skip(reason=...)` is not two
    for child in ast.iter_child_nodes(node):
        _collect(child, names, lines)


def _is_skip_member(resolved: str) -> bool:
    return any(resolved.startswith(skip + ".") for skip in _SKIPS)


def _resolve(node: ast.AST, names: dict[str, str]) -> str | None:
    """The dotted name an expression denotes, or None when it is not a pytest/unittest name."""
    if isinstance(node, ast.Name):
        if node.id == "self":
            return "self"
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, names)
        return None if base is None or base == _DYNAMIC else f"{base}.{node.attr}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and node.args
    ):
        return _getattr(node, _resolve(node.args[0], names))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("__getattr__", "__getattribute__")
    ):
        return _getattr(node, _resolve(node.func.value, names), first=0)
    if isinstance(node, ast.Call):
        base = _resolve(node.func, names)
        # a call of a skip marker (`pytest.mark.skip(reason=...)`) is still that marker
        return base if base in _SKIPS or base == _DYNAMIC else None
    return None


def _getattr(node: ast.Call, base: str | None, first: int = 1) -> str | None:
    if base is None or base == _DYNAMIC or len(node.args) <= first:
        return None
    name = node.args[first]
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return f"{base}.{name.value}"
    return _DYNAMIC if base.split(".")[0] in _MODULES else None
