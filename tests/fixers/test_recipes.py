"""Task runners read through to their commands, from their files, never by running them."""

from __future__ import annotations

from pathlib import Path

from ci_autofix.fixers.recipes import make_recipe, nox_commands, package_script, script_lines, tox_commands

MAKEFILE = """\
PY := python3
SRC = src tests
RUFF = $(PY) -m ruff
all: lint

lint: fmt  # prerequisites first
\t-$(RUFF) check ${SRC}
\t@echo "$$HOME done"

fmt: ; $(RUFF) format --check $(SRC) \\
\t  --diff
"""


def test_a_make_target_is_its_prerequisites_then_its_recipe_with_the_variables_expanded(
    tmp_path: Path,
) -> None:
    (tmp_path / "Makefile").write_text(MAKEFILE)
    expected = [
        "python3 -m ruff format --check src tests  --diff",
        "python3 -m ruff check src tests",
        'echo "$HOME done"',
    ]
    assert make_recipe(tmp_path, ["lint"]) == expected
    assert make_recipe(tmp_path, []) == expected  # the first target is the default goal
    assert make_recipe(tmp_path, ["-s", "VERBOSE=1", "lint"]) == expected
    assert make_recipe(tmp_path, ["docs"]) is None


def test_a_makefile_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "Makefile").write_text(MAKEFILE)
    assert make_recipe(root, ["-C", "..", "lint"]) is None
    (root / "Makefile").symlink_to(tmp_path / "Makefile")
    assert make_recipe(root, ["lint"]) is None


def test_tox_environments_and_nox_sessions(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text(
        "[testenv]\ncommands = pytest {posargs}\n\n[testenv:lint]\ncommands =\n"
        "    - black --check {toxinidir}\n    isort --check-only .\n"
    )
    assert tox_commands(tmp_path, ["-e", "lint"]) == ["black --check .", "isort --check-only ."]
    assert tox_commands(tmp_path, ["-e", "py312,lint"]) == [
        "pytest",
        "black --check .",
        "isort --check-only .",
    ]
    (tmp_path / "noxfile.py").write_text(
        "import nox\n\n@nox.session(python='3.12')\ndef lint(session):\n"
        "    session.run('ruff', 'format', '--check', 'my dir')\n    session.run(*session.posargs)\n"
    )
    assert nox_commands(tmp_path, ["-s", "lint"]) == ["ruff format --check 'my dir'"]
    assert nox_commands(tmp_path, ["-s", "docs"]) is None


PACKAGE_JSON = """{
  "scripts": {
    "pretest": "npm run -s lint",
    "test": "jest --coverage",
    "lint": "prettier --check '{src,test}/**/*.ts' README.md",
    "lint:format:check": "prettier --check .",
    "fmtcheck": "prettier --check \\"src/**/*.ts\\""
  }
}"""


def test_package_json_scripts_are_read_as_npm_yarn_and_pnpm_run_them(tmp_path: Path) -> None:
    """`npm test` runs `pretest` first; `npm run x -- args` passes the args on; yarn and pnpm run a
    script by its bare name; their own commands (`ci`, `install`, `exec`) run no script."""
    (tmp_path / "package.json").write_text(PACKAGE_JSON)
    assert package_script(tmp_path, ["test"], "npm") == ["npm run -s lint", "jest --coverage"]
    assert package_script(tmp_path, ["run", "-s", "lint"], "npm") == [
        "prettier --check '{src,test}/**/*.ts' README.md"
    ]
    assert package_script(tmp_path, ["run", "fmtcheck", "--", "--log-level", "warn"], "npm") == [
        'prettier --check "src/**/*.ts" --log-level warn'
    ]
    assert package_script(tmp_path, ["lint:format:check"], "yarn") == ["prettier --check ."]
    assert package_script(tmp_path, ["run", "lint:format:check"], "pnpm") == ["prettier --check ."]
    for runner, args in [("npm", ["ci"]), ("yarn", ["install"]), ("pnpm", ["exec", "prettier"]),
                         ("npm", ["run", "missing"]), ("yarn", ["prettier", "--check", "."])]:  # fmt: skip
        assert package_script(tmp_path, args, runner) is None, (runner, args)
    (tmp_path / "package.json").write_text("not json")
    assert package_script(tmp_path, ["test"], "npm") is None


def test_a_script_is_read_as_its_numbered_command_lines_from_the_checkout_or_the_commit(
    tmp_path: Path,
) -> None:
    """One reader of the repository's scripts, for the checkout (a `Path`) and the failing commit
    (a `Read`): blank and comment lines left out, lines numbered as in the file, and a line ends at
    `\\n` only, as the shell reads it (U+2028 inside a line does not start a new one)."""
    text = "#!/bin/sh\nset -eu\n\n  # check\nblack --check .  \nruff check a\u2028b\n"
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lint.sh").write_text(text, encoding="utf-8")
    expected = [(2, "set -eu"), (5, "black --check ."), (6, "ruff check a\u2028b")]
    assert script_lines(tmp_path, "./scripts/lint.sh") == expected
    assert script_lines({"scripts/lint.sh": text}.get, "./scripts/lint.sh") == expected


def test_a_script_outside_the_repository_or_holding_a_nul_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside.sh").write_text("black --check .\n", encoding="utf-8")
    (tmp_path / "repo" / "bin.sh").write_text("black\0 --check .\n", encoding="utf-8")

    def anything(rel: str) -> str:  # a reader that serves any path: the confinement is script_lines' own
        return "black --check .\n"

    assert script_lines(tmp_path / "repo", "../outside.sh") is None
    assert script_lines(tmp_path / "repo", str(tmp_path / "outside.sh")) is None
    assert script_lines(tmp_path / "repo", "bin.sh") is None
    assert script_lines(tmp_path / "repo", "missing.sh") is None
    assert script_lines(anything, "sub/../../outside.sh") is None
    assert script_lines(anything, "/ok.sh") is None
    assert script_lines(anything, "..") is None
    assert script_lines(anything, "sub/../ok.sh") == [(1, "black --check .")]
