"""JVM builds: javac, Maven (compiler, surefire/failsafe, goal failures), Gradle."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import (
    Found,
    Parser,
    dependency_or,
    follow,
    indented_after,
    line_parser,
    text,
)

SUREFIRE_RE = re.compile(
    r"^(?:\[(?:ERROR|INFO)\] )?(?P<test>[\w.$#\[\]-]+(?:\([\w.$]+\))?)(?: --)?\s+Time elapsed: .*?<<< (?P<rule>FAILURE|ERROR)!$"
)
STACK_RE = re.compile(r"^\s*(?:at |\.\.\. \d+ more|Caused by:)|^\t")
GRADLE_WRONG_RE = re.compile(r"^\* What went wrong:$")


def _surefire(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = i
    message = match.group(0)
    for j in range(i + 1, min(len(view), i + 40)):
        line = text(view, j)
        if not line.strip() or (line.startswith("[") and not STACK_RE.match(line)):
            break
        if j == i + 1:
            message = line.strip()
        last = j
    failure = Failure(tool="surefire", kind="test", message=message, test_id=match.group("test").strip())
    return Found(failure, i, last)


def _gradle_wrong(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = follow(
        view, i, limit=30, stop=re.compile(r"^\* (?:Try|Get more help|Exception is):"), blank_ends=False
    )
    while last > i and not text(view, last).strip():
        last -= 1
    body = [text(view, j).strip() for j in range(i + 1, last + 1) if text(view, j).strip()]
    message = body[0] if body else "Gradle build failed"
    joined = " ".join(body)
    kind = "test" if "failing tests" in joined else dependency_or("build", joined)
    return Found(Failure(tool="gradle", kind=kind, message=message), i, last)


def _gradle_test(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = indented_after(view, i, limit=30)
    message = text(view, i + 1).strip() if last > i else match.group(0)
    test_id = f"{match.group('cls')}.{match.group('test')}"
    return Found(Failure(tool="gradle", kind="test", message=message, test_id=test_id), i, last)


PARSERS = (
    line_parser(
        "maven-compiler",
        "maven",
        "build",
        r"^\[ERROR\] (?P<file>(?:[A-Za-z]:)?[\\/][^\s:]+\.(?:java|kt|scala|groovy)):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$",
        indented=True,
    ),
    line_parser(
        "javac",
        "javac",
        "build",
        r"^(?P<file>[^\s:]+\.java):(?P<line>\d+): error: (?P<msg>.+)$",
        after=3,
    ),
    Parser("surefire", SUREFIRE_RE, _surefire),
    line_parser(
        "surefire-summary",
        "surefire",
        "test",
        r"^\[ERROR\]   (?P<test>[\w.$]+[.:#]\w+(?::\d+)?)(?: (?P<msg>.+))?$",
    ),
    line_parser(
        "maven-goal",
        "maven",
        "build",
        r"^\[ERROR\] Failed to execute goal (?P<rule>[\w.:-]+)(?: \([^)]*\))? on project (?P<test>[\w.-]+): (?P<msg>.+)$",
        resolution=True,
    ),
    line_parser(
        "maven-dependency",
        "maven",
        "dependency",
        r"^\[ERROR\] (?P<msg>(?:Failed to execute goal .*)?(?:Could not resolve dependencies|Failed to collect dependencies|"
        r"Non-resolvable parent POM|Could not find artifact).*)$",
    ),
    Parser("gradle-wrong", GRADLE_WRONG_RE, _gradle_wrong),
    Parser("gradle-test", re.compile(r"^(?P<cls>[\w.$]+) > (?P<test>.+?) FAILED$"), _gradle_test),
    line_parser(
        "kotlinc",
        "kotlin",
        "build",
        r"^e: (?:file://)?(?P<file>\S+\.kts?):(?P<line>\d+):(?P<col>\d+):? (?P<msg>.+)$",
    ),
    line_parser(
        "scalac",
        "sbt",
        "build",
        r"^\[error\] (?P<file>\S+\.scala):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<msg>.+)$",
    ),
)
