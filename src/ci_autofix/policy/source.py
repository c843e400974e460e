"""Just enough of each language to tell code from comments and strings, and tests from the rest.

`scan` splits a run of source lines into three views per line: `code` (comments dropped,
string contents blanked, quotes kept), `comment` (only the comment text) and `bare` (comments
dropped, strings kept). Rules look for markers in `code`, for suppressions in `comment`, and
for literals in `bare`, so `"it.skip("` in a string or `# pytest.mark.skip` in a comment never
counts as a marker. A hunk is scanned from its first line with no carried state: a hunk that
starts inside a multi-line string or comment can be misread (git's three context lines make
this rare for the short functions tests are made of).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath


class Language(StrEnum):
    PYTHON = "python"
    JS = "js"  # JavaScript and TypeScript
    GO = "go"
    RUST = "rust"
    JAVA = "java"  # Java, Kotlin, Scala, Groovy, C#, C, C++, Swift, PHP: C-style comments
    RUBY = "ruby"  # `#` comments, like HASH, with RSpec's and minitest's markers
    HASH = "hash"  # shell, YAML, TOML, Ruby, Makefiles, requirements: `#` comments
    OTHER = "other"


_EXTENSIONS: dict[str, Language] = {
    **dict.fromkeys((".py", ".pyi", ".pyx"), Language.PYTHON),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"), Language.JS),
    ".go": Language.GO,
    ".rs": Language.RUST,
    ".rb": Language.RUBY,
    **dict.fromkeys(
        (
            ".java",
            ".kt",
            ".kts",
            ".scala",
            ".groovy",
            ".cs",
            ".c",
            ".h",
            ".cc",
            ".cpp",
            ".hpp",
            ".swift",
            ".php",
        ),
        Language.JAVA,
    ),
    **dict.fromkeys(
        (
            ".sh",
            ".bash",
            ".zsh",
            ".yml",
            ".yaml",
            ".toml",
            ".cfg",
            ".txt",
            ".in",
            ".mk",
            ".r",
            ".pl",
            ".ps1",
        ),
        Language.HASH,
    ),
}
_HASH_NAMES = frozenset(
    {
        "Makefile",
        "GNUmakefile",
        "Dockerfile",
        "Containerfile",
        "Gemfile",
        "Rakefile",
        "Justfile",
        "justfile",
        ".gitignore",
        ".dockerignore",
    }
)

_TEST_DIRS = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "e2e", "integration_tests", "testdata"}
)
_TEST_NAME = re.compile(
    r"""(?x)
    ^(?:test_.*\.py|.*_test\.py|conftest\.py|tests?\.py       # pytest, unittest
     |.*\.(?:test|spec|e2e)\.[cm]?[jt]sx?                     # jest, vitest, mocha
     |.*\.spec\.\w+                                           # any *.spec.*
     |.*_test\.go                                             # go test
     |.*(?:Test|Tests|IT|TestCase|Spec)\.(?:java|kt|kts|scala|groovy|cs)
     |Test\w*\.(?:java|kt|cs)
     |.*_(?:spec|test)\.rb|test_.*\.rb
     |.*_test\.(?:c|cc|cpp|exs)
    )$"""
)


def language_of(path: str) -> Language:
    name = PurePosixPath(path).name
    if name in _HASH_NAMES or name.startswith(("Dockerfile.", "requirements")):
        return Language.HASH
    return _EXTENSIONS.get(PurePosixPath(name).suffix.lower(), Language.OTHER)


def is_test_path(path: str) -> bool:
    """A test file by the conventions of the common test runners (not a fixture or data file)."""
    pure = PurePosixPath(path)
    if _TEST_NAME.match(pure.name):
        return True
    in_test_dir = any(part in _TEST_DIRS for part in pure.parts[:-1])
    return (
        in_test_dir
        and language_of(path) not in (Language.OTHER, Language.HASH)
        and "testdata" not in pure.parts
    )


_TEST_DATA_DIRS = _TEST_DIRS | {"__snapshots__", "fixtures", "snapshots", "golden"}


def is_test_file(path: str) -> bool:
    """A test, or a file in a test directory (test data, snapshots, golden files, fixtures):
    what the tests read to decide whether the code is right."""
    return is_test_path(path) or any(part in _TEST_DATA_DIRS for part in PurePosixPath(path).parts[:-1])


@dataclass(frozen=True)
class View:
    code: str  # comments dropped, string contents blanked (quotes kept)
    comment: str  # comment text only
    bare: str  # comments dropped, strings kept


@dataclass(frozen=True)
class _Syntax:
    line_comments: tuple[str, ...]
    block_comment: tuple[str, str] | None
    # (open, close, backslash escapes, may span lines), longest opener first
    strings: tuple[tuple[str, str, bool, bool], ...]
    hash_needs_space: bool = False  # shell: `#` starts a comment only at a word start
    rust_literals: bool = False  # r#"raw"# strings, and 'c' chars versus 'lifetimes


_C_STRINGS = (('"', '"', True, False), ("'", "'", True, False))
_SYNTAX: dict[Language, _Syntax] = {
    Language.PYTHON: _Syntax(
        ("#",), None, (('"""', '"""', True, True), ("'''", "'''", True, True), *_C_STRINGS)
    ),
    Language.JS: _Syntax(("//",), ("/*", "*/"), (("`", "`", True, True), *_C_STRINGS)),
    Language.GO: _Syntax(("//",), ("/*", "*/"), (("`", "`", False, True), *_C_STRINGS)),
    Language.RUST: _Syntax(("//",), ("/*", "*/"), (('"', '"', True, True),), rust_literals=True),
    Language.JAVA: _Syntax(("//",), ("/*", "*/"), (('"""', '"""', True, True), *_C_STRINGS)),
    Language.HASH: _Syntax(("#",), None, _C_STRINGS, hash_needs_space=True),
    Language.RUBY: _Syntax(("#",), None, _C_STRINGS),
}
_RUST_RAW = re.compile(r'b?r(#*)"')
_RUST_CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]{1,6}\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")


def scan(lines: Sequence[str], language: Language) -> list[View]:
    """The three views of each line of a contiguous run of source lines."""
    syntax = _SYNTAX.get(language)
    if syntax is None:
        return [View(line, "", line) for line in lines]
    scanner = _Scanner(syntax, _special(syntax))
    return [scanner.line(line) for line in lines]


@dataclass
class _Views:
    """One line's three views, as they are built."""

    code: list[str] = field(default_factory=list)
    comment: list[str] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)

    def both(self, text: str) -> None:
        """Code, kept as it is in `code` and in `bare`."""
        self.code.append(text)
        self.bare.append(text)

    def view(self) -> View:
        return View(
            "".join(self.code), " ".join(c.strip() for c in self.comment if c.strip()), "".join(self.bare)
        )


@dataclass
class _Scanner:
    """`scan` of one run of lines: each step reads from a position on a line to past what starts
    there, and returns that position."""

    syntax: _Syntax
    special: re.Pattern[str]
    # what we are inside of at the start of a line: None, ("comment", close) or ("string", close, escapes)
    inside: tuple[str, str, bool] | None = None

    def line(self, line: str) -> View:
        views = _Views()
        i, n = 0, len(line)
        while i < n:
            if self.inside is not None:
                i = self._inside(line, i, self.inside, views)
                continue
            plain = self.special.search(line, i)  # copy the run of ordinary characters in one step
            stop = plain.start() if plain else n
            if stop > i:
                views.both(line[i:stop])
                i = stop
                continue
            i = self._special_at(line, i, views)
        return views.view()

    def _inside(self, line: str, i: int, inside: tuple[str, str, bool], views: _Views) -> int:
        """In a block comment or a string that spans lines (`inside`): to its end, or to the line's end."""
        kind, close, escapes = inside
        if kind == "comment":
            end = line.find(close, i)
            if end < 0:
                views.comment.append(line[i:])
                return len(line)
            views.comment.append(line[i:end])
            views.both(" ")
            self.inside = None
            return end + len(close)
        end = _string_end(line, i, close, escapes)
        if end < 0:
            views.bare.append(line[i:])
            return len(line)
        views.bare.append(line[i : end + len(close)])
        views.code.append(close)
        self.inside = None
        return end + len(close)

    def _special_at(self, line: str, i: int, views: _Views) -> int:
        """What starts at `i`: a comment, a string, a Rust literal, or one ordinary character."""
        syntax = self.syntax
        if line.startswith(syntax.line_comments, i) and (
            not syntax.hash_needs_space or i == 0 or line[i - 1] in " \t;"
        ):
            views.comment.append(line[i:])
            return len(line)
        if syntax.block_comment and line.startswith(syntax.block_comment[0], i):
            self.inside = ("comment", syntax.block_comment[1], False)
            return i + len(syntax.block_comment[0])
        if syntax.rust_literals and (past := self._rust_literal(line, i, views)) is not None:
            return past
        opened = next((s for s in syntax.strings if line.startswith(s[0], i)), None)
        if opened is not None:
            return self._string(line, i, opened, views)
        views.both(line[i])
        return i + 1

    def _rust_literal(self, line: str, i: int, views: _Views) -> int | None:
        """A raw string's opener or a char literal at `i` (None: neither is there)."""
        char = line[i]
        if char in "br" and (i == 0 or not _ident(line[i - 1])):
            raw = _RUST_RAW.match(line, i)
            if raw:
                opener = raw.group(0)
                views.both(opener)
                self.inside = ("string", '"' + raw.group(1), False)
                return i + len(opener)
        if char == "'":
            literal = _RUST_CHAR.match(line, i)
            if literal:  # a char literal; otherwise a lifetime, which is code
                views.code.append("''")
                views.bare.append(literal.group(0))
                return literal.end()
        return None

    def _string(self, line: str, i: int, opened: tuple[str, str, bool, bool], views: _Views) -> int:
        """A string opened at `i` by `opened`'s opener: to its close, or to the line's end."""
        opener, close, escapes, multiline = opened
        views.both(opener)
        i += len(opener)
        end = _string_end(line, i, close, escapes)
        if end < 0:
            views.bare.append(line[i:])
            if multiline:
                self.inside = ("string", close, escapes)
            else:
                views.code.append(close)  # an unterminated one-line string ends with its line
            return len(line)
        views.bare.append(line[i : end + len(close)])
        views.code.append(close)
        return end + len(close)


_SPECIALS: dict[int, re.Pattern[str]] = {}


def _special(syntax: _Syntax) -> re.Pattern[str]:
    """The characters where something other than plain code may start, for this syntax."""
    key = id(syntax)
    if key not in _SPECIALS:
        starts = {c[0] for c in syntax.line_comments} | {s[0][0] for s in syntax.strings}
        if syntax.block_comment:
            starts.add(syntax.block_comment[0][0])
        if syntax.rust_literals:
            starts |= {"b", "r", "'"}
        _SPECIALS[key] = re.compile("[" + re.escape("".join(sorted(starts))) + "]")
    return _SPECIALS[key]


def _ident(char: str) -> bool:
    return char.isalnum() or char == "_"


def _string_end(line: str, start: int, close: str, escapes: bool) -> int:
    i = start
    while True:
        end = line.find(close, i)
        if end < 0:
            return -1
        if escapes:
            backslashes = 0
            j = end - 1
            while j >= start and line[j] == "\\":
                backslashes += 1
                j -= 1
            if backslashes % 2:
                i = end + 1
                continue
        return end


_COLLECTED = re.compile(
    r"""(?x)
    ^(?:test_.*\.py|.*_test\.py                                  # pytest's default python_files
     |.*\.(?:test|spec)\.[cm]?[jt]sx?                            # jest, vitest, mocha
     |.*_test\.go                                                # go test
     |(?:Test\w*|\w*(?:Test|Tests|TestCase|IT))\.(?:java|kt|scala|groovy)  # surefire, failsafe
    )$"""
)


def is_collected_test(path: str) -> bool:
    """A file the language's test runner collects by default (pytest, jest/vitest, go test, surefire,
    a Rust integration test directly under `tests/`); other languages: `is_test_path`.
    """
    pure = PurePosixPath(path)
    language = language_of(path)
    if language is Language.JS and "__tests__" in pure.parts[:-1]:
        return True
    if language is Language.RUST:
        return (len(pure.parts) >= 2 and pure.parts[-2] == "tests") or is_test_path(path)
    if language in (Language.PYTHON, Language.JS, Language.GO, Language.JAVA):
        return bool(_COLLECTED.match(pure.name))
    return is_test_path(path)
