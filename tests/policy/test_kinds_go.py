"""Go tests weakened by kind (helpers, guards, logs for failures, dropped rows, build tags), and look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

T = "calc/calc_test.go"
BASE = dedent("""\
    package calc

    import (
    \t"os"
    \t"testing"
    )

    func TestAdd(t *testing.T) {
    \tgot := Add(2, 3)
    \tif got != 5 {
    \t\tt.Fatalf("Add(2, 3) = %d; want 5", got)
    \t}
    }

    func TestTable(t *testing.T) {
    \tcases := []struct {
    \t\tname       string
    \t\ta, b, want int
    \t}{
    \t\t{"small", 1, 2, 3},
    \t\t{"same", 2, 2, 4},
    \t\t{"zero", 0, 0, 0},
    \t}
    \tfor _, c := range cases {
    \t\tif got := Add(c.a, c.b); got != c.want {
    \t\t\tt.Errorf("%s: got %d want %d", c.name, got, c.want)
    \t\t}
    \t}
    }

    func TestMain(m *testing.M) {
    \tos.Exit(m.Run())
    }
""")
B = {T: BASE}
GOT = "\tgot := Add(2, 3)\n"
HELPER = "internal/testutil/testutil.go"
HELPER_BASE = 'package testutil\n\nimport "testing"\n\nfunc Setup(tb testing.TB) {\n\ttb.Helper()\n}\n'


def e(old: str, new: str) -> dict[str, str | None]:
    return {T: edit(BASE, old, new)}


CASES = [
    Case(
        "skip-in-helper-package",
        {T: BASE, HELPER: HELPER_BASE},
        {
            HELPER: edit(
                HELPER_BASE,
                "\ttb.Helper()\n",
                '\ttb.Helper()\n\tif os.Getenv("CI") != "" {\n\t\ttb.SkipNow()\n\t}\n',
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "skip-method-value",
        B,
        e(GOT, "\tskip := t.SkipNow\n\tskip()\n" + GOT),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "env-guard-return",
        B,
        e(GOT, '\tif os.Getenv("CI") != "" {\n\t\treturn\n\t}\n' + GOT),
        "blocked",
        "test-emptied",
    ),
    Case(
        "short-return",
        B,
        e(GOT, "\tif testing.Short() {\n\t\treturn\n\t}\n" + GOT),
        "blocked",
        "test-emptied",
    ),
    Case("os-exit-zero", B, e(GOT, "\tos.Exit(0)\n" + GOT), "blocked", "exit-in-test"),
    Case("fatalf-to-logf", B, e('t.Fatalf("Add(2, 3)', 't.Logf("Add(2, 3)'), "blocked", "assertion-vacuous"),
    Case(
        "errorf-to-logf-elsewhere-gained",
        B,
        {
            T: edit(
                edit(BASE, "\t\t\tt.Errorf(", "\t\t\tt.Logf("),
                GOT,
                GOT + '\tif got == 0 {\n\t\tt.Error("zero")\n\t}\n',
            )
        },
        "blocked",
        "assertion-vacuous",
    ),
    Case("self-compare", B, e("\tif got != 5 {", "\tif got != got {"), "blocked", "assertion-vacuous"),
    Case("if-false", B, e("\tif got != 5 {", "\tif false && got != 5 {"), "blocked", "assertion-vacuous"),
    Case("table-row-removed", B, e('\t\t{"zero", 0, 0, 0},\n', ""), "blocked", "test-case-removed"),
    Case("test-renamed-unexported", B, e("func TestAdd(t", "func testAdd(t"), "blocked", "test-removed"),
    Case(
        "build-tag-added", B, {T: "//go:build integration\n\n" + BASE}, "blocked", "test-selection-narrowed"
    ),
    Case("file-renamed-out-of-pattern", B, {T: None, "calc/calc_cases.go.txt": BASE}, "blocked"),
    # look-alikes
    Case(
        "player-skip-in-app-code",
        {"player/player.go": "package player\n\ntype P struct{}\n"},
        {
            "player/player.go": "package player\n\ntype P struct{ n int }\n\nfunc (p *P) Next() { p.Skip() }\n\n"
            "func (p *P) Skip() { p.n++ }\n"
        },
        "clean",
    ),
    Case("test-main-exit", B, e("\tos.Exit(m.Run())\n", "\tcode := m.Run()\n\tos.Exit(code)\n"), "clean"),
    Case(
        "return-after-check",
        B,
        e(
            '\t\tt.Fatalf("Add(2, 3) = %d; want 5", got)\n\t}\n',
            '\t\tt.Fatalf("Add(2, 3) = %d; want 5", got)\n\t}\n\tif got > 0 {\n\t\treturn\n\t}\n',
        ),
        "clean",
    ),
    Case(
        "table-row-added",
        B,
        e('\t\t{"zero", 0, 0, 0},\n', '\t\t{"zero", 0, 0, 0},\n\t\t{"big", 5, 5, 10},\n'),
        "clean",
    ),
    Case(
        "build-tag-on-app-file",
        {"calc/calc_linux.go": "package calc\n\nconst OS = 1\n"},
        {"calc/calc_linux.go": "//go:build linux\n\npackage calc\n\nconst OS = 1\n"},
        "clean",
    ),
    Case("logf-added", B, e(GOT, GOT + '\tt.Logf("got %d", got)\n'), "clean"),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_go_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
