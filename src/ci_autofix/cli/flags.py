"""The local commands' settings flags, generated from the settings model so `--help` and the
Action's inputs never drift apart."""

from __future__ import annotations

import argparse
import types
from collections.abc import Sequence
from typing import Any, Literal, get_args, get_origin

from ci_autofix.settings import LOCAL_FLAGS, Settings, flag_words

# Settings a local `fix` run takes as flags (tokens never: they come from the environment).
FIX_FLAGS = LOCAL_FLAGS


def add_settings_arguments(parser: argparse.ArgumentParser, names: Sequence[str] = FIX_FLAGS) -> None:
    """Flags generated from the settings model, so `--help` and the inputs never drift apart."""
    group = parser.add_argument_group("settings (the action's inputs of the same name)")
    for name in names:
        field = Settings.model_fields[name]
        flag = "--" + name.replace("_", "-")
        kind, choices = _flag_type(field.annotation)
        help_text = flag_words(field.description or "").replace("%", "%%") + f" (default: {_default(field)})"
        if kind is bool:
            group.add_argument(
                flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
        else:
            group.add_argument(
                flag,
                dest=name,
                type=kind,
                choices=choices,
                default=None,
                metavar=name.upper() if not choices else None,
                help=help_text,
            )


def settings_overrides(ns: argparse.Namespace, names: Sequence[str] = FIX_FLAGS) -> dict[str, Any]:
    return {name: getattr(ns, name) for name in names if getattr(ns, name, None) is not None}


def _flag_type(annotation: Any) -> tuple[Any, list[str] | None]:
    origin = get_origin(annotation)
    if origin is Literal:
        return str, [str(a) for a in get_args(annotation)]
    if origin in (types.UnionType,) or str(origin) == "typing.Union":
        inner = [a for a in get_args(annotation) if a is not type(None)]
        return _flag_type(inner[0])
    if annotation in (bool, int, float):
        return annotation, None
    return str, None


def _default(field: Any) -> str:
    value = field.get_default(call_default_factory=True)
    if isinstance(value, list):
        return ",".join(value) or "none"
    return "none" if value in (None, "") else str(value)
