"""The documentation (README.md and docs/), action.yml and the settings model stay in agreement."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from ci_autofix.errors import HaltReason
from ci_autofix.outcome import Outcome
from ci_autofix.settings import Settings
from tests.testing.docs_tables import README, SECTIONS, accepted, expected_text, load_action, pages, section


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


def test_generated_sections_are_current() -> None:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        assert text == expected_text(text), f"{page.name}: run `python tests/testing/docs_tables.py --write`"


def test_each_generated_section_is_on_exactly_one_page() -> None:
    for name in SECTIONS:
        page, text = section(name)
        assert text.strip(), (name, page)


def test_the_halt_reasons_page_lists_every_halt_reason() -> None:
    page, text = section("halts")
    assert page.name == "halts.md"
    listed = re.findall(r"^\| `([a-z-]+)` \|", text, re.M)
    assert listed == [r.value for r in HaltReason]


def test_the_accepted_values_are_the_bounds_start_up_checks() -> None:
    assert accepted("max-attempts") == "a whole number ≥ 1, ≤ 20"
    assert accepted("max-cost-usd") == "a number > 0, ≤ 100"
    assert accepted("mode") == "`auto`, `propose`, `apply`, `review`"
    assert accepted("allow-forks") == "`true`, `false`"
    assert accepted("branch-prefix") == "text of 1 to 64 characters"
    assert accepted("github-token") == accepted("anthropic-api-key") == "a secret"
    assert accepted("pull-request") == "a whole number ≥ 1"
    for name in load_action()["inputs"]:
        # every bound written in the table is one that start-up enforces: just outside it is refused
        field = Settings.model_fields[name.replace("-", "_")]
        for meta in field.metadata:
            for attr, outside in (("le", 1), ("lt", 0), ("ge", -1), ("gt", 0)):
                bound = getattr(meta, attr, None)
                if bound is None:
                    continue
                value = bound + outside if attr in ("le", "ge") else bound
                with pytest.raises(ValidationError):
                    Settings(**{name.replace("-", "_"): value})


def test_the_pages_link_only_to_files_that_exist() -> None:
    root = README.parent
    for page in [*pages(), root / "SECURITY.md", root / "CHANGELOG.md", root / "CONTRIBUTING.md"]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), (page.name, target)


def test_action_runs_the_dockerfile() -> None:
    text = (README.parent / "action.yml").read_text(encoding="utf-8")
    assert "using: docker" in text and "image: Dockerfile" in text
