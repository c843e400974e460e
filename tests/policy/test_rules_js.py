"""Content rules on real git diffs of JavaScript and TypeScript tests and manifests."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
TEST = "src/sum.test.ts"
BASE = dedent("""\
    import { sum } from "./sum";

    describe("sum", () => {
      it("adds two numbers", () => {
        expect(sum(1, 2)).toBe(3);
      });

      it("adds negatives", () => {
        expect(sum(-1, -2)).toBe(-3);
      });
    });
""")


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    ("it-skip", edit('it("adds two', 'it.skip("adds two'), {"skip-marker-added"}),
    ("xit", edit('it("adds negatives"', 'xit("adds negatives"'), {"skip-marker-added"}),
    ("describe-skip", edit('describe("sum"', 'describe.skip("sum"'), {"skip-marker-added"}),
    (
        "test-skip-each",
        edit('  it("adds negatives", () => {', '  test.skip.each([1])("adds negatives", () => {'),
        {"skip-marker-added"},
    ),
    (
        "mocha-this-skip",
        edit("    expect(sum(1, 2)).toBe(3);", "    this.skip();\n    expect(sum(1, 2)).toBe(3);"),
        {"skip-marker-added"},
    ),
    ("it-only", edit('it("adds two', 'it.only("adds two'), {"only-marker-added"}),
    ("test-only", edit('it("adds two', 'test.only("adds two'), {"only-marker-added"}),
    ("describe-only", edit('describe("sum"', 'describe.only("sum"'), {"only-marker-added"}),
    ("fit", edit('it("adds two', 'fit("adds two'), {"only-marker-added"}),
    # look-alikes
    (
        "skip-in-line-comment",
        edit('  it("adds two', '  // it.skip("adds two") was used while debugging\n  it("adds two'),
        set(),
    ),
    ("only-in-block-comment", edit("describe(", "/* never commit\n   it.only(...) */\ndescribe("), set()),
    (
        "skip-in-string",
        edit(
            "    expect(sum(1, 2)).toBe(3);",
            '    const note = "it.skip( is banned";\n    expect(sum(1, 2)).toBe(3);',
        ),
        set(),
    ),
    (
        "only-in-template",
        edit(
            "    expect(sum(1, 2)).toBe(3);",
            "    const t = `test.only(${1})`;\n    expect(sum(1, 2)).toBe(3);",
        ),
        set(),
    ),
    (
        "method-named-skip",
        edit(
            "    expect(sum(1, 2)).toBe(3);", "    const rows = list.skip(1);\n    expect(sum(1, 2)).toBe(3);"
        ),
        set(),
    ),
    # assertions and bodies
    ("expect-removed", edit("    expect(sum(1, 2)).toBe(3);\n", ""), {"assertion-removed", "test-emptied"}),
    (
        "expect-made-trivial",
        edit("    expect(sum(1, 2)).toBe(3);", "    expect(true).toBe(true);"),
        {"assertion-removed", "assertion-vacuous", "expected-value-changed"},
    ),
    (
        "expect-removed-rest-kept",
        edit("    expect(sum(1, 2)).toBe(3);\n", "    sum(1, 2);\n"),
        {"assertion-removed"},
    ),
    (
        "body-emptied",
        edit(
            '  it("adds two numbers", () => {\n    expect(sum(1, 2)).toBe(3);\n  });',
            '  it("adds two numbers", () => {\n  });',
        ),
        {"test-emptied", "assertion-removed"},
    ),
    (
        "early-return",
        edit("    expect(sum(1, 2)).toBe(3);", "    return;\n    expect(sum(1, 2)).toBe(3);"),
        {"test-emptied"},
    ),
    (
        "legit-new-test",
        edit("});\n", '});\n\nit("adds zero", () => {\n  expect(sum(0, 0)).toBe(0);\n});\n'),
        set(),
    ),
    ("expected-value-fixed", edit("toBe(-3)", "toBe(-4)"), {"expected-value-changed"}),
    ("matcher-stricter", edit("toBe(3)", "toStrictEqual(3)"), set()),
    # suppressions
    (
        "eslint-disable",
        edit(
            "    expect(sum(1, 2)).toBe(3);",
            "    // eslint-disable-next-line no-console\n    expect(sum(1, 2)).toBe(3);",
        ),
        {"suppression-added"},
    ),
    (
        "ts-ignore",
        edit('import { sum } from "./sum";', '// @ts-ignore\nimport { sum } from "./sum";'),
        {"suppression-added"},
    ),
    (
        "ts-ignore-in-string",
        edit(
            "    expect(sum(1, 2)).toBe(3);", '    const s = "// @ts-ignore";\n    expect(sum(1, 2)).toBe(3);'
        ),
        set(),
    ),
    # network and processes
    (
        "axios-import-in-test",
        edit('import { sum } from "./sum";', 'import axios from "axios";\nimport { sum } from "./sum";'),
        {"network-call-in-test"},
    ),
    (
        "fetch-in-test",
        edit(
            "    expect(sum(1, 2)).toBe(3);",
            '    await fetch("https://example.com");\n    expect(sum(1, 2)).toBe(3);',
        ),
        {"network-call-in-test"},
    ),
    (
        "child-process-in-test",
        edit(
            'import { sum } from "./sum";',
            'import { sum } from "./sum";\nimport { execSync } from "node:child_process";',
        ),
        {"process-spawn-in-test"},
    ),
]


@pytest.mark.parametrize(("after", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_js_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({TEST: BASE}, {TEST: after})
    assert set(verdict.codes) == expected, verdict.to_text()


@pytest.mark.parametrize("name", ["sum.spec.js", "__tests__/sum.js", "sum.test.jsx", "e2e/login.spec.mjs"])
def test_test_files_are_recognised_by_js_conventions(change: ChangeFn, name: str) -> None:
    verdict = change({name: BASE}, {name: None})
    assert verdict.codes == ["test-file-deleted"]


def test_deleting_a_non_test_module_is_not_a_test_deletion(change: ChangeFn) -> None:
    assert change({"src/sum.ts": "export const sum = (a, b) => a + b;\n"}, {"src/sum.ts": None}).codes == []


PACKAGE = dedent("""\
    {
      "name": "calc",
      "version": "1.0.0",
      "dependencies": {
        "left-pad": "^1.3.0"
      }
    }
""")


def test_package_json_dependency_bump_is_flagged(change: ChangeFn) -> None:
    verdict = change({"package.json": PACKAGE}, {"package.json": PACKAGE.replace("^1.3.0", "^1.4.0")})
    assert [(f.code, f.line) for f in verdict.findings] == [("dependency-pin-changed", 5)]


def test_package_json_version_of_the_package_itself_is_not_a_pin(change: ChangeFn) -> None:
    verdict = change({"package.json": PACKAGE}, {"package.json": PACKAGE.replace('"1.0.0"', '"1.0.1"')})
    assert verdict.codes == []


def test_package_lock_change_is_flagged(change: ChangeFn) -> None:
    verdict = change(
        {"package-lock.json": '{"lockfileVersion": 3}\n'}, {"package-lock.json": '{"lockfileVersion": 2}\n'}
    )
    assert verdict.codes == ["lockfile-changed"]
