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
    # Not from PyPI: the program run, from the sandbox's PATH (a runtime the ladder provisioned:
    # `gofmt`, `cargo`) or, with a `/`, from the checkout (the repository's own `node_modules`,
    # installed by `npm ci`; never a global one). "": `package`, installed by us from PyPI.
    program: str = ""
    takes_paths: bool = True  # the paths of the failing command are passed on (not `cargo fmt`)
    always_checks: bool = False  # every run reports (`ruff check`, `eslint`): no check flag needed
    expands_globs: bool = False  # the tool expands quoted glob patterns itself (prettier, eslint)


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
    always_checks=True,
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

GOFMT = Fixer(
    name="gofmt",
    package="gofmt",
    command=("-w",),
    check_flags=frozenset({"-l", "-d"}),
    drop_flags=frozenset({"-l", "-d", "-e", "-w"}),
    drop_values=frozenset(),
    value_options=frozenset({"-r", "-cpuprofile"}),
    hook_ids=frozenset({"go-fmt", "gofmt"}),
    failure_tools=frozenset({"gofmt"}),
    failure_kinds=frozenset({"format", "lint"}),
    program="gofmt",
)
GOIMPORTS = Fixer(
    name="goimports",
    package="goimports",
    command=("-w",),
    check_flags=frozenset({"-l", "-d"}),
    drop_flags=frozenset({"-l", "-d", "-e", "-w", "-v"}),
    drop_values=frozenset(),
    value_options=frozenset({"-local", "-srcdir", "-cpuprofile", "-memprofile", "-memrate", "-trace"}),
    hook_ids=frozenset({"go-imports", "goimports"}),
    failure_tools=frozenset({"goimports"}),
    failure_kinds=frozenset({"format", "lint"}),
    # not part of the Go distribution: run only where the machine has it (a runner's own, a local
    # checkout's); ci-autofix does not install it
    program="goimports",
)
CARGO_FMT = Fixer(
    name="cargo-fmt",
    package="rustfmt",
    command=("fmt",),
    check_flags=frozenset({"--check"}),
    drop_flags=frozenset({"--check", "-v", "--verbose", "-q", "--quiet"}),
    drop_values=frozenset({"--message-format"}),
    value_options=frozenset({"-p", "--package", "--manifest-path"}),
    hook_ids=frozenset({"fmt", "cargo-fmt", "rustfmt"}),
    failure_tools=frozenset({"rustfmt", "cargo-fmt"}),
    failure_kinds=frozenset({"format", "lint"}),
    program="cargo",
    takes_paths=False,
)
_NODE_PRINT = frozenset({"--log-level", "--loglevel"})
PRETTIER = Fixer(
    name="prettier",
    package="prettier",
    command=("--write",),
    check_flags=frozenset({"--check", "-c", "--list-different", "-l"}),
    drop_flags=frozenset(
        {"--check", "-c", "--list-different", "-l", "--write", "-w", "--no-color", "--color"}
    ),
    drop_values=_NODE_PRINT,
    value_options=frozenset(
        {
            "--config",
            "--ignore-path",
            "--plugin",
            "--parser",
            "--print-width",
            "--tab-width",
            "--trailing-comma",
            "--end-of-line",
            "--arrow-parens",
            "--prose-wrap",
            "--quote-props",
            "--html-whitespace-sensitivity",
            "--embedded-language-formatting",
            "--object-wrap",
            "--experimental-operator-position",
            "--config-precedence",
            "--cache-location",
            "--cache-strategy",
            "--stdin-filepath",
        }
    ),
    hook_ids=frozenset({"prettier"}),
    failure_tools=frozenset({"prettier"}),
    failure_kinds=frozenset({"format", "lint"}),
    program="node_modules/.bin/prettier",
    expands_globs=True,
)
ESLINT = Fixer(
    name="eslint",
    package="eslint",
    command=("--fix",),
    check_flags=frozenset(),  # `eslint` always checks
    drop_flags=frozenset({"--fix", "--fix-dry-run", "--no-color", "--color", "--quiet"}),
    drop_values=frozenset({"-f", "--format", "-o", "--output-file", "--max-warnings", "--fix-type"}),
    value_options=frozenset(
        {
            "-c",
            "--config",
            "--ext",
            "--resolve-plugins-relative-to",
            "--rulesdir",
            "--ignore-path",
            "--ignore-pattern",
            "--parser",
            "--parser-options",
            "--env",
            "--global",
            "--plugin",
            "--rule",
            "--cache-location",
            "--cache-strategy",
            "--stdin-filename",
            "--report-unused-disable-directives-severity",
            "--flag",
        }
    ),
    hook_ids=frozenset({"eslint"}),
    failure_tools=frozenset({"eslint"}),
    failure_kinds=frozenset({"lint"}),
    program="node_modules/.bin/eslint",
    expands_globs=True,
    always_checks=True,
)

# biome: `biome check`/`biome ci` (formatter, linter and import sorting), `biome format`, `biome lint`;
# each writes with `--write` (biome 1.8 and later), from the repository's own node_modules.
_BIOME_DROP = frozenset(
    {
        "--write",
        "--fix",
        "--apply",
        "--apply-unsafe",
        "--unsafe",
        "--colors",
        "--error-on-warnings",
        "--staged",
    }
)
_BIOME_DROP_VALUES = frozenset(
    {"--reporter", "--max-diagnostics", "--diagnostic-level", "--log-level", "--log-kind", "--colors"}
)
_BIOME_VALUES = frozenset(
    {
        "--config-path",
        "--vcs-root",
        "--stdin-file-path",
        "--since",
        "--skip",
        "--only",
        "--indent-style",
        "--indent-width",
        "--line-ending",
        "--line-width",
        "--quote-style",
        "--jsx-quote-style",
        "--trailing-commas",
        "--semicolons",
        "--arrow-parentheses",
        "--bracket-spacing",
        "--bracket-same-line",
        "--quote-properties",
        "--attribute-position",
        "--files-max-size",
        "--use-server",
    }
)


def _biome(name: str, subcommand: str) -> Fixer:
    return Fixer(
        name=name,
        package="@biomejs/biome",
        command=(subcommand, "--write"),
        check_flags=frozenset(),  # without `--write` every run only reports
        drop_flags=_BIOME_DROP,
        drop_values=_BIOME_DROP_VALUES,
        value_options=_BIOME_VALUES,
        hook_ids=frozenset({f"biome-{subcommand}"}),
        failure_tools=frozenset({"biome"}),
        failure_kinds=frozenset({"format"} if subcommand == "format" else {"format", "lint"}),
        program="node_modules/.bin/biome",
        always_checks=True,
    )


BIOME_CHECK = _biome("biome-check", "check")
BIOME_FORMAT = _biome("biome-format", "format")
BIOME_LINT = _biome("biome-lint", "lint")

# The order fixers run in: imports sorted before formatting, lint fixes before the formatter
# (both the fixes and the sorting change code the formatter then lays out).
FIXERS: tuple[Fixer, ...] = (
    ISORT,
    RUFF_CHECK,
    BLACK,
    RUFF_FORMAT,
    GOIMPORTS,
    GOFMT,
    CARGO_FMT,
    ESLINT,
    BIOME_LINT,
    BIOME_CHECK,
    BIOME_FORMAT,
    PRETTIER,
)
BY_NAME: dict[str, Fixer] = {f.name: f for f in FIXERS}
# The PyPI packages of the Python fixers (installed by us, read from the repository's pins).
PACKAGES: tuple[str, ...] = tuple(dict.fromkeys(f.package for f in FIXERS if not f.program))
