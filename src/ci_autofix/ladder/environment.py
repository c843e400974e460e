"""The environment the failing commands run in: for a Python repository, a virtualenv outside
the workspace prepared by `setup-command`, or by default with the project and its test extras
installed; nothing at all when the commands are standalone linters. It is prepared in the clean
copy verification runs in (`Workarea.clean_copy`), so nothing preparing or running leaves
behind reaches the fix."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shlex
import stat
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ci_autofix.ladder.evidence import Evidence
from ci_autofix.sandbox import Sandbox, chown_tree, others_can_run
from ci_autofix.workflow.poetry import PoetryInstall

_STAMP = ".ci-autofix-setup"
# The directory of the tools at the exact version CI ran (`ladder.tools`): first on PATH, before
# the prepared environment, whose own copy of a tool may be a newer release of an unpinned range.
CI_TOOLS = "ci-versions"
_TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop")
# The pip that installs the job's setup when it is resolved at CI's date: ours, pinned and hashed (a
# copy of ci/pip.lock), since the environment's own pip is its interpreter's bundled one (23.0 on
# Debian 12, 25 on python:3.13) and `--uploaded-prior-to` came with pip 26.
PIP_LOCK = Path(__file__).with_name("pip.txt")
_PIP_INSTALL = "python -m pip install "  # how `workflow.definition` writes each install of the job
_REQUIREMENTS = re.compile(
    r"^(?:requirements|(?:test|dev)-requirements|requirements[-_](?:test|tests|dev))\.txt$"
)


def is_python_project(root: Path) -> bool:
    return any((root / name).is_file() for name in ("pyproject.toml", "setup.py", "setup.cfg")) or bool(
        _requirement_files(root)
    )


def default_env_dir(root: Path) -> Path:
    base = Path(os.environ.get("RUNNER_TEMP") or tempfile.gettempdir())
    return base / "ci-autofix-env" / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


def default_setup(root: Path, python: Path) -> list[str] | None:
    """The pip command that installs the project and its test extras, or None when there is nothing to install."""
    targets: list[str] = []
    pyproject = _pyproject(root)
    installable = (
        (root / "setup.py").is_file()
        or (root / "setup.cfg").is_file()
        or ("project" in pyproject or "build-system" in pyproject)
    )
    if installable:
        project = pyproject.get("project", {})
        optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
        extras = [name for name in optional if name in _TEST_EXTRAS] if isinstance(optional, dict) else []
        targets += ["-e", "." + (f"[{','.join(extras)}]" if extras else "")]
    groups = pyproject.get("dependency-groups", {})
    if isinstance(groups, dict):
        for name in _TEST_EXTRAS:
            targets += [req for req in groups.get(name, []) if isinstance(req, str)]
    for path in _requirement_files(root):
        targets += ["-r", path.relative_to(root).as_posix()]
    if not targets:
        return None
    return [
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        *targets,
    ]


def shown_setup(argv: Sequence[str]) -> str:
    """The default setup's pip command as the user reads it (`pip install -e .`)."""
    return "pip install " + " ".join(argv[list(argv).index("--quiet") + 1 :])


def _requirement_files(root: Path) -> list[Path]:
    found = [p for p in sorted(root.glob("*.txt")) if _REQUIREMENTS.match(p.name)]
    found += [p for p in sorted(root.glob("requirements/*.txt")) if re.search(r"test|dev", p.name)]
    return [p for p in found if p.is_file()]


def _pyproject(root: Path) -> dict[str, object]:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def uses_ruff(root: Path) -> bool:
    """Ruff configured (pyproject, ruff.toml, .ruff.toml) or listed in the dev dependencies or pre-commit."""
    if (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        return True
    pyproject = _pyproject(root)
    tool = pyproject.get("tool")
    if isinstance(tool, dict) and "ruff" in tool:
        return True
    texts = [str(pyproject.get("project", {})), str(pyproject.get("dependency-groups", {}))]
    texts += [p.read_text(errors="replace") for p in _requirement_files(root)]
    pre_commit = root / ".pre-commit-config.yaml"
    if pre_commit.is_file():
        texts.append(pre_commit.read_text(errors="replace"))
    return any(re.search(r"\bruff\b", text) for text in texts)


@dataclass(frozen=True)
class Prepared:
    sandbox: Sandbox
    setup: Evidence | None


def _stamp(
    root: Path, setup_command: str, job_setup: Sequence[str] = (), poetry: PoetryInstall | None = None
) -> str:
    digest = hashlib.sha256(setup_command.encode() + b"\0" + "\n".join(job_setup).encode() + b"\0")
    if poetry is not None:
        digest.update(repr(poetry).encode() + b"\0")
    for name in ("pyproject.toml", "setup.py", "setup.cfg"):
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    for path in _requirement_files(root):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# Tools that check files without importing the project: no environment to prepare for them.
STANDALONE_TOOLS = frozenset(
    {
        "ruff",
        "black",
        "isort",
        "flake8",
        "codespell",
        "yamllint",
        "shellcheck",
        "prettier",
        "eslint",
        "markdownlint",
        "actionlint",
        "hadolint",
        "typos",
    }
)


def needs_environment(commands: Sequence[str]) -> bool:
    """Whether any command runs the project's code (tests, type checks) rather than a standalone
    linter: each line of a command counts (a replayed `tox -e lint` is flake8, then check-manifest)."""
    for line in (line for command in commands for line in command.splitlines()):
        words = line.split()
        if not words or words[0].startswith("#") or words[0] in _SHELL_SETUP:
            continue
        tool = Path(words[0]).name
        if tool in ("python", "python3") and len(words) > 2 and words[1] == "-m":
            tool = words[2]
        if tool not in STANDALONE_TOOLS:
            return True
    return False


# lines that set up the shell a command runs in, not a program (`workflow.definition`, `workflow.replay`)
_SHELL_SETUP = frozenset({"cd", "export", "set", "(", ")"})


@dataclass(frozen=True)
class Environment:
    """How the environment the judged commands run in is made: `setup_command` (`setup-command`)
    when set, else what the failed job installed before the failed step (`job_setup`: its
    `pip install` lines, from the workflow; then `poetry`: its `poetry install`, followed from
    poetry.lock), else the project with its test extras (`default_setup`); for a Python project,
    in the virtualenv at `env_dir` (None: `default_env_dir`).

    With `resolved_at` (when CI ran), the job's installs resolve as they did then: pip considers only
    the files the index had before that moment (`--uploaded-prior-to`), so an unpinned or ranged
    requirement gets the release CI got (pyramid's unpinned `check-manifest` of 2020 passes on its
    2020 tree; today's fails), and a pinned one the release it names, as before. When that cannot
    be installed here (a dependency of then with no wheel for this Python and a source that no
    longer builds: black 19.10b0's `typed-ast` 1.4 on Python 3.11), each requirement is installed
    with its dependencies as of then where it can be, else it alone as of then (`--no-deps`) and its
    dependencies as pip resolves them today (`dependencies_today`): pyramid's `readme_renderer`
    keeps 2020's `bleach` while black takes today's `typed-ast`. A line that names its own index
    (`--index-url`, `--find-links`, ...) is installed as written: that index may not say when its
    files were uploaded (PEP 700), and pip then refuses every file. The poetry lock's packages are
    exact versions with their hashes, installed as locked."""

    setup_command: str = ""
    job_setup: Sequence[str] = ()
    env_dir: Path | None = None
    poetry: PoetryInstall | None = None
    resolved_at: datetime | None = None

    def job_installs(self, *, dependencies_today: bool = False) -> tuple[list[str], list[str]]:
        """The job's installs as run (a script's lines) and as shown: at `resolved_at`, after ours
        pip is installed (hash-checked, from the lock the package ships) to resolve them."""
        if self.resolved_at is None or not any(_datable(line) for line in self.job_setup):
            return list(self.job_setup), list(self.job_setup)
        moment = f"--uploaded-prior-to={as_of(self.resolved_at)}"
        lock = PIP_LOCK.read_text(encoding="utf-8")
        pip = re.search(r"^pip==(\S+)", lock, re.M)
        ours = (
            f"{_PIP_INSTALL}--disable-pip-version-check --no-input --quiet --require-hashes "
            f"--only-binary=:all: --no-deps -r /dev/stdin <<'CI_AUTOFIX_PIP_LOCK'\n{lock.rstrip()}\nCI_AUTOFIX_PIP_LOCK"
        )
        dated: list[str] = []
        for line in self.job_setup:
            if not _datable(line):
                dated.append(line)
                continue
            words = shlex.split(line.removeprefix(_PIP_INSTALL))
            if not dependencies_today:
                dated.append(shlex.join(["python", "-m", "pip", "install", moment, *words]))
                continue
            dated += _each_as_of_then(moment, words)
        shown = f"{_PIP_INSTALL}pip=={pip.group(1) if pip else '?'} (ci-autofix's, hash-checked)"
        return [ours, *dated], [shown, *dated]


# the options that would replace what the dated pass installed with today's release
_REINSTALLS = frozenset({"-U", "--upgrade", "--force-reinstall", "-I", "--ignore-installed"})


def _each_as_of_then(moment: str, words: list[str]) -> list[str]:
    """Script lines that install `words` (one `pip install`'s) as of `moment` where they can be:
    each requirement with its dependencies as of then, else it alone as of then and its
    dependencies today; a line with options that take a value (`-r`, `-e`, `-c`) as a whole."""
    pip = ["python", "-m", "pip", "install"]
    options = [w for w in words if w.startswith("-")]
    if any(o not in _REINSTALLS for o in options):
        kept = [w for w in words if w not in _REINSTALLS]  # what the first pass installed stays
        return [shlex.join([*pip, moment, "--no-deps", *words]), shlex.join([*pip, *kept])]
    lines = []
    for requirement in (w for w in words if not w.startswith("-")):
        whole = shlex.join([*pip, moment, *options, requirement])
        alone = shlex.join([*pip, moment, "--no-deps", *options, requirement])
        lines.append(f"{whole} || {{ {alone} && {shlex.join([*pip, requirement])}; }}")
    return lines


# the options that name an index or a directory of files of the line's own
_OWN_INDEX = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--no-index"})


def _datable(line: str) -> bool:
    """A job's `pip install` line that resolves from the index we know has upload times."""
    if not line.startswith(_PIP_INSTALL):
        return False
    words = shlex.split(line.removeprefix(_PIP_INSTALL))
    return not any(w.split("=", 1)[0] in _OWN_INDEX or w.startswith(("-i", "-f")) for w in words)


def as_of(moment: datetime) -> str:
    """A moment as pip's `--uploaded-prior-to` takes it, and as the evidence shows it (UTC)."""
    when = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def prepare(
    sandbox: Sandbox,
    environment: Environment,
    *,
    timeout: float,
    commands: Sequence[str] = ("",),
    on_start: Callable[[str], None] = lambda _command: None,
) -> Prepared:
    """The sandbox the commands run in, after the setup (run at most once per dependency content).

    Without a configured setup, commands that only run standalone linters need no environment.
    `on_start` hears each setup command as it starts.
    """
    root = sandbox.root
    setup_command, job_setup = environment.setup_command, environment.job_setup
    if not setup_command and commands is not None and not needs_environment(commands):
        return Prepared(sandbox, None)
    if not is_python_project(root) and not job_setup and environment.poetry is None:
        if not setup_command:
            return Prepared(sandbox, None)
        on_start(setup_command)
        return Prepared(
            sandbox, Evidence.of(setup_command, sandbox.run_command_line(setup_command, timeout=timeout))
        )
    env_dir = environment.env_dir or default_env_dir(root)
    bin_dir = env_dir / "bin"
    inner = dataclasses.replace(
        sandbox,
        extra_env={
            **sandbox.extra_env,
            "VIRTUAL_ENV": str(env_dir),
            "PATH": _after_ci_tools(str(bin_dir), sandbox.env().get("PATH", os.defpath)),
        },
    )
    stamp = _stamp(root, setup_command, environment.job_installs()[0], environment.poetry)
    # Beside the environment, not in it: the environment belongs to the sandbox's user.
    stamp_file = env_dir.parent / (env_dir.name + _STAMP)
    # A `setup-command` runs in every clean copy (what it writes into the checkout is part of
    # the environment); the default install, once per content of the dependency files.
    reusable = not setup_command and (bin_dir / "python").exists() and stamp_file.is_file()
    if reusable and stamp_file.read_text() == stamp:
        return Prepared(inner, None)
    with _lent(env_dir, sandbox):
        setup = _set_up(sandbox, inner, env_dir, environment, timeout, on_start)
    if setup is None or setup.ok:
        stamp_file.write_text(stamp)
    return Prepared(inner, setup)


# The environment's pip: the interpreter's own bundled wheel (what `ensurepip` installs), put in
# place without byte-compiling its 700 modules, which is most of the CPU `python -m venv` spends
# (3.4 s of 3.6 s here); those pip imports are compiled when it first runs. Where the wheel is not
# found, `ensurepip` as `python -m venv` runs it. Run by the new environment's python, isolated (-I).
_SEED_PIP = """
import ensurepip, pathlib, runpy, sys, sysconfig
name = f"pip-{ensurepip.version()}-py3-none-any.whl"
places = [sysconfig.get_config_var("WHEEL_PKG_DIR"), pathlib.Path(ensurepip.__file__).parent / "_bundled"]
wheels = [pathlib.Path(p) / name for p in places if p and (pathlib.Path(p) / name).is_file()]
if wheels:
    sys.path.insert(0, str(wheels[0]))
    sys.argv = ["pip", "install", "--no-compile", "--no-index", "--no-cache-dir", "--quiet",
                "--disable-pip-version-check", str(wheels[0])]
    runpy.run_module("pip", run_name="__main__", alter_sys=True)
else:
    sys.argv = ["ensurepip", "--upgrade", "--default-pip"]
    runpy.run_module("ensurepip", run_name="__main__", alter_sys=True)
"""


def _set_up(
    sandbox: Sandbox,
    inner: Sandbox,
    env_dir: Path,
    environment: Environment,
    timeout: float,
    on_start: Callable[[str], None],
) -> Evidence | None:
    """Create the virtualenv at `env_dir` when it is missing, then run the setup (or install the
    project) in it."""
    setup_command, job_setup = environment.setup_command, environment.job_setup
    bin_dir = env_dir / "bin"
    if not (bin_dir / "python").exists():
        # Created by the sandbox's user, who must write there while the setup runs.
        sandbox.run(["mkdir", "-p", "--", str(env_dir.parent)], timeout=timeout)
        on_start(f"python -m venv {env_dir.name}")
        created = sandbox.run(
            [interpreter(sandbox), "-m", "venv", "--without-pip", str(env_dir)], timeout=timeout
        )
        if created.ok:
            created = sandbox.run([str(bin_dir / "python"), "-I", "-c", _SEED_PIP], timeout=timeout)
        if not created.ok:
            return Evidence.of(f"python -m venv {env_dir.name}", created)
    if setup_command:
        on_start(setup_command)
        return Evidence.of(setup_command, inner.run_command_line(setup_command, timeout=timeout))
    if job_setup or environment.poetry is not None:
        # as the job installed it: in our environment, its `python` first on PATH
        if job_setup:
            installed = _job_installs(inner, environment, timeout, on_start)
            if not installed.ok or environment.poetry is None:
                return installed
        poetry = environment.poetry
        return _poetry_install(inner, bin_dir / "python", poetry, timeout, on_start) if poetry else None
    argv = default_setup(inner.root, bin_dir / "python")
    if argv is None:
        return None
    shown = shown_setup(argv)
    on_start(shown)
    return Evidence.of(shown, inner.run(argv, timeout=timeout))


# what pip says when a file is not the one the lock's hash names: never a package to leave out
_HASH_MISMATCH = "THESE PACKAGES DO NOT MATCH THE HASHES"


def _poetry_install(
    inner: Sandbox, python: Path, poetry: PoetryInstall, timeout: float, on_start: Callable[[str], None]
) -> Evidence:
    """The job's `poetry install` as poetry would have installed it (`workflow.poetry`): the lock's
    packages from a requirements file in the sandbox's temp dir, with the lock's hashes checked,
    then the project; the first of those that fails, else the last.

    A lock older than this Python may hold packages that cannot be installed here (rich's mypy
    0.971: no wheel for it, and a source that no longer builds): then each package is installed on
    its own, those that cannot be are left out and named in the setup's evidence, and the step
    decides (a tool it names that was left out fails it). A file whose hash is not the lock's is
    never left out: it fails the setup."""
    shown = poetry.describe()
    on_start(shown)
    if poetry.error:
        return Evidence(shown, 1, False, poetry.error)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"]
    result = None
    left_out: list[str] = []
    for hashed in (True, False):
        text = poetry.requirements(hashed=hashed)
        if not text:
            continue
        install = [*pip, "--no-deps", *(["--require-hashes"] if hashed else []), "-r"]
        with _requirements_file(inner, text) as path:
            result = inner.run([*install, str(path)], timeout=timeout)
        if result.ok:
            continue
        if _HASH_MISMATCH in result.output:
            return Evidence.of(shown, result)
        for line in text.splitlines():  # one by one: what cannot be installed here is left out
            with _requirements_file(inner, line + "\n") as path:
                one = inner.run([*install, str(path)], timeout=timeout)
            if _HASH_MISMATCH in one.output:
                return Evidence.of(shown, one)
            if not one.ok:
                left_out.append(line.split(" ", 1)[0])
        result = None
    if left_out:
        shown += f"; left out, as they cannot be installed here: {', '.join(left_out)}"
    root = poetry.root
    if root is not None and root.pip:
        result = inner.run([*pip, "--no-deps", "-e", "."], timeout=timeout)
    elif root is not None:
        spec = {
            "name": re.sub(r"[-_.]+", "_", root.name).lower(),
            "project": root.name,
            "version": root.version,
            "paths": [str(inner.root / p) if p != "." else str(inner.root) for p in root.paths],
            "scripts": dict(root.scripts),
            "entry_points": [list(e) for e in root.entry_points],
        }
        result = inner.run([str(python), "-I", "-c", _EDITABLE, json.dumps(spec)], timeout=timeout)
    return Evidence.of(shown, result) if result is not None else Evidence(shown, 0, False, "")


# The project installed as poetry's own editable builder installs it: a `.pth` file naming its
# package directories, a script for each console entry point, and its `*.dist-info` (its version
# and entry points, which `importlib.metadata` reads: isort asks for its own version). Run by the
# environment's Python (isolated from the user's site and variables), as the sandbox's user; it
# writes only in the environment (`sys.prefix`), and refuses to when it is not one.
_EDITABLE = """
import json, os, sys, sysconfig
spec = json.loads(sys.argv[1])
if sys.prefix == sys.base_prefix:
    sys.exit("not a virtual environment: " + sys.prefix)
lib = sysconfig.get_paths()["purelib"]
def fresh(path):
    if os.path.lexists(path):
        os.unlink(path)
    return open(path, "x")
with fresh(os.path.join(lib, spec["name"] + ".pth")) as pth:
    pth.write("".join(path + "\\n" for path in spec["paths"]))
for name, reference in spec["scripts"].items():
    module, _, attribute = reference.partition(":")
    path = os.path.join(os.path.dirname(sys.executable), name)
    with fresh(path) as script:
        script.write(
            f"#!{sys.executable}\\nimport sys\\nfrom {module} import {attribute.split('.')[0]} as entry\\n"
            f"sys.exit(entry{''.join('.' + a for a in attribute.split('.')[1:])}())\\n"
        )
    os.chmod(path, 0o755)
info = os.path.join(lib, spec["name"] + "-" + spec["version"] + ".dist-info")
os.makedirs(info, exist_ok=True)
groups = {"console_scripts": list(spec["scripts"].items())}
for group, name, reference in spec["entry_points"]:
    groups.setdefault(group, []).append((name, reference))
files = {
    "METADATA": f"Metadata-Version: 2.1\\nName: {spec['project']}\\nVersion: {spec['version']}\\n",
    "INSTALLER": "ci-autofix\\n",
    "entry_points.txt": "".join(
        f"[{group}]\\n" + "".join(f"{n} = {r}\\n" for n, r in entries) + "\\n" for group, entries in groups.items()
    ),
    "RECORD": "",
}
for name, text in files.items():
    with fresh(os.path.join(info, name)) as handle:
        handle.write(text)
"""


@contextlib.contextmanager
def _requirements_file(sandbox: Sandbox, text: str) -> Iterator[Path]:
    """`text` in a new file of ours in the sandbox's temp dir (never the repository's tree), created
    without following any link the sandbox's user could have left there, readable by that user."""
    fd, name = tempfile.mkstemp(prefix="poetry-lock-", suffix=".txt", dir=sandbox.tmpdir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), 0o644)
        yield Path(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _job_installs(
    inner: Sandbox, environment: Environment, timeout: float, on_start: Callable[[str], None]
) -> Evidence:
    """The job's `pip install` lines, as of when CI ran where that is known; where that cannot be
    installed here, each requirement as of then where it can be (`Environment.job_installs`)."""
    script, lines = environment.job_installs()
    on_start(" && ".join(lines))
    installed = Evidence.of(" && ".join(lines), inner.run_command_line("\n".join(script), timeout=timeout))
    if installed.ok or environment.resolved_at is None:
        return installed
    script, lines = environment.job_installs(dependencies_today=True)  # what then was, where it can be
    on_start(" && ".join(lines))
    return Evidence.of(" && ".join(lines), inner.run_command_line("\n".join(script), timeout=timeout))


@contextlib.contextmanager
def _lent(env_dir: Path, sandbox: Sandbox) -> Iterator[None]:
    """The environment belongs to the sandbox's user only while the setup runs; then to us again,
    read-only to it, so the commands run afterwards (the repository's tests) cannot change it."""
    if sandbox.user is None or sandbox.group is None or not env_dir.is_dir():
        yield
        return
    chown_tree(env_dir, sandbox.user, sandbox.group)
    try:
        yield
    finally:
        chown_tree(env_dir, os.geteuid(), os.getegid())
        for directory, dirs, names in os.walk(env_dir):
            for path in (directory, *(os.path.join(directory, n) for n in (*dirs, *names))):
                with contextlib.suppress(OSError):
                    st = os.lstat(path)
                    if not stat.S_ISLNK(st.st_mode):
                        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)


def _after_ci_tools(directory: str, path: str) -> str:
    """`path` with `directory` first, or second when `CI_TOOLS` leads it."""
    parts = path.split(os.pathsep)
    lead = parts[:1] if parts and Path(parts[0]).name == CI_TOOLS else []
    return os.pathsep.join([*lead, directory, *parts[len(lead) :]])


def interpreter(sandbox: Sandbox) -> str:
    """The Python the sandbox's user can run: ours when it can (the image's), else the first
    `python3` on the commands' PATH that it can (ours may sit in a home it cannot enter)."""
    if sandbox.user is None or others_can_run(sys.executable):
        return sys.executable
    path = sandbox.env().get("PATH", os.defpath).split(os.pathsep)
    candidates = (os.path.join(directory, "python3") for directory in path if directory)
    return next((c for c in candidates if others_can_run(c)), sys.executable)
