"""A small mutation check for the pieces every flow trusts: the fix ladder, the patch policy, apply.

Each mutation below is one deliberate bug (a decision turned off, a guard narrowed) written as an
exact text replacement in one source file, with the test modules that should catch it. For each,
the script writes the mutated file, runs those modules (`pytest -x`), puts the original back, and
reports the mutation as killed (a test failed) or survived (every test passed). A survivor is a
hole in the tests, or a mutation that does not change behaviour. The exit code is 1 when any
mutation survived, 2 when a mutation no longer applies (its text is gone: update the list).

    .venv/bin/python tools/mutate.py            # every mutation (a few minutes)
    .venv/bin/python tools/mutate.py --list     # their names
    .venv/bin/python tools/mutate.py ladder-    # only those whose name starts with `ladder-`

The source is restored after each run, also on Ctrl-C; run it on a clean checkout anyway, since
a mutated file is briefly on disk. It is not part of `.ci/run`: it runs each test module once
per mutation.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "ci_autofix"

LADDER = ("tests/ladder/test_run.py",)
DISPATCH = ("tests/flows/gates/test_dispatch.py",)
AUTO_APPLY = ("tests/flows/gates/test_auto_apply.py",)
ASK = ("tests/flows/gates/test_ask_first.py",)
APPLY = ("tests/flows/apply/test_flow.py",)
INLINE = ("tests/deliver/test_inline.py",)
REVIEW_GUARDS = ("tests/flows/review/test_guards.py",)
REVIEW = ("tests/flows/review/test_e2e.py",)
TOOLS = ("tests/fixers/test_install.py", "tests/ladder/test_verify.py")
TRIAGE = ("tests/triage/test_any_trigger.py", "tests/triage/test_streaming.py")
RANKING = ("tests/triage/test_ranking.py", "tests/triage/test_general_rules.py")
COPY = ("tests/security/test_submodules.py", "tests/ladder/test_workarea.py")
CLI_CHECK_DIFF = ("tests/cli/test_check_diff.py",)
CLI_DEMO = ("tests/cli/test_demo.py",)
CLI_FIX = ("tests/cli/test_fix.py",)
TOOLCHAIN_INSTALL = ("tests/toolchains/test_install.py",)
TOOLCHAIN_SOURCES = ("tests/toolchains/test_sources.py",)
TOOLCHAIN_DECLARED = ("tests/toolchains/test_declared.py",)
BOUNDS = ("tests/agent/test_editor.py", "tests/agent/test_deadline.py", "tests/agent/test_loop_stops.py")
ROUTING = ("tests/security/test_review_routing.py",)
REPRO_VERSIONS = ("tests/tooling/test_ci_versions.py", "tests/fixers/test_plan_versions.py")
REPRO_STEPS = ("tests/fixers/test_plan.py", "tests/workflow/test_definition.py")
POETRY = ("tests/workflow/test_poetry.py",)
POETRY_ENV = ("tests/workflow/test_poetry.py", "tests/ladder/test_environment.py")
VERIFY = ("tests/ladder/test_verify.py",)
FETCHED_SUBMODULES = ("tests/security/test_fetched_submodules.py",)
MORE_CI = ("tests/security/test_more_ci_systems.py",)
LOOP_REUSE = ("tests/flows/loop/test_one_per_failure.py",)
LOOP_COUNT = ("tests/flows/loop/test_every_attempt.py",)
LOOP_UNREPRODUCED = ("tests/flows/loop/test_unreproduced.py",)
LOOP_BREAKER = ("tests/flows/loop/test_breaker.py",)
LOOP_GONE = ("tests/flows/loop/test_closed_means_gone.py",)
LOOP_INHERITED = ("tests/flows/loop/test_inherited.py",)
BENCH_REAL_HISTORY = ("tests/bench/test_real_history.py",)
LOOP_INLINE = ("tests/flows/loop/test_inline_on_failing_pr.py", "tests/deliver/test_inline_failing.py")
WIRE = ("tests/ladder/test_runtimes.py",)
ENDED = ("tests/flows/test_ended.py",)
WIRE_FIXERS = ("tests/fixers/test_plan.py", "tests/fixers/test_run.py")
POLICY_PY = (
    "tests/policy/test_pyskips.py",
    "tests/policy/test_kinds_python.py",
    "tests/policy/test_rules_python.py",
)

SUGGESTION = ("tests/deliver/test_suggestion.py",)
LEDGER = ("tests/state/test_ledger.py",)
CLIENT = ("tests/github/test_client.py",)
LOCAL = ("tests/flows/test_local.py",)
REAP = ("tests/test_reap.py",)
FIXER_RUN = ("tests/fixers/test_run.py",)


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # under src/ci_autofix (`../../bench/...` for a benchmark harness)
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]


MUTATIONS = [
    Mutation(
        "ladder-failed-verification-proposed",
        "ladder/run.py",
        'if verification is not None and verification.outcome == "failed" and not partial:',
        "if False:",
        LADDER,
    ),
    Mutation(
        "ladder-require-verified-ignored",
        "ladder/run.py",
        "if settings.require_verified and (",
        "if False and (",
        LADDER,
    ),
    Mutation(
        "ladder-any-fixer-change-settles",
        "ladder/run.py",
        "return bool(changed and diagnosis.category in _FIXER_CATEGORIES)",
        "return bool(changed)",
        LADDER,
    ),
    Mutation(
        "ladder-failed-fixer-verification-settles",
        "ladder/run.py",
        'return verification.outcome == "verified"',
        "return True",
        LADDER,
    ),
    Mutation(
        "ladder-no-second-agent-turn",
        "ladder/run.py",
        'if verification is not None and verification.outcome == "failed":\n        runner.stage',
        "if False:\n        runner.stage",
        LADDER,
    ),
    Mutation(
        "ladder-policy-block-ignored",
        "ladder/run.py",
        "    if verdict.blocked:\n",
        "    if False:\n",
        LADDER,
    ),
    Mutation(
        "deliver-unverified-not-draft",
        "deliver/suggestion.py",
        "draft=unverified",
        "draft=False",
        ("tests/flows/propose/test_e2e.py::test_a_fix_that_could_not_be_verified_is_a_draft",),
    ),
    Mutation(
        "lineage-status-parent-not-checked",
        "state/ledger.py",
        "    if vouched is None or vouched.head_sha != commit.parents[0]:\n",
        "    if vouched is None:\n",
        ("tests/state/test_ledger.py",),
    ),
    Mutation(
        "lineage-stale-suggestions-count",
        "state/ledger.py",
        "(run := gh.workflow_run(vouched.run_id)).workflow_path == workflow:",
        "((run := gh.workflow_run(vouched.run_id)) or True):",
        ("tests/flows/propose/test_e2e.py::test_attempts_are_read_back_from_github_and_bounded",),
    ),
    Mutation(
        "redelivery-never-finishes",
        "deliver/suggestion.py",
        "    return report.APPLY_PLACEHOLDER in pull.body\n",
        "    return False\n",
        ("tests/flows/loop/test_redelivery.py",),
    ),
    Mutation(
        "pyskips-xfail-not-a-skip",
        "policy/pyskips.py",
        '        "pytest.xfail",\n',
        "",
        POLICY_PY,
    ),
    Mutation(
        "pyskips-skiptest-not-a-skip",
        "policy/pyskips.py",
        '        "unittest.SkipTest",\n',
        "",
        POLICY_PY,
    ),
    Mutation(
        "occurrences-rewritten-line-is-new",
        "policy/checks/occurrences.py",
        "        if gained[hit.kind] <= lost[hit.kind]:\n            continue\n",
        "",
        ("tests/policy/checks/test_occurrences.py", "tests/policy/test_kinds_js.py"),
    ),
    Mutation(
        "occurrences-moved-line-is-new",
        "policy/checks/occurrences.py",
        "        if moved[key]:",
        "        if False:",
        ("tests/policy/checks/test_occurrences.py", "tests/policy/test_kinds_js.py"),
    ),
    Mutation(
        "fork-guard-only-for-pull-request",
        "flows/event.py",
        "    if event.is_fork and not settings.allow_forks:",
        '    if event.is_fork and run.event == "pull_request" and not settings.allow_forks:',
        ("tests/flows/test_event.py",),
    ),
    Mutation(
        "apply-push-without-lease",
        "flows/apply.py",
        'lease=(f"refs/heads/{branch}", record.head_sha),',
        "lease=None,",
        APPLY,
    ),
    Mutation(
        "apply-policy-not-rerun-on-the-diff",
        "flows/apply.py",
        "        checks.policy_on_diff(\n",
        "        (lambda *a, **k: None)(\n",
        (*APPLY, "tests/flows/apply/test_refusals.py"),
    ),
    Mutation(
        "apply-fix-parent-not-checked",
        "flows/apply.py",
        "        checks.fix_parent(_parents(git, record.fix_sha), record)\n",
        "",
        (*APPLY, "tests/flows/apply/test_refusals.py"),
    ),
    Mutation(
        "gates-dispatch-any-conclusion",
        "flows/dispatch.py",
        'if run.conclusion != "failure":',
        "if False:",
        DISPATCH,
    ),
    Mutation(
        "gates-dispatch-no-writer-check",
        "flows/dispatch.py",
        "    access.check_writers(gh, people",
        "    (lambda *a, **k: None)(gh, people",
        DISPATCH,
    ),
    Mutation(
        "gates-dispatch-own-bot-allowed",
        "flows/dispatch.py",
        "if own := [login for login in people if access.is_own_bot(login, settings)]:",
        "if own := []:",
        DISPATCH,
    ),
    Mutation(
        "gates-dispatch-git-view-unchecked",
        "flows/dispatch.py",
        "if fetched != run.head_sha:",
        "if False:",
        DISPATCH,
    ),
    Mutation(
        "gates-dispatch-asks-again",
        "flows/propose.py",
        "if settings.ask_first and not at.asked:",
        "if settings.ask_first:",
        DISPATCH,
    ),
    Mutation(
        "gates-auto-apply-unverified",
        "deliver/auto_apply.py",
        'if verification is None or verification.outcome != "verified":',
        "if verification is None:",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-auto-apply-flagged",
        "deliver/auto_apply.py",
        'if proposal.verdict.status != "clean":',
        "if False:",
        ("tests/security/test_ci_trigger.py",),
    ),
    Mutation(
        "gates-apply-bot-unmarked",
        "flows/apply_checks.py",
        "if not provenance.marked_for_auto_apply(statuses, settings.trusted_author, number):",
        "if False:",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-apply-mark-any-creator",
        "state/provenance.py",
        "return next((s for s in statuses if s.context == context and s.creator == trusted), None)",
        "return next((s for s in statuses if s.context == context), None)",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-apply-mark-any-pull",
        "state/provenance.py",
        "and status.description == auto_apply_description(number)",
        "",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-dispatch-any-workflow",
        "flows/dispatch.py",
        'if (run.name or "") not in watched:',
        "if False:",
        DISPATCH,
    ),
    Mutation(
        "gates-apply-bot-flagged-diff",
        "flows/apply.py",
        "require_clean=auto,",
        "require_clean=False,",
        ("tests/security/test_ci_trigger.py",),
    ),
    Mutation(
        "gates-auto-apply-twice",
        "deliver/auto_apply.py",
        "if ours(gh.comments(pull.number), MARKER, trusted) is not None:",
        "if False:",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-apply-edited-record",
        "flows/apply_checks.py",
        'if (record.verification, record.policy) != ("verified", "clean"):',
        "if False:",
        AUTO_APPLY,
    ),
    Mutation(
        "gates-ask-one-question-for-all-workflows",
        "deliver/ask.py",
        'return f"{MARKER}<!-- {name} -->"',
        "return MARKER",
        ASK,
    ),
    Mutation(
        "gates-ask-edits-anyones-comment",
        "deliver/notice.py",
        "return next((c for c in comments if c.author == trusted and c.body.startswith(marker)), None)",
        "return next((c for c in comments if c.body.startswith(marker)), None)",
        ASK,
    ),
    Mutation(
        "inline-context-kept",
        "deliver/inline.py",
        'changed = [i for i, line in enumerate(lines) if line.kind != " "]',
        "changed = list(range(len(lines)))",
        INLINE,
    ),
    Mutation(
        "inline-single-line-gets-start-line",
        "deliver/inline.py",
        "start_line=first_line if last_line > first_line else None,",
        "start_line=first_line,",
        INLINE,
    ),
    Mutation(
        "inline-insertion-after-the-line-before",
        "deliver/inline.py",
        "new = [anchor, *new] if before else [*new, anchor]",
        "new = [*new, anchor]",
        INLINE,
    ),
    Mutation(
        "inline-insertion-never-the-line-after",
        "deliver/inline.py",
        "candidates = [(after, True), (after + 1, False)] if after >= 1 else [(1, False)]",
        "candidates = [(after, True)]",
        INLINE,
    ),
    Mutation(
        "inline-deletion-leaves-a-blank-line",
        "deliver/inline.py",
        '"".join(f"{text}\\n" for text in content)',
        '"\\n".join(content) + "\\n"',
        INLINE,
    ),
    Mutation(
        "inline-fence-always-three",
        "deliver/inline.py",
        'fence = "`" * max(3, longest + 1)',
        'fence = "`" * 3',
        INLINE,
    ),
    Mutation(
        "inline-fence-not-longer",
        "deliver/inline.py",
        'fence = "`" * max(3, longest + 1)',
        'fence = "`" * max(3, longest)',
        INLINE,
    ),
    Mutation(
        "inline-note-dropped",
        "deliver/inline.py",
        'return f"{block}\\n\\n{note}" if note else block',
        "return block",
        INLINE,
    ),
    Mutation(
        "inline-cr-kept-in-text",
        "deliver/inline.py",
        "value[: len(value) - len(eol)]",
        "value[: len(value) - min(len(eol), 1)]",
        INLINE,
    ),
    Mutation(
        "inline-line-endings-unchecked",
        "deliver/inline.py",
        "if len({line.eol for line in (*old, *new) if line.eol}) > 1:",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-final-newline-unchecked",
        "deliver/inline.py",
        'if ("" in {line.eol for line in old}) != ("" in {line.eol for line in new}):',
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-lone-cr-unchecked",
        "deliver/inline.py",
        'if any("\\r" in line.text for line in region):',
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-utf8-unchecked",
        "deliver/inline.py",
        "if any(_not_utf8(line.text) for line in region):",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-one-end-inside-is-enough",
        "deliver/inline.py",
        "s.first <= first_line and last_line <= s.last",
        "s.first <= first_line or last_line <= s.last",
        INLINE,
    ),
    Mutation(
        "inline-head-text-unchecked",
        "deliver/inline.py",
        "if span.lines.get(line.old) != (line.text, line.eol):",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-pr-rename-old-path",
        "deliver/inline.py",
        "f.header.new_path: [_span(lines) for _, lines in f.hunks]",
        "(f.header.old_path or f.header.new_path): [_span(lines) for _, lines in f.hunks]",
        INLINE,
    ),
    Mutation(
        "inline-fix-rename-new-path",
        "deliver/inline.py",
        'path = header.old_path or header.new_path or ""',
        'path = header.new_path or header.old_path or ""',
        INLINE,
    ),
    Mutation(
        "inline-untouched-file-as-outside",
        "deliver/inline.py",
        "spans.get(path), note)",
        "spans.get(path, []), note)",
        INLINE,
    ),
    Mutation(
        "inline-binary-unreported",
        "deliver/inline.py",
        "if header.binary:",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-deleted-file-unreported",
        "deliver/inline.py",
        'return "the fix deletes this file, which a suggestion cannot do"',
        'return ""',
        INLINE,
    ),
    Mutation(
        "inline-symlink-unreported",
        "deliver/inline.py",
        "if {header.old_mode, header.new_mode} & {_SYMLINK, _SUBMODULE}:",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-mode-change-unreported",
        "deliver/inline.py",
        "if header.old_mode and header.new_mode and header.old_mode != header.new_mode:",
        "if False:",
        INLINE,
    ),
    Mutation(
        "inline-insertion-prefers-the-line-after",
        "deliver/inline.py",
        "candidates = [(after, True), (after + 1, False)] if after >= 1 else [(1, False)]",
        "candidates = [(after + 1, False), (after, True)] if after >= 1 else [(1, False)]",
        INLINE,
    ),
    Mutation(
        "inline-added-file-unreported",
        "deliver/inline.py",
        'return "the fix adds this file; a suggestion can only change lines the pull request\'s head has"',
        'return ""',
        INLINE,
    ),
    Mutation(
        "inline-insertion-without-context-misplaced",
        "deliver/inline.py",
        "start = int(unihunk.source_start)\n    else:",
        "start = int(unihunk.source_start) - 1\n    else:",
        INLINE,
    ),
    Mutation(
        "inline-final-cr-dropped",
        "deliver/inline.py",
        "text=last.text + last.eol[:-1]",
        "text=last.text",
        INLINE,
    ),
    Mutation(
        "inline-quoted-path-octal-kept",
        "policy/header.py",
        'octal = re.match(r"[0-3][0-7]{2}", quoted[i + 1 : i + 4])',
        "octal = None",
        INLINE,
    ),
    Mutation(
        "review-no-writer-check",
        "flows/review_event.py",
        "    if level not in WRITE_LEVELS:",
        "    if False:",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-payload-state-trusted",
        "flows/review_event.py",
        'if found.state != "CHANGES_REQUESTED":',
        "if False:",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-no-cycle-cap",
        "flows/review.py",
        "if len(cycles) >= REVIEW_CYCLES:",
        "if len(cycles) > REVIEW_CYCLES:",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-cycles-by-anyone",
        "flows/review.py",
        "if p.author == settings.trusted_author and ours.fullmatch(p.head_ref)",
        "if ours.fullmatch(p.head_ref)",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-bots-allowed",
        "flows/review_event.py",
        'if is_bot(user.login if user else None, user.type if user else "") and not settings.allow_bots:',
        "if False:",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-older-head-acted-on",
        "flows/review_event.py",
        "if found.commit_id != pull.head_sha:",
        "if False:",
        REVIEW_GUARDS,
    ),
    Mutation(
        "review-annotation-unchecked",
        "deliver/threads.py",
        'elif report["outcome"] == "annotated" and thread.root.path not in annotated_paths:',
        "elif False:",
        ("tests/deliver/test_threads.py",),
    ),
    Mutation(
        "review-no-per-comment-fallback",
        "deliver/inline_review.py",
        "        pass  # one comment's lines are not in the diff GitHub has: post each on its own",
        "        return done",
        ("tests/deliver/test_threads.py",),
    ),
    Mutation(
        "tools-default-unhashed",
        "fixers/install.py",
        '["--require-hashes", "-r", str(locked)]',
        "[spec]",
        TOOLS,
    ),
    Mutation(
        "tools-default-never-installed",
        "fixers/install.py",
        "if locked and (requirement is None or requirement.allows(locked.version)):",
        "if False:",
        TOOLS,
    ),
    Mutation(
        "tools-not-on-the-commands-path",
        "ladder/tools.py",
        "                (links / package).symlink_to(tool.executable)",
        "                pass",
        TOOLS,
    ),
    Mutation(
        "tools-ruff-only-when-run",
        "ladder/tools.py",
        '        wanted.setdefault("ruff", None)',
        "        pass",
        TOOLS,
    ),
    Mutation(
        "triage-trigger-flags-dropped",
        "triage/engine.py",
        'parts.append(f"(?{flags}:{source})")',
        'parts.append(f"(?:{source})")',
        TRIAGE,
    ),
    Mutation(
        "triage-unanchored-trigger-anchored",
        "triage/engine.py",
        '            source = f".*?(?:{source})"',
        "            pass",
        TRIAGE,
    ),
    Mutation(
        "triage-hit-counted-twice",
        "triage/logview.py",
        "            cursor = at\n",
        "            pass\n",
        TRIAGE,
    ),
    Mutation(
        "triage-fail-status-dropped",
        "triage/engine.py",
        '    ("fail-status", r"(?-i:',
        '    ("fail-status", r"(?!)(?-i:',
        RANKING,
    ),
    Mutation(
        "triage-os-errors-dropped",
        "triage/engine.py",
        '        "os-errors",\n        r"',
        '        "os-errors",\n        r"(?!)',
        RANKING,
    ),
    Mutation(
        "triage-trace-header-dropped",
        "triage/engine.py",
        "spans = [Span(f.first - 1, min(f.last, f.first + WEAK_LINES - 1), 2, rank=rank)]",
        "spans = [Span(f.first, min(f.last, f.first + WEAK_LINES - 1), 2, rank=rank)]",
        RANKING,
    ),
    Mutation(
        "triage-phpunit-block-runs-on",
        "triage/parsers/phpunit.py",
        "        if HEADER_RE.match(current) or END_RE.match(current):",
        "        if END_RE.match(current):",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "triage-upper-case-words-are-names",
        "triage/engine.py",
        "        if not joined or heads or word.isupper() or not word[:1].isalnum():",
        "        if not joined or heads or not word[:1].isalnum():",
        RANKING,
    ),
    Mutation(
        "triage-an-ellipsis-joins-a-name",
        "triage/engine.py",
        "line[start - 1 : start] in NAME_JOINS and line[start - 2 : start - 1].isalnum()",
        "line[start - 1 : start] in NAME_JOINS",
        RANKING,
    ),
    Mutation(
        "triage-repeats-counted-outside-the-failed-steps",
        "triage/engine.py",
        "        if not in_failed(f):\n            demoted.append(f)\n            continue\n        seen[key] += 1\n",
        "        seen[key] += 1\n        if not in_failed(f):\n            demoted.append(f)\n            continue\n",
        RANKING,
    ),
    Mutation(
        "eco-rspec-pending-is-a-failure",
        "triage/parsers/rspec.py",
        "    if i + 1 >= len(view) or not FAILURE_ERROR_RE.match(text(view, i + 1)):",
        "    if i + 1 >= len(view):",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-rspec-library-frame-kept",
        "triage/parsers/rspec.py",
        '    spec = [frame for frame in frames if frame[0].endswith("_spec.rb")] or frames',
        "    spec = frames",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-rspec-rerun-unread",
        "triage/parsers/rspec.py",
        '        if rerun and rerun.group("desc") == desc:',
        "        if False:",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-rspec-load-error-frame-unread",
        "triage/parsers/rspec.py",
        '            if line is None and frame.group("file").removeprefix("./") == spec:',
        "            if False:",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-testcount-rspec-outside-errors-complete",
        "ladder/testcount.py",
        "complete=not outside))",
        "complete=True))",
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "eco-minitest-error-frame-unread",
        "triage/parsers/minitest.py",
        '        if frame and file is None and frame.group("method") == method:',
        "        if frame and file is None:",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-minitest-rails-rerun-unread",
        "triage/parsers/minitest.py",
        "        if rerun:\n            test_id",
        "        if False:\n            test_id",
        ("tests/triage/test_fixture_tools.py",),
    ),
    Mutation(
        "eco-policy-ruby-skip-unread",
        "policy/checks/markers.py",
        '        "skip/pending": re.compile(',
        '        "skip/pending": re.compile(r"(?!)") or re.compile(',
        ("tests/policy/test_rules_ruby.py",),
    ),
    Mutation(
        "eco-policy-ruby-markers-in-every-file",
        "policy/checks/markers.py",
        "    if (file.language is Language.GO and not _uses_testing(file)) or file.language is Language.RUBY:",
        "    if file.language is Language.GO and not _uses_testing(file):",
        ("tests/policy/test_rules_ruby.py",),
    ),
    Mutation(
        "eco-policy-ruby-focus-unread",
        "policy/checks/markers.py",
        "        for hit in new_occurrences(file, only, code, _marker_hunks(file)):",
        "        for hit in new_occurrences(file, only if file.language is Language.JS else {}, code):",
        ("tests/policy/test_rules_ruby.py",),
    ),
    Mutation(
        "eco-policy-phpunit-skip-unread",
        "policy/checks/markers.py",
        '        "markTestSkipped/markTestIncomplete": re.compile(r"\\bmarkTest(?:Skipped|Incomplete)\\s*\\("),',
        '        "markTestSkipped/markTestIncomplete": re.compile(r"\\bmarkTest(?:Skipped)\\s*\\("),',
        ("tests/policy/test_rules_php_dotnet.py",),
    ),
    Mutation(
        "eco-policy-xunit-skip-unread",
        "policy/checks/markers.py",
        "\\w*(?:Fact|Theory)\\w*\\s*\\(.*\\bSkip\\s*=",
        "\\w*(?:Fact)\\w*\\s*\\(.*\\bSkip\\s*=",
        ("tests/policy/test_rules_php_dotnet.py",),
    ),
    Mutation(
        "eco-policy-dotnet-ignore-everywhere",
        "policy/checks/markers.py",
        "_SKIP_IN_TESTS.get(file.language, {}), code, file.test_hunks)",
        "_SKIP_IN_TESTS.get(file.language, {}), code)",
        ("tests/policy/test_rules_php_dotnet.py",),
    ),
    Mutation(
        "eco-policy-dotnet-assert-uncounted",
        "policy/checks/assertions.py",
        '|\\bAssert\\s*\\.\\s*\\w+\\s*\\("',
        '"',
        ("tests/policy/test_rules_php_dotnet.py",),
    ),
    Mutation(
        "eco-testcount-gradle-reports-unread",
        "ladder/verify.py",
        "    return gradle_reports(sandbox.root) if ran_gradle(command, output) else []",
        "    return []",
        ("tests/ladder/test_verify.py",),
    ),
    Mutation(
        "eco-testcount-gradle-links-followed",
        "ladder/testcount.py",
        "os.walk(root, followlinks=False)",
        "os.walk(root, followlinks=True)",
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "eco-testcount-mocha-pending-unread",
        "ladder/testcount.py",
        '                parts[part.group("kind")] = int(part.group("n"))',
        "                pass",
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "eco-testcount-rspec-pending-ran",
        "ladder/testcount.py",
        '            ran = int(summary.group("examples")) - pending',
        '            ran = int(summary.group("examples"))',
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "eco-testcount-minitest-skips-ran",
        "ladder/testcount.py",
        '            ran = int(summary.group("runs")) - skips',
        '            ran = int(summary.group("runs"))',
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "eco-testcount-phpunit-ok-unread",
        "ladder/testcount.py",
        "        ok = PHPUNIT_OK_RE.match(line)",
        "        ok = None",
        ("tests/ladder/test_testcount.py",),
    ),
    Mutation(
        "triage-names-are-errors",
        "triage/engine.py",
        "        if not joined or heads or word.isupper() or not word[:1].isalnum():",
        "        if True:",
        RANKING,
    ),
    Mutation(
        "triage-heading-names-are-not-errors",
        "triage/engine.py",
        "        if not joined or heads or word.isupper() or not word[:1].isalnum():",
        "        if not joined or word.isupper() or not word[:1].isalnum():",
        RANKING,
    ),
    Mutation(
        "triage-repeats-kept-first",
        "triage/engine.py",
        "(telling if seen[key] <= REPEATS_KEPT else demoted).append(f)",
        "telling.append(f)",
        RANKING,
    ),
    Mutation(
        "triage-outside-the-failed-step-kept-first",
        "triage/engine.py",
        "        if not in_failed(f):\n            demoted.append(f)",
        "        if False:\n            demoted.append(f)",
        RANKING,
    ),
    Mutation(
        "copy-nested-repository-allowed",
        "git.py",
        "    if found:\n        shown = ",
        "    if False:\n        shown = ",
        COPY,
    ),
    Mutation(
        "copy-status-looks-into-submodules",
        "git.py",
        '"--untracked-files=normal", "--ignore-submodules=all"',
        '"--untracked-files=normal"',
        COPY,
    ),
    Mutation(
        "copy-judge-runs-as-the-fixers-uid",
        "ladder/workarea.py",
        "            user=self.judge_uid,\n",
        "            user=self.uid,\n",
        COPY,
    ),
    Mutation(
        "copy-work-copy-left-open-to-the-judge",
        "ladder/workarea.py",
        "sealed=(*self.sealed, self.work, self.home, self.tmp),",
        "sealed=self.sealed,",
        COPY,
    ),
    Mutation(
        "copy-pristine-not-checked",
        "ladder/workarea.py",
        "        if changed := self.git.status():",
        "        if changed := []:",
        COPY,
    ),
    Mutation(
        "copy-global-config-trusts-everything",
        "git.py",
        '_GLOBAL_CONFIG = """\\\n[core]',
        '_GLOBAL_CONFIG = """\\\n[safe]\n\tdirectory = *\n[core]',
        COPY,
    ),
    Mutation(
        "cli-empty-diff-checked",
        "cli/check_diff.py",
        "        if not data.strip():\n            raise _empty(args.diff)",
        "        if not data:\n            raise _empty(args.diff)",
        CLI_CHECK_DIFF,
    ),
    Mutation(
        "cli-demo-writes-into-a-full-dir",
        "cli/demo.py",
        "        if any(workdir.iterdir()):",
        "        if False:",
        CLI_DEMO,
    ),
    Mutation(
        "cli-fix-read-only-checkout-not-checked",
        "flows/local.py",
        "    writable(git)\n",
        "",
        CLI_FIX,
    ),
    Mutation(
        "cli-fix-current-branch-may-be-named",
        "flows/local.py",
        "    if name == current:",
        "    if False:",
        CLI_FIX,
    ),
    Mutation(
        "cli-prices-checked-late",
        "cli/io.py",
        "    try:\n        price_table()\n    except UserError",
        "    try:\n        pass\n    except UserError",
        CLI_FIX,
    ),
    Mutation(
        "toolchains-checksum-not-compared",
        "toolchains/install.py",
        "    if digest != artifact.sha256:",
        "    if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-size-not-capped",
        "toolchains/install.py",
        "cap=artifact.size or ARCHIVE_CAP",
        "cap=ARCHIVE_CAP",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-absolute-member-extracted",
        "toolchains/install.py",
        'if name.startswith("/"):',
        "if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-dotdot-member-extracted",
        "toolchains/install.py",
        'if ".." in parts:',
        "if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-member-outside-top-extracted",
        "toolchains/install.py",
        "if not parts or parts[0] != top:",
        "if not parts:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-device-extracted",
        "toolchains/install.py",
        "if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):",
        "if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-escaping-link-extracted",
        "toolchains/install.py",
        'if link.startswith("/") or not (target == top or target.startswith(top + "/")):',
        "if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-install-writable-by-others",
        "toolchains/install.py",
        "                path.chmod(0o755)",
        "                path.chmod(0o777)",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-install-keeps-archive-owner",
        "toolchains/install.py",
        'tar.extract(member, into, filter="data")',
        'tar.extract(member, into, filter="fully_trusted")',
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-altered-install-cached",
        "toolchains/install.py",
        "== stamp and _ours(home):",
        "== stamp:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-swappable-destination",
        "toolchains/install.py",
        "if mode & 0o002 and not mode & stat.S_ISVTX:",
        "if False:",
        TOOLCHAIN_INSTALL,
    ),
    Mutation(
        "toolchains-rust-manifest-unchecked",
        "toolchains/sources.py",
        "if not listed or listed[0].lower() != hashlib.sha256(raw).hexdigest():",
        "if False:",
        TOOLCHAIN_SOURCES,
    ),
    Mutation(
        "toolchains-rust-component-any-host",
        "toolchains/sources.py",
        "if rest == url or not _RUST_PATH.match(rest) or not _HEX64.match(digest):",
        "if not _HEX64.match(digest):",
        TOOLCHAIN_SOURCES,
    ),
    Mutation(
        "toolchains-mirror-unchecked",
        "toolchains/sources.py",
        "if not _MIRROR.match(mirror):",
        "if False:",
        TOOLCHAIN_SOURCES,
    ),
    Mutation(
        "toolchains-no-nearest-fallback-note",
        "toolchains/sources.py",
        'return near, f"{spec.text} cannot be had (no such release); using the nearest, {versions.render(near)}"',
        "return near, None",
        TOOLCHAIN_SOURCES,
    ),
    Mutation(
        "toolchains-version-file-through-a-link",
        "toolchains/declared.py",
        "if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_FILE:",
        "if st.st_size > _MAX_FILE:",
        TOOLCHAIN_DECLARED,
    ),
    Mutation(
        "toolchains-version-file-outside-checkout",
        "toolchains/declared.py",
        'if not name.strip() or rel.is_absolute() or ".." in rel.parts or "\\0" in name:',
        'if not name.strip() or "\\0" in name:',
        TOOLCHAIN_DECLARED,
    ),
    Mutation(
        "toolchains-rust-file-does-not-override-step",
        "toolchains/declared.py",
        "if from_repo is not None and (runtime not in found or rustup_file):",
        "if from_repo is not None and runtime not in found:",
        TOOLCHAIN_DECLARED,
    ),
    Mutation(
        "toolchains-any-rust-file-overrides-step",
        "toolchains/declared.py",
        'rustup_file = from_repo is not None and from_repo.source.startswith("rust-toolchain")',
        "rustup_file = from_repo is not None",
        TOOLCHAIN_DECLARED,
    ),
    Mutation(
        "bounds-nearest-no-size-cap",
        "agent/editor.py",
        "    if len(old) > NEAREST_MAX_CHARS:",
        "    if False:",
        BOUNDS,
    ),
    Mutation(
        "bounds-nearest-no-window-cap",
        "agent/editor.py",
        "            if compared > NEAREST_MAX_WINDOWS or until.passed():",
        "            if until.passed():",
        BOUNDS,
    ),
    Mutation(
        "bounds-nearest-no-deadline",
        "agent/editor.py",
        "            if compared > NEAREST_MAX_WINDOWS or until.passed():",
        "            if compared > NEAREST_MAX_WINDOWS:",
        BOUNDS,
    ),
    Mutation(
        "bounds-occurrences-all-listed",
        "agent/editor.py",
        "    while len(found) < limit and (index := text.find(needle, start)) != -1:",
        "    while (index := text.find(needle, start)) != -1:",
        BOUNDS,
    ),
    Mutation(
        "bounds-tool-past-deadline-answers",
        "agent/tools.py",
        "and self.deadline.passed():\n            raise OutOfTime(name)",
        "and False:\n            raise OutOfTime(name)",
        BOUNDS,
    ),
    Mutation(
        "bounds-run-ignores-deadline",
        "agent/tools.py",
        "        timeout = max(min(self.command_timeout, self.deadline.remaining()), 0.001)",
        "        timeout = self.command_timeout",
        BOUNDS,
    ),
    Mutation(
        "bounds-matcher-ignores-deadline",
        "agent/matcher.py",
        "        self.deadline = (deadline or Deadline.never()).within(seconds)",
        "        self.deadline = Deadline.never().within(seconds)",
        BOUNDS,
    ),
    Mutation(
        "bounds-listing-ignores-deadline",
        "agent/files.py",
        "        if until.passed():\n            raise ToolFailure(",
        "        if False:\n            raise ToolFailure(",
        BOUNDS,
    ),
    Mutation(
        "bounds-halt-names-no-tool",
        "agent/loop.py",
        "budget.out_of_minutes(exc.tool)",
        "budget.out_of_minutes()",
        BOUNDS,
    ),
    Mutation(
        "policy-source-multiline-string-not-carried",
        "policy/source.py",
        'self.inside = ("string", close, escapes)',
        "pass",
        ("tests/policy/test_source.py",),
    ),
    Mutation(
        "policy-source-block-comment-never-closes",
        "policy/source.py",
        '            views.both(" ")\n            self.inside = None\n',
        '            views.both(" ")\n',
        ("tests/policy/test_source.py",),
    ),
    Mutation(
        "policy-source-rust-char-is-code",
        "policy/source.py",
        "if literal:  # a char literal",
        "if False:  # a char literal",
        ("tests/policy/test_source.py",),
    ),
    Mutation(
        "shell-output-not-read",
        "shell.py",
        "                self.buffer.add(chunk)",
        "                pass",
        ("tests/test_shell.py",),
    ),
    Mutation(
        "header-rename-line-ignored",
        "policy/header.py",
        "    if named_new:\n        new = unquote(named_new)\n",
        "",
        ("tests/policy/test_kinds_diffs.py",),
    ),
    Mutation(
        "agent-cut-offs-unbounded",
        "agent/loop.py",
        "if self.cut_offs >= MAX_CUT_OFFS:",
        "if False:",
        ("tests/agent/test_loop_stops.py",),
    ),
    Mutation(
        "agent-pause-turn-ends-the-run",
        "agent/loop.py",
        "return None  # the model paused a long turn",
        "return self.result(finished=False)  # the model paused a long turn",
        ("tests/agent/test_loop_stops.py",),
    ),
    Mutation(
        "agent-tools-unmasked",
        "agent/loop.py",
        "        secrets=request.secrets,\n",
        "        secrets=(),\n",
        ("tests/agent/test_loop_session.py",),
    ),
    Mutation(
        "paths-codeowners-unprotected",
        "paths.py",
        '("CODEOWNERS", "docs/CODEOWNERS", "**/OWNERS", "**/OWNERS_ALIASES")',
        '("**/OWNERS", "**/OWNERS_ALIASES")',
        ROUTING,
    ),
    Mutation(
        "paths-mergify-unprotected",
        "paths.py",
        '            ".mergify.yml",\n',
        "",
        ROUTING,
    ),
    Mutation(
        "paths-renovate-unprotected",
        "paths.py",
        '            "renovate.json",\n',
        "",
        ROUTING,
    ),
    Mutation(
        "paths-drone-unprotected",
        "paths.py",
        '            ".drone.yml",\n',
        "",
        ROUTING,
    ),
    Mutation(
        "paths-bitbucket-unprotected",
        "paths.py",
        '            "bitbucket-pipelines.yml",\n',
        "",
        ROUTING,
    ),
    Mutation(
        "paths-gitlab-includes-unprotected",
        "paths.py",
        '            ".gitlab/**",\n',
        "",
        ROUTING,
    ),
    # Reproducing what CI ran (issue 29): the version order and the steps read by command.
    Mutation(
        "repro-log-version-ignored",
        "fixers/plan.py",
        "    if ci is not None and (printed := ci.printed.get(package)):",
        "    if False and ci is not None and (printed := ci.printed.get(package)):",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-lock-after-metadata",
        "fixers/config.py",
        "                0 if pin.locked else 1,",
        "                0,",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-exact-pin-asks-the-index",
        "fixers/plan.py",
        "    if ci is None or (pin is not None and pin.requirement.exact):",
        "    if ci is None:",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-date-ignored",
        "tooling/ci_versions.py",
        "        if uploaded is not None and uploaded <= when:",
        "        if uploaded is not None:",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-prerelease-picked",
        "tooling/ci_versions.py",
        "    found = newest(finals) or newest(pre_releases)",
        "    found = newest(finals + pre_releases)",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-pre-release-never-picked",
        "tooling/ci_versions.py",
        "    found = newest(finals) or newest(pre_releases)",
        "    found = newest(finals)",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-log-version-not-strict",
        "tooling/ci_versions.py",
        "        if (packages is None or package in packages) and is_version(version):",
        "        if packages is None or package in packages:",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-version-run-lends-options",
        "fixers/commands.py",
        "    if any(arg in _ABOUT_THE_TOOL for arg in args):\n        return\n",
        "",
        REPRO_STEPS,
    ),
    Mutation(
        "repro-make-not-read-through",
        "fixers/commands.py",
        "        if root is not None and depth < _RUNNER_DEPTH:",
        "        if False:",
        REPRO_STEPS,
    ),
    Mutation(
        "repro-activation-kept",
        "workflow/definition.py",
        "    script, activations = own_environment(script)",
        "    activations: list[str] = []",
        REPRO_STEPS,
    ),
    Mutation(
        "repro-job-setup-ignored",
        "ladder/environment.py",
        "        if job_setup:\n            installed = _job_installs(",
        "        if False:\n            installed = _job_installs(",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "env-pip-compiled-by-ensurepip",
        "ladder/environment.py",
        '"-m", "venv", "--without-pip", str(env_dir)]',
        '"-m", "venv", str(env_dir)]',
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "env-without-pip",
        "ladder/environment.py",
        "        if created.ok:\n",
        "        if False:\n",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "repro-installs-not-dated",
        "ladder/environment.py",
        "        if self.resolved_at is None or not any(_datable(line) for line in self.job_setup):",
        "        if True:",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "repro-installs-no-fallback",
        "ladder/environment.py",
        "    if installed.ok or environment.resolved_at is None:",
        "    if True:",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "repro-installs-dated-on-the-jobs-own-index",
        "ladder/environment.py",
        '    return not any(w.split("=", 1)[0] in _OWN_INDEX or w.startswith(("-i", "-f")) for w in words)',
        "    return True",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "repro-installs-dated-without-the-index",
        "tooling/ci_versions.py",
        "        return self.date if self.index else None",
        "        return self.date",
        ("tests/tooling/test_ci_versions.py",),
    ),
    Mutation(
        "repro-pre-commit-rev-pins-any-step",
        "fixers/config.py",
        "        pins = [p for p in self.pins.get(package, []) if runs_pre_commit or not p.pre_commit]",
        "        pins = list(self.pins.get(package, []))",
        ("tests/fixers/test_config.py",),
    ),
    Mutation(
        "repro-github-context-ignored",
        "workflow/definition.py",
        "    return github.value(name) if github is not None and _GITHUB_RE.fullmatch(name) else None",
        "    return None",
        ("tests/workflow/test_context.py",),
    ),
    Mutation(
        "repro-github-value-not-plain",
        "workflow/context.py",
        "        elif not _PLAIN.match(value):",
        "        elif False:",
        ("tests/workflow/test_context.py",),
    ),
    Mutation(
        "repro-github-sha-of-a-pull-request-is-its-head",
        "workflow/context.py",
        '        context.learn("github.sha", None, why)',
        '        context.learn("github.sha", sha, why)',
        ("tests/workflow/test_context.py",),
    ),
    Mutation(
        "repro-workspace-not-the-copy",
        "workflow/definition.py",
        "        prelude.append('export GITHUB_WORKSPACE=\"$PWD\"')",
        "        pass",
        ("tests/flows/test_local.py",),
    ),
    Mutation(
        "repro-job-setup-takes-expansions",
        "workflow/definition.py",
        '        if words and not any(set(w) <= _OPERATORS or "$" in w or "`" in w for w in words):',
        "        if words and not any(set(w) <= _OPERATORS for w in words):",
        REPRO_STEPS,
    ),
    Mutation(
        "repro-ci-tools-after-the-environment",
        "ladder/tools.py",
        '    lead = f"{first}{os.pathsep}" if first.is_dir() and any(first.iterdir()) else ""',
        '    lead = ""',
        ("tests/ladder/test_run.py",),
    ),
    Mutation(
        "repro-old-black-without-its-click",
        "fixers/install.py",
        "                else [spec, *era_needs(package, requirement.exact)]",
        "                else [spec]",
        ("tests/fixers/test_install.py",),
    ),
    Mutation(
        "repro-wrapper-not-peeled",
        "workflow/replay.py",
        '    if head in _WRAPPERS and words[1:2] == ["run"]:',
        "    if False:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-uvx-not-peeled",
        "workflow/replay.py",
        '    if head == "uvx" or (head == "uv" and words[1:3] == ["tool", "run"]):',
        "    if False:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-uvx-version-peeled",
        "workflow/replay.py",
        '    if rest[0].startswith("-") or "@" in rest[0] or "=" in rest[0]:',
        "    if False:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-wrapper-elsewhere-peeled",
        "workflow/replay.py",
        '    if any(w.split("=", 1)[0] in _ELSEWHERE for w in own if w.startswith("-")):',
        "    if False:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-session-deps-dropped",
        "workflow/replay.py",
        "        if line not in out.installs:",
        "        if False:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-session-substitution-replayed",
        "workflow/replay.py",
        'if w is None or "{" in c]',
        "if w is None]",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-script-with-shell-syntax-inlined",
        "workflow/replay.py",
        "        words = plain_words(line)\n        if words is None:\n            out.notes.append(",
        "        words = plain_words(line) or line.split()\n        if not words:\n            out.notes.append(",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-script-not-in-its-own-subshell",
        "workflow/replay.py",
        '    return ["(", "set +e", *body, ")"]',
        "    return body",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-pre-commit-other-hooks-dropped",
        "workflow/replay.py",
        "    if not hooks or other or filtered:",
        "    if not hooks or filtered:",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-pre-commit-hook-fixes",
        "workflow/replay.py",
        '    RUFF_CHECK.name: (["ruff", "check", "--force-exclude"], frozenset({"--fix", "--exit-non-zero-on-fix"})),',
        '    RUFF_CHECK.name: (["ruff", "check", "--force-exclude"], frozenset()),',
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-environment-first-line-only",
        "ladder/environment.py",
        "    for line in (line for command in commands for line in command.splitlines()):",
        "    for line in (command.split(chr(10))[0] for command in commands):",
        ("tests/ladder/test_environment.py",),
    ),
    Mutation(
        "repro-tox-factors-ignored",
        "fixers/recipes.py",
        "        if match is None:\n            kept.append(line)",
        "        if True:\n            kept.append(line)",
        ("tests/workflow/test_replay.py",),
    ),
    Mutation(
        "repro-run-date-ignored",
        "tooling/ci_versions.py",
        "            if ran is not None and (date is None or ran >= date):",
        "            if False:",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-run-date-before-the-commit",
        "tooling/ci_versions.py",
        "            if ran is not None and (date is None or ran >= date):",
        "            if ran is not None:",
        REPRO_VERSIONS,
    ),
    Mutation(
        "repro-no-tail-when-unverified",
        "ladder/evidence.py",
        "        if telling is not None:  # what decided it",
        "        if False:  # what decided it",
        ("tests/ladder/test_evidence.py",),
    ),
    Mutation(
        "adv-paths-gitmodules-unprotected",
        "paths.py",
        '(".gitmodules",)',
        "()",
        FETCHED_SUBMODULES,
    ),
    Mutation(
        "adv-paths-taskcluster-unprotected",
        "paths.py",
        '            ".taskcluster.yml",\n',
        "",
        MORE_CI,
    ),
    Mutation(
        "adv-paths-teamcity-unprotected",
        "paths.py",
        '            ".teamcity/**",\n',
        "",
        MORE_CI,
    ),
    Mutation(
        "loop-same-failure-not-reused",
        "state/ledger.py",
        "if failed and failed_steps(gh, run.id, run.run_attempt) == failed:",
        "if False:",
        LOOP_REUSE,
    ),
    Mutation(
        "loop-halted-attempt-not-counted",
        "state/ledger.py",
        "return len(self.applied) + len(self.open_for_head) + len(self.halted)",
        "return len(self.applied) + len(self.open_for_head)",
        LOOP_COUNT,
    ),
    Mutation(
        "loop-halted-attempt-not-recorded",
        "flows/propose.py",
        "if seen.attempting is not None and counts(halt):",
        "if False:",
        LOOP_COUNT,
    ),
    Mutation(
        "loop-lineage-budget-ignored",
        "flows/propose.py",
        "if line.attempts >= settings.max_attempts or line.cost_usd >= settings.max_lineage_cost_usd:",
        "if line.attempts >= settings.max_attempts:",
        LOOP_COUNT,
    ),
    Mutation(
        "loop-not-reproduced-attempted",
        "ladder/run.py",
        "if not commands or len(ran) < len(set(commands)) or not all(e.ok and not e.absent for e in ran.values()):",
        "if True:",
        LOOP_UNREPRODUCED,
    ),
    Mutation(
        "loop-flaky-rerun-every-attempt",
        "flows/stops.py",
        "            or event.run.run_attempt != 1\n",
        "            or False\n",
        LOOP_UNREPRODUCED,
    ),
    Mutation(
        "loop-breaker-off",
        "flows/stops.py",
        "    if signature(earlier) != mine:\n        return\n",
        "    if True:\n        return\n",
        LOOP_BREAKER,
    ),
    Mutation(
        "loop-breaker-ignores-the-signature",
        "flows/stops.py",
        "    if signature(earlier) != mine:\n        return\n",
        "    if False:\n        return\n",
        LOOP_BREAKER,
    ),
    Mutation(
        "loop-stray-branch-kept",
        "flows/propose.py",
        "    sweep_strays(at)\n",
        "",
        LOOP_GONE,
    ),
    Mutation(
        "loop-sweep-deletes-branches-not-ours",
        "state/ledger.py",
        "if branch not in open_heads and branch != keep and provenance.vouched_by(gh.statuses(sha), trusted)",
        "if branch not in open_heads and branch != keep",
        LOOP_GONE,
    ),
    Mutation(
        "loop-closed-suggestions-own-branch-kept",
        "state/ledger.py",
        '        keep = ""  # its PR was closed: closed means gone',
        "        pass",
        LOOP_GONE,
    ),
    Mutation(
        "loop-inherited-failure-fixed",
        "flows/propose.py",
        'if settings.inherited_failures != "fix-here" and (',
        "if False and (",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-inherited-ignores-the-signature",
        "workflow/inherited.py",
        "return OnBase(base, latest, pull) if signature(theirs) == mine else None",
        "return OnBase(base, latest, pull)",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-inherited-ignores-the-prs-files",
        "workflow/inherited.py",
        "    if pull is not None and touched(gh, pull, diagnosis):\n        return None\n",
        "",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-inherited-no-file-matches",
        "workflow/inherited.py",
        "    return any(_same_file(a, b) for a in failing for b in changed)",
        "    return False",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-inherited-said-per-run",
        "deliver/inherited.py",
        "        notice.upsert(gh, failing, MARKER, body, trusted)",
        "        gh.comment(failing.pull.number, body)",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-fix-base-halts",
        "flows/stops.py",
        'if found is None or settings.inherited_failures == "fix-base":',
        "if found is None:",
        LOOP_INHERITED,
    ),
    Mutation(
        "loop-inline-for-a-flagged-fix",
        "deliver/inline_failing.py",
        'if proposal.verdict.status != "clean":',
        "if False:",
        LOOP_INLINE,
    ),
    Mutation(
        "loop-inline-for-an-unverified-fix",
        "deliver/inline_failing.py",
        'if proposal.verification is None or proposal.verification.outcome != "verified":',
        "if proposal.verification is None:",
        LOOP_INLINE,
    ),
    Mutation(
        "loop-inline-cannot-be-turned-off",
        "deliver/inline_failing.py",
        "    if not enabled:\n",
        "    if False:\n",
        LOOP_INLINE,
    ),
    Mutation(
        "loop-inline-names-unquoted",
        "deliver/inline_failing.py",
        "    return f'\"{prefix}{text}\"'",
        '    return f"{prefix}{name}"',
        LOOP_INLINE,
    ),
    Mutation(
        "wire-runtimes-not-on-the-fixers-path",
        "ladder/run.py",
        "sandbox = with_tools(with_runtimes(sandbox, provisioned), tool_path)",
        "sandbox = with_tools(sandbox, tool_path)",
        WIRE,
    ),
    Mutation(
        "wire-clean-copy-without-runtimes",
        "ladder/verify.py",
        "self.area.clean_copy(tree, protected=self.protected, timeout=self.timeout), self.provisioned",
        "self.area.clean_copy(tree, protected=self.protected, timeout=self.timeout), Provisioned()",
        WIRE,
    ),
    Mutation(
        "wire-no-dependency-install",
        "ladder/runtimes.py",
        "if provisioned.get(i.runtime)]",
        "if not provisioned.get(i.runtime)]",
        WIRE,
    ),
    Mutation(
        "wire-failed-provisioning-verified",
        "ladder/verify.py",
        'if result.outcome == "verified" and self.provisioned.failures:',
        "if False:",
        WIRE,
    ),
    Mutation(
        "wire-absent-program-ignored",
        "ladder/verify.py",
        "elif absent_here := (absent or {}).get(pair.command):",
        "elif absent_here := None:",
        ("tests/ladder/test_verify.py", *WIRE),
    ),
    Mutation(
        "wire-halt-hides-refused-runtime",
        "ladder/run.py",
        "halt = _naming_failed_runtimes(ended, provisioned)",
        "halt = ended",
        WIRE,
    ),
    Mutation(
        "wire-refused-runtime-without-cause",
        "toolchains/provision.py",
        "provisioned: {self.error.cause.rstrip('.')}. What to do: {self.error.remedy}\"",
        'provisioned"',
        WIRE,
    ),
    Mutation(
        "wire-failed-job-not-kept",
        "workflow/definition.py",
        "found.job, found.matrix = job, matrix",
        "pass",
        ("tests/workflow/test_definition.py",),
    ),
    Mutation(
        "wire-global-node-tool",
        "fixers/run.py",
        'return f"./{fixer.program}" if os.path.lexists(sandbox.root / fixer.program) else None',
        'return fixer.program.rsplit("/", 1)[-1]',
        WIRE_FIXERS,
    ),
    Mutation(
        "wire-gofmt-never-checking",
        "fixers/catalog.py",
        'package="gofmt",\n    command=("-w",),\n    check_flags=frozenset({"-l", "-d"}),',
        'package="gofmt",\n    command=("-w",),\n    check_flags=frozenset(),',
        WIRE_FIXERS,
    ),
    Mutation(
        "wire-unconfigured-ecosystem-planned",
        "fixers/config.py",
        "            if _read(root, name) is not None:\n                config.note(package, name)",
        "            config.note(package, name)",
        WIRE_FIXERS,
    ),
    # The one ending of every Action flow: a halt keeps the work in files and reports what it spent.
    Mutation(
        "ended-work-not-kept",
        "flows/ended.py",
        "        fields = {**fields, **keep_work(halt.kept, keep_in, runner, name)}\n",
        "",
        ENDED,
    ),
    Mutation(
        "ended-spend-not-reported",
        "flows/ended.py",
        "    if spent is not None:\n",
        "    if False:\n",
        ENDED,
    ),
    Mutation(
        "ended-kept-work-not-summarised",
        "flows/ended.py",
        '(f"\\n{kept.summary(halt.kept)}\\n" if halt.kept else "")',
        '""',
        ENDED,
    ),
    # ---- the modules' own tests (tests/<package>/test_<module>.py) ---------------------------------
    Mutation(
        "own-suggestion-branch-kept-when-the-pr-fails",
        "deliver/suggestion.py",
        "    except BaseException:\n        gh.delete_branch(record.fix_branch)\n        raise\n",
        "    except BaseException:\n        raise\n",
        SUGGESTION,
    ),
    Mutation(
        "own-suggestion-replaced-branch-not-named",
        "deliver/suggestion.py",
        "    if left is not None:\n        delivery.replaced = left\n",
        "    if left is None:\n        delivery.replaced = left\n",
        SUGGESTION,
    ),
    Mutation(
        "own-ledger-open-pulls-ignored",
        "state/ledger.py",
        "if branch not in open_heads and branch != keep",
        "if branch != keep",
        LEDGER,
    ),
    Mutation(
        "own-ledger-record-not-read",
        "state/ledger.py",
        "    return Existing(pull, marker.parse(pull.body))\n",
        "    return Existing(pull, None)\n",
        LEDGER,
    ),
    Mutation(
        "own-client-missing-label-is-an-error",
        "github/client.py",
        "            if exc.status != 404:\n",
        "            if exc.status != 0:\n",
        CLIENT,
    ),
    Mutation(
        "own-client-branch-names-keep-refs-heads",
        "github/client.py",
        'removeprefix("refs/heads/"): str(i["object"]["sha"])',
        'removeprefix("refs/"): str(i["object"]["sha"])',
        CLIENT,
    ),
    Mutation(
        "own-local-identity-ignored",
        "flows/local.py",
        "configured_identity(repo) or BOT, log",
        "BOT, log",
        LOCAL,
    ),
    Mutation(
        "own-local-branch-d-advised-for-yours",
        "flows/local.py",
        "            if name.startswith(prefix)\n",
        "            if True\n",
        LOCAL,
    ),
    Mutation(
        "own-reap-leftovers-not-named",
        "reap.py",
        "            return tuple(sorted(killed))\n",
        "            return ()\n",
        REAP,
    ),
    Mutation(
        "own-fixer-run-out-of-scope-kept",
        "fixers/run.py",
        "        undo = [p for p in changed if result.timed_out or not _allowed(sandbox, spec, p)]\n",
        "        undo = [p for p in changed if result.timed_out]\n",
        FIXER_RUN,
    ),
    Mutation(
        "eco-biome-ci-not-read",
        "fixers/commands.py",
        '"ci": BIOME_CHECK, ',
        "",
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-biome-not-configured-by-its-file",
        "fixers/config.py",
        '    "@biomejs/biome": ("biome.json", "biome.jsonc"),\n',
        "",
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-goimports-local-taken-for-a-path",
        "fixers/catalog.py",
        'value_options=frozenset({"-local", "-srcdir",',
        'value_options=frozenset({"-srcdir",',
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-goimports-not-read",
        "fixers/commands.py",
        '"goimports": GOIMPORTS, ',
        "",
        ("tests/fixers/test_plan.py", "tests/fixers/test_run.py"),
    ),
    Mutation(
        "eco-bench-npm-test-pretest-unread",
        "fixers/recipes.py",
        '    around = [scripts.get(f"pre{name}"), main, scripts.get(f"post{name}")]',
        "    around = [main]",
        ("tests/fixers/test_recipes.py",),
    ),
    Mutation(
        "eco-bench-package-scripts-unread",
        "fixers/commands.py",
        '        if lines is not None and root is not None:\n            _read_lines(" ".join(runner)',
        '        if False:\n            _read_lines(" ".join(runner)',
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-bench-globs-widen-to-the-repository",
        "fixers/plan.py",
        "globbed = _patterns(root, parsed.paths) if fixer.expands_globs else {}",
        "globbed = {}",
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-bench-glob-leaving-the-repository-kept",
        "fixers/plan.py",
        'if match is None or raw.startswith(("/", "!")) or ".." in raw.split("/"):',
        "if match is None:",
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-bench-scripts-unread",
        "fixers/commands.py",
        "    script = _script(raw)\n",
        "    script = None\n",
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-bench-program-path-read-as-a-script",
        "fixers/commands.py",
        'if words and words[0].startswith("./") and words[0].endswith((".sh", ".bash")):',
        'if words and words[0].startswith("./"):',
        ("tests/fixers/test_plan.py",),
    ),
    Mutation(
        "eco-toolchain-extraction-without-the-data-filter",
        "toolchains/install.py",
        "    if not safe_extraction():",
        "    if False:",
        TOOLCHAIN_INSTALL,
    ),
    # The PR's diff (or a fix's) is read with git's line ends only: U+2028 in a name or a line
    # must not start a file or a hunk of its own.
    Mutation(
        "header-splits-on-unicode-line-breaks",
        "policy/header.py",
        '    lines = text.split("\\n")\n    lines = [f"{line}\\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])\n',
        "    lines = text.splitlines(keepends=True)\n",
        ("tests/deliver/test_inline_failing.py",),
    ),
    Mutation(
        "loop-inherited-trusts-a-cut-short-file-list",
        "workflow/inherited.py",
        "    if len(files) >= PULL_FILES_LISTED:\n        return True\n",
        "",
        ("tests/workflow/test_inherited.py",),
    ),
    Mutation(
        "loop-inherited-claims-a-file-check-without-a-pr",
        "deliver/inherited.py",
        "if found.pull is not None else ''",
        "if True else ''",
        ("tests/deliver/test_inherited.py",),
    ),
    # one reader of the repository's scripts, as the shell reads them: a line ends at "\n" only, and
    # a script outside the repository is never read
    Mutation(
        "script-lines-split-on-unicode-line-breaks",
        "fixers/recipes.py",
        'enumerate(text.split("\\n"), 1)',
        "enumerate(text.splitlines(), 1)",
        ("tests/fixers/test_recipes.py",),
    ),
    Mutation(
        "script-lines-read-outside-the-repository",
        "fixers/recipes.py",
        '    if normal.startswith(("/", "../")) or normal == "..":\n        return None\n    text = _text(source, normal)',
        "    text = _text(source, normal)",
        ("tests/fixers/test_recipes.py",),
    ),
    # the real-history benchmark's harness (bench/, beside src/): it refuses a ci-autofix that
    # would measure the machine (no tarfile data filter, a Python the sandbox's uid cannot run)
    Mutation(
        "bench-accepts-a-python-without-the-data-filter",
        "../../bench/real_history.py",
        'if words[3] != "True":',
        "if False:",
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "bench-skips-the-sandbox-uid-check",
        "../../bench/real_history.py",
        "if problem is None and python_tools and os.geteuid() == 0:",
        "if False:",
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "bench-asks-the-sandbox-uid-for-javascript-cases",
        "../../bench/real_history.py",
        "if problem is None and python_tools and os.geteuid() == 0:",
        "if problem is None and os.geteuid() == 0:",
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "bench-looks-for-the-mirror-under-tests",
        "../../bench/real_history.py",
        "    sys.path.insert(0, str(HERE.parent))\n",
        '    sys.path.insert(0, str(HERE.parent / "tests"))\n',
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "bench-reads-a-long-shebang-as-no-python",
        "../../bench/real_history.py",
        'return Path(found["python"]) if found else None',
        "return None",
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "poetry-groups-only-main",
        "workflow/poetry.py",
        "        return ({g for g in known if g not in self.optional_groups} | set(options.with_)) - set(",
        '        return {"main"} - set(',
        POETRY,
    ),
    Mutation(
        "poetry-optional-group-installed",
        "workflow/poetry.py",
        '            if entries.get("optional") is True:',
        "            if False:",
        POETRY,
    ),
    Mutation(
        "poetry-extras-ignored",
        "workflow/poetry.py",
        "        roots = [d for d in roots if not d.optional or canonical_name(d.name) in extras]",
        "        roots = [d for d in roots if not d.optional]",
        POETRY,
    ),
    Mutation(
        "poetry-markers-dropped",
        "workflow/poetry.py",
        "                reached = condition | frozenset(m for m in dependency.markers if m)",
        "                reached = condition",
        POETRY,
    ),
    Mutation(
        "poetry-hashes-dropped",
        "workflow/poetry.py",
        '        return " ".join([line, *(f"--hash={h}" for h in self.hashes)])',
        "        return line",
        POETRY_ENV,
    ),
    Mutation(
        "poetry-dependencies-not-followed",
        "workflow/poetry.py",
        "                    pending += [(inner, path | marker) for path in paths]",
        "                    pass",
        POETRY,
    ),
    Mutation(
        "poetry-old-lock-hashes-ignored",
        "workflow/poetry.py",
        "        old_hashes = {canonical_name(name): _hashes(value) for name, value in files.items()}",
        "        old_hashes: dict[str, tuple[str, ...]] = {}",
        POETRY,
    ),
    Mutation(
        "poetry-marker-may-carry-a-pip-option",
        "workflow/poetry.py",
        ' or re.search(r"(?:^|\\s)-", text):',
        ":",
        POETRY,
    ),
    Mutation(
        "poetry-unknown-option-guessed",
        "workflow/poetry.py",
        "        elif arg not in _HARMLESS:",
        "        elif False:",
        POETRY,
    ),
    Mutation(
        "poetry-requirements-file-left-behind",
        "ladder/environment.py",
        "        with contextlib.suppress(OSError):\n            os.unlink(name)",
        "        pass",
        POETRY_ENV,
    ),
    Mutation(
        "poetry-project-not-installed",
        "ladder/environment.py",
        "    elif root is not None:\n        spec = {",
        "    elif False:\n        spec = {",
        POETRY_ENV,
    ),
    Mutation(
        "poetry-install-not-followed",
        "ladder/environment.py",
        '        return _poetry_install(inner, bin_dir / "python", poetry, timeout, on_start) if poetry else None',
        "        return None",
        POETRY_ENV,
    ),
    Mutation(
        "poetry-itself-installed",
        "workflow/definition.py",
        "        installs = [line for line in installs if not _installs_poetry(line)]",
        "        installs = list(installs)",
        REPRO_STEPS,
    ),
    Mutation(
        "poetry-local-run-not-followed",
        "workflow/definition.py",
        "        _follow_poetry(found, _poetry_install(earlier, {}, files_at(git, sha), context))",
        "        pass",
        REPRO_STEPS,
    ),
    Mutation(
        "verify-step-stop-unnamed",
        "ladder/verify.py",
        "    at = stopped_at(pair.command, after.tail)",
        "    at = None",
        VERIFY,
    ),
    Mutation(
        "verify-step-stop-names-any-trace",
        "ladder/verify.py",
        "            if words == traced or (fixed is not None and traced[:fixed] == words[:fixed]):",
        "            if True:",
        VERIFY,
    ),
    Mutation(
        "verify-step-stop-before-unsaid",
        "ladder/verify.py",
        "    was = stopped_at(pair.command, before.tail)",
        "    was = None",
        VERIFY,
    ),
    Mutation(
        "verify-unresolved-host-is-the-fixs",
        "ladder/verify.py",
        '|No route to host|Could not resolve host"',
        '|No route to host"',
        VERIFY,
    ),
    Mutation(
        "verify-same-output-counts-temporary-names",
        "ladder/verify.py",
        '    return _TEMP_NAME.sub("tmp", before) == _TEMP_NAME.sub("tmp", after)',
        "    return before == after",
        VERIFY,
    ),
    # the benchmark's truth is the failed step, not only its tool: a case whose step cannot pass
    # here (`step_here`) agrees when it is not verified
    Mutation(
        "bench-agrees-on-the-tool-alone",
        "../../bench/real_history.py",
        "return self.verified == (self.lint_green and not self.step_here) if self.fixed else None",
        "return self.verified == self.lint_green if self.fixed else None",
        BENCH_REAL_HISTORY,
    ),
    Mutation(
        "bench-result-forgets-step-here",
        "../../bench/real_history.py",
        "case.fixable, step_here=case.step_here)",
        "case.fixable)",
        BENCH_REAL_HISTORY,
    ),
    # a lock older than this Python: what cannot be installed here is left out by name, the rest installed
    Mutation(
        "poetry-nothing-installed-one-by-one",
        "ladder/environment.py",
        "        for line in text.splitlines():  # one by one",
        "        for line in ():  # one by one",
        (
            "tests/ladder/test_environment.py::test_a_locked_package_that_cannot_be_installed_here_is_left_out_by_name_and_the_rest_installed",
        ),
    ),
    Mutation(
        "poetry-left-out-unnamed",
        "ladder/environment.py",
        "        shown += f\"; left out, as they cannot be installed here: {', '.join(left_out)}\"",
        "        pass",
        (
            "tests/ladder/test_environment.py::test_a_locked_package_that_cannot_be_installed_here_is_left_out_by_name_and_the_rest_installed",
        ),
    ),
    # a log shows pre-commit/action's own command in place of the step: that is the action
    Mutation(
        "claims-miss-the-composite-action",
        "workflow/definition.py",
        '        uses = uses or [s for s in steps if _composite_run(str(s[3].get("uses", "")), claim)]\n',
        "",
        ("tests/workflow/test_definition.py",),
    ),
]


def run(mutation: Mutation) -> tuple[str, float]:
    """`killed` or `survived` (and the seconds the tests took)."""
    path = SRC / mutation.path
    original = path.read_bytes()
    text = original.decode("utf-8")
    count = text.count(mutation.old)
    if count != 1:
        return f"stale (its text occurs {count} times in {mutation.path})", 0.0
    started = time.monotonic()
    try:
        path.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutation.tests],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    finally:
        path.write_bytes(original)
    return ("survived" if result.returncode == 0 else "killed"), time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "prefixes", nargs="*", help="run only the mutations whose name starts with one of these"
    )
    parser.add_argument("--list", action="store_true", help="print the mutations' names and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.prefixes or m.name.startswith(tuple(args.prefixes))]
    if args.list:
        for m in chosen:
            print(f"{m.name}  ({m.path}; {', '.join(m.tests)})")
        return 0
    survivors, stale = [], []
    for m in chosen:
        verdict, seconds = run(m)
        print(f"{verdict:>8}  {m.name}  ({seconds:.0f}s)", flush=True)
        if verdict == "survived":
            survivors.append(m.name)
        elif verdict.startswith("stale"):
            stale.append(m.name)
    killed = len(chosen) - len(survivors) - len(stale)
    print(f"\n{killed} of {len(chosen)} mutations killed; survivors: {', '.join(survivors) or 'none'}")
    if stale:
        print(f"no longer applicable (update tools/mutate.py): {', '.join(stale)}")
        return 2
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
