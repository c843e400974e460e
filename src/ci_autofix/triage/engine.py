"""One raw log into a `Diagnosis`: scan, parse the lines around anchors, classify, excerpt."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.redact import redact
from ci_autofix.triage import classify, excerpt
from ci_autofix.triage.excerpt import Span
from ci_autofix.triage.logview import LogView, Step
from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.triage.normalize import without_marker
from ci_autofix.triage.parsers import PARSERS, Found, Parser
from ci_autofix.triage.tokens import estimate_tokens

WINDOW_BEFORE = 8
WINDOW_AFTER = 12
TAIL_LINES = 40
SUMMARY_LINES = 10  # a failed step's last lines (the runner's summary) compete with the first error region
LONG_TAIL_LINES = 150  # more of the failed step's end, only while the excerpt is small
LONG_TAIL_PRIORITY = 4
MAX_EXAMINED = 60000
MAX_EVIDENCE = 12
CODE_KINDS = {"test", "lint", "format", "type"}
WEAK_TOOLS = {"shell", "runtime", "make"}

# An error line has one of these (family, pattern) alternatives and none of NOISE's; both are
# matched case-insensitively. The families are what the benchmark's ablation switches off.
STRONG: tuple[tuple[str, str], ...] = (
    (
        "error-words",
        r"\b(?:error|errors|failed|failure|failures|fatal|exception|panic|panicked|traceback|cannot|could not|"
        r"couldn't|unable to|not found|denied|undefined|segmentation fault|killed|timed out|aborted?|"
        r"assertion\w*|violations?)\b",
    ),
    ("cross-marks", r"✗|✖|✘"),
    # the operating system's own error messages (strerror), whatever printed them
    (
        "os-errors",
        r"\b(?:no such file or directory|no space left on device|connection refused|connection reset|"
        r"broken pipe|too many open files|read-only file system|operation not permitted|disk quota exceeded)\b",
    ),
    # PHP run-tests, automake, Jest, `go test`: `FAIL tests/x.phpt`, `--- FAIL: TestX`
    ("fail-upper", r"(?-i:^(?:--- )?FAIL\b)"),
    # the same word as a padded badge, in brackets or parentheses: Vitest's ` FAIL  src/a.test.ts`,
    # Ginkgo's `[FAIL] Suite [It] t`, Bun's `(fail) suite > t [0.3ms]`
    ("fail-badge", r"(?-i:^\s+FAIL\b|^\s*\[FAIL\]|^\(fail\) )"),
    # a test's status at the end of its line, in upper case: Tasty's `name:   FAIL (0.06s)`, unittest's
    # verbose `test_x (m.T) ... FAIL` or `... ERROR`
    ("fail-status", r"(?-i:(?::|\.\.\.)\s+(?:FAIL|FAILED|ERROR)(?: \(\d+(?:\.\d+)?m?s\))?$)"),
    # a `×` that opens a line: miette's error reports (Biome, oxlint, Deno, Turborepo, Rspack)
    # and Vitest's failed-test lines; a `×` inside a line (`640 × 480`) is not one
    ("times-mark", r"^\s*× "),
)
NOISE: tuple[tuple[str, str], ...] = (
    ("zero-counts", r"\b(?:0|no) (?:errors?|failures?|failed)\b|\b(?:errors?|failures?|failed)[:=] ?0\b"),
    (
        "option-names",
        r"-Werror|\berror[-_](?:prone|reporting|log|page|handler)|ignore[-_]errors|continue-on-error|"
        r"fail-fast|allow_failure|\bonerror\b|\bwarn(?:ing)?\b",
    ),
    # a passing test whose name mentions an error: `... returns FAIL on NULL: 3 ms OK`, `ok 12 errors`
    (
        "passing-tests",
        r"(?:\bOK|\bok|\bpassed|\bPASSED|✓|✔)\s*(?:\(\d+(?:\.\d+)?\s*m?s\))?$|^\s*(?:ok|PASS|PASSED|✓|✔)\b",
    ),
    ("skipped-tests", r"^\s*(?:SKIP|SKIPPED|XFAIL)\b"),
    # configure-time probes (cmake, autoconf) that are expected to fail
    (
        "configure-probes",
        r"^-- (?:Looking for|Performing Test|Check(?:ing)? (?:for|if|whether)|Could NOT find)|"
        r"^checking .*\.\.\. (?:no|not found)$",
    ),
)
HEADLINE_RE = re.compile(
    r"^(?:\S+: )?(?:error|fatal|failed|failure)\b|^\[?(?:ERROR|FATAL|FAIL|FAILED)\]?\b|(?:Error|Exception):|"
    r"\bFAILED\b|\bFAILURE\b|exited with \d|exit code [1-9]",
)
INFRA_ERROR_RE = re.compile(
    r"\b(?:error|errors|failed|failure|fatal|exception|unable|could not|cannot|killed|exit code|exited)\b|"
    r"Service Unavailable|Too Many Requests|rate limit",
    re.I,
)
WERROR_RE = re.compile(
    r"due to -Werror|warnings? (?:are |being )?treated as errors|warnings found and -Werror|-Werror (?:specified|is set)",
    re.I,
)
WARNING_RE = re.compile(r"(?:^|: )warning\b", re.I)
# GitHub's error annotation (`::error::msg` from a workflow command or a problem matcher, shown as
# `##[error]msg`): the runner says the line is an error whatever its words
ANNOTATION_RE = re.compile(r"^##\[error\]")
# the last command a failed step echoed before it failed (`$ cmd` from spin, Travis, many scripts;
# `+ cmd` from `set -x`); matched on the line as parsers read it (colour codes printed as text removed)
ECHO_RE = re.compile(r"^(?:\$|\+) \S")
ECHO_LOOKBACK = 2000
PROMPT_RE = re.compile(r"^\$ (?P<cmd>\S.*)$")
TRAVIS_EXIT_RE = re.compile(
    r"^(?:The command \"(?P<cmd>.+)|.*)\" (?:failed and )?exited with (?P<code>\d+)\."
)
JENKINS_XTRACE_RE = re.compile(r"^\+ (?P<cmd>\S.*)$")


@dataclass
class Analysis:
    """What one log yields before it becomes a `Diagnosis` (kept to merge several jobs)."""

    view: LogView
    found: list[Found] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    log_commands: list[str] = field(default_factory=list)  # claimed by the log text: untrusted
    category: Category = Category.UNKNOWN
    infra_reason: str | None = None


def _examined(view: LogView) -> list[int]:
    """The lines worth offering to the parsers: windows around anchors, failed steps' tails, the log's tail."""
    n = len(view)
    marks = bytearray(n)
    for a in view.anchors:
        lo, hi = max(0, a - WINDOW_BEFORE), min(n, a + WINDOW_AFTER + 1)
        marks[lo:hi] = b"\x01" * (hi - lo)
    for step in view.failed_steps():
        end = step.exit_line if step.exit_line is not None else step.end
        lo = max(step.header, end - 200)
        marks[lo:end] = b"\x01" * (end - lo)
    lo = max(0, n - TAIL_LINES * 3)
    marks[lo:n] = b"\x01" * (n - lo)
    chosen = [i for i in range(n) if marks[i]] if n < 4 * MAX_EXAMINED else _sparse(marks)
    if len(chosen) > MAX_EXAMINED:
        half = MAX_EXAMINED // 2
        chosen = chosen[:half] + chosen[-half:]
    return chosen


def _sparse(marks: bytearray) -> list[int]:
    out: list[int] = []
    i = marks.find(1)
    while i != -1:
        j = marks.find(0, i)
        j = len(marks) if j == -1 else j
        out.extend(range(i, j))
        i = marks.find(1, j)
    return out


def _parse(view: LogView, lines: list[int], rules: Rules) -> list[Found]:
    found: list[Found] = []
    claimed_to = -1
    for i in lines:
        if i <= claimed_to:
            continue
        line = without_marker(view.clean(i))
        if not line.strip():
            continue
        if rules.any_trigger is not None and not rules.any_trigger.match(line):
            continue  # most lines: one match, not a search per parser
        for parser in rules.parsers:
            match = parser.trigger.search(line)
            if match is None:
                continue
            result = parser.extract(view, i, match)
            if result is None:
                continue
            found.append(result)
            claimed_to = max(claimed_to, result.last if result.failure.tool not in WEAK_TOOLS else i)
            break
    return found


def _commands(view: LogView) -> tuple[list[str], list[Span]]:
    commands: list[str] = []
    spans: list[Span] = []
    for step in view.failed_steps():
        commands.append(_step_command(step))
        spans.append(Span(step.header, step.header + len(step.script), 0))
        if step.exit_line is not None:
            spans.append(Span(step.exit_line, step.exit_line, 0))
    if commands:
        return commands, spans
    for i in view.anchors:
        line = without_marker(view.clean(i)).strip()
        travis = TRAVIS_EXIT_RE.match(line)
        if travis and travis.group("code") != "0":
            commands.append(travis.group("cmd") or _travis_command(view, i))
            spans.append(Span(i, i, 0))
    if not commands:
        prompt = _last_prompt(view)
        if prompt is not None:
            at, command = prompt
            commands.append(command)
            spans.append(Span(at, at, 0))
    return commands, spans


def _last_echo(view: LogView, first: int, end: int, echo: re.Pattern[str] | None) -> int | None:
    """The last line in (first, end) that echoes a command, within `ECHO_LOOKBACK` lines of `end`."""
    if echo is None:
        return None
    for i in range(end - 1, max(first, end - ECHO_LOOKBACK), -1):
        if echo.match(without_marker(view.clean(i))):
            return i
    return None


def _travis_command(view: LogView, end: int) -> str:
    """A multi-line Travis command: from its `The command "` line to the `" exited with` line."""
    for i in range(end - 1, max(-1, end - 200), -1):
        line = without_marker(view.clean(i))
        if line.startswith('The command "'):
            lines = [line.removeprefix('The command "')]
            lines += [without_marker(view.clean(j)) for j in range(i + 1, end)]
            return "\n".join(lines)
    return ""


def _step_command(step: Step) -> str:
    return "\n".join(step.script) if step.script else step.command


def _last_prompt(view: LogView) -> tuple[int, str] | None:
    """The last shell prompt line (`$ cmd`) among the anchors, with the command it shows."""
    for i in reversed(view.anchors):
        match = PROMPT_RE.match(view.clean(i))
        if match:
            return i, match.group("cmd")
    return None


def failed_ranges(view: LogView) -> list[tuple[int, int]]:
    """The failed steps as (first, last) lines: GitHub steps that ended with a non-zero exit code,
    else Travis commands (`$ cmd` ... `The command "cmd" exited with N.`) with N > 0."""
    ranges = []
    for step in view.failed_steps():
        ranges.append((step.header, step.exit_line if step.exit_line is not None else step.end - 1))
    if ranges:
        return ranges
    prompt = -1
    for i in view.anchors:
        line = without_marker(view.clean(i)).strip()
        if PROMPT_RE.match(line):
            prompt = i
            continue
        travis = TRAVIS_EXIT_RE.match(line)
        if travis and travis.group("code") != "0":
            ranges.append((prompt if prompt >= 0 else max(0, i - 200), i))
    return ranges


def _fallback_spans(
    view: LogView, examined: list[int], claimed: set[int], failed: list[tuple[int, int]], rules: Rules
) -> list[Span]:
    """Error lines no parser claimed (with what follows them) and the failed steps' or log's tail."""
    spans: list[Span] = []
    for first, end in failed:
        spans += _tails(first, end, rules)
        echoed = _last_echo(view, first, end, rules.echo)
        if echoed is not None:
            spans.append(Span(echoed, echoed, 1, rank=0))
    candidates = _error_lines(view, examined, claimed, failed, rules)
    for rank, (first, last, _, _) in enumerate(_regions(view, candidates, rules)[:MAX_REGIONS]):
        spans.append(Span(first, last, 2, rank=rank))
        spans.append(Span(first - EXPAND_BEFORE, last + EXPAND_AFTER, 4, rank=rank))
    if not failed:
        n = len(view)
        spans.append(Span(max(0, n - TAIL_LINES), n - 1, 3, rank=0))
        spans.append(Span(max(0, n - LONG_TAIL_LINES), n - 1, LONG_TAIL_PRIORITY, rank=0))
    return spans


def _tails(first: int, end: int, rules: Rules) -> list[Span]:
    """The tail of a failed step (lines `first..end`): its summary lines, a short and a long tail."""
    spans = []
    if rules.summary_lines:
        spans.append(Span(max(first, end - rules.summary_lines), end, 2, rank=0))
    spans.append(Span(max(first, end - TAIL_LINES), end, 3, rank=0))
    spans.append(Span(max(first, end - LONG_TAIL_LINES), end, LONG_TAIL_PRIORITY, rank=0))
    return spans


def _error_lines(
    view: LogView, examined: list[int], claimed: set[int], failed: list[tuple[int, int]], rules: Rules
) -> list[tuple[int, int]]:
    """The error lines no parser claimed, as (strength, line): stronger for a headline, a warning
    that fails the build, an annotation, and a line in a failed step."""
    anchors = set(view.anchors)
    # a compiler that says it failed because of warnings (`-Werror`) makes its warnings the errors
    werror = rules.werror
    warnings_fail = werror is not None and any(werror.search(view.clean(i)) for i in view.anchors)
    candidates: list[tuple[int, int]] = []
    for i in examined:
        if i in claimed or i not in anchors:
            continue
        raw = view.clean(i)
        line = without_marker(raw)
        warned = warnings_fail and WARNING_RE.search(line)
        annotated = rules.annotation is not None and rules.annotation.match(raw) and line.strip()
        if warned or annotated:
            strength = 2
        elif not _error_word(rules.strong_re, line) or rules.noise_re.search(line):
            continue
        else:
            strength = 2 if HEADLINE_RE.search(line.strip()) else 1
        if any(first <= i <= end for first, end in failed):
            strength += FAILED_STEP_BONUS
        candidates.append((strength, i))
    return candidates


def _regions(view: LogView, candidates: list[tuple[int, int]], rules: Rules) -> list[list[int]]:
    """The error lines' regions, best first, as [first, last, strength, how often its line occurs]."""
    # nearby error lines form one region; regions are ranked by their strongest line, then by
    # how rare their error line is (the same message repeated a hundred times explains less than
    # the one that occurs once), then by position (the first occurrence first)
    templates = Counter(TEMPLATE_RE.sub("#", view.clean(i).strip())[:120] for _, i in candidates)
    blocks = sorted(
        (
            i - CONTEXT_BEFORE,
            _block_end(view, i, rules.frame),
            strength,
            templates[TEMPLATE_RE.sub("#", view.clean(i).strip())[:120]],
        )
        for strength, i in candidates
    )
    regions: list[list[int]] = []
    for first, last, strength, seen in blocks:
        region = regions[-1] if regions else None
        if region and first <= region[1] + REGION_GAP and last - region[0] < REGION_MAX_LINES:
            region[1] = max(region[1], last)
            if strength > region[2] or (strength == region[2] and seen < region[3]):
                region[2], region[3] = strength, seen
        else:
            if region and first <= region[1]:
                first = region[1] + 1
            regions.append([first, last, strength, seen])
    regions.sort(key=lambda r: (-r[2], min(r[3], RARITY_CAP), r[0]))
    return regions


BLOCK_STOP_RE = re.compile(r"^(?:\$ |##\[(?:group|endgroup)\]|travis_fold|\[Pipeline\])")
CONTEXT_BEFORE = 4
WEAK_LINES = 30
EVIDENCE_LINES = 30  # per failure, when there are many; the rest competes with the context
REPEATS_KEPT = 3  # a failed step's findings that repeat one more often come after the regions
REGION_GAP = 8
RARITY_CAP = 2
TEMPLATE_RE = re.compile(r"\d+")
REGION_MAX_LINES = 200
MAX_REGIONS = 400  # error regions ranked at most; what a parser found but demoted comes after them
FAILED_STEP_BONUS = 2
EXPAND_BEFORE = 10  # wider context around error regions, only while the excerpt is small
EXPAND_AFTER = 30
BLOCK_LINES = 40
FRAME_LINES = 100  # a stack trace's frames continue its paragraph up to this many lines
FRAME_RE = re.compile(r"^\W{0,4}\s*(?:#\d+\s+0x[0-9a-f]+ in |at \S+\(|File \"[^\"]+\", line \d+)")


def _error_word(strong: re.Pattern[str], line: str) -> bool:
    """Whether `line` has an error word that is not part of a name: `Text.Pandoc.Error`,
    `src/Error.hs` and `Error.o` are names. A word in upper case (`ERROR/MainProcess`), after an
    ellipsis (`Resolving deltas...error`) or heading a message (`socket.error: [Errno 111]`,
    `org.eclipse.jgit.errors.TransportException: ...`) is the error itself."""
    for match in strong.finditer(line):
        start, end = match.span()
        word = match.group(0)
        joined = (line[start - 1 : start] in NAME_JOINS and line[start - 2 : start - 1].isalnum()) or (
            line[end : end + 1] in NAME_JOINS and line[end + 1 : end + 2].isalnum()
        )
        token_end = line.find(" ", end)
        heads = line[end : token_end if token_end != -1 else len(line)].endswith(":")
        if not joined or heads or word.isupper() or not word[:1].isalnum():
            return True
    return False


NAME_JOINS = frozenset("./\\")


def _alternatives(parts: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for _, pattern in parts) or r"(?!)", re.I)


_SCOPED_FLAGS = (
    (re.IGNORECASE, "i"),
    (re.MULTILINE, "m"),
    (re.DOTALL, "s"),
    (re.VERBOSE, "x"),
    (re.ASCII, "a"),
)
_INLINE_FLAGS_RE = re.compile(r"\(\?[aiLmsux]+\)")


def _shape(pattern: str) -> tuple[bool, bool]:
    """Whether `pattern` has a `|` outside every group, and whether it refers back to a group
    (`\\1`, `(?P=name)`, `(?(1)...)`): read from its text, escapes and character classes skipped."""
    depth, branch, backref, i = 0, False, False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            backref = backref or pattern[i + 1 : i + 2] in tuple("123456789")
            i += 2
            continue
        if c == "[":  # a class: up to its `]` (one right after `[` or `[^` is a member)
            i += 2 if pattern[i + 1 : i + 2] == "^" else 1
            i += 1 if pattern[i : i + 1] == "]" else 0
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
            backref = backref or pattern.startswith(("(?P=", "(?("), i)
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            branch = True
        i += 1
    return branch, backref


def _any_trigger(parsers: tuple[Parser, ...]) -> re.Pattern[str] | None:
    """One pattern whose `match` finds a line exactly when some parser's trigger `search`es it, or
    None when a trigger cannot be joined (it refers back to a group, whose number or name would
    change, or starts with global inline flags). Each trigger is an alternative with its flags
    scoped to it and its groups unnamed (the names repeat across triggers). Matched at the line's
    start, the alternatives are tried once each (a `search` would try them all at every position);
    a trigger not anchored with `^` as a whole is let start anywhere."""
    parts = []
    for parser in parsers:
        source = parser.trigger.pattern
        branch, backref = _shape(source)
        if backref or _INLINE_FLAGS_RE.match(source):
            return None
        source = re.sub(r"\(\?P<\w+>", "(?:", source)
        if branch or not source.startswith("^"):
            source = f".*?(?:{source})"
        flags = "".join(letter for flag, letter in _SCOPED_FLAGS if parser.trigger.flags & flag)
        parts.append(f"(?{flags}:{source})")
    return re.compile("|".join(parts) or r"(?!)")


@dataclass(frozen=True)
class Rules:
    """The rule set triage runs with, as data. `RULES` is the one the product uses; the benchmark's
    ablation passes reduced copies (`dataclasses.replace`) to measure what each rule family adds."""

    parsers: tuple[Parser, ...] = PARSERS
    strong: tuple[tuple[str, str], ...] = STRONG
    noise: tuple[tuple[str, str], ...] = NOISE
    werror: re.Pattern[str] | None = WERROR_RE  # None: warnings never become error lines
    annotation: re.Pattern[str] | None = ANNOTATION_RE  # None: a `##[error]` line needs an error word too
    echo: re.Pattern[str] | None = ECHO_RE  # None: the failed step's last echoed command is not kept
    frame: re.Pattern[str] | None = FRAME_RE  # None: a paragraph never continues on stack frames
    summary_lines: int = SUMMARY_LINES  # 0: the failed step's summary does not compete with the first region
    strong_re: re.Pattern[str] = field(init=False, repr=False, compare=False)
    noise_re: re.Pattern[str] = field(init=False, repr=False, compare=False)
    any_trigger: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "any_trigger", _any_trigger(self.parsers))
        object.__setattr__(self, "strong_re", _alternatives(self.strong))
        object.__setattr__(self, "noise_re", _alternatives(self.noise))


RULES = Rules()


def _block_end(view: LogView, i: int, frame: re.Pattern[str] | None = FRAME_RE) -> int:
    """The end of the paragraph that starts at `i`: up to two blank lines, a prompt or a step marker."""
    last, blanks = i, 0
    for j in range(i + 1, min(len(view), i + FRAME_LINES + 1)):
        line = view.clean(j)
        if j > i + BLOCK_LINES and (frame is None or not frame.match(line)):
            break
        if not line.strip():
            blanks += 1
            if blanks >= 2:
                break
            continue
        if BLOCK_STOP_RE.match(line):
            break
        blanks = 0
        last = j
    return last


def _ranked(found: list[Found], failed: list[tuple[int, int]]) -> list[Span]:
    """The parsers' findings as spans, the telling ones first.

    Two kinds of finding come after the error regions instead of before them: what was found
    outside the failed steps when the log says which steps failed (a step that went on after its
    errors: Maven's `--fail-never`, `make -k ... || true`), and a finding of a failed step that
    repeats an earlier one of those steps (the same tool, file, test and message but for its
    numbers) more than `REPEATS_KEPT` times: the sixtieth `unmappable character` in one file
    explains nothing the first did not."""

    def in_failed(f: Found) -> bool:
        return not failed or any(first <= f.first <= last for first, last in failed)

    seen: Counter[tuple[object, ...]] = Counter()
    telling: list[Found] = []
    demoted: list[Found] = []
    for f in sorted(found, key=lambda f: f.first):
        failure = f.failure
        key = (failure.tool, failure.file, failure.test_id, TEMPLATE_RE.sub("#", failure.message)[:120])
        if not in_failed(f):
            demoted.append(f)
            continue
        seen[key] += 1
        (telling if seen[key] <= REPEATS_KEPT else demoted).append(f)
    spans = _ranked_evidence(telling, many=len(telling) > 3)
    for rank, f in enumerate(demoted, start=MAX_REGIONS):  # after every error region
        spans += _competing(f, rank)
    return spans


def _competing(f: Found, rank: int) -> list[Span]:
    """A finding that competes with the error regions: its head with the line above it (the message
    a logger put over a bare stack trace: `[WARNING] Error injecting: ...`), then the rest of it
    (a trace is read whole) before the next region."""
    spans = [Span(f.first - 1, min(f.last, f.first + WEAK_LINES - 1), 2, rank=rank)]
    if f.last >= f.first + WEAK_LINES:
        spans.append(Span(f.first + WEAK_LINES, f.last, 2, rank=rank))
    return spans


def _ranked_evidence(found: list[Found], many: bool) -> list[Span]:
    """Evidence spans ranked first, last, second, second-last, ... so a full budget keeps both ends."""
    spans: list[Span] = []
    order = sorted(found, key=lambda f: f.first)
    lo, hi, rank = 0, len(order) - 1, 0
    while lo <= hi:
        for k in (lo,) if lo == hi else (lo, hi):
            f = order[k]
            if f.failure.tool in WEAK_TOOLS:  # a bare stack trace or exit line
                spans += _competing(f, rank)
                rank += 1
                continue
            last = min(f.last, f.first + EVIDENCE_LINES - 1) if many else f.last
            spans.append(Span(f.first, last, 0, rank=rank))
            if last < f.last:
                spans.append(Span(last + 1, f.last, 2, rank=rank))
            spans.append(Span(f.first - 2, f.last + 2, 1, rank=rank))
            rank += 1
        lo, hi = lo + 1, hi - 1
    return spans


def analyse(log: str | bytes | Path, where: str = "", rules: Rules = RULES) -> Analysis:
    """The analysis of one log: raw text or bytes, or the path of a file (read in chunks, never whole)."""
    view = LogView(log)
    analysis = Analysis(view=view)
    examined = _examined(view)
    analysis.found = _parse(view, examined, rules)
    for f in analysis.found:
        f.failure.evidence = [
            redact(view.clean(i)) for i in range(f.first, min(f.last, f.first + MAX_EVIDENCE - 1) + 1)
        ]
        f.failure.message = redact(f.failure.message)
        if where:
            f.failure.where = [where]
    analysis.log_commands, command_spans = _commands(view)
    analysis.log_commands = [redact(c) for c in analysis.log_commands]
    claimed: set[int] = set()
    for f in analysis.found:
        claimed.update(range(f.first, f.last + 1))
    failed = failed_ranges(view)
    spans = _ranked(analysis.found, failed) + _fallback_spans(view, examined, claimed, failed, rules)
    analysis.spans = command_spans + spans
    analysis.category, analysis.infra_reason = _categorise(view, analysis)
    return analysis


def _categorise(view: LogView, analysis: Analysis) -> tuple[Category, str | None]:
    strong = [f.failure for f in analysis.found if f.failure.tool not in WEAK_TOOLS]
    # failures that point at code; a bare `npm error` or `docker build` failure may be the outage itself
    located = [f for f in strong if f.kind in CODE_KINDS or f.file]
    signal = classify.infra_signal((view.clean(i) for i in view.anchors), INFRA_ERROR_RE)
    if signal is not None:
        category, line = signal
        if classify.is_job_level(category) or not located:
            return category, redact(line)
    return classify.code_category(strong or [f.failure for f in analysis.found], analysis.log_commands), None


def dedupe(failures: list[Failure]) -> list[Failure]:
    """One failure per (tool, kind, file, line, test, rule, message); `where` lists every place it occurred."""
    merged: dict[tuple[object, ...], Failure] = {}
    for f in failures:
        key = (f.tool, f.kind, f.file, f.line, f.test_id, f.rule, f.message)
        kept = merged.get(key)
        if kept is None:
            merged[key] = f
            continue
        for w in f.where:
            if w not in kept.where:
                kept.where.append(w)
    return list(merged.values())


def diagnose_one(
    log: str | bytes | Path, *, max_tokens: int, where: str = "", rules: Rules = RULES
) -> Diagnosis:
    analysis = analyse(log, where, rules)
    view = analysis.view
    text = excerpt.build(analysis.spans, view.clean, len(view), max_tokens)
    failures = dedupe([f.failure for f in analysis.found])
    return Diagnosis(
        failures=failures,
        log_commands=analysis.log_commands,
        category=analysis.category,
        excerpt=text,
        excerpt_tokens=estimate_tokens(text),
        budget_tokens=max_tokens,
        infra_reason=analysis.infra_reason,
        jobs=[where] if where else [],
    )
