"""The provisioning report as the job summary renders it (GitHub's own renderer): every text that
did not come from us stays inside code, so nothing in it becomes a link, an image, HTML or a mention."""

from __future__ import annotations

from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options as CmarkOptions

from ci_autofix.toolchains.declared import Declared
from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.install import Installed
from ci_autofix.toolchains.provision import Failure, Provisioned, Runtime

HOSTILE = "<img src=x onerror=alert(1)> [click](https://evil.example) @admin | ``` `"


def _html(text: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(text, options=CmarkOptions.CMARK_OPT_UNSAFE)


def test_hostile_text_in_a_failure_or_note_stays_code() -> None:
    node = Installed(
        "node", "20.20.2", Path("/opt/tc/node"), ("https://nodejs.org/dist/v20.20.2/node-v20.20.2-linux-x64.tar.xz",),
        ("ab" * 32,), cached=False,
    )  # fmt: skip
    report = Provisioned(
        runtimes=(Runtime(Declared("node", "20", ".nvmrc"), node, 1.5, note=f"nearest {HOSTILE}"),),
        failures=(
            Failure(
                Declared("go", "1.22", "go.mod go"), ToolchainError(f"download failed: {HOSTILE}", HOSTILE)
            ),
        ),
        notes=(HOSTILE,),
    )
    markdown = report.to_markdown()
    html = _html(markdown)
    assert "<img" not in html and "<a " not in html and "href" not in html
    assert (
        html.count("<table>") == 1 and html.count("<tr>") == 2
    )  # the header and Node's row: no cell broke out
    assert "| Node.js | 20.20.2 | `20` | `.nvmrc` |" in markdown and "| 1.5 |" in markdown


def test_nothing_to_report_is_empty() -> None:
    assert Provisioned().to_markdown() == ""
