"""The deterministic fixers we know: how each is recognised in a failing command and how it runs.

Each fixer is one tool in write mode. A failing check command (`black --check -l 100 src`) is
turned into the fixing one by dropping the flags that only report (`--check`, `--diff`,
`--output-format ...`) and keeping the rest, so options that change the result (line length,
profile, config file, selected rules) and the paths it targeted carry over.
"""

from __future__ import annotations

from dataclasses import dataclass

_RUFF_VALUES = frozenset(
    {
        "--config",
        "--target-version",
        "--line-length",
        "--select",
        "--ignore",
        "--extend-select",
        "--extend-ignore",
        "--per-file-ignores",
        "--extend-per-file-ignores",
        "--exclude",
        "--extend-exclude",
        "--fixable",
        "--unfixable",
        "--extend-fixable",
        "--extend-unfixable",
        "--cache-dir",
        "--range",
        "--dummy-variable-rgx",
        "--stdin-filename",
        "--output-format",
        "--format",
        "-o",
        "--output-file",
    }
)


@dataclass(frozen=True)
class Fixer:
    name: str  # the name users write in the `fixers` input
    package: str  # the PyPI distribution, also the console script
    command: tuple[str, ...]  # after the executable: subcommand and the flags that make it write
    check_flags: frozenset[str]  # flags that mark a check-only run of the tool in a failing command
    drop_flags: frozenset[str]  # report-only flags removed when turning a check into a fix
    drop_values: frozenset[str]  # report-only options with a value, removed with their value
    value_options: frozenset[str]  # options whose next argument is a value, not a path
    hook_ids: frozenset[str]  # pre-commit hook ids that run this fixer
    failure_tools: frozenset[str]  # `Failure.tool` values (with `failure_kinds`) that this fixer answers
    failure_kinds: frozenset[str]
    version_args: tuple[str, ...] = ("--version",)


RUFF_CHECK = Fixer(
    name="ruff-check",
    package="ruff",
    command=("check", "--fix", "--no-cache"),
    check_flags=frozenset(),  # `ruff check` always checks
    drop_flags=frozenset(
        {
            "--fix",
            "--no-fix",
            "--diff",
            "--exit-zero",
            "--exit-non-zero-on-fix",
            "--statistics",
            "--show-source",
            "--no-show-source",
            "--show-fixes",
            "--no-show-fixes",
            "--watch",
            "-w",
            "--no-cache",
            "-e",
        }
    ),
    drop_values=frozenset({"--output-format", "--format", "-o", "--output-file", "--stdin-filename"}),
    value_options=_RUFF_VALUES,
    hook_ids=frozenset({"ruff", "ruff-check"}),
    failure_tools=frozenset({"ruff", "ruff-check"}),
    failure_kinds=frozenset({"lint"}),
)
RUFF_FORMAT = Fixer(
    name="ruff-format",
    package="ruff",
    command=("format", "--no-cache"),
    check_flags=frozenset({"--check", "--diff"}),
    drop_flags=frozenset({"--check", "--diff", "--exit-non-zero-on-format", "--no-cache"}),
    drop_values=frozenset({"--output-format", "--stdin-filename"}),
    value_options=_RUFF_VALUES,
    hook_ids=frozenset({"ruff-format"}),
    failure_tools=frozenset({"ruff-format", "ruff"}),
    failure_kinds=frozenset({"format"}),
)
BLACK = Fixer(
    name="black",
    package="black",
    command=(),
    check_flags=frozenset({"--check", "--diff"}),
    drop_flags=frozenset({"--check", "--diff", "--color", "--no-color"}),
    drop_values=frozenset({"-c", "--code", "--stdin-filename"}),
    value_options=frozenset(
        {
            "-l",
            "--line-length",
            "-t",
            "--target-version",
            "--config",
            "--include",
            "--exclude",
            "--extend-exclude",
            "--force-exclude",
            "--python-cell-magics",
            "--required-version",
            "-W",
            "--workers",
            "--enable-unstable-feature",
            "--line-ranges",
        }
    ),
    hook_ids=frozenset({"black", "black-jupyter"}),
    failure_tools=frozenset({"black"}),
    failure_kinds=frozenset({"format", "lint"}),
)
ISORT = Fixer(
    name="isort",
    package="isort",
    command=(),
    check_flags=frozenset({"--check-only", "--check", "-c", "--diff", "--df"}),
    drop_flags=frozenset(
        {
            "--check-only",
            "--check",
            "-c",
            "--diff",
            "--df",
            "--color",
            "--show-files",
            "--show-config",
            "--stdout",
            "-d",
        }
    ),
    drop_values=frozenset(),
    value_options=frozenset(
        {
            "--settings-path",
            "--settings-file",
            "--settings",
            "--sp",
            "--profile",
            "-l",
            "--line-length",
            "--line-width",
            "-w",
            "--wrap-length",
            "--wl",
            "-m",
            "--multi-line",
            "-s",
            "--skip",
            "--skip-glob",
            "--sg",
            "--extend-skip",
            "--extend-skip-glob",
            "--src",
            "--src-path",
            "-p",
            "--project",
            "-o",
            "--thirdparty",
            "-b",
            "--builtin",
            "-a",
            "--add-import",
            "--rm",
            "--remove-import",
            "--virtual-env",
            "--conda-env",
            "--py",
            "--python-version",
            "-j",
            "--jobs",
            "--ext",
            "--extension",
            "--supported-extension",
            "--blocked-extension",
            "--sections",
            "--section-default",
            "--lai",
            "--lines-after-imports",
            "--lbt",
            "--lines-between-types",
            "--le",
            "--line-ending",
            "--known-local-folder",
            "-f",
            "--future",
            "--fgw",
            "--force-grid-wrap",
            "-i",
            "--indent",
            "--filter-files-glob",
        }
    ),
    hook_ids=frozenset({"isort"}),
    failure_tools=frozenset({"isort"}),
    failure_kinds=frozenset({"format", "lint"}),
    version_args=("--version-number",),
)

# The order fixers run in: imports sorted before formatting, lint fixes before the formatter
# (both the fixes and the sorting change code the formatter then lays out).
FIXERS: tuple[Fixer, ...] = (ISORT, RUFF_CHECK, BLACK, RUFF_FORMAT)
BY_NAME: dict[str, Fixer] = {f.name: f for f in FIXERS}
PACKAGES: tuple[str, ...] = tuple(dict.fromkeys(f.package for f in FIXERS))
