"""Rules about output conventions shared by many tools and repositories (issue 17, part 3).

Each rule is tested on the real shape of the line it is about, buried in a long build so that
only the rule can bring it into the excerpt, and beside a passing line that looks the same and
must not be picked.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ci_autofix.triage import diagnose
from ci_autofix.triage.engine import analyse
from ci_autofix.triage.normalize import MAX_LINE_CHARS
from tests.testing.logformat import github_log

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _noise(n: int, start: int = 0) -> list[str]:
    return [
        f"[{k % 100:3d}%] Building CXX object src/CMakeFiles/core.dir/unit{k:04d}.cpp.o"
        for k in range(start, start + n)
    ]


def _buried(block: list[str], *, end: str = "make: *** [Makefile:12: check] Error 1") -> str:
    """A failed step whose output is a long build with `block` in the middle, far from its end."""
    return "\n".join([*_noise(900), *block, *_noise(900, 900), end])


def _kept(excerpt: str, line: str) -> bool:
    return any(line.strip() == kept.strip() for kept in excerpt.splitlines())


def _excerpt(output: str, script: str = "make check") -> str:
    return diagnose(github_log(script, output), max_tokens=6000).excerpt


# --- Ginkgo's `[FAIL]` summary line (Go projects: Kubernetes, go-redis, ...) and Bun's `(fail)`


GINKGO_FAIL = "  [FAIL] Redis commands [It] should PING the server"
GINKGO_WHERE = "  /home/runner/work/demo/demo/commands_test.go:60"


def test_a_ginkgo_fail_summary_line_is_an_error_line() -> None:
    excerpt = _excerpt(_buried([GINKGO_FAIL, GINKGO_WHERE]))
    assert _kept(excerpt, GINKGO_FAIL)
    assert _kept(excerpt, GINKGO_WHERE)


def test_a_word_that_starts_with_fail_is_not_a_fail_badge() -> None:
    lookalike = "  [FAILOVER] Redis sentinel [It] should elect a new master"
    excerpt = _excerpt(_buried([lookalike, GINKGO_WHERE]))
    assert not _kept(excerpt, lookalike)


BUN_FAIL = "(fail) math > adds two numbers [0.31ms]"


def test_a_bun_fail_line_is_an_error_line() -> None:
    excerpt = _excerpt(_buried(["test/math.test.ts:", "12 |   expect(add(1, 1)).toBe(3);", BUN_FAIL]))
    assert _kept(excerpt, BUN_FAIL)


def test_a_bun_pass_line_is_not_picked() -> None:
    passing = "(pass) math > fails gracefully on bad input [0.12ms]"
    assert not _kept(_excerpt(_buried([passing])), passing)


# --- miette's `×` (Biome, oxlint, Deno, Turborepo, Rspack) and Vitest's failed tests


BIOME = [
    "src/index.ts:1:1 lint/style/useConst  FIXABLE  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
    "",
    "  × This let declares a variable that is only assigned once.",
    "",
    "  > 1 │ let total = 1;",
]


def test_a_miette_cross_opens_an_error_line() -> None:
    excerpt = _excerpt(_buried(BIOME), script="npx @biomejs/biome ci .")
    assert _kept(excerpt, BIOME[2])
    assert _kept(excerpt, BIOME[4])


def test_a_times_sign_inside_a_line_is_not_an_error_mark() -> None:
    lookalike = "  resized icon.png to 64 × 64 (unexpected ratio kept)"
    assert not _kept(_excerpt(_buried([lookalike])), lookalike)


# --- GitHub's `##[error]` annotation, whatever its words


ANNOTATION = "##[error]app/models.py:12:80: Line too long (97 > 79 characters)"


def test_a_github_error_annotation_is_an_error_line() -> None:
    assert _kept(_excerpt(_buried([ANNOTATION])), ANNOTATION)


def test_the_same_words_without_the_annotation_are_not_picked() -> None:
    warning = ANNOTATION.replace("##[error]", "##[warning]")
    assert not _kept(_excerpt(_buried([warning])), warning)


# --- the command the failed step echoed last


ECHO = "^[[94m^[[1m$ /opt/hostedtoolcache/Python/3.12.13/x64/bin/python -P -m pytest -m 'not slow'^[[0m"


def test_the_last_echoed_command_of_the_failed_step_is_kept() -> None:
    output = "\n".join(
        [
            "$ pip install -e .",
            *_noise(300),
            ECHO,
            *_noise(1500, 300),
            "Fatal Python error: Segmentation fault",
        ]
    )
    excerpt = _excerpt(output, script="spin test")
    assert _kept(excerpt, ECHO)
    assert not _kept(excerpt, "$ pip install -e .")  # an earlier command is not the one that failed


def test_an_xtrace_echo_is_a_command_too() -> None:
    output = "\n".join(
        ["+ cmake --build build", *_noise(1500), "+ ctest -j2 --test-dir build", *_noise(400, 1500)]
    )
    excerpt = _excerpt(output, script="set -x; ./ci.sh")
    assert _kept(excerpt, "+ ctest -j2 --test-dir build")
    assert not _kept(excerpt, "+ cmake --build build")


def test_a_passing_step_echo_is_not_kept() -> None:
    output = "\n".join([*_noise(900), "make: *** [Makefile:12: check] Error 1"])
    log = github_log("make check", output)
    passing = "\n".join(
        github_log(
            "make docs", "$ sphinx-build docs out\n" + "\n".join(_noise(600)), exit_code=0
        ).splitlines()[:-4]
    )
    excerpt = diagnose(passing + "\n" + log, max_tokens=6000).excerpt
    assert not _kept(excerpt, "$ sphinx-build docs out")


# --- TAP's `not ok` (node:test, node-tap, tape, Bats, prove)


@needs_node
def test_a_tap_failure_is_kept_with_its_yaml_block(tmp_path: Path) -> None:
    (tmp_path / "math.test.js").write_text(
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "test('adds numbers', () => { assert.strictEqual(1 + 1, 3); });\n"
        "test('not ok handling', () => {});\n"
        "test('todo one', { todo: 'later' }, () => { throw new Error('pending'); });\n"
    )
    done = subprocess.run(
        ["node", "--test", "--test-reporter=tap", "math.test.js"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode != 0
    tap_lines = done.stdout.splitlines()
    assert "not ok 1 - adds numbers" in tap_lines
    assert "ok 2 - not ok handling" in tap_lines
    assert "not ok 3 - todo one # TODO later" in tap_lines
    d = diagnose(github_log("node --test", _buried(tap_lines)), max_tokens=6000)
    excerpt = d.excerpt
    assert _kept(excerpt, "not ok 1 - adds numbers")
    assert _kept(excerpt, "2 !== 3")
    assert _kept(excerpt, "operator: 'strictEqual'")
    tap = [f for f in d.failures if f.tool == "tap"]
    assert [f.test_id for f in tap] == ["adds numbers"]  # not the passing `not ok handling`, not the TODO
    assert "    2 !== 3" in tap[0].evidence  # its YAML block is its evidence
    found = [
        f for f in analyse(github_log("node --test", _buried(tap_lines))).found if f.failure.tool == "tap"
    ]
    start = tap_lines.index("not ok 1 - adds numbers")
    end = tap_lines.index("  ...", start)  # the YAML block ends there, before the next test point
    assert found[0].last - found[0].first == end - start


def test_a_bats_failure_is_kept_with_its_comment_lines() -> None:
    bats = [
        "1..3",
        "ok 1 addition using bc",
        "not ok 2 addition using dc",
        "# (in test file test/add.bats, line 12)",
        '#   `[ "$result" -eq 4 ]\' failed',
        "ok 3 subtraction",
    ]
    d = diagnose(github_log("bats test", _buried(bats)), max_tokens=6000)
    assert _kept(d.excerpt, "not ok 2 addition using dc")
    assert _kept(d.excerpt, "# (in test file test/add.bats, line 12)")
    tap = [f for f in d.failures if f.tool == "tap"]
    assert [f.test_id for f in tap] == ["addition using dc"]
    assert tap[0].evidence[1:] == bats[3:5]  # its comment lines are its evidence, the next point is not


def test_a_skipped_tap_point_is_not_a_failure() -> None:
    bats = [
        "1..3",
        "ok 1 addition",
        "not ok 2 needs docker # skip docker is not installed",
        "ok 3 subtraction",
    ]
    d = diagnose(
        github_log("bats test", "\n".join([*_noise(900), *bats])), max_tokens=6000
    )  # read: the step's end
    assert [f for f in d.failures if f.tool == "tap"] == []


# --- a test's status at the end of its line (Tasty, `unittest -v`), and error words inside names


TASTY_FAIL = [
    "      tables:                                                        FAIL (0.06s)",
    "",
    "------------------------------------------------------------------------",
    "--- tables.custom",
    "+++ pandoc --quiet tables.native -f native -t ../data/sample.lua",
    "+  29 </table>",
    "-  29 </table",
    "------------------------------------------------------------------------",
]


def test_a_fail_status_at_the_end_of_a_test_line_is_an_error_line() -> None:
    excerpt = _excerpt(_buried(TASTY_FAIL), script="cabal test")
    for line in TASTY_FAIL:
        assert not line or _kept(excerpt, line), line


def test_a_unittest_fail_status_is_an_error_line_and_a_status_word_inside_a_line_is_not() -> None:
    failing = "test_parse_empty (tests.test_config.ConfigTest.test_parse_empty) ... FAIL"
    lookalike = "retry policy: FAIL-SAFE (three attempts, then stop)"  # a status word, not a status
    excerpt = _excerpt(_buried([failing]))
    assert _kept(excerpt, failing)
    assert not _kept(_excerpt(_buried([lookalike])), lookalike)


def _modules(n: int, start: int = 0) -> list[str]:
    """A Haskell build that compiles a module named `Error` in every package: names, not errors
    (the packages are named by letters, so that no two lines are the same but for numbers)."""
    names = ["".join(chr(ord("a") + int(d)) for d in str(k)) for k in range(start, start + n)]
    return [
        f"[{k:3d} of 900] Compiling App.{name}.Error ( src/App/{name}/Error.hs, dist/App/{name}/Error.o )"
        for k, name in zip(range(start, start + n), names, strict=True)
    ]


def test_an_error_word_inside_a_name_is_not_an_error_line() -> None:
    failure = ["Checking the generated tables ...", "tables check failed: 7 rows differ from tables.golden"]
    output = "\n".join([*_modules(450), *failure, *_modules(450, 450), "1 out of 2041 tests failed (45.46s)"])
    excerpt = _excerpt(output, script="cabal test")
    assert _kept(excerpt, failure[1])
    assert not _kept(excerpt, _modules(1, 200)[0])


@pytest.mark.parametrize(
    "line",
    [
        "socket.error: [Errno 111] while reading the reply",
        "Caused by: org.eclipse.jgit.errors.TransportException: https://example.com/demo.git: 503",
    ],
)
def test_a_name_that_heads_a_message_is_the_error(line: str) -> None:
    assert _kept(_excerpt(_buried([line])), line)


def test_a_resolvers_long_list_of_versions_is_kept_whole() -> None:
    versions = ", ".join(f"v4.{minor}.{patch}" for minor in range(8) for patch in range(40))
    problem = (
        f"    - The requested package symfony/phpunit-bridge 4.4@dev exists as symfony/phpunit-bridge[{versions}]"
        " but these are rejected by your constraint."
    )
    assert 2500 < len(problem) <= MAX_LINE_CHARS
    output = "\n".join(
        [
            "Your requirements could not be resolved to an installable set of packages.",
            "",
            "  Problem 1",
            problem,
        ]
    )
    assert _kept(_excerpt(_buried(output.splitlines()), script="composer update"), problem)


# --- the operating system's error messages (strerror), whoever printed them


@pytest.mark.parametrize(
    "line",
    [
        "bash: line 169: pom.bak9.xml: No space left on device",
        "bash: ./configure: No such file or directory",
        "tee: 'standard output': Broken pipe",
        "write /var/lib/docker/tmp/GetImageBlob123: read-only file system",
    ],
)
def test_an_operating_system_error_message_is_an_error_line(line: str) -> None:
    assert _kept(_excerpt(_buried([line])), line)


def test_os_error_words_in_a_passing_line_are_not_picked() -> None:
    passing = "collected tests/net/test_broken_pipe_is_retried.py::test_reconnect"
    assert not _kept(_excerpt(_buried([passing])), passing)


@pytest.mark.parametrize(
    "line",
    [
        "test_foo ........ FAILED",
        "Checking links.... ERROR",
        "Connecting to example.com...failed.",
        "[2026-08-14 05:58:31,004: ERROR/MainProcess] Task app.tasks.sync raised unexpected: KeyError('a')",
    ],
)
def test_an_error_word_after_an_ellipsis_or_in_upper_case_is_not_a_name(line: str) -> None:
    assert _kept(_excerpt(_buried([line])), line)
