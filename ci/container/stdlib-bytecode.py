"""Compile the bytecode of the standard-library modules the action imports, in the image.

python:*-slim ships its standard library without bytecode, so every run (a fresh container) would
compile the modules it imports again: about a second before the first API call. This imports every
module of ci_autofix and the SDKs it loads lazily, then compiles the standard-library modules that
are now loaded, and only those (the whole library's bytecode would add twice as much).
Run by the Dockerfile's final stage; prints what it compiled."""

from __future__ import annotations

import importlib
import pkgutil
import py_compile
import sys
import sysconfig

import ci_autofix

for info in pkgutil.walk_packages(ci_autofix.__path__, "ci_autofix."):
    if not info.name.endswith(".__main__"):
        importlib.import_module(info.name)
for lazy in ("anthropic", "github", "unidiff", "yaml", "regex", "requests", "pydantic_settings"):
    importlib.import_module(lazy)

stdlib = sysconfig.get_paths()["stdlib"] + "/"
sources = sorted(
    {
        module.__file__
        for module in list(sys.modules.values())
        if isinstance(getattr(module, "__file__", None), str)
        and module.__file__.startswith(stdlib)
        and module.__file__.endswith(".py")
        and "/site-packages/" not in module.__file__
    }
)
for source in sources:
    py_compile.compile(source, doraise=True)
print(f"compiled {len(sources)} standard-library modules")
