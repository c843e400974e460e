"""Added code that reaches outside: secrets (block); network and processes in tests, download-and-run (flag)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.checks.occurrences import bare, code, new_occurrences
from ci_autofix.policy.diff import FileDiff, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language
from ci_autofix.policy.table import finding
from ci_autofix.redact import find_secrets

_NETWORK: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.PYTHON: {
        "a network client": re.compile(
            r"\b(?:requests|httpx|aiohttp|urllib3)\s*\.\s*\w+|\burllib\s*\.\s*request\b|\burlopen\s*\("
            r"|\bsocket\s*\.\s*(?:socket|create_connection)\s*\(|\bhttp\s*\.\s*client\b|^\s*import\s+(?:requests|httpx)\b"
            r"|\bfrom\s+(?:requests|httpx|aiohttp|urllib\.request)\s+import\b"
        )
    },
    Language.JS: {
        "a network client": re.compile(
            r"(?<![\w.$])fetch\s*\(|\baxios\b|\bhttps?\s*\.\s*(?:get|request)\s*\(|\bnet\s*\.\s*(?:connect|"
            r"createConnection)\s*\(|\bnew\s+WebSocket\s*\(|\bXMLHttpRequest\b"
        )
    },
    Language.GO: {
        "a network client": re.compile(
            r"\bhttp\s*\.\s*(?:Get|Post|PostForm|Head|NewRequest\w*)\s*\(|\bnet\s*\.\s*Dial\w*\s*\(|\bhttp\.Client\b"
        )
    },
    Language.RUST: {
        "a network client": re.compile(
            r"\breqwest\s*::|\bTcpStream\s*::\s*connect\b|\bureq\s*::|\bhyper\s*::\s*Client\b"
        )
    },
    Language.JAVA: {
        "a network client": re.compile(
            r"\bHttpClient\b|\bnew\s+URL\s*\(|\bHttpURLConnection\b|\bnew\s+Socket\s*\(|\bOkHttpClient\b|\bRestTemplate\b"
        )
    },
}
_PROCESS: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.PYTHON: {
        "a process spawn": re.compile(
            r"\bsubprocess\s*\.\s*\w+|\bos\s*\.\s*(?:system|popen|spawn\w*|exec\w*|fork)\s*\(|\bpty\s*\.\s*spawn\b"
            r"|^\s*import\s+subprocess\b|\bfrom\s+subprocess\s+import\b|\basyncio\s*\.\s*create_subprocess_\w+"
        )
    },
    Language.JS: {
        "a process spawn": re.compile(
            r"\bchild_process\b|\b(?:execSync|execFileSync|spawnSync|execFile|execa)\s*\(|(?<![\w.$])(?:exec|spawn)\s*\("
            r"|\bBun\s*\.\s*spawn\w*\s*\(|\bDeno\s*\.\s*(?:run|Command)\b"
        )
    },
    Language.GO: {
        "a process spawn": re.compile(
            r"\bexec\s*\.\s*Command(?:Context)?\s*\(|\bsyscall\s*\.\s*Exec\b"
            r"|\bos\s*\.\s*StartProcess\s*\("
        )
    },
    Language.RUST: {"a process spawn": re.compile(r"\bCommand\s*::\s*new\s*\(")},
    Language.JAVA: {
        "a process spawn": re.compile(
            r"\bRuntime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*exec\b"
            r"|\bProcessBuilder\b"
        )
    },
}
# Modules are named in strings in JS: these look at the text with its strings kept.
_JS_IMPORTS = {
    "network-call-in-test": {
        "a network module": re.compile(
            r"""(?:\bfrom|\brequire\s*\(|\bimport\s*\(?)\s*["'](?:node:)?(?:http|https|net|axios|node-fetch|undici|got)["']"""
        )
    },
    "process-spawn-in-test": {
        "a process module": re.compile(
            r"""(?:\bfrom|\brequire\s*\(|\bimport\s*\(?)\s*["'](?:node:)?(?:child_process|execa)["']"""
        )
    },
}
_SHELLS = r"(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k|fi)?sh\b"
_PIPE_TO_SHELL = {
    "a download piped into a shell": re.compile(
        rf"\b(?:curl|wget|fetch|iwr|Invoke-WebRequest|irm|Invoke-RestMethod)\b[^|\n]*\|\s*(?:{_SHELLS}|(?:iex|"
        r"Invoke-Expression|python3?|perl|ruby|node|php)\b)"
        rf"|(?:{_SHELLS}|\bsource|\beval|\.)\s*<?\s*<\(\s*(?:curl|wget)\b"
        r"|\b(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b|\beval\s+[\"']?\$\(\s*(?:curl|wget)\b",
        re.I,
    )
}
_DECODE_EXEC = {
    "encoded data decoded and run": re.compile(
        rf"\bbase64\s+(?:-d|--decode|-D)\b[^\n|]*\|\s*(?:{_SHELLS}|python3?|perl|ruby|node)"
        r"|\b(?:exec|eval)\s*\(\s*(?:\w+\.)*(?:b64decode|b32decode|a85decode|decodebytes|decompress|fromhex|atob|"
        r"unhexlify|loads)\s*\("
        r"|\b(?:exec|eval|Function)\s*\(\s*(?:atob\s*\(|Buffer\s*\.\s*from\s*\([^)]*base64)"
        r"|\bpowershell\b[^\n]*\s-(?:e|enc|encodedcommand)\s",
        re.I,
    )
}


_STRING = re.compile(r""""((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'|`([^`$]*)`""")


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        whole = False
        for line in file.added:
            names = find_secrets(line.text)
            if names:
                whole = True
                yield _secret(file, line.number, names, "This added line looks like a secret")
        if not whole:
            yield from _split_secrets(file)
        if file.status == "deleted":
            continue
        for hit in new_occurrences(file, _PIPE_TO_SHELL, bare):
            yield finding(
                "pipe-to-shell",
                f"This line runs {hit.kind}: whatever the server returns would run "
                "with the job's permissions.",
                file.path,
                hit.line.number,
            )
        for hit in new_occurrences(file, _DECODE_EXEC, bare):
            yield finding(
                "decode-and-exec",
                f"This line has {hit.kind}, which hides what actually runs.",
                file.path,
                hit.line.number,
            )
        tests = file.test_hunks
        if not tests:
            continue
        for hit in new_occurrences(file, _NETWORK.get(file.language, {}), code, tests):
            yield finding(
                "network-call-in-test",
                f"A test gains {hit.kind}: tests that reach the network are slow, flaky, and can leak data.",
                file.path,
                hit.line.number,
            )
        for hit in new_occurrences(file, _PROCESS.get(file.language, {}), code, tests):
            yield finding(
                "process-spawn-in-test",
                f"A test gains {hit.kind}: check what it runs.",
                file.path,
                hit.line.number,
            )
        if file.language is Language.JS:
            for rule, patterns in _JS_IMPORTS.items():
                for hit in new_occurrences(file, patterns, bare, tests):
                    yield finding(
                        rule,
                        f"A test imports {hit.kind}: check what it reaches or runs.",
                        file.path,
                        hit.line.number,
                    )


def _secret(file: FileDiff, number: int, names: list[str], what: str) -> Finding:
    return finding(
        "secret-added",
        f"{what} ({', '.join(names)}); secrets must never be committed (the value is not shown here).",
        file.path,
        number,
    )


def _split_secrets(file: FileDiff) -> Iterator[Finding]:
    """A secret cut into string literals (`"ghp_" + "..."`, implicit concatenation, a joined list):
    the literals of each run of added lines, joined, are checked as one string."""
    for hunk in file.hunks:
        run: list[Line] = []
        for line in [*hunk.lines, Line(" ", "", 0)]:
            if line.added:
                run.append(line)
                continue
            if len(run) >= 1:
                joined = "".join(
                    next(group for group in match.groups() if group is not None)
                    for li in run
                    for match in _STRING.finditer(li.view.bare)
                )
                names = find_secrets(joined)
                if names:
                    yield _secret(file, run[0].number, names, "String literals added here join into a secret")
                    return
            run = []
