"""Parsers of tools that do not install from PyPI, on their recorded output (see fixtures/README.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_autofix.triage import Category, Failure, diagnose
from tests.testing.logformat import github_log

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Expect:
    fixture: str
    command: str
    category: Category
    tool: str
    file: str | None = None
    line: int | None = None
    test_id: str | None = None
    rule: str | None = None
    message: str | None = None  # a substring of the failure's message
    excerpt: tuple[str, ...] = ()  # lines the excerpt must keep


CASES = [
    Expect(
        "cargo-test.txt",
        "cargo test",
        Category.TEST,
        "cargo",
        file="src/lib.rs",
        line=11,
        test_id="tests::adds",
        message="assertion `left == right` failed",
        excerpt=("  left: -1", " right: 3"),
    ),
    Expect(
        "cargo-build.txt",
        "cargo build",
        Category.BUILD,
        "cargo",
        file="src/lib.rs",
        line=2,
        rule="E0308",
        message="mismatched types",
        excerpt=('2 |     let total: i32 = "three";',),
    ),
    Expect(
        "cargo-clippy.txt",
        "cargo clippy -- -D warnings",
        Category.LINT,
        "clippy",
        file="src/lib.rs",
        line=1,
        rule="clippy::ptr-arg",
        message="writing `&Vec` instead of `&[_]`",
    ),
    Expect(
        "javac.txt",
        "javac Calc.java",
        Category.BUILD,
        "javac",
        file="src/main/java/demo/Calc.java",
        line=5,
        message="incompatible types: String cannot be converted to int",
    ),
    Expect(
        "maven-plugin-resolution.txt",
        "mvn -B test",
        Category.DEPENDENCY,
        "maven",
        message="could not be resolved",
    ),
    Expect(
        "tsc.txt",
        "npx tsc -p .",
        Category.TYPE,
        "tsc",
        file="src/calc.ts",
        line=2,
        rule="TS2322",
        message="Type 'string' is not assignable to type 'number'.",
    ),
    Expect(
        "tsc-pretty.txt",
        "npx tsc -p .",
        Category.TYPE,
        "tsc",
        file="src/calc.ts",
        line=2,
        rule="TS2322",
        excerpt=('2   const total: number = "three";',),
    ),
    Expect(
        "eslint.txt",
        "npx eslint src",
        Category.LINT,
        "eslint",
        file="/home/runner/work/demo/demo/src/app.js",
        line=3,
        rule="no-undef",
        message="'undefinedThing' is not defined",
    ),
    Expect(
        "jest.txt",
        "npx jest --ci",
        Category.TEST,
        "jest",
        test_id="adds 1 + 2 to equal 3",
        excerpt=("Expected: 3", "Received: -1", "at Object.toBe (test/sum.test.js:3:21)"),
    ),
    Expect(
        "vitest.txt",
        "npx vitest run",
        Category.TEST,
        "vitest",
        file="test/sum.vitest.test.mjs",
        test_id="adds 1 + 2 to equal 3",
        message="AssertionError: expected -1 to be 3",
    ),
    Expect(
        "mocha.txt",
        "npx mocha",
        Category.TEST,
        "mocha",
        message="AssertionError [ERR_ASSERTION]",
        excerpt=("-1 !== 3",),
    ),
    Expect("prettier.txt", "npx prettier --check src", Category.FORMAT, "prettier", file="src/ugly.js"),
    Expect(
        "npm-etarget.txt",
        "npm install",
        Category.DEPENDENCY,
        "npm",
        message="No matching version found for typescript@999.0.0.",
    ),
    Expect(
        "go-test.DOCUMENTED.txt",
        "go test ./...",
        Category.TEST,
        "go",
        file="calc_test.go",
        line=9,
        test_id="TestAdd",
        message="Add(1, 2) = -1, want 3",
    ),
    Expect(
        "go-build.DOCUMENTED.txt",
        "go build ./...",
        Category.BUILD,
        "go",
        file="calc/calc.go",
        line=4,
        message='cannot use "three"',
    ),
    Expect("go-vet.DOCUMENTED.txt", "go vet ./...", Category.BUILD, "go", file="calc/calc.go", line=8),
    Expect(
        "go-panic.DOCUMENTED.txt",
        "go test ./...",
        Category.TEST,
        "go",
        test_id="TestIndex",
        excerpt=("panic: runtime error: index out of range [5] with length 3 [recovered]",),
    ),
    Expect(
        "maven-compiler.DOCUMENTED.txt",
        "mvn -B verify",
        Category.BUILD,
        "maven",
        file="/home/runner/work/demo/demo/src/main/java/demo/Calc.java",
        line=5,
        message="incompatible types",
    ),
    Expect(
        "maven-surefire.DOCUMENTED.txt",
        "mvn -B test",
        Category.TEST,
        "surefire",
        test_id="demo.CalcTest.adds",
        message="expected:<3> but was:<-1>",
    ),
    Expect(
        "gradle-test.DOCUMENTED.txt",
        "./gradlew test",
        Category.TEST,
        "gradle",
        test_id="CalcTest.adds()",
        message="expected: <3> but was: <-1>",
    ),
    Expect(
        "docker-buildkit.DOCUMENTED.txt",
        "docker build .",
        Category.DEPENDENCY,
        "docker",
        message="Could not find a version that satisfies the requirement requets==2.31.0",
    ),
    Expect(
        "pyright.txt",
        "npx pyright",
        Category.TYPE,
        "pyright",
        file="/home/runner/work/demo/demo/app.py",
        line=5,
        rule="reportArgumentType",
        message='Argument of type "Literal[\'a\']" cannot be assigned to parameter "x"',
    ),
    Expect(
        "pnpm-no-matching-version.txt",
        "pnpm install",
        Category.DEPENDENCY,
        "pnpm",
        rule="ERR_PNPM_NO_MATCHING_VERSION",
        message="No matching version found for typescript@999.0.0",
    ),
    Expect(
        "phpunit.txt",
        "vendor/bin/phpunit",
        Category.TEST,
        "phpunit",
        file="/home/runner/work/demo/demo/tests/SlugTest.php",
        line=11,
        test_id="Demo\\Tests\\SlugTest::testLowersAndDashes",
        message="Failed asserting that two strings are identical.",
        excerpt=("-'hello-world'", "+'Hello World'"),
    ),
    Expect(
        "phpunit.txt",
        "vendor/bin/phpunit",
        Category.TEST,
        "phpunit",
        file="/home/runner/work/demo/demo/tests/SlugTest.php",
        line=17,
        test_id="Demo\\Tests\\SlugTest::testTitles",
        excerpt=("2) Demo\\Tests\\SlugTest::testTitles with data set #1 ('Two Words', 'two-words')",),
    ),
    Expect(
        "rspec.txt",
        "bundle exec rspec",
        Category.TEST,
        "rspec",
        file="spec/slug_spec.rb",
        line=9,
        test_id="rspec ./spec/slug_spec.rb:8",
        message='expected: "hello-world"',
        excerpt=('            got: "Hello World"',),
    ),
    Expect(
        "rspec.txt",
        "bundle exec rspec",
        Category.TEST,
        "rspec",
        file="spec/slug_spec.rb",  # the spec's frame, not the library frame above it
        line=19,
        test_id="rspec ./spec/slug_spec.rb:18",
        message="NoMethodError: undefined method `strip' for nil:NilClass",
    ),
    Expect(
        "rspec.txt",
        "bundle exec rspec",
        Category.TEST,
        "rspec",
        file="spec/slug_spec.rb",
        line=14,
        test_id="rspec ./spec/slug_spec.rb:13",
        message='expected: "two-words"',
    ),
    Expect(
        "rspec-load-error.txt",
        "bundle exec rspec",
        Category.TEST,
        "rspec",
        file="spec/slug_spec.rb",
        line=2,
        rule="load-error",
        message="LoadError: cannot load such file -- /home/runner/work/demo/demo/lib/missing",
        excerpt=("An error occurred while loading ./spec/slug_spec.rb.",),
    ),
    Expect(
        "minitest.txt",
        "bundle exec rake test",
        Category.TEST,
        "minitest",
        file="test/slug_test.rb",
        line=10,
        test_id="SlugTest#test_lowers_and_dashes",
        rule="Failure",
        message='Expected: "hello-world"',
        excerpt=('  Actual: "Hello World"',),
    ),
    Expect(
        "minitest.txt",
        "bundle exec rake test",
        Category.TEST,
        "minitest",
        file="test/slug_test.rb",  # the test method's frame, not the library frame above it
        line=14,
        test_id="SlugTest#test_raises",
        rule="Error",
        message="NoMethodError: undefined method `strip' for nil:NilClass",
    ),
    Expect(
        "minitest-spec.txt",
        "bundle exec rake test",
        Category.TEST,
        "minitest",
        file="test/slug_spec_test.rb",
        line=7,
        test_id="Slug::with titles#test_0001_lowers and dashes",
        rule="Failure",
        message='Expected: "hello-world"',
    ),
    Expect(
        "minitest-rails.txt",
        "bin/rails test",
        Category.TEST,
        "minitest",
        file="test/slug_test.rb",
        line=10,
        test_id="rails test test/slug_test.rb:9",
        rule="Failure",
        message='Expected: "hello-world"',
    ),
    Expect(
        "minitest-rails.txt",
        "bin/rails test",
        Category.TEST,
        "minitest",
        file="test/slug_test.rb",
        line=14,
        test_id="rails test test/slug_test.rb:13",
        rule="Error",
        message="NoMethodError: undefined method `strip' for nil:NilClass",
    ),
    Expect(
        "yarn-no-matching-version.txt",
        "yarn install",
        Category.DEPENDENCY,
        "yarn",
        message='Couldn\'t find any versions for "typescript" that matches "999.0.0"',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.fixture)
def test_parser_on_recorded_output(case: Expect) -> None:
    output = (FIXTURES / case.fixture).read_text()
    d = diagnose(github_log(case.command, output))
    assert d.log_commands == [case.command]
    assert d.category is case.category, [(f.tool, f.kind, f.message) for f in d.failures]
    mine = [f for f in d.failures if f.tool == case.tool]
    assert mine, [(f.tool, f.message) for f in d.failures]

    def matches(f: Failure) -> bool:
        return all(
            want is None or getattr(f, attr) == want
            for attr, want in (
                ("file", case.file),
                ("line", case.line),
                ("test_id", case.test_id),
                ("rule", case.rule),
            )
        ) and (case.message is None or case.message in f.message)

    assert any(matches(f) for f in mine), [(f.file, f.line, f.test_id, f.rule, f.message) for f in mine]
    for line in case.excerpt:
        assert line in d.excerpt
    assert "##[error]Process completed with exit code 1." in d.excerpt


def test_docker_build_failure_is_located() -> None:
    output = (FIXTURES / "docker-buildkit.DOCUMENTED.txt").read_text()
    d = diagnose(github_log("docker build .", output))
    docker = [f for f in d.failures if f.tool == "docker"]
    assert docker and any("did not complete successfully" in f.message for f in docker)


def test_rspec_pending_example_is_not_a_failure() -> None:
    d = diagnose(github_log("bundle exec rspec", (FIXTURES / "rspec.txt").read_text()))
    assert [f.test_id for f in d.failures if f.tool == "rspec"] == [
        "rspec ./spec/slug_spec.rb:8",
        "rspec ./spec/slug_spec.rb:18",
        "rspec ./spec/slug_spec.rb:13",
    ]
    assert not any("pending" in f.message or "Slug is pending" in f.evidence[0] for f in d.failures)


def test_minitest_blocks_are_one_failure_each() -> None:
    for fixture in ("minitest.txt", "minitest-rails.txt"):
        d = diagnose(github_log("bin/rails test", (FIXTURES / fixture).read_text()))
        assert [(f.tool, f.rule) for f in d.failures] == [("minitest", "Failure"), ("minitest", "Error")]
