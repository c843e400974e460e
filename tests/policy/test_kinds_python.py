"""Python tests weakened by kind (aliases, guards, vacuous checks, dropped tests), and their look-alikes."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

T = "tests/test_calc.py"
BASE = dedent("""\
    import os

    import pytest

    from calc import add, div


    def test_add():
        result = add(2, 3)
        assert result == 5


    @pytest.mark.parametrize(
        ("a", "b", "total"),
        [
            (1, 2, 3),
            (2, 2, 4),
            (0, 0, 0),
        ],
    )
    def test_add_table(a, b, total):
        assert add(a, b) == total


    def test_div_by_zero():
        with pytest.raises(ZeroDivisionError):
            div(1, 0)


    def test_div():
        assert div(6, 3) == 2
""")


def e(old: str, new: str) -> dict[str, str | None]:
    return {T: edit(BASE, old, new)}


B = {T: BASE}
ADD_BODY = "    result = add(2, 3)\n    assert result == 5\n"

CASES = [
    # ---- skips and focus through aliases, getattr, helpers, bindings -------------------------------
    Case(
        "alias-mark",
        B,
        e("import pytest\n", "import pytest\nfrom pytest import mark as m\n")
        | {
            T: edit(
                edit(BASE, "import pytest\n", "import pytest\nfrom pytest import mark as m\n"),
                "def test_add():",
                "@m.skip\ndef test_add():",
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "alias-module",
        B,
        {
            T: edit(
                edit(BASE, "import pytest\n", "import pytest\nimport pytest as pt\n"),
                ADD_BODY,
                '    pt.skip("later")\n' + ADD_BODY,
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "imported-skip-function",
        B,
        {
            T: edit(
                edit(BASE, "import pytest\n", "import pytest\nfrom pytest import skip as later\n"),
                ADD_BODY,
                '    later("flaky")\n' + ADD_BODY,
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "getattr-mark",
        B,
        e("def test_add():", '@getattr(pytest.mark, "skip")\ndef test_add():'),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "getattr-call",
        B,
        e(ADD_BODY, '    getattr(pytest, "xfail")("later")\n' + ADD_BODY),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "skip-bound-to-variable",
        B,
        {
            T: edit(
                edit(
                    BASE,
                    "from calc import add, div\n",
                    'from calc import add, div\n\nlater = getattr(pytest.mark, "sk" + "ip")\n',
                ),
                "def test_div():",
                "@later\ndef test_div():",
            )
        },
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "skip-exception",
        B,
        e(ADD_BODY, '    raise pytest.skip.Exception("later")\n' + ADD_BODY),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "importorskip",
        B,
        e(ADD_BODY, '    pytest.importorskip("not_installed_anywhere")\n' + ADD_BODY),
        "blocked",
        "skip-marker-added",
    ),
    Case(
        "skip-in-helper-module",
        {T: BASE, "tests/helpers.py": "def slow():\n    return None\n"},
        {"tests/helpers.py": "import pytest as _p\n\n\ndef slow():\n    getattr(_p, 'skip')('slow')\n"},
        "blocked",
        "skip-marker-added",
    ),
    # look-alikes
    Case(
        "skip-word-in-comment", B, e(ADD_BODY, "    # m.skip is how we used to do it\n" + ADD_BODY), "clean"
    ),
    Case(
        "skip-word-in-string",
        B,
        e(ADD_BODY, "    label = \"getattr(pytest.mark, 'skip')\"\n" + ADD_BODY),
        "clean",
    ),
    Case(
        "domain-skip-method",
        B,
        {
            T: edit(
                edit(
                    BASE,
                    "from calc import add, div\n",
                    "from calc import add, div\nfrom calc.ui import Pager\n",
                ),
                "\n\ndef test_div():",
                "\n\ndef test_pager():\n    pager = Pager()\n    pager.skip(2)\n"
                "    assert pager.page == 2\n\n\ndef test_div():",
            )
        },
        "clean",
        modes=("contents",),
    ),
    # ---- early returns and exits at a test's start ------------------------------------------------
    Case(
        "env-guard-return",
        B,
        e(ADD_BODY, '    if os.environ.get("CI"):\n        return\n' + ADD_BODY),
        "blocked",
        "test-emptied",
    ),
    Case(
        "one-line-guard-return",
        B,
        e(ADD_BODY, '    if "CI" in os.environ: return\n' + ADD_BODY),
        "blocked",
        "test-emptied",
    ),
    Case(
        "constant-guard-return",
        B,
        e(ADD_BODY, "    if True:\n        return\n" + ADD_BODY),
        "blocked",
        "test-emptied",
    ),
    Case(
        "raise-system-exit", B, e(ADD_BODY, "    raise SystemExit(0)\n" + ADD_BODY), "blocked", "exit-in-test"
    ),
    Case(
        "os-exit",
        B,
        e("    assert div(6, 3) == 2\n", "    os._exit(0)\n    assert div(6, 3) == 2\n"),
        "blocked",
        "exit-in-test",
    ),
    Case(
        "sys-exit-in-conftest",
        {T: BASE, "tests/conftest.py": "import sys\n"},
        {"tests/conftest.py": "import sys\n\nsys.exit(0)\n"},
        "blocked",
        "exit-in-test",
    ),
    # look-alikes
    Case(
        "return-at-the-end",
        B,
        e(
            "    assert div(6, 3) == 2\n",
            "    assert div(6, 3) == 2\n    if os.environ.get('CI'):\n        return\n",
        ),
        "clean",
    ),
    Case(
        "guard-that-raises",
        B,
        e(ADD_BODY, '    if add is None:\n        raise RuntimeError("no add")\n' + ADD_BODY),
        "clean",
    ),
    Case(
        "nested-helper-returns",
        B,
        e(
            ADD_BODY,
            "    def two():\n        return 2\n\n    result = add(two(), 3)\n    assert result == 5\n",
        ),
        "clean",
    ),
    Case(
        "guarded-return-after-setup",
        B,
        e(ADD_BODY, "    result = add(2, 3)\n    if result:\n        return\n    assert result == 5\n"),
        "blocked",
        "test-emptied",
    ),
    Case(
        "return-of-a-nested-function-after-setup",
        B,
        e(
            ADD_BODY,
            "    result = add(2, 3)\n\n    def again():\n        return result\n\n    assert again() == 5\n",
        ),
        "clean",
    ),
    # ---- assertions made vacuous -------------------------------------------------------------------
    Case(
        "or-true",
        B,
        e("    assert result == 5\n", "    assert result == 5 or True\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "compared-with-itself",
        B,
        e("    assert result == 5\n", "    assert result == result\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "assert-equal-itself",
        B,
        e("    assert div(6, 3) == 2\n", "    assert div(6, 3) == div(6, 3)\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "except-assertion-error",
        B,
        e(
            "    assert result == 5\n",
            "    try:\n        assert result == 5\n    except AssertionError:\n        pass\n",
        ),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "if-false-assert",
        B,
        e("    assert result == 5\n", "    if False:\n        assert result == 5\n"),
        "blocked",
        "assertion-vacuous",
    ),
    Case(
        "raises-widened",
        B,
        e("pytest.raises(ZeroDivisionError)", "pytest.raises(Exception)"),
        "blocked",
        "assertion-widened",
    ),
    Case(
        "assert-tuple",
        B,
        e("    assert result == 5\n", '    assert (result == 5, "sum")\n'),
        "blocked",
        "assertion-vacuous",
    ),
    # look-alikes
    Case(
        "assert-parenthesised",
        B,
        e("    assert result == 5\n", '    assert (result == 5), "sum"\n'),
        "clean",
    ),
    Case(
        "or-between-values",
        B,
        e("    assert result == 5\n", "    assert result == 5 or result == 5.0\n"),
        "clean",
    ),
    Case(
        "raises-narrowed",
        B,
        e("pytest.raises(ZeroDivisionError)", 'pytest.raises(ZeroDivisionError, match="division")'),
        "clean",
    ),
    Case(
        "assert-added",
        B,
        e("    assert result == 5\n", "    assert result == 5\n    assert result > 0\n"),
        "clean",
    ),
    Case(
        "except-value-error",
        B,
        e(
            ADD_BODY,
            "    try:\n        result = add(2, 3)\n    except ValueError:\n        pass\n    assert result == 5\n",
        ),
        "clean",
    ),
    # ---- tests that stop being collected -----------------------------------------------------------
    Case("parametrize-row-removed", B, e("        (0, 0, 0),\n", ""), "blocked", "test-case-removed"),
    Case(
        "test-renamed-out-of-pattern", B, e("def test_div():", "def check_div():"), "blocked", "test-removed"
    ),
    Case("test-renamed-private", B, e("def test_add():", "def _test_add():"), "blocked", "test-removed"),
    Case(
        "file-renamed-out-of-pattern",
        B,
        {T: None, "tests/calc_cases.py": BASE},
        "blocked",
        "test-file-renamed-away",
    ),
    # look-alikes
    Case(
        "parametrize-row-added",
        B,
        e("        (0, 0, 0),\n", "        (0, 0, 0),\n            (5, 5, 10),\n"),
        "clean",
    ),
    Case("test-renamed-within-pattern", B, e("def test_div():", "def test_division():"), "clean"),
    Case("file-renamed-within-pattern", B, {T: None, "tests/test_calculator.py": BASE}, "clean"),
    Case(
        "helper-renamed",
        {T: BASE + "\n\ndef make():\n    return 1\n"},
        {T: BASE + "\n\ndef build():\n    return 1\n"},
        "clean",
    ),
    # ---- a reflow is not a changed value -----------------------------------------------------------
    Case(
        "assert-reflowed",
        B,
        e("    assert add(a, b) == total\n", "    assert (\n        add(a, b)\n        == total\n    )\n"),
        "clean",
    ),
    Case(
        "call-reflowed",
        B,
        e("    assert div(6, 3) == 2\n", "    assert div(\n        6,\n        3,\n    ) == 2\n"),
        "clean",
    ),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_python_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
