"""Test infrastructure: what decides which tests run and what their results mean.

Any change to it is flagged (`test-infra-changed`): conftest files, pytest/tox/nox configuration,
jest/vitest/mocha configuration, the test scripts of package.json, the test targets of a
Makefile, build constraints of test files. Blocked where the intent is unambiguous:
- `collection-hook-added`: a Python hook or setting that drops tests from collection or rewrites
  their outcome (`collect_ignore`, `pytest_collection_modifyitems`, `pytest_runtest_makereport`, ...);
- `test-selection-narrowed`: options that select fewer tests (`-k`, `-m`, `--deselect`, `--ignore`,
  a new `testpaths`/`python_files`, jest `testPathIgnorePatterns`, a Go build tag or a Rust `cfg`
  that compiles a test file out);
- `test-command-neutered`: a test command whose failure no longer fails (`|| true`, a Makefile `-`
  recipe, nox `success_codes`, tox `ignore_outcome`, Maven `testFailureIgnore`, Gradle `ignoreFailures`);
- `import-hook-file` and `git-filter-attribute`: files that make Python or git run code implicitly
  (`sitecustomize.py`, `usercustomize.py`, `*.pth`; `filter=`/`diff=`/`merge=` in `.gitattributes`).

Configuration sections (`[tool.pytest.ini_options]`, `[testenv]`, `"scripts"`) are known from the
whole file when it is given, else from the lines a hunk shows and git's hunk headers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language, is_test_path
from ci_autofix.policy.table import finding

_HOOKS = re.compile(
    r"^\s*collect_ignore(?:_glob)?\s*(?:\+?=|\.\s*(?:append|extend|insert)\s*\()"
    r"|\bdef\s+pytest_(?:collection_modifyitems|ignore_collect|collect_file|pycollect_makeitem|collection|"
    r"runtest_makereport|report_teststatus|runtest_logreport|runtest_protocol|runtest_call|pyfunc_call|"
    r"sessionfinish|deselected|make_collect_report|collectreport|runtestloop)\b"
    r"|\.\s*outcome\s*=|\bsession\s*\.\s*exitstatus\s*=|\bconfig\s*\.\s*hook\s*\.\s*pytest_deselected\b"
)
_SELECT_OPTIONS = re.compile(
    r"(?:^|\s|[\"'\[,])(?:-k|-m|--deselect|--ignore|--ignore-glob|--lf|--last-failed|--sw|--stepwise|--co|"
    r"--collect-only|--testNamePattern|-t|--testPathIgnorePatterns|--run|-run|-skip|--skip|--exclude|--passWithNoTests)"
    r"(?:[=\s\"']|$)|(?:^|\s)-p\s*no:"
)
_SELECTION_KEYS = re.compile(
    r"""^\s*["']?(?:testpaths|python_files|python_classes|python_functions|norecursedirs|collect_ignore|"""
    r"""exclude|spec|ignore|grep|invert)["']?\s*[:=]"""
    r"""|\b["']?(?:testPathIgnorePatterns|modulePathIgnorePatterns|testMatch|testRegex|roots|testNamePattern|"""
    r"""passWithNoTests)["']?\s*:"""
)
_PYTEST_KEYS = re.compile(
    r"""^\s*["']?(?:addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|markers|"""
    r"""filterwarnings|xfail_strict|required_plugins|pythonpath|minversion|usefixtures|asyncio_mode|timeout|"""
    r"""empty_parameter_set_mark|log_cli\w*|junit_\w+|doctest_\w+)["']?\s*="""
)
_NEUTER = re.compile(
    r"\|\|\s*(?:true|:|exit\s+0|echo\b)|;\s*(?:true|exit\s+0)\s*[\"',]*$|\bexit\s+0\s*[\"',]*$|--exit-zero\b"
    r"|\bsuccess_codes\s*=|\bignore_outcome\s*=\s*true|\bignore_errors\s*=\s*true|^\s*commands\s*=\s*-\s"
    r"|<\s*testFailureIgnore\s*>\s*true|<\s*skipTests?\s*>\s*true|\bmaven\.test\.skip\b|-DskipTests\b"
    r"|\bignoreFailures\s*=\s*true|\benabled\s*=\s*false"
    r"|^\t[@+]*-\s*\S"  # a Makefile recipe line whose failure make ignores
)
_RUNNER = re.compile(
    r"\b(?:pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|ava|karma|playwright|cypress|tap|node\s+--test|"
    r"(?:go|cargo|dotnet|swift|mix|deno|bun)\s+test|mvn|mvnw|gradle|gradlew|ctest|phpunit|rspec|rake|"
    r"(?:npm|yarn|pnpm)\s+(?:run\s+)?test|make\s+\S*test)\b"
)
_COMMANDS = re.compile(r"^(?:package\.json|Makefile|GNUmakefile|makefile|.*\.mk|tox\.ini|noxfile\.py)$")
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9_.%/-]+)\s*:(?!=)")
_TEST_TARGET = re.compile(
    r"(?i)^(?:\w*[-_.])?(?:test|tests|check|unit|integration|e2e|spec|ci)(?:[-_.]\w*)?$"
)
_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_TEST_SECTIONS = re.compile(r"^(?:tool\.pytest\b.*|tool:pytest|pytest|testenv\b.*|tox\b.*|tool\.tox\b.*)$")
_JSON_TEST_KEY = re.compile(r"""^\s*"(?:test|tests|pretest|posttest|test:[\w:.-]+|ci|check)"\s*:""")
_JSON_RUNNER_BLOCK = re.compile(r"""^\s*"(?:jest|mocha|ava|vitest|c8|nyc)"\s*:""")
_GO_BUILD = re.compile(r"^\s*//\s*(?:go:build|\+build)\b")
_RUST_CFG_OUT = re.compile(
    r"#\s*!?\s*\[\s*cfg\s*\(\s*(?:any\s*\(\s*\)|false|FALSE|not\s*\(\s*test\s*\)|all\s*\(\s*\)\s*\)\s*\]\s*#|"
    r"all\s*\(.*\bfeature\s*=)"
)
_GIT_ATTRIBUTES = re.compile(r"(?:^|\s)(?:filter|diff|merge)=\S")
_RUNNER_CONFIG = re.compile(
    r"^(?:jest|vitest|vite|karma|playwright|cypress|ava|wdio)\.conf(?:ig)?(?:\.[\w-]+)?\.(?:[cm]?[jt]s|json)$"
    r"|^\.mocharc(?:\.\w+)?$|^jest\.setup\.[cm]?[jt]s$|^setupTests\.[jt]sx?$|^phpunit\.xml(?:\.dist)?$"
)
_ALWAYS_INFRA = frozenset({"conftest.py", "pytest.ini", "tox.ini", "noxfile.py", ".coveragerc"})


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        name = PurePosixPath(file.path).name
        if file.status != "deleted":
            yield from _implicit_code(file, name)
            if file.language is Language.PYTHON:
                yield from _hooks(file)
        changed = _infra_lines(file, name)
        if changed is None:
            continue
        yield finding(
            "test-infra-changed",
            "Test infrastructure changes (what runs, or how results are read): check that no test "
            "stops running or stops failing.",
            file.path,
            changed[0].number if changed else None,
        )
        added = [line for line in changed if line.added]
        removed = [line for line in changed if line.removed]
        yield from _narrowed(file, name, added, removed)
        neutered = next((line for line in added if _NEUTER.search(line.text)), None)
        if neutered is None and _COMMANDS.match(name) and added:
            ran = any(_RUNNER.search(line.text) for line in removed)
            if ran and not any(_RUNNER.search(line.text) for line in added):
                neutered = added[0]
        if neutered is not None:
            yield finding(
                "test-command-neutered",
                "A test command is changed so that a failure no longer fails the run (or it no longer "
                "runs a test runner at all).",
                file.path,
                neutered.number,
            )


def _implicit_code(file: FileDiff, name: str) -> Iterator[Finding]:
    if name in ("sitecustomize.py", "usercustomize.py") or name.endswith(".pth"):
        yield finding(
            "import-hook-file",
            f"{name} runs code whenever Python starts (site imports it, or runs its `import` lines): "
            "a fix has no reason to add or change one.",
            file.path,
        )
    if name == ".gitattributes":
        for line in file.added:
            if _GIT_ATTRIBUTES.search(line.view.code):
                yield finding(
                    "git-filter-attribute",
                    "A filter, diff or merge driver is set in .gitattributes: git would run a command "
                    "configured for it on checkout, diff or merge.",
                    file.path,
                    line.number,
                )
                break


def _hooks(file: FileDiff) -> Iterator[Finding]:
    removed = {" ".join(li.view.code.split()) for li in file.removed}
    for line in file.added:
        if _HOOKS.search(line.view.code) and " ".join(line.view.code.split()) not in removed:
            yield finding(
                "collection-hook-added",
                "A pytest hook or setting that drops tests from collection or rewrites their results "
                "is added.",
                file.path,
                line.number,
            )
            return


def is_test_infrastructure(file: FileDiff) -> bool:
    """The diff of `file` changes test infrastructure (what runs, or how results are read)."""
    return _infra_lines(file, PurePosixPath(file.path).name) is not None


def _infra_lines(file: FileDiff, name: str) -> list[Line] | None:
    """The changed lines that are test infrastructure; None when the file has none."""
    changed = [line for hunk in file.hunks for line in hunk.lines if line.kind != " "]
    if name in _ALWAYS_INFRA or _RUNNER_CONFIG.match(name):
        return changed
    if name in ("pyproject.toml", "setup.cfg"):
        return _in_sections(file, changed) or None
    if name == "package.json":
        return _package_json(file) or None
    if name in ("Makefile", "GNUmakefile", "makefile") or name.endswith(".mk"):
        return _make_targets(file) or None
    if name in ("pom.xml", "build.gradle", "build.gradle.kts"):
        hits = [
            li
            for li in changed
            if re.search(r"surefire|failsafe|\btest\b|testFailureIgnore|skipTests|ignoreFailures", li.text)
        ]
        return hits or None
    if is_test_path(file.path) and file.language is Language.GO:
        return [li for li in changed if _GO_BUILD.match(li.text)] or None
    if is_test_path(file.path) and file.language is Language.RUST:
        return [li for li in changed if _RUST_CFG_OUT.search(li.view.code)] or None
    return None


def _in_sections(file: FileDiff, changed: list[Line]) -> list[Line]:
    sections = _sections_by_line(file)
    result = []
    for hunk in file.hunks:
        current: str | None = None
        for line in hunk.lines:
            match = _SECTION.match(line.text)
            if match:
                current = match.group(1).strip()
            if line.kind == " ":
                continue
            section = current or sections.get((line.kind, line.number))
            if (section and _TEST_SECTIONS.match(section)) or _PYTEST_KEYS.match(line.text):
                result.append(line)
    return result


def _sections_by_line(file: FileDiff) -> dict[tuple[str, int], str]:
    """The section each line of the whole old (`-`) and new (`+`) file is in, when the files are known."""
    found: dict[tuple[str, int], str] = {}
    for kind, text in (("-", file.old_text), ("+", file.new_text)):
        current = ""
        for number, raw in enumerate((text or "").splitlines(), start=1):
            match = _SECTION.match(raw)
            if match:
                current = match.group(1).strip()
            found[(kind, number)] = current
    return found


def _package_json(file: FileDiff) -> list[Line]:
    result = []
    for hunk in file.hunks:
        block = _JSON_RUNNER_BLOCK.search(hunk.section) is not None
        for line in hunk.lines:
            if _JSON_RUNNER_BLOCK.match(line.text):
                block = True
            if line.kind == " ":
                continue
            if block or _JSON_TEST_KEY.match(line.text) or _JSON_RUNNER_BLOCK.match(line.text):
                result.append(line)
            if _SELECTION_KEYS.search(line.text) and line not in result:
                result.append(line)
    return result


def _make_targets(file: FileDiff) -> list[Line]:
    result = []
    for hunk in file.hunks:
        section = _MAKE_TARGET.match(hunk.section.strip())
        target = section.group(1) if section else None
        for line in hunk.lines:
            match = _MAKE_TARGET.match(line.text)
            if match:
                target = match.group(1)
            if line.kind != " " and target and _TEST_TARGET.match(target):
                result.append(line)
    return result


def _narrowed(file: FileDiff, name: str, added: list[Line], removed: list[Line]) -> Iterator[Finding]:
    old_options = {opt for line in removed for opt in _options(line.text)}
    for line in added:
        text = line.text
        if (file.language is Language.GO and _GO_BUILD.match(text)) or _RUST_CFG_OUT.search(line.view.code):
            reason = "a build constraint now compiles this test file out of the default test run"
        elif _SELECTION_KEYS.search(text) and not any(
            _same_key(text, old.text) and _superset(text, old.text) for old in removed
        ):
            reason = "the files, names or paths the runner collects change"
        elif _options(text) - old_options:
            reason = (
                f"options that run fewer tests are added ({', '.join(sorted(_options(text) - old_options))})"
            )
        else:
            continue
        yield finding(
            "test-selection-narrowed",
            f"The test run is narrowed: {reason}.",
            file.path,
            line.number,
        )
        return


_PYTHON_MODULE = re.compile(r"\bpython[\d.]*\s+-m\s+\S+")


def _options(text: str) -> set[str]:
    text = _PYTHON_MODULE.sub(" ", text)  # `python -m pytest`: that -m names a module, not a marker
    return {m.group(0).strip(" \"'[,=") for m in _SELECT_OPTIONS.finditer(text)}


def _same_key(new: str, old: str) -> bool:
    key = re.compile(r"""^\s*["']?(\w+)""")
    a, b = key.match(new), key.match(old)
    return bool(a and b and a.group(1) == b.group(1))


def _superset(new: str, old: str) -> bool:
    values = re.compile(r"""["']([^"']+)["']|(?<=[=\s,\[])([\w./*-]+)""")
    after = {v for m in values.finditer(new.split("=", 1)[-1]) for v in m.groups() if v}
    before = {v for m in values.finditer(old.split("=", 1)[-1]) for v in m.groups() if v}
    return before <= after
