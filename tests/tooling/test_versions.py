from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_autofix.tooling.versions import Requirement, is_version


@pytest.mark.parametrize(
    ("text", "spec", "exact"),
    [
        ("0.8.6", "==0.8.6", "0.8.6"),
        ("==24.2.0", "==24.2.0", "24.2.0"),
        (" >= 24 , < 25 ", ">=24,<25", None),
        ("~=5.12", "~=5.12", None),
        ("==24.*", "==24.*", None),
        ("==1.0rc1", "==1.0rc1", "1.0rc1"),
    ],
)
def test_parse_normalises_readable_specifiers(text: str, spec: str, exact: str | None) -> None:
    requirement = Requirement.parse(text)
    assert requirement is not None
    assert requirement.spec == spec
    assert requirement.exact == exact


@pytest.mark.parametrize(
    "text",
    [
        "",
        "*",
        "latest",
        "==0.8.6 --index-url=http://evil",
        "== 1.0; rm -rf /",
        ">=1,,foo",
        "@ https://x/ruff.whl",
        "==v1.0",
    ],
)
def test_parse_refuses_anything_else(text: str) -> None:
    assert Requirement.parse(text) is None


@pytest.mark.parametrize(
    ("spec", "allowed", "refused"),
    [
        ("==24.2.0", ["24.2.0", "24.2"], ["24.2.1", "24.10.0"]),
        (">=24,<25", ["24.0", "24.10.1"], ["23.12.1", "25.1.0", "25.0a1", "25.0.dev1"]),
        ("~=5.12", ["5.12", "5.13.2"], ["5.11.9", "6.0"]),
        ("~=0.8.2", ["0.8.2", "0.8.9"], ["0.9.0", "0.8.1"]),
        ("==24.*", ["24.0.1", "24.10.0"], ["25.0", "2.4"]),
        ("!=0.8.0,>0.7", ["0.8.1", "0.7.1"], ["0.8.0", "0.7"]),
        ("<=1.0", ["1.0", "1.0rc1", "0.9"], ["1.0.post1", "1.1"]),
    ],
)
def test_allows(spec: str, allowed: list[str], refused: list[str]) -> None:
    requirement = Requirement(spec)
    assert [v for v in allowed if requirement.allows(v)] == allowed
    assert [v for v in refused if requirement.allows(v)] == []


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("^24.2.0", ">=24.2.0,<25"),
        ("^0.8.6", ">=0.8.6,<0.9"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("24.2.0", "==24.2.0"),
        (">=5,<6", ">=5,<6"),
    ],
)
def test_poetry_constraints(text: str, spec: str) -> None:
    requirement = Requirement.poetry(text)
    assert requirement is not None
    assert requirement.spec == spec


releases = st.lists(st.integers(0, 40), min_size=1, max_size=3).map(lambda parts: ".".join(map(str, parts)))


@given(releases, releases)
def test_order_matches_numeric_tuples(a: str, b: str) -> None:
    def padded(v: str) -> tuple[int, ...]:
        parts = tuple(int(p) for p in v.split("."))
        return parts + (0,) * (3 - len(parts))

    assert is_version(a)
    assert Requirement(f">={b}").allows(a) == (padded(a) >= padded(b))
    assert Requirement(f"=={b}").allows(a) == (padded(a) == padded(b))
    assert Requirement(f"<{b}").allows(a) == (padded(a) < padded(b))
