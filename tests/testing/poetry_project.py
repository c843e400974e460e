"""A tiny poetry project and its lock, in poetry 1.x's format and in 2.x's: real packages of PyPI
at real versions with the real sha256 of their wheels (what `pip install --require-hashes` checks).

Main group: python-dateutil (which needs six); the extra `color`: colorama; the dev group: iniconfig,
and pywin32-ctypes on Windows only; the optional group `docs`: toml. The project's package is
`src/tiny`, with the console script `tiny`."""

from __future__ import annotations

from typing import Final

HASHES: Final = {
    "colorama": "sha256:4f1d9991f5acc0ca119f9d443620b77f9d6b33703e51011c16baf57afb285fc6",
    "iniconfig": "sha256:b6a85871a79d2e3b22d2d1b94ac2824226a63c6b741c88f7ae975f18b6778374",
    "python-dateutil": "sha256:961d03dc3453ebbc59dbdea9e4e11c5651520a876d0f4db161e8674aae935da9",
    "pywin32-ctypes": "sha256:bf490a1a709baf35d688fe0ecf980ed4de11d2b3e37b51e5442587a75d9957e7",
    "six": "sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254",
    "toml": "sha256:806143ae5bfb6a3c6e736a764057db0e6a0e05e338b5630894a5f779cabb4f9b",
}
VERSIONS: Final = {
    "colorama": "0.4.6",
    "iniconfig": "2.0.0",
    "python-dateutil": "2.8.2",
    "pywin32-ctypes": "0.2.2",
    "six": "1.16.0",
    "toml": "0.10.2",
}
_WHEELS: Final = {
    "colorama": "colorama-0.4.6-py2.py3-none-any.whl",
    "iniconfig": "iniconfig-2.0.0-py3-none-any.whl",
    "python-dateutil": "python_dateutil-2.8.2-py2.py3-none-any.whl",
    "pywin32-ctypes": "pywin32_ctypes-0.2.2-py3-none-any.whl",
    "six": "six-1.16.0-py2.py3-none-any.whl",
    "toml": "toml-0.10.2-py2.py3-none-any.whl",
}
_CATEGORY: Final = {"iniconfig": "dev", "pywin32-ctypes": "dev", "toml": "dev"}
_DEPENDENCIES: Final = {"python-dateutil": '[package.dependencies]\nsix = ">=1.5"\n'}

PYPROJECT: Final = """\
[tool.poetry]
name = "tiny"
version = "0.1.0"
description = "A tiny poetry project"
authors = ["Dev <dev@example.com>"]
packages = [{ include = "tiny", from = "src" }]

[tool.poetry.dependencies]
python = "^3.8"
python-dateutil = "2.8.2"
colorama = { version = "0.4.6", optional = true }

[tool.poetry.extras]
color = ["colorama"]

[tool.poetry.group.dev.dependencies]
iniconfig = "2.0.0"
pywin32-ctypes = { version = "0.2.2", markers = "sys_platform == 'win32'" }

[tool.poetry.group.docs]
optional = true

[tool.poetry.group.docs.dependencies]
toml = "0.10.2"

[tool.poetry.scripts]
tiny = "tiny.cli:main"

[build-system]
requires = ["poetry-core>=1.0.0"]
build-backend = "poetry.core.masonry.api"
"""


def lock(*, old: bool, hashes: dict[str, str] = HASHES) -> str:
    """The project's poetry.lock: poetry 1.x's format (`old`: `category`, `[metadata.files]`) or
    2.x's (`files` per package, `groups`)."""
    parts = []
    for name, version in VERSIONS.items():
        optional = "true" if name == "colorama" else "false"
        group = _CATEGORY.get(name, "main")
        if old:
            head = f'category = "{group}"\n'
        else:
            group = "docs" if name == "toml" else group
            head = f'groups = ["{group}"]\n'
        files = "" if old else f'files = [\n    {{file = "{_WHEELS[name]}", hash = "{hashes[name]}"}},\n]\n'
        parts.append(
            f'[[package]]\nname = "{name}"\nversion = "{version}"\ndescription = ""\n{head}'
            f'optional = {optional}\npython-versions = "*"\n{files}'
            + (f"\n{_DEPENDENCIES[name]}" if name in _DEPENDENCIES else "")
        )
    extras = '[extras]\ncolor = ["colorama"]\n'
    if old:
        metadata = '[metadata]\nlock-version = "1.1"\npython-versions = "^3.8"\ncontent-hash = "0"\n\n[metadata.files]\n'
        metadata += "".join(
            f'{name} = [\n    {{file = "{_WHEELS[name]}", hash = "{hashes[name]}"}},\n]\n'
            for name in VERSIONS
        )
    else:
        metadata = '[metadata]\nlock-version = "2.1"\npython-versions = "^3.8"\ncontent-hash = "0"\n'
    return "\n".join(parts) + "\n" + extras + "\n" + metadata


FILES: Final = {
    "pyproject.toml": PYPROJECT,
    "src/tiny/__init__.py": "",
    "src/tiny/cli.py": "import dateutil\n\n\ndef main() -> None:\n    print('tiny', dateutil.__version__)\n",
}
