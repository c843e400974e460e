"""Content rules on real git diffs of JUnit tests, Maven and Gradle manifests."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
TEST = "src/test/java/com/example/CalcTest.java"
BASE = dedent("""\
    package com.example;

    import static org.junit.jupiter.api.Assertions.assertEquals;

    import org.junit.jupiter.api.Test;

    class CalcTest {
        @Test
        void adds() {
            int total = Calc.add(2, 3);
            assertEquals(5, total);
        }

        @Test
        void subtracts() {
            assertEquals(1, Calc.sub(3, 2));
        }
    }
""")


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    (
        "disabled",
        edit("    @Test\n    void adds", '    @Test\n    @Disabled("flaky")\n    void adds'),
        {"skip-marker-added"},
    ),
    (
        "junit4-ignore",
        edit("    @Test\n    void subtracts", "    @Ignore\n    @Test\n    void subtracts"),
        {"skip-marker-added"},
    ),
    (
        "disabled-in-javadoc",
        edit("    @Test\n    void adds", "    /** Never use @Disabled here. */\n    @Test\n    void adds"),
        set(),
    ),
    (
        "disabled-in-string",
        edit(
            "        int total = Calc.add(2, 3);",
            '        String s = "@Disabled";\n        int total = Calc.add(2, 3);',
        ),
        set(),
    ),
    ("assert-removed", edit("        assertEquals(5, total);\n", ""), {"assertion-removed"}),
    (
        "early-return",
        edit("        int total = Calc.add(2, 3);", "        return;\n        int total = Calc.add(2, 3);"),
        {"test-emptied"},
    ),
    (
        "body-emptied",
        edit("        assertEquals(1, Calc.sub(3, 2));\n", ""),
        {"test-emptied", "assertion-removed"},
    ),
    (
        "expected-value-fixed",
        edit("assertEquals(5, total)", "assertEquals(6, total)"),
        {"expected-value-changed"},
    ),
    (
        "suppress-warnings",
        edit("class CalcTest {", '@SuppressWarnings("unchecked")\nclass CalcTest {'),
        {"suppression-added"},
    ),
    (
        "process-builder",
        edit(
            "        int total = Calc.add(2, 3);",
            '        new ProcessBuilder("ls").start();\n        int total = Calc.add(2, 3);',
        ),
        {"process-spawn-in-test"},
    ),
    (
        "legit-new-test",
        edit(
            "    }\n}\n",
            "    }\n\n    @Test\n    void multiplies() {\n"
            "        assertEquals(6, Calc.mul(2, 3));\n    }\n}\n",
        ),
        set(),
    ),
]


@pytest.mark.parametrize(("after", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_java_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({TEST: BASE}, {TEST: after})
    assert set(verdict.codes) == expected, verdict.to_text()


def test_renamed_test_class_that_stays_a_test_passes(change: ChangeFn) -> None:
    renamed = TEST.replace("CalcTest.java", "CalcTests.java")
    verdict = change({TEST: BASE}, {TEST: None, renamed: BASE.replace("class CalcTest", "class CalcTests")})
    assert verdict.codes == []


def test_test_class_moved_into_main_sources_is_renamed_away(change: ChangeFn) -> None:
    moved = "src/main/java/com/example/CalcChecks.java"
    verdict = change({TEST: BASE}, {TEST: None, moved: BASE})
    assert [(f.code, f.path) for f in verdict.findings] == [("test-file-renamed-away", moved)]


POM = dedent("""\
    <project>
      <dependencies>
        <dependency>
          <groupId>org.junit.jupiter</groupId>
          <artifactId>junit-jupiter</artifactId>
          <version>5.10.0</version>
        </dependency>
      </dependencies>
    </project>
""")


def test_maven_version_change_is_a_pin_change(change: ChangeFn) -> None:
    verdict = change({"pom.xml": POM}, {"pom.xml": POM.replace("5.10.0", "5.9.0")})
    assert verdict.codes == ["dependency-pin-changed"]


def test_gradle_dependency_change(change: ChangeFn) -> None:
    gradle = "dependencies {\n    testImplementation 'org.junit.jupiter:junit-jupiter:5.10.0'\n}\n"
    verdict = change({"build.gradle": gradle}, {"build.gradle": gradle.replace("5.10.0", "5.11.0")})
    assert verdict.codes == ["dependency-pin-changed"]
