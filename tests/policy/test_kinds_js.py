"""JavaScript and TypeScript tests weakened by kind, and their look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

T = "src/calc.test.ts"
BASE = dedent("""\
    import { describe, expect, it, test } from "vitest";
    import { add, div } from "./calc";

    describe("calc", () => {
      it("adds", () => {
        const result = add(2, 3);
        expect(result).toBe(5);
      });

      test.each([
        [1, 2, 3],
        [2, 2, 4],
        [0, 0, 0],
      ])("add(%i, %i) = %i", (a, b, total) => {
        expect(add(a, b)).toBe(total);
      });

      it("throws on zero", () => {
        expect(() => div(1, 0)).toThrow(RangeError);
      });
    });
""")
B = {T: BASE}
ADDS = "    const result = add(2, 3);\n"


def e(old: str, new: str) -> dict[str, str | None]:
    return {T: edit(BASE, old, new)}


CASES = [
    Case("bracket-skip", B, e('  it("adds"', '  it["skip"]("adds"'), "blocked", "skip-marker-added"),
    Case("bracket-only", B, e('  it("adds"', '  it["only"]("adds"'), "blocked", "only-marker-added"),
    Case(
        "destructured-skip",
        B,
        e(
            'describe("calc", () => {\n  it("adds"',
            'const { skip } = it;\n\ndescribe("calc", () => {\n  skip("adds"',
        ),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "import-alias-skip",
        B,
        {
            T: edit(
                edit(
                    BASE,
                    'import { add, div } from "./calc";\n',
                    'import { add, div } from "./calc";\nimport { it as check } from "vitest";\n',
                ),
                '  it("throws on zero"',
                '  check.skip("throws on zero"',
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "reflect-get-only",
        B,
        e('  it("adds"', '  Reflect.get(it, "only")("adds"'),
        "blocked",
        "only-marker-added",
    ),
    Case("computed-key", B, e('  it("adds"', '  it["sk" + "ip"]("adds"'), "blocked", "skip-marker-added"),
    Case(
        "env-guard-return", B, e(ADDS, "    if (process.env.CI) return;\n" + ADDS), "blocked", "test-emptied"
    ),
    Case(
        "braced-guard-return",
        B,
        e(ADDS, "    if (process.env.CI) {\n      return;\n    }\n" + ADDS),
        "blocked",
        "test-emptied",
    ),
    Case("process-exit", B, e(ADDS, "    process.exit(0);\n" + ADDS), "blocked", "exit-in-test"),
    Case(
        "or-true",
        B,
        e("expect(result).toBe(5)", "expect(result === 5 || true).toBe(true)"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "self-compare",
        B,
        e("expect(result).toBe(5)", "expect(result).toBe(result)"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "if-false",
        B,
        e("    expect(result).toBe(5);\n", "    if (false) {\n      expect(result).toBe(5);\n    }\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "empty-catch",
        B,
        e("    expect(result).toBe(5);\n", "    try {\n      expect(result).toBe(5);\n    } catch (e) {}\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case("to-throw-widened", B, e("toThrow(RangeError)", "toThrow()"), "blocked", "assertion-widened"),
    Case("each-row-removed", B, e("    [0, 0, 0],\n", ""), "blocked", "test-case-removed"),
    Case(
        "file-renamed-out-of-pattern",
        B,
        {T: None, "src/calc.cases.ts": BASE},
        "blocked",
        "test-file-renamed-away",
    ),
    # look-alikes
    Case(
        "skip-key-of-data",
        B,
        e(
            "    expect(result).toBe(5);\n",
            '    const flags = { skip: false };\n    expect(flags["skip"]).toBe(false);\n    expect(result).toBe(5);\n',
        ),
        "clean",
    ),
    Case("skip-in-test-name", B, e('it("adds"', 'it("adds, and skips nothing"'), "clean"),
    Case(
        "return-promise",
        B,
        e("    expect(result).toBe(5);\n", "    return expect(Promise.resolve(result)).resolves.toBe(5);\n"),
        "clean",
    ),
    Case(
        "catch-that-asserts",
        B,
        e(
            "    expect(result).toBe(5);\n",
            "    try {\n      expect(result).toBe(5);\n    } catch (e) {\n      expect(e).toBeUndefined();\n    }\n",
        ),
        "clean",
    ),
    Case("each-row-added", B, e("    [0, 0, 0],\n", "    [0, 0, 0],\n    [5, 5, 10],\n"), "clean"),
    Case("renamed-within-pattern", B, {T: None, "src/calculator.test.ts": BASE}, "clean"),
    Case(
        "expect-reflowed",
        B,
        e("expect(add(a, b)).toBe(total)", "expect(\n      add(a, b),\n    ).toBe(total)"),
        "clean",
    ),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_js_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
