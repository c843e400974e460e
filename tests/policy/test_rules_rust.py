"""Content rules on real git diffs of Rust: `#[cfg(test)]` modules in src/ and tests/ files."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
LIB = "src/lib.rs"
BASE = dedent("""\
    /// Adds two numbers.
    pub fn add(a: i32, b: i32) -> i32 {
        debug_assert!(a < 1000);
        a + b
    }

    pub fn sub(a: i32, b: i32) -> i32 {
        a - b
    }

    pub fn mul(a: i32, b: i32) -> i32 {
        a * b
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn adds() {
            let total = add(2, 3);
            assert_eq!(total, 5);
        }

        #[test]
        fn subs() {
            assert_eq!(sub(3, 2), 1);
        }
    }
""")


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    (
        "ignore",
        edit("    #[test]\n    fn subs", "    #[test]\n    #[ignore]\n    fn subs"),
        {"skip-marker-added"},
    ),
    (
        "ignore-with-reason",
        edit("    #[test]\n    fn adds", '    #[test]\n    #[ignore = "slow"]\n    fn adds'),
        {"skip-marker-added"},
    ),
    (
        "ignore-in-comment",
        edit("    #[test]\n    fn subs", "    #[test]\n    // #[ignore] only locally\n    fn subs"),
        set(),
    ),
    (
        "ignore-in-raw-string",
        edit(
            "        let total = add(2, 3);",
            '        let _doc = r#"#[ignore] "quoted" "#;\n        let total = add(2, 3);',
        ),
        set(),
    ),
    (
        "lifetime-not-a-string",
        edit(
            "        let total = add(2, 3);",
            "        fn first<'a>(s: &'a str) -> &'a str { s }\n        let total = add(2, 3);",
        ),
        set(),
    ),
    ("assert-removed", edit("        assert_eq!(total, 5);\n", ""), {"assertion-removed"}),
    ("body-emptied", edit("        assert_eq!(sub(3, 2), 1);\n", ""), {"assertion-removed", "test-emptied"}),
    (
        "expected-value-fixed",
        edit("assert_eq!(total, 5)", "assert_eq!(total, 6)"),
        {"expected-value-changed"},
    ),
    ("library-debug-assert-removed", edit("    debug_assert!(a < 1000);\n", ""), set()),
    ("allow-attribute", edit("pub fn sub", "#[allow(dead_code)]\npub fn sub"), {"suppression-added"}),
    (
        "command-in-test",
        edit(
            "        let total = add(2, 3);",
            '        let _ = std::process::Command::new("ls").status();\n        let total = add(2, 3);',
        ),
        {"process-spawn-in-test"},
    ),
    (
        "legit-new-test",
        edit(
            "    }\n}\n",
            "    }\n\n    #[test]\n    fn muls() {\n        assert_eq!(mul(2, 3), 6);\n    }\n}\n",
        ),
        set(),
    ),
]


@pytest.mark.parametrize(("after", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_rust_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({LIB: BASE}, {LIB: after})
    assert set(verdict.codes) == expected, verdict.to_text()


def test_rust_integration_test_deleted(change: ChangeFn) -> None:
    test = "use calc::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(1, 1), 2);\n}\n"
    verdict = change({"tests/integration.rs": test}, {"tests/integration.rs": None})
    assert verdict.codes == ["test-file-deleted"]


CARGO = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1.0.190"\n'


def test_cargo_dependency_bump_and_lock(change: ChangeFn) -> None:
    verdict = change(
        {"Cargo.toml": CARGO, "Cargo.lock": "version = 3\n"},
        {"Cargo.toml": CARGO.replace("1.0.190", "1.0.200"), "Cargo.lock": "version = 4\n"},
    )
    assert sorted(verdict.codes) == ["dependency-pin-changed", "lockfile-changed"]


def test_cargo_package_version_is_not_a_dependency(change: ChangeFn) -> None:
    verdict = change(
        {"Cargo.toml": CARGO}, {"Cargo.toml": CARGO.replace('version = "0.1.0"', 'version = "0.1.1"')}
    )
    assert verdict.codes == []
