"""The commands ci-autofix may run for a failure, read from the workflow definition.

The trusted source of commands: the `run:` of the failed step, in the workflow file the run
executed, read from git objects at the failing commit (never from the working tree, which code
run for the repository may have changed). The log only confirms which step failed; text found
only in a log is never a command.

Matching, as GitHub displays names: a job is shown by its `name:` (with `${{ matrix.* }}`
substituted), else its id; a job with a matrix whose name has no expression gets the matrix
values appended, `test (3.11, ubuntu-latest)`. A step is shown by its `name:`, else
`Run <first line of run>` (or `Run <uses>` for an action). The failed job and step come from
the API; the matrix values of the failed job are known for sure once its displayed name matches
exactly one combination, and are substituted in the step's `run:`, `env:` and
`working-directory`, with the `github.*` values the failed run gives (`workflow.context`: exact
names only, plain values only). Any other `${{ ... }}` makes the step not runnable here, and the
note says which command it would need.

A runnable step keeps what the runner gives it: `working-directory` (inside the repository only),
`shell:` (`bash` and `sh` as the runner runs them; unset is the runner's `bash -e {0}`; others
are not run) and the literal `env:` values of the workflow, job and step. Actions (`uses:`),
composite actions and reusable workflows are not followed. A line that runs its tools through a
runner CI set up (`uv run`, `tox -e`, `pre-commit run`, a repository script) is replayed as the
tool invocations inside it (`workflow.replay`), read from the failing commit's files. What the
job installed before the failed step is its setup: its plain `pip install` lines, and its
`poetry install`, followed from the failing commit's poetry.lock (`workflow.poetry`).
"""

from __future__ import annotations

import itertools
import json
import posixpath
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from ci_autofix.fixers.recipes import Read
from ci_autofix.git import Git
from ci_autofix.workflow.context import WORKSPACE, Context
from ci_autofix.workflow.poetry import PoetryInstall, follow, is_poetry_install
from ci_autofix.workflow.replay import Replayed, replay

WORKFLOWS_DIR = ".github/workflows"
_EXPRESSION_RE = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
_MATRIX_RE = re.compile(r"matrix\.([A-Za-z_][\w-]*)")
_GITHUB_RE = re.compile(r"github\.[a-z_]+")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# `source $VENV/bin/activate`, `. .venv/bin/activate`, or `source $VENV` where an earlier step or
# action put the activation script's path in a variable (snok/install-poetry does): an environment
# set up before the step, which is not there when the step is re-run; ours (prepared, first on
# PATH) takes its place.
_ACTIVATION_RE = re.compile(
    r"""^\s*(?:source|\.)\s+(?:["']?[^\s;&|'"]*/bin/activate["']?|"?\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*\})"?)\s*$"""
)
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\\"'*?~{}\[\]#\n]")


@dataclass(frozen=True)
class FailedStep:
    """A failed step as the API names it: the job's and the step's displayed names."""

    job: str
    step: str
    occurrence: int = 0  # how many earlier steps of the job have the same displayed name


@dataclass(frozen=True)
class StepCommand:
    """A failed step's command, as the workflow defines it."""

    command: str  # what is run: the script, after the step's directory, variables and shell
    script: str  # the step's `run:`, with the known expressions substituted
    job: str
    step: str


@dataclass
class WorkflowCommands:
    """What the workflow says the failed steps ran."""

    commands: list[StepCommand] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)  # `uses:` of failed action steps: never run
    notes: list[str] = field(default_factory=list)  # failed steps with no command run here, and why
    # what the failed job installed before the failed step (its `pip install` lines, as argv
    # words rejoined by us), for the environment verification prepares
    setup: list[str] = field(default_factory=list)
    # the job's `poetry install` before the failed step, followed from poetry.lock (`workflow.poetry`)
    poetry: PoetryInstall | None = None
    # the first failed job's parsed mapping and its matrix values, for the runtimes it sets up
    job: dict[str, Any] = field(default_factory=dict)
    matrix: dict[str, Any] = field(default_factory=dict)

    @property
    def lines(self) -> list[str]:
        return list(dict.fromkeys(c.command for c in self.commands))


class _NotRunnable(Exception):
    """Why a step's command cannot be run here (a sentence for the report)."""


# ---- reading --------------------------------------------------------------------------------------
def read_workflow(git: Git, sha: str, path: str) -> dict[str, Any]:
    """The parsed workflow file `path` at commit `sha`, from git objects.

    Raises `_NotRunnable` (with the reason) when the file does not exist there or is not a workflow.
    """
    result = git.run("cat-file", "blob", f"{sha}:{path}", check=False)
    if not result.ok:
        raise _NotRunnable(f"the workflow file `{path}` does not exist at {sha[:12]}")
    try:
        data = yaml.safe_load(result.output)
    except yaml.YAMLError as exc:
        raise _NotRunnable(
            f"the workflow file `{path}` is not valid YAML ({_first_line(str(exc))})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise _NotRunnable(f"the workflow file `{path}` has no `jobs:`")
    return data


def failed_step_commands(
    git: Git, sha: str, path: str, failed: Sequence[FailedStep], github: Context | None = None
) -> WorkflowCommands:
    """The commands of the failed steps, from the workflow `path` as it was at `sha`, with the
    failed run's `github` context values."""
    found = WorkflowCommands()
    if not failed:
        return found
    try:
        workflow = read_workflow(git, sha, path)
    except _NotRunnable as why:
        found.notes.append(f"No failed step is re-run here: {why}.")
        return found
    read = files_at(git, sha)
    for step in failed:
        try:
            _add(found, workflow, path, step, read, github or Context())
        except _NotRunnable as why:
            found.notes.append(
                f"The failed step `{step.step}` of job `{step.job}` is not re-run here: {why}."
            )
    return found


def _add(
    found: WorkflowCommands,
    workflow: dict[str, Any],
    path: str,
    failed: FailedStep,
    read: Read,
    github: Context,
) -> None:
    job_id, job, matrix = _find_job(workflow, path, failed.job)
    if not found.job:
        found.job, found.matrix = job, matrix
    steps = job.get("steps")
    if not isinstance(steps, list):
        raise _NotRunnable(f"job `{job_id}` in `{path}` has no `steps:`")
    named = [s for s in steps if isinstance(s, dict) and _step_matches(s, failed.step, matrix)]
    if len(named) <= failed.occurrence:
        raise _NotRunnable(f"no step of job `{job_id}` in `{path}` is displayed as `{failed.step}`")
    step = named[failed.occurrence]
    if "run" not in step:
        uses = str(step.get("uses", ""))
        found.actions.append(uses)
        raise _NotRunnable(f"it runs the action `{uses}`, and actions (composite ones too) are not followed")
    run = _substitute(str(step["run"]), matrix, "its `run:`", github)
    script = _in_our_environment(found, failed.step, run)
    replayed = _replayed(found, read, script)
    command = _command(workflow, job, step, replayed.script, matrix, github)
    found.commands.append(StepCommand(command, replayed.script, failed.job, failed.step))
    earlier = steps[: next(i for i, s in enumerate(steps) if s is step)]
    installs = [line for s in earlier if isinstance(s, dict) for line in _installs(s, matrix, github)]
    if _follow_poetry(found, _poetry_install(earlier, matrix, read, github)):
        installs = [line for line in installs if not _installs_poetry(line)]
    for install in [*installs, *replayed.installs]:
        if install not in found.setup:
            found.setup.append(install)


def _in_our_environment(found: WorkflowCommands, step: str, script: str) -> str:
    """`script` as `own_environment` runs it, each activation it gave up noted in `found`."""
    script, activations = own_environment(script)
    for line in activations:
        found.notes.append(
            f"The failed step `{step}` activates an environment an earlier step set up "
            f"(`{line.strip()}`): its commands run in ci-autofix's own prepared environment instead."
        )
    return script


def _replayed(found: WorkflowCommands, read: Read, script: str) -> Replayed:
    """`script` with its wrappers, sessions and repository scripts read through (`replay`), each
    noted in `found`."""
    replayed = replay(script, read)
    found.notes += replayed.notes
    return replayed


_MAX_FILE_BYTES = 1024 * 1024


def files_at(git: Git, sha: str) -> Read:
    """The repository's files as they are at `sha`, read from git objects (never a working tree code
    could have changed): a path inside the repository, at most a MiB, else None."""

    def read(path: str) -> str | None:
        normal = posixpath.normpath(path)
        if normal.startswith(("/", "../")) or normal in ("..", "."):
            return None
        size = git.run("cat-file", "-s", f"{sha}:{normal}", check=False)
        if not size.ok or not size.output.strip().isdigit() or int(size.output.strip()) > _MAX_FILE_BYTES:
            return None
        result = git.run("cat-file", "blob", f"{sha}:{normal}", check=False)
        return result.output if result.ok else None

    return read


def own_environment(script: str) -> tuple[str, list[str]]:
    """`script` with each line that activates a virtual environment made a comment (the prepared
    environment is already first on PATH), and those lines."""
    lines = script.split("\n")
    replaced = [line for line in lines if _ACTIVATION_RE.match(line)]
    kept = [
        f"# activated by ci-autofix instead: {line.strip()}" if line in replaced else line for line in lines
    ]
    return "\n".join(kept), replaced


_OPERATORS = frozenset(";&|()<>")
_DROPPED_OPTIONS = frozenset({"--user", "--system", "--break-system-packages"})


def _installs(step: dict[str, Any], matrix: dict[str, Any], github: Context) -> list[str]:
    """The `pip install` lines of an earlier step's `run:` (also `python -m pip`, `uv pip`), each
    as `python -m pip install <its words>` for the environment we prepare."""
    found = []
    for words in _plain_lines(step, matrix, github):
        head = [posixpath.basename(w) for w in words[:4]]
        if head[:2] in (["pip", "install"], ["pip3", "install"]):
            rest = words[2:]
        elif head[:2] == ["uv", "pip"] and head[2:3] == ["install"]:
            rest = words[3:]
        elif (
            len(head) == 4
            and re.fullmatch(r"python[\d.]*", head[0])
            and words[1:4] == ["-m", "pip", "install"]
        ):
            rest = words[4:]
        else:
            continue
        rest = [w for w in rest if w not in _DROPPED_OPTIONS]
        if rest:
            found.append(shlex.join(["python", "-m", "pip", "install", *rest]))
    return found


def _plain_lines(step: dict[str, Any], matrix: dict[str, Any], github: Context) -> Iterator[list[str]]:
    """The lines of an earlier step's `run:` that are one command of plain words, as words. A line
    with a shell expansion or operator, a step with an expression only the runner knows, or one in
    another directory is left out: nothing but plain words reaches the command."""
    if "run" not in step or step.get("working-directory") not in (None, "", "."):
        return
    try:
        script = _substitute(str(step["run"]), matrix, "", github)
    except _NotRunnable:
        return
    for line in re.sub(r"\\\r?\n", " ", script).splitlines():
        lexer = shlex.shlex(line.strip(), posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError:
            continue
        if words and not any(set(w) <= _OPERATORS or "$" in w or "`" in w for w in words):
            yield words


def _poetry_install(
    earlier: list[Any], matrix: dict[str, Any], read: Read, github: Context
) -> PoetryInstall | None:
    """The last `poetry install` of the steps before the failed one, followed (`workflow.poetry`)."""
    lines = [
        w
        for s in earlier
        if isinstance(s, dict)
        for w in _plain_lines(s, matrix, github)
        if is_poetry_install(w)
    ]
    return follow(lines[-1], read) if lines else None


def _follow_poetry(found: WorkflowCommands, poetry: PoetryInstall | None) -> bool:
    """Record the job's `poetry install` (the first failed job's) and what it says; whether it did."""
    if poetry is None or found.poetry is not None:
        return False
    found.poetry = poetry
    if not poetry.error:
        root = "" if poetry.root is None else ", then the project as poetry installs it"
        found.notes.append(
            f"The job's `{poetry.line}` is installed as poetry.lock says, without running poetry: "
            f"{len(poetry.packages)} packages at the lock's versions, checked against its hashes{root}."
        )
    found.notes += [*poetry.notes, *([poetry.error] if poetry.error else [])]
    return True


def _installs_poetry(line: str) -> bool:
    """A `pip install` of poetry itself: CI installed it to run `poetry install`, which is followed
    here without it (poetry's own packages were never in the project's environment)."""
    words = [w for w in shlex.split(line)[4:] if not w.startswith("-")]
    return bool(words) and all(re.fullmatch(r"poetry(?:[<>=!~,.\d\s*]*)", w) for w in words)


# ---- jobs and their matrix -------------------------------------------------------------------------
def _find_job(workflow: dict[str, Any], path: str, shown: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The job displayed as `shown`, with the matrix values of that combination."""
    unknown_matrix: list[str] = []
    for job_id, job in workflow["jobs"].items():
        if not isinstance(job, dict):
            continue
        combinations = _combinations(job)
        if combinations is None:
            if _could_be(job, str(job_id), shown):
                unknown_matrix.append(str(job_id))
            continue
        for values in combinations:
            if shown in _displayed_job_names(job, str(job_id), values):
                if "uses" in job:
                    raise _NotRunnable(
                        f"job `{job_id}` calls the reusable workflow `{job['uses']}`, which is not followed"
                    )
                return str(job_id), job, values
    if unknown_matrix:
        raise _NotRunnable(
            f"job `{unknown_matrix[0]}` in `{path}` has a matrix computed at run time, so its values are not known here"
        )
    raise _NotRunnable(f"no job in `{path}` is displayed as `{shown}`")


def _combinations(job: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The matrix combinations of a job (`[{}]` without a matrix), None when computed at run time."""
    strategy = job.get("strategy")
    if strategy is None:
        return [{}]
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if matrix is None:
        return [{}]
    if not isinstance(matrix, dict):
        return None
    axes: dict[str, list[Any]] = {}
    for key, values in matrix.items():
        if key in ("include", "exclude"):
            continue
        if not isinstance(values, list):
            return None
        axes[str(key)] = values
    combos = (
        [dict(zip(axes, chosen, strict=True)) for chosen in itertools.product(*axes.values())] if axes else []
    )
    exclude, include = matrix.get("exclude") or [], matrix.get("include") or []
    if not isinstance(exclude, list) or not isinstance(include, list):
        return None
    combos = [c for c in combos if not any(_matches(c, e) for e in exclude if isinstance(e, dict))]
    originals = [dict(c) for c in combos]
    for entry in include:
        if not isinstance(entry, dict):
            return None
        entry = {str(k): v for k, v in entry.items()}
        # GitHub adds an include entry to every combination whose original values it does not
        # overwrite; an entry that fits none becomes a combination of its own
        fitting = [
            i for i, o in enumerate(originals) if all(o.get(k, v) == v for k, v in entry.items() if k in axes)
        ]
        for i in fitting:
            combos[i].update(entry)
        if not fitting:
            combos.append(dict(entry))
    return combos or [{}]


def _matches(combo: Mapping[str, Any], pattern: Mapping[str, Any]) -> bool:
    return all(combo.get(str(k)) == v for k, v in pattern.items())


def _shown(value: Any) -> str:
    """A matrix value as GitHub prints it in a name."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _displayed_job_names(job: dict[str, Any], job_id: str, values: dict[str, Any]) -> set[str]:
    name = job.get("name")
    if isinstance(name, str) and "${{" in name:
        try:
            return {_substitute(name, values, "the job's name")}
        except _NotRunnable:
            return set()
    base = name if isinstance(name, str) and name else job_id
    if not values:
        return {base}
    return {f"{base} ({', '.join(_shown(v) for v in values.values())})"}


def _could_be(job: dict[str, Any], job_id: str, shown: str) -> bool:
    name = job.get("name")
    base = name if isinstance(name, str) and name and "${{" not in name else job_id
    return shown == base or shown.startswith(f"{base} (")


# ---- steps -------------------------------------------------------------------------------------------
def _step_matches(step: dict[str, Any], shown: str, matrix: dict[str, Any]) -> bool:
    name = step.get("name")
    if isinstance(name, str) and name:
        if "${{" not in name:
            return name == shown
        # an expression we cannot evaluate matches anything in its place: this only identifies
        # the step (the API named it); its command still comes from the workflow
        pattern = ""
        for literal, expression in _split_expressions(name):
            pattern += re.escape(literal)
            if expression is not None:
                known = _known(expression, matrix)
                pattern += re.escape(known) if known is not None else ".*"
        return re.fullmatch(pattern, shown, re.S) is not None
    if "run" in step:
        lines = [line.strip() for line in str(step["run"]).splitlines() if line.strip()]
        first = _substitute_loosely(lines[0], matrix) if lines else ""
        return shown in (f"Run {first}", f"Run {lines[0]}" if lines else "Run ")
    return shown == f"Run {step.get('uses', '')}"


def _split_expressions(text: str) -> Iterator[tuple[str, str | None]]:
    end = 0
    for match in _EXPRESSION_RE.finditer(text):
        yield text[end : match.start()], match.group(1)
        end = match.end()
    yield text[end:], None


def _known(expression: str, matrix: Mapping[str, Any], github: Context | None = None) -> str | None:
    """The value of an expression that is exactly a known name (`matrix.python`, `github.sha`)."""
    name = expression.strip()
    match = _MATRIX_RE.fullmatch(name)
    if match and match.group(1) in matrix:
        return _shown(matrix[match.group(1)])
    return github.value(name) if github is not None and _GITHUB_RE.fullmatch(name) else None


def _substitute(text: str, matrix: Mapping[str, Any], where: str, github: Context | None = None) -> str:
    """`text` with its `${{ matrix.* }}` and known `${{ github.* }}` values filled in; any other
    expression is not known here."""
    out = ""
    for literal, expression in _split_expressions(text):
        out += literal
        if expression is None:
            continue
        known = _known(expression, matrix, github)
        if known is None:
            raise _not_known(text, expression, where, github)
        out += known
    return out


def _not_known(text: str, expression: str, where: str, github: Context | None) -> _NotRunnable:
    name = expression.strip()
    why = (
        github.why_unknown(name)
        if github is not None and _GITHUB_RE.fullmatch(name)
        else "only the runner knows it"
    )
    return _NotRunnable(
        f"{where} uses `${{{{ {expression} }}}}`, whose value is not known here ({why}), so the command "
        f"it would need is `{_first_line(text)}` with that value: set `test-command` to it to "
        "have the fix verified"
    )


def _substitute_loosely(text: str, matrix: Mapping[str, Any]) -> str:
    try:
        return _substitute(text, matrix, "")
    except _NotRunnable:
        return text


# ---- the command as the runner runs it ---------------------------------------------------------------
def _defaults(*levels: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for level in levels:
        defaults = level.get("defaults")
        run = defaults.get("run") if isinstance(defaults, dict) else None
        if isinstance(run, dict):
            merged.update(run)
    return merged


def _command(
    workflow: dict[str, Any],
    job: dict[str, Any],
    step: dict[str, Any],
    script: str,
    matrix: dict[str, Any],
    github: Context,
) -> str:
    defaults = _defaults(workflow, job)
    shell = step.get("shell", defaults.get("shell"))
    directory = step.get("working-directory", defaults.get("working-directory"))
    env: dict[str, str] = {}
    for level, what in ((workflow, "the workflow's"), (job, "the job's"), (step, "the step's")):
        env.update(_env(level.get("env"), matrix, what, github))
    prelude: list[str] = []
    if any(_WORKSPACE_WORD in word for word in env.values()):  # the checkout: here, the copy it runs in
        prelude.append('export GITHUB_WORKSPACE="$PWD"')
    if directory is not None and str(directory).strip() not in ("", "."):
        where = _inside(_substitute(str(directory), matrix, "its `working-directory`", github))
        prelude.append(f"cd -- {shlex.quote(where)}")
    prelude += [f"export {name}={word}" for name, word in env.items()]
    body = script.strip("\n")
    if shell is None:
        # the runner's default for a `run:` step: `bash -e {0}` (no pipefail)
        if "|" in body:
            prelude.append("set +o pipefail")
    elif shell == "bash":  # `bash --noprofile --norc -eo pipefail {0}`: how a command line is run here
        pass
    elif shell == "sh":  # `sh -e {0}`
        if _SHELL_SYNTAX.search(body):
            body = f"exec sh -e -c {shlex.quote(body)}"
    else:
        raise _NotRunnable(f"it runs with `shell: {shell}`, and only `bash` and `sh` steps are re-run here")
    return "\n".join([*prelude, body])


_PRELUDE_RE = re.compile(r"^(?:cd -- \S.*|export [A-Za-z_][A-Za-z0-9_]*=.*|set \+o pipefail)$")


def script_of(command: str) -> str:
    """A command as `_command` renders it, without the directory, variables and shell set-up
    lines put before the step's script (for titles and reports)."""
    lines = command.splitlines()
    while lines and _PRELUDE_RE.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines)


_WORKSPACE_WORD = '"$GITHUB_WORKSPACE"'


def _env(value: Any, matrix: dict[str, Any], what: str, github: Context) -> dict[str, str]:
    """The variables an `env:` sets, each as the shell word that gives its value: the literal text
    quoted, `${{ github.workspace }}` the copy the step runs in (`$GITHUB_WORKSPACE`)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _NotRunnable(f"{what} `env:` is computed at run time")
    env: dict[str, str] = {}
    for name, raw in value.items():
        if not _ENV_NAME_RE.match(str(name)):
            raise _NotRunnable(f"{what} `env:` sets `{name}`, which is not a shell variable name")
        text = _shown(raw) if raw is not None else ""
        where = f"{what} `env: {name}`"
        pieces = [""]  # the value's text between the places the workspace goes
        for literal, expression in _split_expressions(text):
            pieces[-1] += literal
            if expression is None:
                continue
            if expression.strip() == WORKSPACE:
                pieces.append("")
            elif (known := _known(expression, matrix, github)) is not None:
                pieces[-1] += known
            else:
                raise _not_known(text, expression, where, github)
        words = [shlex.quote(piece) if piece or len(pieces) == 1 else "" for piece in pieces]
        env[str(name)] = _WORKSPACE_WORD.join(words)
    return env


def _inside(directory: str) -> str:
    """The working directory, repository-relative; refused when it leaves the repository."""
    if directory.startswith("/"):
        raise _NotRunnable(f"its `working-directory` `{directory}` is not inside the repository")
    normal = posixpath.normpath(directory)
    if normal == ".." or normal.startswith("../"):
        raise _NotRunnable(f"its `working-directory` `{directory}` is not inside the repository")
    return normal


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


# ---- local runs: a claimed command counts only when a workflow runs it ---------------------------------
def workflow_steps(git: Git, sha: str) -> list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Every step of every workflow in `.github/workflows/` at `sha`: (path, workflow, job, step)."""
    listing = git.run("ls-tree", "-z", "--name-only", f"{sha}:{WORKFLOWS_DIR}", check=False)
    if not listing.ok:
        return []
    found = []
    for name in sorted(n for n in listing.output.split("\0") if n.endswith((".yml", ".yaml"))):
        path = f"{WORKFLOWS_DIR}/{name}"
        try:
            workflow = read_workflow(git, sha, path)
        except _NotRunnable:
            continue
        for job in workflow["jobs"].values():
            steps = job.get("steps") if isinstance(job, dict) else None
            for step in steps if isinstance(steps, list) else []:
                if isinstance(step, dict):
                    found.append((path, workflow, job, step))
    return found


def _normal(script: str) -> str:
    return "\n".join(line.strip() for line in script.strip().splitlines() if line.strip())


# Composite actions whose own command a log shows under its own `Run` header, in place of the
# step's (`Run pre-commit run --show-diff-on-failure --color=always --all-files` for
# `uses: pre-commit/action@...`): the action, by its repository, and how that command starts.
_COMPOSITE_RUNS = {"pre-commit/action": "pre-commit run "}


def _composite_run(uses: str, claim: str) -> bool:
    """Whether `claim` is the command the composite action `uses` runs (the log's group for it)."""
    start = _COMPOSITE_RUNS.get(uses.split("@", 1)[0])
    return start is not None and claim.strip().startswith(start)


def claimed_commands(
    git: Git, sha: str, claims: Sequence[str], github: Context | None = None
) -> WorkflowCommands:
    """The commands a log claims were run, kept only when a workflow at `sha` has a step running
    exactly that (then run as that step defines it, with the `github` context values known
    locally); the others are named in the notes."""
    found = WorkflowCommands()
    context = github or Context()
    steps = workflow_steps(git, sha)
    for claim in dict.fromkeys(c for c in claims if c.strip()):
        runs = [s for s in steps if "run" in s[3] and _normal(str(s[3]["run"])) == _normal(claim)]
        uses = [s for s in steps if str(s[3].get("uses", "")) == claim.strip()]
        uses = uses or [s for s in steps if _composite_run(str(s[3].get("uses", "")), claim)]
        if uses and not runs:
            found.actions.append(str(uses[0][3]["uses"]))
            continue
        if not runs:
            found.notes.append(
                f"The log names `{_first_line(claim)}` as the failing command, but no workflow in "
                f"`{WORKFLOWS_DIR}/` has a step that runs it, so it is not run: pass it with "
                "`--test-command` to have it run."
            )
            continue
        path, workflow, job, step = runs[0]
        try:
            shown = str(step.get("name") or f"Run {_first_line(claim)}")
            run = _substitute(str(step["run"]), {}, "its `run:`", context)
            script = _in_our_environment(found, shown, run)
            replayed = _replayed(found, files_at(git, sha), script)
            script = replayed.script
            command = _command(workflow, job, step, script, {}, context)
        except _NotRunnable as why:
            found.notes.append(
                f"The step of `{path}` that runs `{_first_line(claim)}` is not run here: {why}."
            )
            continue
        found.commands.append(
            StepCommand(command, script, str(job.get("name", "")), str(step.get("name", "")))
        )
        found.setup += [line for line in replayed.installs if line not in found.setup]
        listed = job.get("steps")
        steps_of_job: list[Any] = listed if isinstance(listed, list) else []
        earlier = steps_of_job[: next((i for i, s in enumerate(steps_of_job) if s is step), 0)]
        _follow_poetry(found, _poetry_install(earlier, {}, files_at(git, sha), context))
    return found


# ---- triggers ------------------------------------------------------------------------------------------
def has_dispatch_trigger(workflow_text: str) -> bool:
    """Whether a workflow file's text names the `workflow_dispatch` event (comments ignored)."""
    lines = [re.sub(r"(^|\s)#.*$", "", line) for line in workflow_text.splitlines()]
    return re.search(r"(?<![\w-])workflow_dispatch(?![\w-])", "\n".join(lines)) is not None
