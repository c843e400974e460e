"""One set of versions: what CI tests with is what the image ships.

The image installs requirements.lock; CI and developers install ci/dev.lock (and ci/pip.lock
first). ci/container/lock makes them from one resolution: the dev lock takes the runtime
dependencies at exactly the image's versions. These tests fail when the files drift apart (a
lock edited or regenerated alone), when pyproject.toml's dev pins are not what the lock installs,
or when an entry could be installed without its hash.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGE_LOCK = ROOT / "requirements.lock"
DEV_LOCK = ROOT / "ci" / "dev.lock"
PIP_LOCK = ROOT / "ci" / "pip.lock"
BUILD_LOCK = ROOT / "ci" / "container" / "build.lock"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """{package: version} of a hash-pinned lock; every entry must carry at least one hash."""
    text = path.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    # an entry: `name==version [; marker] \` then its `--hash=sha256:...` lines
    entry = re.compile(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: ;[^\\\n]*)? \\\n((?:    --hash=\S+(?: \\)?\n)+)", re.M
    )
    entries = list(entry.finditer(text))
    assert len(entries) == len(re.findall(r"^[A-Za-z0-9]", text, re.M)), (
        f"{path.name}: an entry without hashes"
    )
    for m in entries:
        name, version, hashes = canonical(m[1]), m[2], m[3]
        assert re.findall(r"--hash=sha256:[0-9a-f]{64}", hashes), (path.name, name)
        assert found.setdefault(name, version) == version, (path.name, name, "pinned twice")
    return found


def test_ci_installs_the_runtime_dependencies_at_the_versions_the_image_ships() -> None:
    image, dev = pins(IMAGE_LOCK), pins(DEV_LOCK)
    assert "anthropic" in image and "pygithub" in image
    missing = sorted(set(image) - set(dev))
    assert not missing, f"ci/dev.lock lacks what the image ships: {missing}; run ci/container/lock"
    differ = {name: (version, dev[name]) for name, version in image.items() if dev[name] != version}
    assert not differ, f"(image, CI) versions differ: {differ}; run ci/container/lock"


def test_ci_builds_the_project_with_the_image_build_backend() -> None:
    build, dev = pins(BUILD_LOCK), pins(DEV_LOCK)
    assert {name: dev.get(name) for name in build} == build


def test_the_dev_extra_pins_are_what_ci_installs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev_extra = pyproject["project"]["optional-dependencies"]["dev"]
    wanted = {canonical(n): v for n, v in (r.split("==", 1) for r in dev_extra)}
    assert len(wanted) >= 10 and "pytest" in wanted and "uv" in wanted
    dev = pins(DEV_LOCK)
    assert {name: dev.get(name) for name in wanted} == wanted, "run ci/container/lock"


def test_pip_is_pinned_and_hashed() -> None:
    assert list(pins(PIP_LOCK)) == ["pip"]


def test_the_pip_the_package_ships_is_ci_s() -> None:
    """The pip that installs a job's setup at CI's date (`ladder/environment.py`) is ci/pip.lock's."""
    shipped = ROOT / "src" / "ci_autofix" / "ladder" / "pip.txt"
    assert shipped.read_text(encoding="utf-8") == PIP_LOCK.read_text(encoding="utf-8"), (
        "run ci/container/lock"
    )


def test_ci_installs_only_from_the_hashed_locks_and_pip_pinned() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    installs = [line.strip() for line in run.splitlines() if re.match(r"\s*pip_install ", line)]
    assert installs == [
        "pip_install --require-hashes -r ci/pip.lock",
        "pip_install --require-hashes -r ci/dev.lock",
        "pip_install --no-deps --no-build-isolation -e .",
    ]
    assert "--upgrade" not in run and "pip install" not in run.replace("-m pip install --quiet", "")


def test_the_lock_script_makes_every_lock_from_one_resolution() -> None:
    script = (ROOT / "ci" / "container" / "lock").read_text(encoding="utf-8")
    for lock in ("requirements.lock", "ci/dev.lock", "ci/pip.lock", "ci/container/build.lock"):
        assert f"> {lock}.tmp" in script, lock
    assert "-c requirements.lock -c ci/container/build.lock" in script
    version = re.search(r"^PIP_VERSION=(\S+)$", script, re.M)
    assert version and pins(PIP_LOCK) == {"pip": version[1]}
