"""The job's `poetry install`, read from pyproject.toml and poetry.lock as poetry would install it:
the groups and extras its options select, the lock's packages they reach at the lock's versions,
with the lock's hashes and the conditions (markers) of the paths that reach them; both lock
formats; what cannot be followed is said with its cause and the remedy."""

from __future__ import annotations

import shlex

import pytest

from ci_autofix.workflow.poetry import PoetryInstall, follow
from tests.testing.poetry_project import HASHES, PYPROJECT, VERSIONS, lock


def _follow(line: str = "poetry install", *, old: bool = True, **files: str | None) -> PoetryInstall:
    texts: dict[str, str | None] = {
        "pyproject.toml": PYPROJECT,
        "poetry.lock": lock(old=old),
        "src/tiny/__init__.py": "",
    }
    texts.update({name.replace("_", "."): text for name, text in files.items()})
    return follow(shlex.split(line), texts.get)


def _names(found: PoetryInstall) -> set[str]:
    assert not found.error, found.error
    return {p.name for p in found.packages}


def test_the_default_install_is_the_main_and_dev_groups_at_the_locks_versions_with_its_hashes() -> None:
    found = _follow()
    assert _names(found) == {"python-dateutil", "six", "iniconfig", "pywin32-ctypes"}  # six: dateutil's
    for package in found.packages:
        assert package.version == VERSIONS[package.name]
        assert package.hashes == (HASHES[package.name],)  # from `[metadata.files]`
    windows = next(p for p in found.packages if p.name == "pywin32-ctypes")
    assert windows.marker == "(sys_platform == 'win32')"  # pip leaves it out on Linux
    assert found.requirements(hashed=True).splitlines()[0] == (
        f"iniconfig==2.0.0 --hash={HASHES['iniconfig']}"
    )
    assert found.root is not None and found.root.paths == ("src",) and not found.root.pip
    assert found.root.scripts == (("tiny", "tiny.cli:main"),)


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ("--without dev", {"python-dateutil", "six"}),
        ("--no-dev", {"python-dateutil", "six"}),
        ("--only dev", {"iniconfig", "pywin32-ctypes"}),
        ("--only=main,dev", {"python-dateutil", "six", "iniconfig", "pywin32-ctypes"}),
        ("--with docs", {"python-dateutil", "six", "iniconfig", "pywin32-ctypes", "toml"}),
        ("-E color --without dev", {"python-dateutil", "six", "colorama"}),
        ("--extras=color --only main", {"python-dateutil", "six", "colorama"}),
        ("--all-extras --only main", {"python-dateutil", "six", "colorama"}),
        ("--only-root", set()),
        ("-n --no-ansi --sync", {"python-dateutil", "six", "iniconfig", "pywin32-ctypes"}),
    ],
)
def test_the_options_choose_the_groups_and_extras(options: str, names: set[str]) -> None:
    assert _names(_follow(f"poetry install {options}")) == names


def test_no_root_installs_the_packages_and_not_the_project() -> None:
    found = _follow("poetry install --no-root")
    assert found.root is None and found.packages


def test_both_lock_formats_install_the_same() -> None:
    old, new = _follow(old=True), _follow(old=False)
    assert old.packages == new.packages
    assert _names(_follow("poetry install --with docs", old=False)) >= {"toml"}


def test_conditions_along_the_path_are_joined_and_an_unconditional_path_wins() -> None:
    pyproject = PYPROJECT.replace(
        'python-dateutil = "2.8.2"', 'python-dateutil = { version = "2.8.2", python = "<3.9" }'
    )
    found = _follow(pyproject_toml=pyproject)
    six = next(p for p in found.packages if p.name == "six")
    assert six.marker == '(python_full_version < "3.9")'  # only dateutil, only below 3.9, needs it
    both = pyproject.replace('iniconfig = "2.0.0"', 'iniconfig = "2.0.0"\nsix = "*"')
    six = next(p for p in _follow(pyproject_toml=both).packages if p.name == "six")
    assert six.marker == ""  # the dev group needs it everywhere


def test_a_package_locked_at_two_versions_is_the_one_the_constraint_allows() -> None:
    second = '[[package]]\nname = "six"\nversion = "1.12.0"\ndescription = ""\ncategory = "main"\noptional = false\npython-versions = "*"\n\n'
    text = lock(old=True).replace("[extras]", second + "[extras]").replace('six = ">=1.5"', 'six = "^1.16"')
    found = _follow(poetry_lock=text)
    assert [p.version for p in found.packages if p.name == "six"] == ["1.16.0"]


@pytest.mark.parametrize(
    ("files", "line", "cause"),
    [
        ({}, "poetry install --dry-run", "its option `--dry-run` is not one ci-autofix reads"),
        ({}, "poetry install --with nothing", "the group `nothing` is not in `pyproject.toml`"),
        ({"poetry_lock": None}, "poetry install", "`poetry.lock` is missing at the failing commit"),
        ({"poetry_lock": "[[package]\n"}, "poetry install", "`poetry.lock` is not valid TOML"),
        (
            {"poetry_lock": lock(old=True).replace('name = "six"', 'name = "sixx"')},
            "poetry install",
            "`poetry.lock` has no package `six` (is it out of date?)",
        ),
        (
            {
                "pyproject_toml": PYPROJECT.replace(
                    'iniconfig = "2.0.0"', 'iniconfig = { git = "https://example.com/x.git" }'
                )
            },
            "poetry install",
            "installs `iniconfig` from a git, not from PyPI",
        ),
        (
            {
                "poetry_lock": lock(old=True).replace(
                    'name = "iniconfig"\nversion = "2.0.0"\ndescription = ""\ncategory = "dev"\noptional = false\npython-versions = "*"\n',
                    'name = "iniconfig"\nversion = "2.0.0"\ndescription = ""\ncategory = "dev"\noptional = false\npython-versions = "*"\n'
                    '\n[package.source]\ntype = "legacy"\nurl = "https://example.com/simple"\nreference = "private"\n',
                )
            },
            "poetry install",
            "installs `iniconfig` from a legacy source, not from PyPI",
        ),
        (
            {
                "pyproject_toml": PYPROJECT.replace(
                    "sys_platform == 'win32'", "sys_platform == 'win32'\\n--index-url x"
                )
            },
            "poetry install",
            "which ci-autofix does not read",
        ),
    ],
)
def test_what_cannot_be_followed_is_said_with_its_cause_and_the_remedy(
    files: dict[str, str | None], line: str, cause: str
) -> None:
    found = _follow(line, **files)
    assert not found.packages and found.root is None
    assert f"ci-autofix did not follow `{line}`: " in found.error
    assert cause in found.error
    assert found.error.endswith("set `setup-command` to the commands that install what CI's job installed.")


def test_a_project_another_backend_builds_is_installed_by_pip() -> None:
    pyproject = (
        '[project]\nname = "tiny"\nversion = "0.1"\ndependencies = ["python-dateutil==2.8.2"]\n\n'
        '[project.optional-dependencies]\ncolor = ["colorama"]\n\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    found = _follow("poetry install -E color", pyproject_toml=pyproject)
    assert _names(found) == {"python-dateutil", "six", "colorama"}
    assert found.root is not None and found.root.pip
