"""Arbitrary bytes never crash triage, and the excerpt never exceeds the budget it was given."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_autofix.triage import diagnose, diagnose_jobs, estimate_tokens
from tests.testing.logformat import github_log

LOG_LINES = st.sampled_from(
    [
        "2026-08-14T05:58:33.0070000Z ##[error]Process completed with exit code 1.",
        "2026-08-14T05:58:32.0000000Z ##[group]Run pytest -q",
        "\x1b[36;1mpytest -q\x1b[0m",
        "##[endgroup]",
        "E       assert 3 == 4",
        "____________ test_add ____________",
        "=================================== FAILURES ===================================",
        "FAILED tests/test_a.py::test_add - assert 3 == 4",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>',
        "ValueError: boom",
        "src/a.py:1:1: F401 'os' imported but unused",
        "error[E0308]: mismatched types",
        " --> src/lib.rs:2:22",
        "npm error code ETARGET",
        "--- FAIL: TestAdd (0.00s)",
        "    at Object.<anonymous> (a.test.js:3:21)",
        'The command "make test" exited with 2.',
        "$ make test",
        "travis_fold:start:install\r\x1b[0K",
        "GITHUB_TOKEN=ghp_" + "x" * 36,
        "",
        "   ",
        "\ufeff",
        "\x00\x01\x02",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=4000), budget=st.integers(min_value=1, max_value=3000))
def test_arbitrary_bytes(data: bytes, budget: int) -> None:
    d = diagnose(data, max_tokens=budget)
    assert estimate_tokens(d.excerpt) <= budget
    assert d.excerpt_tokens == estimate_tokens(d.excerpt)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.one_of(LOG_LINES, st.text(max_size=200)), max_size=300),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    budget=st.integers(min_value=1, max_value=2000),
)
def test_log_shaped_text_stays_within_budget(lines: list[str], newline: str, budget: int) -> None:
    log = newline.join(lines)
    d = diagnose(log.encode("utf-8", "surrogatepass"), max_tokens=budget)
    assert estimate_tokens(d.excerpt) <= budget
    assert "ghp_" + "x" * 36 not in d.excerpt


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    logs=st.lists(st.lists(LOG_LINES, max_size=60).map("\n".join), min_size=1, max_size=5),
    budget=st.integers(min_value=1, max_value=3000),
)
def test_merged_jobs_stay_within_budget(logs: list[str], budget: int) -> None:
    jobs = [(f"job {i}", log) for i, log in enumerate(logs)]
    d = diagnose_jobs(jobs, max_tokens=budget)
    assert estimate_tokens(d.excerpt) <= budget
    assert d.jobs == [name for name, _ in jobs]


def test_a_20_megabyte_single_line() -> None:
    line = ("x" * 1000 + " error ") * 20_000
    d = diagnose(github_log("make", line).encode())
    assert estimate_tokens(d.excerpt) <= 6000
    assert d.log_commands == ["make"]
    assert "…[" in d.excerpt  # the giant line is shown as its head and tail


def test_invalid_utf8_nul_and_lone_cr() -> None:
    log = b"\xff\xfe garbage\x00\x00 line\rFAILED tests/t.py::test_x - assert 1 == 2\r\nok\n\x80\x81"
    d = diagnose(log)
    assert [f.test_id for f in d.failures] == ["tests/t.py::test_x"]
    assert "\x00" not in d.excerpt
    assert "FAILED tests/t.py::test_x - assert 1 == 2" in d.excerpt.splitlines()


def test_budget_is_never_exceeded_on_a_long_real_shaped_log() -> None:
    output = "\n".join(
        f"tests/test_m{i}.py:{i}: error: Incompatible types in assignment  [assignment]" for i in range(5000)
    )
    for budget in (1, 10, 100, 6000):
        d = diagnose(github_log("mypy .", output), max_tokens=budget)
        assert estimate_tokens(d.excerpt) <= budget
