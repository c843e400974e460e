"""Content rules on real git diffs of RSpec specs and minitest tests."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
SPEC = "spec/slug_spec.rb"
SPEC_BASE = dedent("""\
    require "slug"

    RSpec.describe Slug do
      it "trims" do
        expect(Slug.of("  a ")).to eq("a")
      end

      context "with titles" do
        it "lowers and dashes" do
          expect(Slug.of("Hello World")).to eq("hello-world")
        end
      end
    end
""")
TEST = "test/slug_test.rb"
TEST_BASE = dedent("""\
    require "minitest/autorun"
    require "slug"

    class SlugTest < Minitest::Test
      def test_trims
        assert_equal "a", Slug.of("  a ")
      end

      def test_lowers_and_dashes
        assert_equal "hello-world", Slug.of("Hello World")
      end
    end
""")
LIB = "lib/slug.rb"
LIB_BASE = dedent("""\
    module Slug
      def self.of(text)
        text.strip
      end
    end
""")


def spec(old: str, new: str) -> str:
    assert old in SPEC_BASE
    return SPEC_BASE.replace(old, new, 1)


def test(old: str, new: str) -> str:
    assert old in TEST_BASE
    return TEST_BASE.replace(old, new, 1)


test.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test

SPEC_CASES = [
    ("xit", spec('  it "trims" do', '  xit "trims" do'), {"skip-marker-added"}),
    ("xdescribe", spec("RSpec.describe Slug do", "RSpec.xdescribe Slug do"), {"skip-marker-added"}),
    ("xcontext", spec('  context "with titles" do', '  xcontext "with titles" do'), {"skip-marker-added"}),
    (
        "skip-in-example",
        spec('    expect(Slug.of("  a ")', '    skip "flaky on CI"\n    expect(Slug.of("  a ")'),
        {"skip-marker-added"},
    ),
    (
        "pending-in-example",
        spec('    expect(Slug.of("  a ")', '    pending "until #12"\n    expect(Slug.of("  a ")'),
        {"skip-marker-added"},
    ),
    ("skip-metadata-true", spec('  it "trims" do', '  it "trims", skip: true do'), {"skip-marker-added"}),
    (
        "skip-metadata-reason",
        spec('  it "trims" do', '  it "trims", skip: "flaky" do'),
        {"skip-marker-added"},
    ),
    ("skip-symbol", spec('  it "trims" do', '  it "trims", :skip do'), {"skip-marker-added"}),
    ("fit", spec('  it "trims" do', '  fit "trims" do'), {"only-marker-added"}),
    ("fdescribe", spec("RSpec.describe Slug do", "RSpec.fdescribe Slug do"), {"only-marker-added"}),
    ("focus-true", spec('  it "trims" do', '  it "trims", focus: true do'), {"only-marker-added"}),
    (
        "focus-symbol",
        spec('  context "with titles" do', '  context "with titles", :focus do'),
        {"only-marker-added"},
    ),
    ("skip-in-comment", spec('  it "trims" do', '  # skip: true when offline\n  it "trims" do'), set()),
    ("skip-in-string", spec('it "trims" do', 'it "trims, skip or not" do'), set()),
    ("skip-false", spec('  it "trims" do', '  it "trims", skip: false do'), set()),
    (
        "let-named-pending",
        spec('  it "trims" do', '  let(:pending) { Slug.of("b") }\n  let(:focus) { 1 }\n\n  it "trims" do'),
        set(),
    ),
    (
        "expect-removed",
        spec('    expect(Slug.of("  a ")).to eq("a")\n', '    Slug.of("  a ")\n'),
        {"assertion-removed"},
    ),
]
TEST_CASES = [
    (
        "skip",
        test('    assert_equal "a"', '    skip\n    assert_equal "a"'),
        {"skip-marker-added"},
    ),
    (
        "skip-with-reason",
        test('    assert_equal "a"', '    skip("flaky on CI")\n    assert_equal "a"'),
        {"skip-marker-added"},
    ),
    (
        "assert-removed",
        test('    assert_equal "a", Slug.of("  a ")\n', '    Slug.of("  a ")\n'),
        {"assertion-removed"},
    ),
    ("assert-changed-to-refute", test('assert_equal "a"', 'refute_equal "b"'), {"expected-value-changed"}),
]


@pytest.mark.parametrize(
    ("after", "expected"), [(c[1], c[2]) for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES]
)
def test_rspec_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({SPEC: SPEC_BASE}, {SPEC: after})
    assert set(verdict.codes) == expected, verdict.to_text()


@pytest.mark.parametrize(
    ("after", "expected"), [(c[1], c[2]) for c in TEST_CASES], ids=[c[0] for c in TEST_CASES]
)
def test_minitest_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({TEST: TEST_BASE}, {TEST: after})
    assert set(verdict.codes) == expected, verdict.to_text()


@pytest.mark.parametrize(
    "line",
    [
        '    return "" if skip',
        "    options = { skip: true, pending: true, focus: true }",
        "    pending = text.empty?",
        "    skip",
    ],
)
def test_ruby_words_outside_tests_are_not_markers(change: ChangeFn, line: str) -> None:
    after = LIB_BASE.replace("    text.strip\n", f"{line}\n    text.strip\n")
    verdict = change({LIB: LIB_BASE}, {LIB: after})
    assert verdict.codes == [], verdict.to_text()


def test_ruby_method_named_skip_in_a_test_helper_is_not_a_marker(change: ChangeFn) -> None:
    after = TEST_BASE.replace(
        "  def test_trims", "  def skip_blank(text)\n    text\n  end\n\n  def test_trims"
    )
    verdict = change({TEST: TEST_BASE}, {TEST: after})
    assert verdict.codes == [], verdict.to_text()
