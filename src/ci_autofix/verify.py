"""Proof that a fix works: the failing commands re-run before and after it, in the sandbox.

`reproduce` runs the failing commands on the unfixed checkout (does the failure happen here?),
`verify` runs them again with the fix applied, then `test-command`, then `ruff check` and
`ruff format --check` on the changed Python files when the repository uses ruff. Every command
goes through the `Sandbox` (scrubbed environment, own process group, timeout, capped output).

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

import re
from collections.abc import Sequence
from pathlib import Path

from ci_autofix.environment import leave_no_files, prepare, uses_ruff
from ci_autofix.evidence import Evidence, EvidencePair, Outcome, Verification
from ci_autofix.markdown import code_span
from ci_autofix.sandbox import Sandbox, command_argv

_SERVICE = re.compile(
    r"Connection refused|ECONNREFUSED|could not connect to server|Can't connect to (?:local )?MySQL"
    r"|Cannot connect to the Docker daemon|Is the docker daemon running|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|Name or service not known|Temporary failure in name resolution|No route to host"
    r"|redis\.exceptions\.ConnectionError|OperationalError: (?:connection|could not connect)",
    re.I,
)


def reproduce(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    timeout: float,
    setup_command: str = "",
    env_dir: Path | None = None,
) -> list[Evidence]:
    """Run the failing commands on the unfixed checkout, in the same environment `verify` will use."""
    with leave_no_files(sandbox):
        return _reproduce(sandbox, commands, timeout=timeout, setup_command=setup_command, env_dir=env_dir)


def _reproduce(
    sandbox: Sandbox, commands: Sequence[str], *, timeout: float, setup_command: str, env_dir: Path | None
) -> list[Evidence]:
    prepared = prepare(sandbox, setup_command, env_dir=env_dir, timeout=timeout, commands=commands)
    if prepared.setup is not None and not prepared.setup.ok:
        return [prepared.setup]
    return [
        Evidence.of(command, prepared.sandbox.run_command_line(command, timeout=timeout))
        for command in commands
    ]


def verify(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    setup_command: str = "",
    test_command: str = "",
    changed_files: Sequence[str] = (),
    before: Sequence[Evidence] = (),
    timeout: float,
    env_dir: Path | None = None,
) -> Verification:
    """Run the failing commands (then `test_command`, then ruff) with the fix applied, and judge.

    Files the setup and the commands create (and git would not ignore) are removed afterwards.
    """
    with leave_no_files(sandbox):
        return _verify(
            sandbox,
            commands,
            setup_command=setup_command,
            test_command=test_command,
            changed_files=changed_files,
            before=before,
            timeout=timeout,
            env_dir=env_dir,
        )


def _verify(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    setup_command: str,
    test_command: str,
    changed_files: Sequence[str],
    before: Sequence[Evidence],
    timeout: float,
    env_dir: Path | None,
) -> Verification:
    prepared = prepare(
        sandbox, setup_command, env_dir=env_dir, timeout=timeout, commands=[*commands, test_command]
    )
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
            "re-run.",
            [],
            setup,
        )
    run = prepared.sandbox
    earlier = {e.command: e for e in before}
    pairs = [
        EvidencePair(c, "failing", earlier.get(c), Evidence.of(c, run.run_command_line(c, timeout=timeout)))
        for c in dict.fromkeys(commands)
    ]
    if test_command:
        pairs.append(
            EvidencePair(
                test_command,
                "test",
                earlier.get(test_command),
                Evidence.of(test_command, run.run_command_line(test_command, timeout=timeout)),
            )
        )
    python_files = [f for f in changed_files if f.endswith((".py", ".pyi")) and (run.root / f).is_file()]
    if python_files and uses_ruff(run.root):
        pairs += _ruff(run, python_files, timeout)
    outcome, reason = _judge(pairs, timeout)
    return Verification(outcome, reason, pairs, setup)


def _ruff(run: Sandbox, files: list[str], timeout: float) -> list[EvidencePair]:
    """`ruff check` and `ruff format --check` on the changed files, before (from HEAD) and after the fix."""
    pairs = []
    for tool in (["ruff", "check", "--no-fix"], ["ruff", "format", "--check"]):
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


def _judge(pairs: list[EvidencePair], timeout: float) -> tuple[Outcome, str]:
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
            )
        elif pair.role == "test":
            failed.append(f"the test-command {name} fails after the fix (exit {after.exit_code})")
        else:
            failed.append(f"{name} still fails after the fix (exit {after.exit_code})")
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


def _sentence(reasons: list[str]) -> str:
    text = "; ".join(reasons)
    return text[0].upper() + text[1:] + "."
