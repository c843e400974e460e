"""Version specs as setup-node and setup-go read them: exact, partial, x-ranges, semver ranges, aliases."""

from __future__ import annotations

import pytest

from ci_autofix.toolchains.versions import BadSpec, nearest, newest, parse

RELEASES = [
    (18, 20, 4),
    (20, 11, 0),
    (20, 11, 1),
    (20, 19, 0),
    (20, 20, 2),
    (21, 7, 3),
    (22, 12, 0),
    (0, 12, 18),
]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("20", (20, 20, 2)),
        ("20.x", (20, 20, 2)),
        ("20.11", (20, 11, 1)),
        ("20.11.x", (20, 11, 1)),
        ("20.11.0", (20, 11, 0)),
        ("v20.11.0", (20, 11, 0)),
        ("=20.11.0", (20, 11, 0)),
        ("^20.11", (20, 20, 2)),
        ("~20.11.0", (20, 11, 1)),
        ("~20", (20, 20, 2)),
        (">=18 <21", (20, 20, 2)),
        (">18.20.4 <=20.11", (20, 11, 1)),
        (">20", (22, 12, 0)),
        ("<20", (18, 20, 4)),
        ("<=20", (20, 20, 2)),
        ("18 || 21", (21, 7, 3)),
        ("18.0.0 - 20.11", (20, 11, 1)),
        ("*", (22, 12, 0)),
        ("^0.12.1", (0, 12, 18)),
        ("^0.0.3", None),
        ("20.99.0", None),
    ],
)
def test_a_spec_resolves_to_the_newest_release_it_admits(
    spec: str, expected: tuple[int, int, int] | None
) -> None:
    assert newest(parse(spec), RELEASES) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "latest-lts",
        "20.11.0-rc.1",
        "https://example.com/node.tar.xz",
        "../../etc/passwd",
        "20; rm -rf /",
        "$(curl evil)",
        "20\n21",
        "１２",  # fullwidth digits
        "lts/../../x",
        "1" * 200,
        "> = 20",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(BadSpec):
        parse(text)


@pytest.mark.parametrize(
    "alias", ["lts/*", "lts/iron", "lts/-1", "node", "latest", "current", "stable", "oldstable"]
)
def test_aliases_are_kept_for_the_index_to_resolve(alias: str) -> None:
    assert parse(alias).alias == alias
    assert parse(alias.upper()).alias == alias  # lts/Iron as nvm reads it


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ((20, 99, 0), (20, 20, 2)),  # same major, the closest minor
        ((20, 11, 5), (20, 11, 1)),  # same minor, the closest patch
        ((19, 0, 0), (20, 20, 2)),  # a tie between majors 18 and 20: the newer
        ((99, 0, 0), (22, 12, 0)),
    ],
)
def test_nearest_prefers_the_same_line(target: tuple[int, int, int], expected: tuple[int, int, int]) -> None:
    assert nearest(target, RELEASES) == expected


def test_anchor_is_the_lowest_bound() -> None:
    assert parse("^20.99").anchor == (20, 99, 0)
    assert parse(">=99 || 98.1").anchor == (98, 1, 0)
