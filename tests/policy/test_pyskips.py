"""`pyskips.skips`: every spelling of a Python skip or xfail is one skip, on its line."""

from __future__ import annotations

from textwrap import dedent

import pytest

from ci_autofix.policy.pyskips import skips


@pytest.mark.parametrize(
    "source",
    [
        'import pytest\n\n\ndef test_add():\n    pytest.xfail("later")\n',
        'import unittest\n\n\ndef test_add():\n    raise unittest.SkipTest("later")\n',
        'import pytest\n\n\ndef test_add():\n    pytest.skip("later")\n',
        'from unittest import SkipTest\n\n\ndef test_add():\n    raise SkipTest("later")\n',
    ],
    ids=["pytest.xfail()", "raise unittest.SkipTest", "pytest.skip()", "raise SkipTest (imported)"],
)
def test_a_skip_in_a_test_body_is_found_on_its_line(source: str) -> None:
    assert skips(source) == [5]


def test_code_without_skips_has_none() -> None:
    source = dedent("""\
        import pytest
        import unittest


        def test_add():
            assert pytest.approx(0.3) == 0.1 + 0.2
            unittest.TestCase().assertEqual(1, 1)
        """)
    assert skips(source) == []


def test_a_module_that_does_not_parse_is_none() -> None:
    assert skips("def broken(:\n") is None
