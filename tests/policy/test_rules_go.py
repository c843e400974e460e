"""Content rules on real git diffs of Go tests and modules."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
TEST = "calc/calc_test.go"
BASE = dedent("""\
    package calc

    import "testing"

    func TestAdd(t *testing.T) {
    \tgot := Add(2, 3)
    \tif got != 5 {
    \t\tt.Errorf("Add(2, 3) = %d; want 5", got)
    \t}
    }

    func TestTable(t *testing.T) {
    \tcases := []struct {
    \t\ta, b, want int
    \t}{
    \t\t{1, 2, 3},
    \t\t{2, 2, 4},
    \t}
    \tfor _, c := range cases {
    \t\tif got := Add(c.a, c.b); got != c.want {
    \t\t\tt.Fatalf("got %d want %d", got, c.want)
    \t\t}
    \t}
    }
""")


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    (
        "t-skip",
        edit("\tgot := Add(2, 3)", '\tt.Skip("flaky on CI")\n\tgot := Add(2, 3)'),
        {"skip-marker-added"},
    ),
    ("t-skipnow", edit("\tcases := ", "\tt.SkipNow()\n\tcases := "), {"skip-marker-added"}),
    (
        "skip-in-comment",
        edit("\tgot := Add(2, 3)", '\t// t.Skip("flaky") would hide this\n\tgot := Add(2, 3)'),
        set(),
    ),
    (
        "skip-in-string",
        edit("\tgot := Add(2, 3)", '\tt.Log("do not t.Skip( here")\n\tgot := Add(2, 3)'),
        set(),
    ),
    (
        "skip-in-raw-string",
        edit("\tgot := Add(2, 3)", "\tconst doc = `\n\tt.Skip()\n\t`\n\tgot := Add(2, 3)"),
        set(),
    ),
    (
        "check-removed",
        edit('\tif got != 5 {\n\t\tt.Errorf("Add(2, 3) = %d; want 5", got)\n\t}\n', "\t_ = got\n"),
        {"assertion-removed"},
    ),
    ("early-return", edit("\tgot := Add(2, 3)", "\treturn\n\tgot := Add(2, 3)"), {"test-emptied"}),
    (
        "body-emptied",
        edit('\tgot := Add(2, 3)\n\tif got != 5 {\n\t\tt.Errorf("Add(2, 3) = %d; want 5", got)\n\t}\n', ""),
        {"test-emptied", "assertion-removed"},
    ),
    ("expected-in-if", edit("if got != 5", "if got != 6"), {"expected-value-changed"}),
    ("expected-in-table", edit("{2, 2, 4}", "{2, 2, 5}"), {"expected-value-changed"}),
    ("legit-new-row", edit("\t\t{2, 2, 4},\n", "\t\t{2, 2, 4},\n\t\t{0, 0, 0},\n"), set()),
    ("fatal-to-error", edit("t.Fatalf(", "t.Errorf("), set()),
    ("nolint", edit("\tgot := Add(2, 3)", "\tgot := Add(2, 3) //nolint:errcheck"), {"suppression-added"}),
    (
        "exec-command",
        edit("\tgot := Add(2, 3)", '\t_ = exec.Command("ls").Run()\n\tgot := Add(2, 3)'),
        {"process-spawn-in-test"},
    ),
    (
        "http-get",
        edit("\tgot := Add(2, 3)", '\t_, _ = http.Get("https://example.com")\n\tgot := Add(2, 3)'),
        {"network-call-in-test"},
    ),
]


@pytest.mark.parametrize(("after", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_go_rules(change: ChangeFn, after: str, expected: set[str]) -> None:
    verdict = change({TEST: BASE}, {TEST: after})
    assert set(verdict.codes) == expected, verdict.to_text()


def test_go_test_file_deleted_and_source_kept(change: ChangeFn) -> None:
    verdict = change({TEST: BASE, "calc/calc.go": "package calc\n"}, {TEST: None})
    assert [(f.code, f.path) for f in verdict.findings] == [("test-file-deleted", TEST)]


GO_MOD = "module example.com/calc\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.6.0\n"


def test_go_mod_require_bump_and_go_sum(change: ChangeFn) -> None:
    verdict = change(
        {"go.mod": GO_MOD, "go.sum": "github.com/google/go-cmp v0.6.0 h1:abc=\n"},
        {"go.mod": GO_MOD.replace("v0.6.0", "v0.7.0"), "go.sum": "github.com/google/go-cmp v0.7.0 h1:def=\n"},
    )
    assert sorted(verdict.codes) == ["dependency-pin-changed", "lockfile-changed"]


def test_go_mod_module_comment_is_not_a_pin(change: ChangeFn) -> None:
    verdict = change({"go.mod": GO_MOD}, {"go.mod": "// Package calc adds.\n" + GO_MOD})
    assert verdict.codes == []


def test_a_skip_method_in_application_code_is_not_a_test_skip(change: ChangeFn) -> None:
    before = "package xmlx\n\nfunc next(d *Decoder) error {\n\treturn nil\n}\n"
    after = before.replace("\treturn nil", "\treturn d.Skip()")
    assert change({"xmlx/decode.go": before}, {"xmlx/decode.go": after}).codes == []
