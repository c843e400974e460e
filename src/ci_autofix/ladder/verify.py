"""Proof that a fix works: the failing commands re-run before and after it, on clean trees.

`reproduce` runs the failing commands (and `test-command`) on the unfixed commit (does the
failure happen here?), `verify` runs them again with the fix applied, then `ruff check` and
`ruff format --check` on the changed Python files when the repository uses ruff. Every command
goes through the `Sandbox` (scrubbed environment, own process group, timeout, capped output).

`CleanRuns` is how the fix ladder uses them: every judged run happens in a fresh checkout of
exactly one git tree (`Workarea.clean_copy`): the failing commit to reproduce, the failing
commit plus exactly the proposed diff to verify, nothing the agent's commands left behind. The
verification names that tree. When the fix changes tests or test configuration, the failing
commands also run against the fixed source with the failing commit's versions of those files
(`OriginalTests`): a fix that passes only with its own tests is never "verified".

The environment of a Python repository is a virtualenv outside the workspace (under
`RUNNER_TEMP`, or the system temp dir), created with the interpreter that runs ci-autofix and
put first on `PATH` (with `VIRTUAL_ENV`) for every command. `setup-command` runs in it; when
empty, the project is installed there with its test extras (`pip install -e .[test,...]`, the
`test`/`dev` dependency groups, and the requirements files). The setup runs once per content of
the dependency files: `reproduce` and each `verify` of the same checkout reuse it.

Outcomes: **verified** (every failing command now passes, `test-command` passes, and ruff
reports nothing new), **failed** (a command still fails: the tail of its output goes back to the
agent), **unverified** (it cannot be decided here: a missing tool, a service that is not running,
a timeout, a setup that failed, or a failure that did not happen here before the fix).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ci_autofix.fixers.config import read_repo_config
from ci_autofix.ladder.environment import Environment, as_of, needs_environment, prepare, uses_ruff
from ci_autofix.ladder.evidence import Evidence, EvidencePair, OriginalTests, Verification, VerificationState
from ci_autofix.ladder.runtimes import install_dependencies, with_runtimes
from ci_autofix.ladder.testcount import (
    count_tests,
    dropped,
    gradle_reports,
    pytest_report_env,
    ran_gradle,
    read_report,
)
from ci_autofix.ladder.tools import with_tools
from ci_autofix.ladder.workarea import Workarea
from ci_autofix.markdown import code_span
from ci_autofix.policy import Finding
from ci_autofix.policy.source import is_test_path
from ci_autofix.policy.table import finding
from ci_autofix.sandbox import Sandbox, command_argv
from ci_autofix.toolchains.provision import Provisioned
from ci_autofix.workflow.poetry import PoetryInstall

_SERVICE = re.compile(
    r"Connection refused|ECONNREFUSED|could not connect to server|Can't connect to (?:local )?MySQL"
    r"|Cannot connect to the Docker daemon|Is the docker daemon running|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|Name or service not known|Temporary failure in name resolution|No route to host|Could not resolve host"
    r"|redis\.exceptions\.ConnectionError|OperationalError: (?:connection|could not connect)",
    re.I,
)

# no `setup-command`, no job setup: the project with its test extras, in the default place
_DEFAULT_ENVIRONMENT = Environment()


def reproduce(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    timeout: float,
    environment: Environment = _DEFAULT_ENVIRONMENT,
    reports: Path | None = None,
    on_start: Callable[[str], None] = lambda _command: None,
) -> list[Evidence]:
    """Run the failing commands on the unfixed checkout, in the same environment `verify` will use;
    `on_start` hears each command (the setup's too) as it starts."""
    prepared = prepare(sandbox, environment, timeout=timeout, commands=commands, on_start=on_start)
    if prepared.setup is not None and not prepared.setup.ok:
        return [prepared.setup]
    evidence = []
    path = prepared.sandbox.env().get("PATH", os.defpath)
    for command in commands:
        on_start(command)
        ran = counted(prepared.sandbox, command, timeout=timeout, reports=reports)
        evidence.append(dataclasses.replace(ran, absent=tuple(absent_programs(command, path))))
    return evidence


_PYTEST_USAGE = 4
_JUNIT_REFUSED = "unrecognized arguments: --junit-xml"


def counted(sandbox: Sandbox, command: str, *, timeout: float, reports: Path | None = None) -> Evidence:
    """One judged run of `command`, with the tests its runner says it ran.

    With `reports` (a directory of ours that the sandbox cannot replace), pytest also writes a
    JUnit report into a fresh directory there, read without following links."""
    if reports is None:
        result = sandbox.run_command_line(command, timeout=timeout)
        return Evidence.of(
            command, result, tests=count_tests(result.output, _gradle(sandbox, command, result.output))
        )
    report_dir = Path(tempfile.mkdtemp(prefix="run-", dir=reports))
    if sandbox.user is not None and sandbox.group is not None:
        os.chown(report_dir, sandbox.user, sandbox.group)
    run = dataclasses.replace(
        sandbox,
        extra_env={**sandbox.extra_env, **pytest_report_env(sandbox.env().get("PYTEST_ADDOPTS"), report_dir)},
    )
    result = run.run_command_line(command, timeout=timeout)
    if result.exit_code == _PYTEST_USAGE and _JUNIT_REFUSED in result.output:
        # the repository turns the report off (`-p no:junitxml`): run again, counted from the output
        result = sandbox.run_command_line(command, timeout=timeout)
    report = read_report(report_dir)
    found = [report] if report else []
    return Evidence.of(
        command, result, tests=count_tests(result.output, [*found, *_gradle(sandbox, command, result.output)])
    )


def _gradle(sandbox: Sandbox, command: str, output: str) -> list[bytes]:
    """The JUnit reports of a Gradle run: Gradle prints its test count only when a test failed."""
    return gradle_reports(sandbox.root) if ran_gradle(command, output) else []


def verify(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    environment: Environment = _DEFAULT_ENVIRONMENT,
    test_command: str = "",
    changed_files: Sequence[str] = (),
    before: Sequence[Evidence] = (),
    timeout: float,
    reports: Path | None = None,
) -> Verification:
    """Run the failing commands (then `test_command`, then ruff) with the fix applied, and judge.

    The tests each command ran are counted; a command that runs fewer tests than before the fix,
    or skips or deselects more, is named in `tests_dropped`."""
    # Read before any of the repository's code runs here (it could leave a FIFO or a link behind).
    python_files = [f for f in changed_files if f.endswith((".py", ".pyi")) and (sandbox.root / f).is_file()]
    ruff = bool(python_files) and uses_ruff(sandbox.root)
    # ruff's formatter judges only a repository that formats with it, not one that formats with black
    ruff_formats = ruff and not read_repo_config(sandbox.root).configures("black")
    prepared = prepare(sandbox, environment, timeout=timeout, commands=[*commands, test_command])
    setup = prepared.setup
    if setup is not None and not setup.ok:
        what = (
            "is not installed here"
            if setup.missing_tool
            else ("timed out" if setup.timed_out else f"failed with exit code {setup.exit_code}")
        )
        return Verification(
            "unverified",
            f"The environment could not be prepared: the setup "
            f"{code_span(setup.command)} {what}, so the failing command could not be "
            "re-run. Set `setup-command` to what CI's job runs to install the project (its "
            "`pip install` steps) to have the fix verified.",
            [],
            setup,
        )
    run = prepared.sandbox
    earlier = {e.command: e for e in before}
    pairs = [
        EvidencePair(c, "failing", earlier.get(c), counted(run, c, timeout=timeout, reports=reports))
        for c in dict.fromkeys(commands)
    ]
    if test_command:
        after = counted(run, test_command, timeout=timeout, reports=reports)
        pairs.append(EvidencePair(test_command, "test", earlier.get(test_command), after))
    if python_files and ruff:
        pairs += _ruff(run, python_files, timeout, formats=ruff_formats)
    path = run.env().get("PATH", os.defpath)
    absent = {
        p.command: missing for p in pairs if p.role != "lint" if (missing := absent_programs(p.command, path))
    }
    outcome, reason = _judge(pairs, timeout, absent)
    lost = [
        f"{code_span(p.command)}: {message}"
        for p in pairs
        if p.role != "lint" and p.before is not None and (message := dropped(p.before.tests, p.after.tests))
    ]
    return Verification(outcome, reason, pairs, setup, tests_dropped=lost)


@dataclass
class CleanRuns:
    """Reproduction and verification for one work area, each run on a clean copy of one tree."""

    area: Workarea
    commands: Sequence[str]
    setup_command: str
    test_command: str
    timeout: float
    protected: Sequence[str]
    tool_path: Path | None = None  # the fixers' tools (`ladder.tools`), last on the commands' PATH
    tool_versions: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # `CIRun.described`
    job_setup: list[str] = dataclasses.field(default_factory=list)  # `WorkflowCommands.setup`
    poetry: PoetryInstall | None = None  # `WorkflowCommands.poetry`
    # when CI ran (`CIRun.as_of`), and what that moment is: the job's installs resolve as of it
    resolved_at: datetime | None = None
    resolved_when: str = ""
    # the runtimes provisioned for the failed job (`ladder.runtimes`), first on the commands' PATH, and
    # that job's mapping (its `env:` for the dependency installs each clean copy runs first)
    provisioned: Provisioned = dataclasses.field(default_factory=Provisioned)
    job: Mapping[str, object] = dataclasses.field(default_factory=dict)
    before: list[Evidence] = dataclasses.field(default_factory=list)

    def reproduce(self, *, on_start: Callable[[str], None] = lambda _command: None) -> list[Evidence]:
        """The failing commands and `test-command` on exactly the failing commit; kept as `before`.
        `on_start` hears each command (the setup's too) as it starts."""
        runs = list(dict.fromkeys([*self.commands, *([self.test_command] if self.test_command else [])]))
        copy, failed_install = self._copy(self.area.head_sha)
        if failed_install is not None:
            self.before = [failed_install]
            return self.before
        self.before = reproduce(
            copy,
            runs,
            timeout=self.timeout,
            environment=self._environment(),
            reports=self._reports(),
            on_start=on_start,
        )
        return self.before

    def verify(self, tree: str, *, test_paths: Sequence[str] = ()) -> Verification:
        """Verify `tree` (the failing commit plus exactly the fix); with the original tests when
        the fix changes `test_paths` (test files and test configuration)."""
        git = self.area.git
        changed = git.changed_paths(self.area.head_sha, tree)
        # The original tests run only for commands that ran a test runner before the fix (a
        # formatter behind `make lint` is not one).
        counted_before = {e.command for e in self.before if e.tests is not None}
        result = dataclasses.replace(
            self._verify(tree, changed, self.commands, self.test_command),
            tree=tree,
            tools=list(self.tool_versions),
            toolchains=self.provisioned.to_markdown(),
            resolved=self._resolved(),
        )
        if result.outcome == "verified" and self.provisioned.failures:
            missing = ", ".join(
                f"{f.declared.runtime} {code_span(f.declared.spec)}" for f in self.provisioned.failures
            )
            return dataclasses.replace(
                result,
                outcome="unverified",
                reason=f"The job's runtime {missing} could not be provisioned here, so the commands did not run "
                "with the toolchain CI uses; CI on the fix is the proof.",
            )
        runs_tests = [c for c in dict.fromkeys([*self.commands, self.test_command]) if c in counted_before]
        if result.outcome != "verified" or not test_paths or not runs_tests:
            return result
        original = git.tree_with(tree, self.area.head_sha, test_paths)
        commands = [c for c in self.commands if c in runs_tests]
        test_command = self.test_command if self.test_command in runs_tests else ""
        guard = dataclasses.replace(self._verify(original, (), commands, test_command), tree=original)
        passed = guard.outcome == "verified"  # what cannot be run here does not pass
        tests = OriginalTests(list(test_paths), guard, passed)
        if passed:
            return dataclasses.replace(result, original_tests=tests)
        failing = [code_span(p.command) for p in guard.evidence if not p.after.ok]
        shown = ", ".join(code_span(path) for path in test_paths[:5])
        return dataclasses.replace(
            result,
            outcome="unverified",
            reason=(
                f"The failing command passes only with the fix's own changes to the tests ({shown}): with the "
                f"failing commit's versions of those files, {', '.join(failing)} does not pass against the fixed code."
            ),
            original_tests=tests,
        )

    def _verify(
        self, tree: str, changed: Sequence[str], commands: Sequence[str], test_command: str
    ) -> Verification:
        copy, failed_install = self._copy(tree)
        if failed_install is not None:
            return Verification(
                "unverified",
                f"The dependencies could not be installed: {code_span(failed_install.command)} "
                f"({failed_install.describe()}), so the failing command could not be re-run.",
                [],
                failed_install,
            )
        return verify(
            copy,
            commands,
            environment=self._environment(),
            test_command=test_command,
            changed_files=changed,
            before=self.before,
            timeout=self.timeout,
            reports=self._reports(),
        )

    def _copy(self, tree: str) -> tuple[Sandbox, Evidence | None]:
        """A clean copy of `tree` with the runtimes and tools on its PATH, its dependencies installed
        for the provisioned runtimes; and the install that failed, if one did."""
        copy = with_runtimes(
            self.area.clean_copy(tree, protected=self.protected, timeout=self.timeout), self.provisioned
        )
        failed = install_dependencies(copy, self.provisioned, self.job, timeout=self.timeout)
        return with_tools(copy, self.tool_path), failed

    def _environment(self) -> Environment:
        return Environment(
            self.setup_command,
            self.job_setup,
            self.area.env_dir,
            poetry=self.poetry,
            resolved_at=self.resolved_at,
        )

    def _resolved(self) -> str:
        """What the evidence says of the date the job's installs were resolved at (empty: none was)."""
        commands = [*self.commands, self.test_command]
        if (
            self.resolved_at is None
            or not self.job_setup
            or self.setup_command
            or not needs_environment(commands)
        ):
            return ""
        return (
            f"The job's installs were resolved as of {as_of(self.resolved_at)} ({self.resolved_when}): "
            "pip considered only the files the package index had then (`--uploaded-prior-to`), so each "
            "unpinned or ranged requirement got the release CI got, and each pinned one its pin (where the "
            "setup shows `--no-deps`, that could not be installed here: the requirements are as of then, "
            "their dependencies today's)."
        )

    def _reports(self) -> Path:
        """Ours, in the work area's root-owned base: the sandbox can write a report in a directory
        we make here for it, never replace that directory with a link."""
        reports = self.area.base / "reports"
        reports.mkdir(mode=0o711, exist_ok=True)
        return reports


def guard_findings(verification: Verification | None, *, root_cause: str = "") -> list[Finding]:
    """What the verification guards found, as findings of the patch policy.

    A command that lost tests is `tests-dropped` (blocked). A fix that passes only with its own
    changes to the tests is `changes-tests` (blocked), or `changes-tests-explained` (flagged: a
    draft for a human) when the agent's root cause names a test file it changed, saying why that
    test was wrong.
    """
    if verification is None:
        return []
    found = [finding("tests-dropped", message) for message in verification.tests_dropped]
    guard = verification.original_tests
    if guard is not None and not guard.passed:
        if _names_any(root_cause, guard.paths):
            code = "changes-tests-explained"
            why = "The agent's root cause says why the test itself was wrong: a human must judge that, so it is proposed only as a draft."
        else:
            code, why = "changes-tests", "The agent did not say why the test itself was wrong."
        found.append(finding(code, f"{verification.reason} {why}", guard.paths[0]))
    return found


def _names_any(text: str, paths: Sequence[str]) -> bool:
    """`text` names one of the test files in `paths` (a configuration file such as `conftest.py`
    or `pyproject.toml` is not a test that can have been wrong)."""
    tests = [path for path in paths if is_test_path(path) and Path(path).name not in _NOT_A_TEST]
    names = {p for path in tests for p in (path, Path(path).name) if len(p) >= 4}
    return any(name in text for name in names)


_NOT_A_TEST = frozenset({"conftest.py", "__init__.py"})


def _ruff(run: Sandbox, files: list[str], timeout: float, *, formats: bool) -> list[EvidencePair]:
    """`ruff check` (and `ruff format --check` when the repository `formats` with ruff) on the
    changed files, before (from HEAD) and after the fix."""
    pairs = []
    tools = [["ruff", "check", "--no-fix"], *([["ruff", "format", "--check"]] if formats else [])]
    for tool in tools:
        for path in files:
            command = " ".join([*tool, path])
            after = Evidence.of(command, run.run([*tool, "--", path], timeout=timeout))
            script = (
                'content=$(git show "HEAD:$1" 2>/dev/null) || exit 0; printf "%s\\n" "$content" | '
                + " ".join(tool)
                + ' --stdin-filename "$1" -'
            )
            before = Evidence.of(
                command,
                run.run(["bash", "--noprofile", "--norc", "-c", script, "ci-autofix", path], timeout=timeout),
            )
            pairs.append(EvidencePair(command, "lint", before, after))
    return pairs


# A program's name where a command starts: the line's start, or after `$(`, a backquote, a pipe, `&&`,
# `;` or `(`, past keywords and variable assignments.
_COMMAND_START = re.compile(
    r"(?:^|\$\(|`|\|\|?|&&|;|\n|\()\s*(?:(?:if|then|else|elif|do|while|until|!|\{|time|exec|env)\s+)*"
    r"(?:[A-Za-z_]\w*=\S*\s+)*(?P<name>[A-Za-z0-9_][\w.+-]*)(?=\s|$|\)|;|\||&|`)"
)
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_SHELL_WORDS = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "for",
        "case",
        "esac",
        "in",
        "function",
        "time",
        "test",
        "echo",
        "printf",
        "true",
        "false",
        "exit",
        "cd",
        "export",
        "set",
        "unset",
        "read",
        "local",
        "source",
        "eval",
        "return",
        "shift",
        "pwd",
        "type",
        "hash",
        "trap",
        "wait",
        "exec",
        "command",
        "declare",
        "readonly",
        "let",
        "builtin",
        "shopt",
        "pushd",
        "popd",
        "dirs",
        "umask",
        "ulimit",
        "alias",
        "getopts",
        "break",
        "continue",
    ]
)


def absent_programs(command: str, path: str) -> list[str]:
    """The programs `command` names (each simple command's first word, in `$(...)` and pipelines
    too) that are not on `path`: a step such as `test -z "$(gofmt -l .)"` passes when gofmt is
    missing, so passing proves nothing then."""
    script = re.sub(r"(?m)(^|\s)#.*$", "", command)
    script = re.sub(r"'[^']*'", "''", script)  # quoted text names no program, but `"$(...)"` does
    script = re.sub(
        r'"([^"]*)"', lambda m: " ".join(f"$({c})" for c in _SUBSTITUTION.findall(m[1])) or '""', script
    )
    names = dict.fromkeys(m["name"] for m in _COMMAND_START.finditer(script))
    return [n for n in names if n not in _SHELL_WORDS and shutil.which(n, path=path) is None]


def _judge(
    pairs: list[EvidencePair], timeout: float, absent: Mapping[str, list[str]] | None = None
) -> tuple[VerificationState, str]:
    """The outcome and its reason; `absent`: the programs each command names that are not installed."""
    failed: list[str] = []
    unverified: list[str] = []
    for pair in pairs:
        after, name = pair.after, code_span(pair.command)
        if pair.role == "lint":
            if after.missing_tool:
                continue  # ruff is not installed here: nothing to compare, and not the fix's fault
            if not after.ok and pair.before is not None and pair.before.ok:
                failed.append(f"{name} reports new problems in a file the fix changed")
            continue
        if after.missing_tool:
            program = command_argv(pair.command)[0]
            missing = "a program it calls is" if program == "bash" else f"{code_span(program)} is"
            unverified.append(
                f"{name} cannot run here: {missing} not installed in this environment (a toolchain "
                "the image lacks); CI on the fix is the proof"
            )
        elif absent_here := (absent or {}).get(pair.command):
            unverified.append(
                f"{name} names {', '.join(code_span(m) for m in absent_here)}, which "
                f"{'is' if len(absent_here) == 1 else 'are'} not installed in this environment, so its "
                "passing or failing here proves nothing; CI on the fix is the proof"
            )
        elif after.timed_out:
            unverified.append(f"{name} did not finish within {timeout:.0f}s here and was stopped")
        elif after.ok:
            if pair.role == "failing" and pair.before is not None and pair.before.ok:
                unverified.append(
                    f"{name} passed here before the fix too, so the failure did not reproduce here "
                    "(flaky, or it depends on the CI environment)"
                )
        elif match := _SERVICE.search(after.tail):
            unverified.append(
                f"{name} needs a service or network access that is not available here ({match.group(0)})"
                + _where(pair)
            )
        elif pair.role == "test":
            failed.append(f"the test-command {name} fails after the fix (exit {after.exit_code})")
        else:
            failed.append(f"{name} still fails after the fix (exit {after.exit_code}){_where(pair)}")
    if failed:
        return "failed", _sentence(failed)
    if unverified:
        return "unverified", _sentence(unverified)
    count = sum(1 for p in pairs if p.role == "failing")
    what = (
        f"The failing command{'s' if count != 1 else ''} now pass{'es' if count == 1 else ''}"
        if count
        else ("The test-command passes")
    )
    return "verified", f"{what} here and nothing newly fails."


# a command the shell traced (`set -x`): `+ black --check .`; nested shells trace with `++`
_TRACE_RE = re.compile(r"^\+ (?P<words>\S.*)$", re.M)
_GLOB = re.compile(r"[*?\[]")


def stopped_at(command: str, output: str) -> str | None:
    """The command of a step of several (`command`, its lines as replayed) that the step stopped
    at, read from the shell's trace in its output (`set -x`): the last traced command that is one of
    the step's own lines. Only a line of the step is ever named, never text of the output."""
    lines = [line.strip() for line in command.splitlines()]
    steps = [line for line in lines if line and line[0] not in "#()" and not _PRELUDE.match(line)]
    if len(steps) < 2:
        return None
    for match in reversed(list(_TRACE_RE.finditer(output))):
        traced = match["words"].split()
        for line in steps:
            words = line.split()
            fixed = next((i for i, w in enumerate(words) if _GLOB.search(w)), None)
            if words == traced or (fixed is not None and traced[:fixed] == words[:fixed]):
                return line
    return None


_PRELUDE = re.compile(r"^(?:set|cd|export)\b")


def _where(pair: EvidencePair) -> str:
    """Which command of the step it stopped at after the fix, and where it stopped before the fix:
    a step that stops at the same command, the same way, before and after the fix is not the fix's
    doing, and its later commands did not run here."""
    after, before = pair.after, pair.before
    at = stopped_at(pair.command, after.tail)
    if at is None:
        return ""
    text = f": it stops at {code_span(at)}"
    if before is None:
        return text
    if before.ok:
        return text + ", and it passed before the fix"
    was = stopped_at(pair.command, before.tail)
    if was == at and before.exit_code == after.exit_code and _same_output(before.tail, after.tail):
        return (
            f"{text}, where it stopped the same way before the fix (exit {before.exit_code}, the same output): "
            "the fix did not change that command's result, and the commands after it did not run here"
        )
    if was == at:
        return f"{text}, where it stopped before the fix too (exit {before.exit_code})"
    if was is not None:
        return f"{text}; before the fix it stopped at {code_span(was)} (exit {before.exit_code})"
    return text


# a name Python's `tempfile` made (`tmpk3j_x9q2`): it differs between two runs of the same command
_TEMP_NAME = re.compile(r"\btmp[a-z0-9_]{8}\b")


def _same_output(before: str, after: str) -> bool:
    """Two runs printed the same, but for the temporary names they made."""
    return _TEMP_NAME.sub("tmp", before) == _TEMP_NAME.sub("tmp", after)


def _sentence(reasons: list[str]) -> str:
    text = "; ".join(reasons)
    return text[0].upper() + text[1:] + "."
