"""The README, action.yml and the settings model stay in agreement."""

from __future__ import annotations

import re

from docs_tables import README, expected_readme, load_action

from ci_autofix.errors import HaltReason
from ci_autofix.outcome import Outcome
from ci_autofix.settings import Settings


def test_action_inputs_are_the_settings_inputs() -> None:
    assert list(load_action()["inputs"]) == Settings.input_names()


def test_action_defaults_match_the_settings_defaults() -> None:
    for name, spec in load_action()["inputs"].items():
        field = Settings.model_fields[name.replace("-", "_")]
        default = field.get_default(call_default_factory=True)
        if name == "github-token":
            assert spec["default"] == "${{ github.token }}"
            continue
        if isinstance(default, bool):
            default = str(default).lower()
        elif isinstance(default, list):
            default = ",".join(default)
        elif default is None:
            default = ""
        assert spec["default"] == str(default), name
        assert spec["description"], name


def test_action_outputs_are_what_the_outcome_writes() -> None:
    assert list(load_action()["outputs"]) == list(Outcome("halted").outputs())


def test_readme_generated_sections_are_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert text == expected_readme(text), "run `python tests/docs_tables.py --write`"


def test_the_inputs_table_lists_each_inputs_accepted_range() -> None:
    """Every bound the settings model puts on an input is in its README row, as the error for a
    value out of range states it."""
    section = (
        README.read_text(encoding="utf-8").split("<!-- inputs:start -->")[1].split("<!-- inputs:end -->")[0]
    )
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `([a-z-]+)` \|.*$", section, re.M)}
    assert "| accepted |" in section
    for name in Settings.input_names():
        for bound in Settings.model_fields[name.replace("-", "_")].metadata:
            for attr, symbol in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
                if (value := getattr(bound, attr, None)) is not None:
                    assert f"{symbol} {value:g}" in rows[name], name
    assert "an integer ≥ 1 and ≤ 20" in rows["max-attempts"]
    assert "`auto`, `propose`, `apply`, `review`" in rows["mode"]


def test_readme_lists_every_halt_reason() -> None:
    section = (
        README.read_text(encoding="utf-8").split("<!-- halts:start -->")[1].split("<!-- halts:end -->")[0]
    )
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, re.M)
    assert listed == [r.value for r in HaltReason]


def test_action_runs_the_dockerfile() -> None:
    text = (README.parent / "action.yml").read_text(encoding="utf-8")
    assert "using: docker" in text and "image: Dockerfile" in text
