"""A Python with pytest and ruff that any uid can run, for the end-to-end tests whose failing
commands run as the work area's dedicated uid.

When ci-autofix runs as root it runs the repository's commands as a uid that owns nothing, and
that uid cannot use an interpreter kept in a home only root may enter (this machine's Python
lives under /root). `sandbox_bin()` makes, once per test session, a virtualenv from a Python
that others can run, with the pinned pytest and ruff of our dev extra, in a directory under the
system temp dir open to others; it is removed when the session ends. Not root: our own bin dir.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from functools import cache
from pathlib import Path

from ci_autofix.sandbox import others_can_run

_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _pins(*names: str) -> list[str]:
    dev = tomllib.loads(_PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]["dev"]
    wanted = {name: next(r for r in dev if re.match(rf"{name}==", r)) for name in names}
    return list(wanted.values())


def _base_python() -> str:
    if others_can_run(sys.executable):
        return sys.executable
    for directory in ("/usr/local/bin", "/usr/bin", *os.environ.get("PATH", "").split(os.pathsep)):
        candidate = Path(directory) / "python3"
        if directory and candidate.is_file() and others_can_run(candidate):
            return str(candidate)
    raise RuntimeError("no Python that other users can run: install python3 from the system's packages")


@cache
def sandbox_bin() -> Path:
    """The bin dir to put first on PATH for commands run as the work area's uid."""
    if os.geteuid() != 0:
        return Path(sys.executable).parent
    top = Path(tempfile.mkdtemp(prefix="ci-autofix-tests-python-"))
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    top.chmod(0o755)
    env_dir = top / "venv"
    subprocess.run([_base_python(), "-m", "venv", str(env_dir)], check=True, capture_output=True)
    subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *_pins("pytest", "ruff"),
        ],
        check=True,
        capture_output=True,
    )
    return env_dir / "bin"


def sandbox_path() -> str:
    """PATH for a propose job whose commands run as the work area's uid."""
    return f"{sandbox_bin()}:{Path(sys.executable).parent}:/usr/bin:/bin"
