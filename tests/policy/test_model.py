"""The verdict's statuses and renderings, and the rule table."""

from __future__ import annotations

import json
import re

import cmarkgfm
from cmarkgfm.cmark import Options as CmarkOptions

from ci_autofix.policy import RULES, Finding, Verdict, rules_markdown
from ci_autofix.policy.table import finding


def test_statuses() -> None:
    flag = finding("lockfile-changed", "m", "uv.lock")
    block = finding("binary-file", "m", "a.png")
    assert (Verdict().status, Verdict([flag]).status, Verdict([flag, block]).status) == (
        "clean",
        "flagged",
        "blocked",
    )
    assert Verdict([flag, block]).blocked and Verdict([flag]).flagged and not Verdict([flag]).blocked


def test_json_round_trip() -> None:
    verdict = Verdict([finding("assertion-removed", "gone", "tests/t.py", 3)])
    data = json.loads(verdict.to_json())
    assert data == {
        "status": "blocked",
        "codes": ["assertion-removed"],
        "findings": [
            {
                "code": "assertion-removed",
                "severity": "block",
                "message": "gone",
                "path": "tests/t.py",
                "line": 3,
            }
        ],
    }


def test_markdown_escapes_untrusted_paths_and_messages() -> None:
    nasty = Finding("symlink", "block", "see <img src=x> | [link](http://evil)", "a|b`c.py\n## Heading", 1)
    text = Verdict([nasty]).to_markdown()
    table_rows = [line for line in text.splitlines() if line.startswith("| ⛔")]
    assert len(table_rows) == 1
    row = table_rows[0]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5  # the cell pipes are escaped: still four columns
    html = cmarkgfm.github_flavored_markdown_to_html(text, options=CmarkOptions.CMARK_OPT_UNSAFE)
    assert html.count("<td") == 4
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "<img" not in outside and "<a " not in outside and "<h2" not in outside  # shown as code
    assert "<code>see &lt;img src=x&gt; | [link](http://evil)</code>" in html


def test_markdown_caps_rows() -> None:
    verdict = Verdict([finding("suppression-added", "m", "a.py", i) for i in range(1, 80)])
    text = verdict.to_markdown()
    assert "… and 29 more" in text
    assert text.count("suppression-added") == 50


def test_every_rule_has_a_kebab_case_code_and_a_severity() -> None:
    assert len({r.code for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.code == rule.code.lower() and " " not in rule.code and rule.severity in ("block", "flag")
        assert f"`{rule.code}`" in rules_markdown()
