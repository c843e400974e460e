"""A package index's JSON API (PyPI's shape, `https://pypi.org/pypi/<name>/json`) on 127.0.0.1,
holding ruff's real release days around January 2025, and black's around its first final release."""

from __future__ import annotations

import contextlib
import http.server
import json
from collections.abc import Iterator
from typing import ClassVar

from tests.testing.serving import serving


def _files(day: str, *, yanked: bool = False) -> list[dict[str, object]]:
    return [
        {"filename": "x.whl", "upload_time_iso_8601": f"{day}T12:00:00.000000Z", "yanked": yanked},
        {"filename": "x.tar.gz", "upload_time_iso_8601": f"{day}T12:05:00.000000Z", "yanked": yanked},
    ]


RUFF = {
    "info": {"name": "ruff", "version": "0.9.1"},
    "releases": {
        "0.8.4": _files("2024-12-19"),
        "0.8.5": _files("2025-01-02"),
        "0.8.6": _files("2025-01-08"),
        "0.9.0": _files("2025-01-09"),
        "0.9.1": _files("2025-01-10"),
        "0.9.2rc1": _files("2025-01-08"),  # a pre-release is never picked
        "0.8.7": _files("2025-01-08", yanked=True),  # nor a yanked one
        "0.8.8": [],  # nor a release without files
    },
}


# black's real release days around its first final release: every release before 22.1.0 was a beta
BLACK = {
    "info": {"name": "black", "version": "22.1.0"},
    "releases": {
        "19.3b0": _files("2019-03-14"),
        "19.10b0": _files("2019-10-28"),
        "20.8b0": _files("2020-08-26"),
        "20.8b1": _files("2020-08-26"),
        "21.12b0": _files("2021-12-05"),
        "22.1.0": _files("2022-01-29"),
        "22.3.0.dev0": _files("2022-02-01"),  # a development release is never picked
    },
}


class _Index(http.server.BaseHTTPRequestHandler):
    packages: ClassVar[dict[str, object]] = {"ruff": RUFF, "black": BLACK}
    asked: list[str]

    def do_GET(self) -> None:
        self.asked.append(self.path)
        parts = self.path.strip("/").split("/")
        name = parts[1] if len(parts) == 3 and parts[::2] == ["pypi", "json"] else ""
        if name not in self.packages:
            self.send_error(404)
            return
        body = json.dumps(self.packages[name]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def ruff_index() -> Iterator[tuple[str, list[str]]]:
    """The index's URL (`http://127.0.0.1:<port>/pypi`) and the paths asked of it, as they come."""
    asked: list[str] = []
    handler = type("Index", (_Index,), {"asked": asked})
    with serving(handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/pypi", asked
