"""The language views: code, comments and strings told apart; test files recognised."""

from __future__ import annotations

import pytest

from ci_autofix.policy.diff import c_unquote
from ci_autofix.policy.source import Language, is_test_path, language_of, scan


def views(text: str, language: Language) -> list[tuple[str, str, str]]:
    return [(v.code, v.comment, v.bare) for v in scan(text.split("\n"), language)]


def test_python_comment_string_and_triple_quotes() -> None:
    got = views('x = "a # b"  # real\ns = """one\nit.skip(\n"""  # after', Language.PYTHON)
    assert got == [
        ('x = ""  ', "# real", 'x = "a # b"  '),
        ('s = """', "", 's = """one'),
        ("", "", "it.skip("),
        ('"""  ', "# after", '"""  '),
    ]


def test_escaped_quotes_do_not_end_a_string() -> None:
    assert views(r'x = "a\"b" + y', Language.PYTHON)[0][0] == 'x = "" + y'
    assert views(r'x = "a\\" + y', Language.PYTHON)[0][0] == 'x = "" + y'


def test_js_block_comment_across_lines_and_template() -> None:
    got = views("a /* x\n it.only( */ b\nconst t = `x ${y}`; // c", Language.JS)
    assert [g[0] for g in got] == ["a ", "  b", "const t = ``; "]
    assert got[1][1] == "it.only("
    assert got[2][1] == "// c"


def test_go_raw_string_and_rune() -> None:
    got = views("s := `a\nt.Skip()`\nr := '\"'", Language.GO)
    assert [g[0] for g in got] == ["s := `", "`", "r := ''"]


def test_rust_raw_string_char_and_lifetime() -> None:
    got = views("let s = r#\"a \" #[ignore]\"#; fn f<'a>(x: &'a str) -> char { '\\'' }", Language.RUST)
    assert got[0][0] == "let s = r#\"\"#; fn f<'a>(x: &'a str) -> char { '' }"


def test_hash_comment_needs_a_word_start() -> None:
    assert views("echo ${#x} # note", Language.HASH)[0][:2] == ("echo ${#x} ", "# note")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_a.py", True),
        ("test_a.py", True),
        ("pkg/a_test.py", True),
        ("conftest.py", True),
        ("src/a.test.ts", True),
        ("src/a.spec.tsx", True),
        ("web/__tests__/a.js", True),
        ("a.spec.rb", True),
        ("pkg/a_test.go", True),
        ("src/test/java/a/FooTest.java", True),
        ("src/test/java/a/Helper.java", True),
        ("app/FooTests.kt", True),
        ("tests/integration.rs", True),
        ("src/app.py", False),
        ("src/testing_utils.py", False),
        ("tests/data/input.json", False),
        ("src/contest.py", False),
        ("docs/tests.md", False),
        ("testdata/x_test.txt", False),
        ("src/latest.go", False),
    ],
)
def test_test_paths(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


def test_languages() -> None:
    assert [language_of(p) for p in ("a.py", "b.tsx", "c.go", "d.rs", "E.java", "Makefile", "x.bin")] == [
        Language.PYTHON,
        Language.JS,
        Language.GO,
        Language.RUST,
        Language.JAVA,
        Language.HASH,
        Language.OTHER,
    ]


def test_c_unquote() -> None:
    assert c_unquote(r"a/tab\there") == "a/tab\there"
    assert c_unquote(r"a/\303\274n\"q\\") == 'a/ün"q\\'
