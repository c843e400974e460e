"""Every content rule on real git diffs of Python files: what must be caught, and the look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]

TEST = "tests/test_calc.py"
BASE = dedent("""\
    import pytest

    from calc import add


    def test_add():
        result = add(2, 3)
        assert result == 5


    def test_add_negative():
        assert add(-1, -1) == -2
""")


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    # ---- skip / xfail markers: blocked -----------------------------------------------------------
    (
        "pytest-mark-skip",
        edit("def test_add():", '@pytest.mark.skip(reason="flaky")\ndef test_add():'),
        {"skip-marker-added"},
    ),
    (
        "pytest-mark-skipif",
        edit("def test_add():", '@pytest.mark.skipif(True, reason="x")\ndef test_add():'),
        {"skip-marker-added"},
    ),
    (
        "pytest-mark-xfail",
        edit("def test_add_negative():", "@pytest.mark.xfail\ndef test_add_negative():"),
        {"skip-marker-added"},
    ),
    (
        "imperative-pytest-skip",
        edit("    result = add(2, 3)", '    pytest.skip("later")\n    result = add(2, 3)'),
        {"skip-marker-added"},
    ),
    (
        "module-pytestmark",
        edit("from calc import add", "from calc import add\n\npytestmark = pytest.mark.skip"),
        {"skip-marker-added"},
    ),
    (
        "unittest-skip",
        edit("import pytest", "import unittest\n\nimport pytest").replace(
            "def test_add():", '@unittest.skip("broken")\ndef test_add():'
        ),
        {"skip-marker-added"},
    ),
    # look-alikes: the marker only in a comment, a string, a docstring
    (
        "skip-in-comment",
        edit("def test_add():", "# @pytest.mark.skip if this ever flakes\ndef test_add():"),
        set(),
    ),
    (
        "skip-in-string",
        edit(
            "    result = add(2, 3)", '    note = "use @pytest.mark.skip sparingly"\n    result = add(2, 3)'
        ),
        set(),
    ),
    (
        "xfail-in-docstring",
        edit(
            "def test_add():\n",
            'def test_add():\n    """Never mark this\n    @pytest.mark.xfail: it must pass."""\n',
        ),
        set(),
    ),
    (
        "skip-marker-moved",
        edit("def test_add_negative():", "@pytest.mark.skip\ndef test_add_negative():"),
        None,
    ),
    # ---- assertions removed / tests emptied: blocked ----------------------------------------------
    ("assert-removed", edit("    assert result == 5\n", ""), {"assertion-removed"}),
    (
        "body-replaced-by-pass",
        edit("    result = add(2, 3)\n    assert result == 5\n", "    pass\n"),
        {"test-emptied", "assertion-removed"},
    ),
    (
        "early-return",
        edit("    result = add(2, 3)\n", "    return\n    result = add(2, 3)\n"),
        {"test-emptied"},
    ),
    (
        "assert-replaced-by-assert-true",
        edit("    assert result == 5\n", "    assert True\n"),
        {"assertion-removed", "expected-value-changed"},
    ),
    ("assert-replaced-next-to-it", edit("    assert result == 5\n", "    assert add(2, 3) == 5\n"), set()),
    (
        "assert-added-next-to-removed",
        edit("    assert result == 5\n", "    assert result > 0\n    assert result == 5\n"),
        set(),
    ),
    ("legit-new-test", BASE + "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n", set()),
    ("new-test-with-pass-helper", BASE + "\n\nclass Dummy:\n    def method(self):\n        pass\n", set()),
    # ---- expected values: flagged, not blocked --------------------------------------------------
    ("expected-value-fixed", edit("== -2", "== -3"), {"expected-value-changed"}),
    (
        "expected-via-variable",
        edit(
            "    result = add(2, 3)\n    assert result == 5\n",
            "    expected = 6\n    assert add(2, 3) == expected\n",
        ),
        {"expected-value-changed"},
    ),
    (
        "parametrize-row",
        edit("def test_add():", '@pytest.mark.parametrize("a", [1, 2])\ndef test_add():'),
        set(),
    ),
    # ---- suppressions: flagged ------------------------------------------------------------------
    ("noqa", edit("from calc import add", "from calc import add  # noqa: F401"), {"suppression-added"}),
    (
        "type-ignore",
        edit("    result = add(2, 3)", "    result = add(2, 3)  # type: ignore[arg-type]"),
        {"suppression-added"},
    ),
    ("noqa-in-string", edit("    result = add(2, 3)", '    result = add(2, 3)\n    label = "# noqa"'), set()),
    # ---- network and processes in tests: flagged -------------------------------------------------
    (
        "requests-in-test",
        edit("import pytest", "import pytest\nimport requests").replace(
            "    result = add(2, 3)", '    requests.get("https://example.com")\n    result = add(2, 3)'
        ),
        {"network-call-in-test"},
    ),
    (
        "subprocess-in-test",
        edit("    result = add(2, 3)", '    subprocess.run(["ls"], check=True)\n    result = add(2, 3)'),
        {"process-spawn-in-test"},
    ),
    (
        "subprocess-in-string",
        edit("    result = add(2, 3)", '    doc = "subprocess.run is banned"\n    result = add(2, 3)'),
        set(),
    ),
    # ---- downloads run, encoded code run: flagged ----------------------------------------------
    (
        "exec-b64decode",
        edit(
            "from calc import add",
            'from calc import add\nimport base64\n\nexec(base64.b64decode("cHJpbnQoMSk="))',
        ),
        {"decode-and-exec"},
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [(BASE, after, expected) for _, after, expected in CASES],
    ids=[c[0] for c in CASES],
)
def test_python_rules(change: ChangeFn, before: str, after: str, expected: set[str] | None) -> None:
    verdict = change({TEST: before}, {TEST: after})
    if expected is None:  # the marker case that first adds, checked against a move just below
        assert verdict.codes == ["skip-marker-added"]
        return
    assert set(verdict.codes) == expected, verdict.to_text()


def test_moving_an_existing_marker_is_not_a_new_one(change: ChangeFn) -> None:
    marked = edit("def test_add_negative():", "@pytest.mark.skip\ndef test_add_negative():")
    moved = marked.replace("@pytest.mark.skip\ndef test_add_negative():", "def test_add_negative():").replace(
        "def test_add():", "@pytest.mark.skip\ndef test_add():"
    )
    assert change({TEST: marked}, {TEST: moved}).codes == []


def test_findings_point_at_the_added_line(change: ChangeFn) -> None:
    verdict = change({TEST: BASE}, {TEST: edit("def test_add():", "@pytest.mark.xfail\ndef test_add():")})
    (found,) = verdict.findings
    assert (found.path, found.line, found.severity) == (TEST, 6, "block")
    assert "pytest.mark" in found.message


def test_a_skip_marker_in_non_test_code_of_a_library_is_still_caught(change: ChangeFn) -> None:
    conftest = "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    return None\n"
    after = conftest.replace(
        "    return None", "    for item in items:\n        item.add_marker(pytest.mark.skip)"
    )
    verdict = change({"conftest.py": conftest}, {"conftest.py": after})
    assert verdict.codes == ["skip-marker-added", "test-infra-changed"]


def test_network_call_in_application_code_is_not_flagged(change: ChangeFn) -> None:
    before = "def fetch(url):\n    return None\n"
    after = "import requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n"
    assert change({"src/app/client.py": before}, {"src/app/client.py": after}).codes == []


def test_asserts_removed_from_application_code_are_not_test_assertions(change: ChangeFn) -> None:
    before = "def area(w, h):\n    assert w >= 0\n    return w * h\n"
    after = "def area(w, h):\n    return w * h\n"
    assert change({"src/app/geometry.py": before}, {"src/app/geometry.py": after}).codes == []


def test_a_changed_row_of_a_parametrize_table_is_flagged(change: ChangeFn) -> None:
    table = dedent("""\
        import pytest

        from calc import add


        @pytest.mark.parametrize(("a", "b", "total"), [
            (1, 2, 3),
            (2, 2, 4),
        ])
        def test_add(a, b, total):
            assert add(a, b) == total
    """)
    verdict = change({TEST: table}, {TEST: table.replace("(2, 2, 4)", "(2, 2, 5)")})
    assert [(f.code, f.line) for f in verdict.findings] == [("expected-value-changed", 8)]
