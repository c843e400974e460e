"""Content rules on real git diffs of PHPUnit tests and xUnit, NUnit and MSTest tests."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
PHP = "tests/SlugTest.php"
PHP_BASE = dedent("""\
    <?php
    namespace Demo\\Tests;

    use PHPUnit\\Framework\\TestCase;

    final class SlugTest extends TestCase
    {
        public function testTrims(): void
        {
            $this->assertSame('a', Slug::of('  a '));
        }
    }
""")
CS = "tests/Calc.Tests/CalcTests.cs"
CS_BASE = dedent("""\
    using Xunit;

    public class CalcTests
    {
        [Fact]
        public void Adds()
        {
            Assert.Equal(5, Calc.Add(2, 3));
        }

        [Theory]
        [InlineData(3, 2, 1)]
        public void Subtracts(int a, int b, int want)
        {
            Assert.Equal(want, Calc.Sub(a, b));
        }
    }
""")


def php(old: str, new: str) -> str:
    assert old in PHP_BASE
    return PHP_BASE.replace(old, new, 1)


def cs(old: str, new: str) -> str:
    assert old in CS_BASE
    return CS_BASE.replace(old, new, 1)


CASES = [
    (
        "phpunit-mark-skipped",
        PHP,
        php(
            "        $this->assertSame", "        $this->markTestSkipped('flaky');\n        $this->assertSame"
        ),
        {"skip-marker-added"},
    ),
    (
        "phpunit-static-mark-incomplete",
        PHP,
        php("        $this->assertSame", "        self::markTestIncomplete();\n        $this->assertSame"),
        {"skip-marker-added"},
    ),
    (
        "phpunit-requires-php",
        PHP,
        php("    public function testTrims", "    #[RequiresPhp('>= 99.0')]\n    public function testTrims"),
        {"skip-marker-added"},
    ),
    (
        "phpunit-mark-skipped-in-comment",
        PHP,
        php(
            "        $this->assertSame", "        // never markTestSkipped() here\n        $this->assertSame"
        ),
        set(),
    ),
    (
        "phpunit-assert-removed",
        PHP,
        php("        $this->assertSame('a', Slug::of('  a '));\n", "        Slug::of('  a ');\n"),
        {"assertion-removed"},
    ),
    ("xunit-fact-skip", CS, cs("    [Fact]\n", '    [Fact(Skip = "flaky")]\n'), {"skip-marker-added"}),
    ("xunit-theory-skip", CS, cs("    [Theory]\n", '    [Theory(Skip = "later")]\n'), {"skip-marker-added"}),
    ("mstest-ignore", CS, cs("    [Fact]\n", "    [Fact]\n    [Ignore]\n"), {"skip-marker-added"}),
    ("nunit-ignore-reason", CS, cs("    [Fact]\n", '    [Test, Ignore("flaky")]\n'), {"skip-marker-added"}),
    ("nunit-explicit", CS, cs("    [Fact]\n", "    [Fact]\n    [Explicit]\n"), {"skip-marker-added"}),
    ("xunit-skip-in-string", CS, cs("    [Fact]\n", '    [Fact(DisplayName = "Skip = no")]\n'), set()),
    (
        "xunit-assert-removed",
        CS,
        cs("        Assert.Equal(5, Calc.Add(2, 3));\n", "        Calc.Add(2, 3);\n"),
        {"assertion-removed"},
    ),
]


@pytest.mark.parametrize(("path", "after", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_php_and_dotnet_rules(change: ChangeFn, path: str, after: str, expected: set[str]) -> None:
    before = PHP_BASE if path == PHP else CS_BASE
    verdict = change({path: before}, {path: after})
    assert set(verdict.codes) == expected, verdict.to_text()


def test_markers_in_code_that_is_not_a_test_pass(change: ChangeFn) -> None:
    src = "src/Slug.php"
    before = "<?php\nfinal class Slug\n{\n    public static function of(string $t): string\n    {\n        return trim($t);\n    }\n}\n"
    after = before.replace("        return trim($t);", "        $skip = true;\n        return trim($t);")
    verdict = change({src: before}, {src: after})
    assert verdict.codes == [], verdict.to_text()


def test_an_ignore_attribute_outside_tests_is_not_a_skip(change: ChangeFn) -> None:
    # SQLite-net and other libraries have their own `[Ignore]` for a property that is not stored
    model = "src/Calc/Row.cs"
    before = "public class Row\n{\n    public int Id { get; set; }\n}\n"
    after = before.replace(
        "    public int Id", "    [Ignore]\n    public int Cached { get; set; }\n\n    public int Id"
    )
    verdict = change({model: before}, {model: after})
    assert verdict.codes == [], verdict.to_text()
