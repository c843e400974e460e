"""Shared by the class 6 and 7 security tests: a failing repository whose test and whose model say
what an attacker wants, run through the propose flow as the runner runs us, and two readers that
see our output the way GitHub does: the runner's command parser for stdout, GitHub's own
Markdown renderer (cmark-gfm) for the PR body and the job summary."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options as CmarkOptions

from ci_autofix.cli.demo import job_log
from tests.testing.calc_scenario import CALC_BROKEN, CALC_OK, PYTEST
from tests.testing.emulator import GitHubEmulator, Run
from tests.testing.runner_sim import RunnerSim, RunResult, WorkflowCommand, parse_commands
from tests.testing.world import alice_repository

REPO = "acme/calc"
BRANCH = "fix-rounding"

# Lines a test (or the model) prints to take over the job: forge an output, mask or unmask text,
# stop the runner's command processing, make annotations, fold the log.
COMMAND_LINES = (
    "::set-output name=status::applied",
    "::add-mask::x",
    "::stop-commands::abc",
    "::error::pwned",
    "##[group]x",
    "::warning file=forged.py,line=1::forged",
)
# Markdown that pings, tracks, phishes or renders: it must only ever show up as code.
MARKDOWN_PAYLOAD = (
    "PWN @alice @org/team ![img](http://x/track.png) [link](http://x/phish) <img src=x> <details>"
)


@dataclass
class Broken:
    run: Run
    head_sha: str
    workspace: Path


def seed(emu: GitHubEmulator, tmp_path: Path, test_source: str) -> Broken:
    """A repository whose `add` is broken and whose failing test is `test_source`, its red CI run
    (with the real pytest log), and the propose job's checkout of the failing commit."""
    main = {"calc.py": CALC_OK, "tests/test_calc.py": test_source}
    repository = alice_repository(
        emu, tmp_path / "source", REPO, main, BRANCH, {"calc.py": CALC_BROKEN}, "Refactor add"
    )
    log = job_log(repository.source, [PYTEST])
    assert b"1 failed" in log, log.decode()
    run = repository.failed_run(PYTEST, log)
    return Broken(run, repository.head_sha, repository.checkout(tmp_path / "workspace"))


def propose(
    emu: GitHubEmulator, tmp_path: Path, broken: Broken, messages_url: str, inputs: dict[str, str]
) -> RunResult:
    """The propose job, laid out as the runner lays it out (uid 1001), the model at `messages_url`.
    The runner's HOME says the uid-1001 checkout is safe for root's git, as the image's system
    gitconfig does (`safe.directory`), so the run gets past the checkout as it does in the image."""
    home = tmp_path / "runner" / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(f"[safe]\n\tdirectory = {broken.workspace}\n", encoding="utf-8")
    return (
        RunnerSim(tmp_path, runner_uid=1001)
        .for_emulator(emu, REPO)
        .run(
            event_name="workflow_run",
            event=emu.workflow_run_event(broken.run),
            workspace=broken.workspace,
            inputs=inputs,
            extra_env={
                "ANTHROPIC_BASE_URL": messages_url,
                "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            },
        )
    )


# ---- stdout, read as the runner reads it ---------------------------------------------------------
@dataclass
class RunnerView:
    commands: list[WorkflowCommand]  # processed: outside any stop-commands block
    plain: list[str]  # shown as text outside any block
    stop_tokens: list[str]


def runner_view(output: str) -> RunnerView:
    """What the runner does with our output: lines split as .NET's ReadLine splits them, leading
    whitespace trimmed, `::name props::message` processed unless inside `::stop-commands::T` ...
    `::T::`."""
    view = RunnerView([], [], [])
    stop: str | None = None
    for raw in re.split(r"\r\n|\r|\n", output):
        line = raw.lstrip()
        if stop is not None:
            if line.rstrip() == f"::{stop}::":
                stop = None
            continue
        if line.startswith("::stop-commands::"):
            stop = line.removeprefix("::stop-commands::").rstrip()
            view.stop_tokens.append(stop)
            continue
        parsed = parse_commands(line)
        if parsed:
            view.commands.extend(parsed)
        else:
            view.plain.append(raw)
    assert stop is None, f"a stop-commands block was never ended (token {stop!r})"
    return view


def assert_no_forged_commands(result: RunResult, untrusted: list[str], secrets: list[str]) -> None:
    """No line of untrusted text acts on the runner: every command processed is one of ours."""
    for stream in (result.stdout, result.stderr):
        view = runner_view(stream)
        for token in view.stop_tokens:
            assert len(token) >= 16 and not any(token in text for text in untrusted), token
            first = stream.index(token)
            assert stream[:first].endswith("::stop-commands::"), "the stop token was printed in advance"
        for command in view.commands:
            assert command.name in {"add-mask", "error", "warning", "notice", "group", "endgroup"}, command
            if command.name == "add-mask":
                assert any(command.message in s for s in secrets), f"masked a value we do not hold: {command}"
            assert command.message not in {"pwned", "forged", "x"}, command
            assert "forged.py" not in command.properties.get("file", ""), command
        for line in view.plain:
            assert "##[" not in line, f"a log-viewer command outside a stop-commands block: {line!r}"


# ---- Markdown, rendered as GitHub renders it -----------------------------------------------------
def outside_code(markdown: str) -> str:
    """The HTML that GitHub's renderer makes of `markdown`, raw HTML kept, code spans and blocks cut out."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=CmarkOptions.CMARK_OPT_UNSAFE)
    return re.sub(r"<pre\b[^>]*>.*?</pre>|<code\b[^>]*>.*?</code>", "", html, flags=re.S)


def assert_only_as_code(markdown: str) -> None:
    """The payload's mentions, images, links and HTML appear only inside code."""
    rest = outside_code(markdown)
    for bad in ("PWN", "@alice", "@org/team", "http://x", "<img", "::set-output", "pwned"):
        assert bad not in rest, f"{bad!r} renders outside code:\n{rest}"
    assert rest.count("<details") == rest.count("<summary>"), f"a <details> of the payload renders:\n{rest}"
    assert rest.count("<details") == rest.count("</details>"), rest
