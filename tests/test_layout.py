"""The package layout: flows → stages → edges, with no import cycle, each package saying what it owns."""

from __future__ import annotations

import ast
from functools import cache
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


@cache
def _parsed() -> dict[str, frozenset[str]]:
    """Each module's imports, parsed once per test session (the tests plant into copies)."""
    return {
        name: frozenset(_imported(ast.parse(path.read_text(encoding="utf-8")), name))
        for name, path in MODULES.items()
    }


def _graph() -> dict[str, set[str]]:
    return {name: set(imports) for name, imports in _parsed().items()}


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


def _rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports between rooms: a subpackage (`ci_autofix.fixers`) or a module at the top."""

    def room(name: str) -> str:
        return ".".join(name.split(".")[:2])

    rooms: dict[str, set[str]] = {}
    for name, imports in graph.items():
        rooms.setdefault(room(name), set()).update(room(i) for i in imports if room(i) != room(name))
    return rooms


def test_no_two_rooms_import_each_other() -> None:
    # modules can avoid a circle while their packages form one (fixers -> workflow.versions while
    # workflow.replay -> fixers.catalog): then neither package can be read, or moved, without the other
    assert _cycles(_rooms(_graph())) == []


def test_the_room_check_finds_two_rooms_that_import_each_other() -> None:
    graph = _graph()
    graph["ci_autofix.tooling.versions"] = {
        *graph["ci_autofix.tooling.versions"],
        "ci_autofix.fixers.catalog",
    }
    assert _cycles(graph) == []  # no module circle: only the rooms import each other
    assert any({"ci_autofix.fixers", "ci_autofix.tooling"} <= set(cycle) for cycle in _cycles(_rooms(graph)))


# The layers, bottom to top: every module of the package is on exactly one. Edges (the outside world
# behind one module each, and the shared types) never import a stage, a flow or the command line;
# stages never import a flow or the command line; flows never import the command line.
EDGES = (
    "ci_autofix.errors",
    "ci_autofix.git",
    "ci_autofix.github",
    "ci_autofix.markdown",
    "ci_autofix.outcome",
    "ci_autofix.paths",
    "ci_autofix.reap",
    "ci_autofix.redact",
    "ci_autofix.refs",
    "ci_autofix.runner",
    "ci_autofix.sandbox",
    "ci_autofix.secret_env",
    "ci_autofix.settings",
    "ci_autofix.shell",
)
STAGES = (
    "ci_autofix.agent",
    "ci_autofix.deliver",
    "ci_autofix.fixers",
    "ci_autofix.ladder",
    "ci_autofix.policy",
    "ci_autofix.state",
    "ci_autofix.toolchains",
    "ci_autofix.tooling",
    "ci_autofix.triage",
    "ci_autofix.workflow",
)
FLOWS = ("ci_autofix.flows",)
CLI = ("ci_autofix.cli", "ci_autofix.__main__")
LAYERS = (EDGES, STAGES, FLOWS, CLI)
# The flows proper: none imports another (what two flows share lives in a stage, or in the flows'
# shared modules: event, dispatch, access, ended, clients); each flow and its helper modules may
# import its own helper modules.
FLOW_ENTRIES = {
    "ci_autofix.flows.propose": (
        "ci_autofix.flows.attempt",
        "ci_autofix.flows.lineage",
        "ci_autofix.flows.stops",
    ),
    "ci_autofix.flows.apply": ("ci_autofix.flows.apply_checks",),
    "ci_autofix.flows.review": (
        "ci_autofix.flows.cycle",
        "ci_autofix.flows.review_event",
        "ci_autofix.flows.review_head",
    ),
    "ci_autofix.flows.local": (),
}


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _layer(module: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if _within(module, layer)), None)


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import that runs up the layers (or from a module on no layer)."""
    wrong = []
    for module, targets in graph.items():
        here = _layer(module)
        if here is None and module != "ci_autofix":
            wrong.append(f"{module} is on no layer")
            continue
        for target in targets:
            there = _layer(target)
            if here is not None and there is not None and there > here:
                wrong.append(f"{module} imports {target}, a layer above it")
    return sorted(wrong)


def _flow_to_flow(graph: dict[str, set[str]]) -> list[str]:
    own = {helper: flow for flow, helpers in FLOW_ENTRIES.items() for helper in helpers}
    wrong = []
    for module, targets in graph.items():
        if not module.startswith("ci_autofix.flows."):
            continue
        mine = own.get(module, module)  # the flow a module belongs to (a flow belongs to itself)
        for target in targets:
            if target in FLOW_ENTRIES or (target in own and own[target] != mine):
                wrong.append(f"{module} imports {target}, another flow's module")
    return sorted(wrong)


def test_every_import_points_down_the_layers() -> None:
    assert _upward(_graph()) == []


def test_no_flow_imports_another_flow() -> None:
    assert _flow_to_flow(_graph()) == []


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("ci_autofix.git", "ci_autofix.ladder.run"),  # an edge importing a stage
        ("ci_autofix.settings", "ci_autofix.agent.llm"),  # the settings importing the model client
        ("ci_autofix.workflow.definition", "ci_autofix.flows.propose"),  # a stage importing a flow
        ("ci_autofix.flows.ended", "ci_autofix.cli.fix"),  # a flow module importing the command line
    ],
)
def test_the_layer_check_finds_a_planted_upward_import(module: str, target: str) -> None:
    graph = _graph()
    graph[module] = {*graph[module], target}
    assert f"{module} imports {target}, a layer above it" in _upward(graph)


def test_the_layer_check_finds_a_module_on_no_layer() -> None:
    graph = {**_graph(), "ci_autofix.stray": {"ci_autofix.git"}}
    assert "ci_autofix.stray is on no layer" in _upward(graph)


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("ci_autofix.flows.review", "ci_autofix.flows.propose"),
        ("ci_autofix.flows.propose", "ci_autofix.flows.apply_checks"),  # apply's own helper
        ("ci_autofix.flows.dispatch", "ci_autofix.flows.local"),
        ("ci_autofix.flows.review", "ci_autofix.flows.stops"),  # propose's own helper
        ("ci_autofix.flows.lineage", "ci_autofix.flows.apply_checks"),  # a helper importing another flow's
        ("ci_autofix.flows.stops", "ci_autofix.flows.propose"),  # a helper importing a flow
    ],
)
def test_the_flow_check_finds_a_planted_flow_import(module: str, target: str) -> None:
    graph = _graph()
    graph[module] = {*graph[module], target}
    assert f"{module} imports {target}, another flow's module" in _flow_to_flow(graph)


def test_a_flows_own_modules_may_import_each_other() -> None:
    graph = _graph()
    for module, target in [
        ("ci_autofix.flows.stops", "ci_autofix.flows.lineage"),  # propose's helpers
        ("ci_autofix.flows.review_head", "ci_autofix.flows.cycle"),  # review's
        ("ci_autofix.flows.apply", "ci_autofix.flows.apply_checks"),  # a flow and its helper
    ]:
        graph[module] = {*graph[module], target}
    assert _flow_to_flow(graph) == []


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
        "errors",
        "git",
        "markdown",
        "outcome",
        "paths",
        "reap",
        "redact",
        "refs",
        "runner",
        "sandbox",
        "secret_env",
        "settings",
        "shell",
    ]
