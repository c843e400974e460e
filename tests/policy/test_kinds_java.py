"""Java (JUnit 5) tests weakened by kind, and their look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

T = "src/test/java/calc/CalcTest.java"
BASE = dedent("""\
    package calc;

    import static org.junit.jupiter.api.Assertions.assertEquals;
    import static org.junit.jupiter.api.Assertions.assertThrows;

    import org.junit.jupiter.api.Test;
    import org.junit.jupiter.params.ParameterizedTest;
    import org.junit.jupiter.params.provider.CsvSource;

    class CalcTest {
        @Test
        void adds() {
            int result = Calc.add(2, 3);
            assertEquals(5, result);
        }

        @ParameterizedTest
        @CsvSource({
            "1, 2, 3",
            "2, 2, 4",
            "0, 0, 0",
        })
        void addsTable(int a, int b, int total) {
            assertEquals(total, Calc.add(a, b));
        }

        @Test
        void divByZero() {
            assertThrows(ArithmeticException.class, () -> Calc.div(1, 0));
        }
    }
""")
B = {T: BASE}
INT = "        int result = Calc.add(2, 3);\n"


def e(old: str, new: str) -> dict[str, str | None]:
    return {T: edit(BASE, old, new)}


CASES = [
    Case(
        "env-guard-return",
        B,
        e(INT, '        if (System.getenv("CI") != null) return;\n' + INT),
        "blocked",
        "test-emptied",
    ),
    Case("system-exit", B, e(INT, "        System.exit(0);\n" + INT), "blocked", "exit-in-test"),
    Case(
        "enabled-if-env",
        B,
        e(
            "    @Test\n    void adds",
            '    @Test\n    @EnabledIfEnvironmentVariable(named = "RUN_ALL", matches = "yes")\n    void adds',
        ),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "assume-env",
        B,
        e(INT, '        Assumptions.assumeTrue(System.getenv("CI") == null);\n' + INT),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "self-compare",
        B,
        e("assertEquals(5, result);", "assertEquals(result, result);"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "or-true",
        B,
        e("assertEquals(5, result);", "assertTrue(result == 5 || true);"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "catch-assertion-error",
        B,
        e(
            "        assertEquals(5, result);\n",
            "        try {\n            assertEquals(5, result);\n        } catch (AssertionError e) {\n        }\n",
        ),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "assert-throws-widened",
        B,
        e("ArithmeticException.class", "Exception.class"),
        "blocked",
        "assertion-widened",
    ),
    Case("csv-row-removed", B, e('        "0, 0, 0",\n', ""), "blocked", "test-case-removed"),
    Case(
        "test-annotation-removed",
        B,
        e("    @Test\n    void divByZero", "    void divByZero"),
        "blocked",
        "test-removed",
    ),
    Case(
        "file-renamed-out-of-pattern",
        B,
        {T: None, "src/test/java/calc/CalcCases.java": BASE},
        "blocked",
        "test-file-renamed-away",
    ),
    # look-alikes
    Case(
        "assert-added",
        B,
        e(
            "        assertEquals(5, result);\n",
            "        assertEquals(5, result);\n        assertTrue(result > 0);\n",
        ),
        "clean",
    ),
    Case("csv-row-added", B, e('        "0, 0, 0",\n', '        "0, 0, 0",\n        "5, 5, 10",\n'), "clean"),
    Case(
        "renamed-within-pattern",
        B,
        {
            T: None,
            "src/test/java/calc/CalculatorTest.java": BASE.replace("class CalcTest", "class CalculatorTest"),
        },
        "clean",
    ),
    Case(
        "return-at-end",
        B,
        e(
            "        assertEquals(5, result);\n",
            "        assertEquals(5, result);\n        if (result > 0) return;\n",
        ),
        "clean",
    ),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_java_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
