"""The package layout: flows → stages → edges, with no import cycle, each package saying what it owns."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ci_autofix"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported(tree: ast.AST, module: str) -> set[str]:
    """Every ci_autofix module `module` imports, anywhere in its code (function bodies included),
    except under `if TYPE_CHECKING:`; importing a submodule imports its packages too."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking_only(node):
            continue
        stack.extend(ast.iter_child_nodes(node))
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                for a in node.names
            ]
        for target in targets:
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                name = ".".join(parts[:end])
                if name in MODULES and not module.startswith(name + ".") and name != module:
                    found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    return {
        name: _imported(ast.parse(path.read_text(encoding="utf-8")), name) for name, path in MODULES.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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


def test_no_module_imports_itself_back() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = _graph()
    graph["ci_autofix.git"] = {*graph["ci_autofix.git"], "ci_autofix.flows.propose"}
    assert any("ci_autofix.git" in cycle for cycle in _cycles(graph))


# Edges never import stages or flows; stages never import flows or the command line.
EDGES = (
    "ci_autofix.git",
    "ci_autofix.shell",
    "ci_autofix.sandbox",
    "ci_autofix.reap",
    "ci_autofix.paths",
    "ci_autofix.runner",
    "ci_autofix.redact",
    "ci_autofix.markdown",
    "ci_autofix.errors",
    "ci_autofix.outcome",
    "ci_autofix.github",
)
STAGES = (
    "ci_autofix.triage",
    "ci_autofix.ladder",
    "ci_autofix.deliver",
    "ci_autofix.state",
    "ci_autofix.policy",
)
ABOVE_EDGES = ("ci_autofix.flows", "ci_autofix.cli", *STAGES, "ci_autofix.agent", "ci_autofix.fixers")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


@pytest.mark.parametrize(
    ("lower", "upper"), [(EDGES, ABOVE_EDGES), (STAGES, ("ci_autofix.flows", "ci_autofix.cli"))]
)
def test_imports_point_down_the_layers(lower: tuple[str, ...], upper: tuple[str, ...]) -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if _within(module, lower)
        for target in targets
        if _within(target, upper)
    )
    assert wrong == []


@pytest.mark.parametrize("package", sorted(n for n, p in MODULES.items() if p.name == "__init__.py"))
def test_each_package_says_what_it_owns(package: str) -> None:
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8")))
    assert doc, f"{package} has no docstring"
    assert 1 <= len(doc.split("\n\n")[0].splitlines()) <= 2, (
        f"{package}'s first paragraph is not one or two lines"
    )


def test_the_top_level_holds_only_edges_and_glue() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert top == [
        "clients",
        "errors",
        "git",
        "markdown",
        "outcome",
        "paths",
        "reap",
        "redact",
        "runner",
        "sandbox",
        "secret_env",
        "settings",
        "shell",
    ]
