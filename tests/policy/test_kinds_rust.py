"""Rust tests weakened by kind, and their look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

T = "tests/calc.rs"
BASE = dedent("""\
    use calc::{add, div};

    #[test]
    fn adds() {
        let result = add(2, 3);
        assert_eq!(result, 5);
    }

    #[test]
    #[should_panic(expected = "divide by zero")]
    fn div_by_zero() {
        div(1, 0);
    }

    #[test]
    fn adds_zero() {
        assert_eq!(add(0, 0), 0);
    }
""")
B = {T: BASE}
LET = "    let result = add(2, 3);\n"


def e(old: str, new: str) -> dict[str, str | None]:
    return {T: edit(BASE, old, new)}


CASES = [
    Case(
        "env-guard-return",
        B,
        e(LET, '    if std::env::var("CI").is_ok() {\n        return;\n    }\n' + LET),
        "blocked",
        "test-emptied",
    ),
    Case("process-exit", B, e(LET, "    std::process::exit(0);\n" + LET), "blocked", "exit-in-test"),
    Case(
        "or-true",
        B,
        e("assert_eq!(result, 5);", "assert!(result == 5 || true);"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "self-compare",
        B,
        e("assert_eq!(result, 5);", "assert_eq!(result, result);"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "if-false",
        B,
        e("    assert_eq!(result, 5);\n", "    if false {\n        assert_eq!(result, 5);\n    }\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "should-panic-widened",
        B,
        e('#[should_panic(expected = "divide by zero")]', "#[should_panic]"),
        "blocked",
        "assertion-widened",
    ),
    Case("test-attribute-removed", B, e("#[test]\nfn adds_zero", "fn adds_zero"), "blocked", "test-removed"),
    Case("cfg-never", B, {T: "#![cfg(any())]\n\n" + BASE}, "blocked", "test-selection-narrowed"),
    Case(
        "catch-unwind",
        B,
        e(
            "    assert_eq!(result, 5);\n",
            "    let _ = std::panic::catch_unwind(|| assert_eq!(result, 5));\n",
        ),
        "blocked",
        "assertion-vacuous",
    ),
    # look-alikes
    Case(
        "return-in-closure",
        B,
        e(LET, "    let two = || { return 2; };\n    let result = add(two(), 3);\n"),
        "clean",
    ),
    Case(
        "assert-added",
        B,
        e("    assert_eq!(result, 5);\n", "    assert_eq!(result, 5);\n    assert!(result > 0);\n"),
        "clean",
    ),
    Case("test-renamed", B, e("fn adds_zero", "fn adds_nothing"), "clean"),
    Case(
        "assert-reflowed",
        B,
        e("assert_eq!(add(0, 0), 0);", "assert_eq!(\n        add(0, 0),\n        0\n    );"),
        "clean",
    ),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_rust_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
