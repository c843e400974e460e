"""GitHub, Travis, Jenkins and plain-terminal input: markers, timestamps, colours and commands."""

from __future__ import annotations

from pathlib import Path

from ci_autofix.triage import Category, diagnose
from ci_autofix.triage.normalize import clean_line, to_text
from tests.testing.logformat import github_log

SYNTHETIC = Path(__file__).parent / "fixtures" / "github-synthetic.txt"


def test_github_log_bom_timestamps_and_continuation_lines() -> None:
    d = diagnose(SYNTHETIC.read_bytes())
    assert d.log_commands == ["python -m pytest -q"]
    assert d.category is Category.TEST
    [f] = d.failures
    assert (f.test_id, f.file, f.line, f.message) == ("test_add", "tests/test_calc.py", 5, "assert 3 == 4")
    lines = d.excerpt.splitlines()
    # the continuation line of a multi-line ::error:: has no timestamp and is kept as it is
    assert (
        "E   full message continues here (continuation lines of a multi-line ::error:: carry no timestamp)"
        in lines
    )
    assert "##[error]Process completed with exit code 1." in lines
    assert not any(line.startswith(("\ufeff", "2026-")) for line in lines)
    assert "\x1b" not in d.excerpt


def test_multi_line_script_gives_every_script_line() -> None:
    log = github_log("pip install -e .\npython -m pytest -q\necho done", "FAILED t.py::test_a - assert 0")
    d = diagnose(log)
    assert d.log_commands == ["pip install -e .\npython -m pytest -q\necho done"]


def test_only_the_failed_step_is_a_failing_command() -> None:
    ok = github_log("echo fine", "fine", exit_code=0)
    failing = github_log("make lint", "src/a.c:3:5: error: expected ';' before '}' token", exit_code=2)
    d = diagnose(ok + failing)
    assert d.log_commands == ["make lint"]
    [f] = [f for f in d.failures if f.tool == "compiler"]
    assert (f.file, f.line, f.column) == ("src/a.c", 3, 5)


def test_masked_secrets_stay_masked() -> None:
    d = diagnose(
        github_log("deploy", "curl -H 'Authorization: token ***' https://x\nerror: 401 Unauthorized")
    )
    assert "  token: ***\n" in d.excerpt  # the runner's own mask is kept as it is
    assert "token ***" not in d.excerpt  # the header's whole value is redacted
    assert "Authorization: [REDACTED]" in d.excerpt


def test_secrets_in_the_log_are_redacted_everywhere() -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    d = diagnose(github_log(f"git push https://x:{token}@github.com/o/r", f"fatal: token {token} rejected"))
    assert token not in d.excerpt
    assert token not in str(d.to_json())


def test_travis_folds_prompts_and_exit_line() -> None:
    log = (
        "travis_fold:start:install\r\x1b[0K$ npm ci\r\nadded 10 packages\r\ntravis_fold:end:install\r\x1b[0K"
        "$ npm test\r\n\r\n> jest\r\n\r\nFAIL test/a.test.js\r\n  ● adds\r\n\r\n    expect(received).toBe(expected)\r\n"
        '\r\n    Expected: 3\r\n    Received: -1\r\n\r\n\x1b[31;1mThe command "npm test" exited with 1.\x1b[0m\r\n'
        "\r\nDone. Your build exited with 1.\r\n"
    )
    d = diagnose(log.encode())
    assert d.log_commands == ["npm test"]
    assert d.category is Category.TEST
    jest = {(f.file, f.test_id) for f in d.failures if f.tool == "jest"}
    assert jest == {("test/a.test.js", None), (None, "adds")}
    assert "travis_fold" not in d.excerpt
    assert 'The command "npm test" exited with 1.' in d.excerpt.splitlines()


def test_travis_prompt_without_exit_line() -> None:
    d = diagnose(b"$ make\ncc -c a.c\na.c:1:1: error: unknown type name 'foo'\nmake: *** [a.o] Error 1\n")
    assert d.log_commands == ["make"]
    assert d.category is Category.BUILD


def test_jenkins_maven_log() -> None:
    log = (
        "Started by user admin\n[Pipeline] sh\n+ mvn -B verify\n[INFO] BUILD FAILURE\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test)"
        " on project demo: There are test failures.\n[Pipeline] End of Pipeline\nERROR: script returned exit code 1\n"
        "Finished: FAILURE\n"
    )
    d = diagnose(log)
    assert any(f.tool == "maven" and f.test_id == "demo" for f in d.failures)
    assert "ERROR: script returned exit code 1" in d.excerpt


def test_plain_terminal_output_falls_back_to_error_lines() -> None:
    noise = "\n".join(f"step {i} ok" for i in range(3000))
    log = f"{noise}\nSomething odd happened: cannot open config.yaml\n{noise}\n"
    d = diagnose(log, max_tokens=400)
    assert "Something odd happened: cannot open config.yaml" in d.excerpt.splitlines()
    assert "… [" in d.excerpt  # elision markers show what was left out


def test_excerpt_is_in_log_order_with_elision_markers() -> None:
    body = "\n".join(f"line {i}" for i in range(500))
    log = github_log(
        "pytest", f"{body}\nFAILED t.py::test_z - assert 0\n{body}\nFAILED t.py::test_a - assert 1"
    )
    d = diagnose(log)
    lines = d.excerpt.splitlines()
    assert lines.index("FAILED t.py::test_z - assert 0") < lines.index("FAILED t.py::test_a - assert 1")
    assert any(line.startswith("… [") and line.endswith("lines omitted] …") for line in lines)


def test_clean_line_and_to_text() -> None:
    assert clean_line("2026-08-14T05:58:33.0070000Z \x1b[31mFAILED\x1b[0m x") == "FAILED x"
    assert clean_line("job\tstep\t2026-08-14T05:58:33.0070000Z hello") == "hello"
    assert to_text(b"\xef\xbb\xbfa\r\nb\rc\x00d") == "a\nb\ncd"
