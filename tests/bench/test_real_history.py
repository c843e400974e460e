"""The real-history benchmark's own logic, without the network: the committed case file parses and
every case is well formed, a malformed case is refused with the case and field named, and the
report's arithmetic (totals, the fixable subset, agreement counted among fixes) is right."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_history", ROOT / "bench" / "real_history.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_history"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


rh = _load()

GOOD = """
[[case]]
id = "demo-1"
repo = "owner/demo"
failing = "1111111111111111111111111111111111111111"
fixing = "2222222222222222222222222222222222222222"
workflow = ".github/workflows/lint.yml"
step = "black --version\\nblack --check ."
command = "black --check ."
setup = "pip"
tool = "black"
version = "24.1.0"
version_source = "pin"
version_where = "pyproject.toml: black==24.1.0"
fixable = true
formatter = "black"
"""


def test_the_committed_case_file_holds_forty_cases_from_eight_repositories() -> None:
    cases = rh.parse_cases(rh.CASES.read_text(encoding="utf-8"))
    assert len(cases) >= 40
    assert len({c.repo for c in cases}) >= 8
    assert len({c.setup for c in cases}) >= 6
    assert {"pre-commit", "nox"} <= {c.setup for c in cases}  # issue 29: steps that run pre-commit or nox
    assert {c.tool for c in cases} >= {"ruff", "black", "flake8"}
    assert any(not c.fixable for c in cases) and any(c.fixable for c in cases)
    for case in cases:
        assert case.command.split()[0] == case.tool, case.id
        assert case.failing != case.fixing


def test_a_good_case_parses_and_names_its_packages() -> None:
    (case,) = rh.parse_cases(GOOD)
    assert case.packages == ("black==24.1.0",)
    assert case.formatter_packages() == ("black==24.1.0",)
    assert case.step.splitlines() == ["black --version", "black --check ."]
    assert rh.Result.of(case).step_here == ""


def test_a_step_that_cannot_pass_here_is_carried_into_the_result_and_its_agreement() -> None:
    """A case's `step_here` (why the whole step cannot pass on this machine, whatever the fix)
    reaches its result: there, a fix green on the tool and not verified agrees with the truth."""
    (case,) = rh.parse_cases(GOOD + 'step_here = "cruft check clones its template from github.com"\n')
    result = rh.Result.of(case)
    assert result.step_here == "cruft check clones its template from github.com"
    result.fixed, result.lint_green, result.verified = True, True, False
    assert result.agrees is True and result.agrees_on_tool is False


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("fixable = true", ""), "`fixable` is missing"),
        (('version = "24.1.0"', 'version = "latest"'), "`version` 'latest' is not a release version"),
        (('failing = "1111111111111111111111111111111111111111"', 'failing = "abc"'), "full 40-hex"),
        (('tool = "black"', 'tool = "pylint"'), "`tool` 'pylint'"),
        (('setup = "pip"', 'setup = "conda"'), "`setup` 'conda'"),
        (('version_source = "pin"', 'version_source = "guess"'), "`version_source` 'guess'"),
        (('command = "black --check ."', 'command = "make lint"'), "must start with the tool"),
        (("fixable = true", "fixable = false"), "says why in `note`"),
        (("fixable = true", 'fixable = "yes"'), "`fixable` must be a bool"),
        (('formatter = "black"', 'colour = "red"'), "unknown field(s) colour"),
        (('setup = "pip"', 'setup = "pre-commit"'), "names the hook that failed in `hook`"),
        (('formatter = "black"', 'hook = "black; rm"'), "`hook` 'black; rm' is not a pre-commit hook id"),
    ],
)
def test_a_malformed_case_is_refused_with_its_case_and_field(change: tuple[str, str], words: str) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(rh.CaseError) as raised:
        rh.parse_cases(GOOD.replace(old, new))
    assert "case 1 (demo-1)" in str(raised.value) or "`fixable` is missing" in str(raised.value)
    assert words in str(raised.value)


def test_an_id_used_twice_and_an_empty_file_are_refused() -> None:
    with pytest.raises(rh.CaseError, match="used twice"):
        rh.parse_cases(GOOD + GOOD)
    with pytest.raises(rh.CaseError, match="no \\[\\[case\\]\\] table"):
        rh.parse_cases("")
    with pytest.raises(rh.CaseError, match="not TOML"):
        rh.parse_cases("[[case]\n")


def _result(n: int, *, fixable: bool = True, **judged: object) -> object:
    result = rh.Result(f"c{n}", "o/r", "black", "24.1.0", fixable)
    for name, value in judged.items():
        setattr(result, name, value)
    return result


def test_totals_count_each_judgement_and_the_fixable_subset() -> None:
    results = [
        _result(1, fixed=True, lint_green=True, matches=True, verified=True),  # agrees
        _result(2, fixed=True, lint_green=True, verified=False, outside=["x.py"]),  # disagrees
        _result(3, fixed=True, lint_green=False, verified=False),  # agrees: not green, not verified
        _result(4, fixable=False, outcome="halted"),  # no fix: no verdict to agree with
        _result(5, error="harness: no such commit"),
        # green on the tool, but the step's other command needs a host this machine cannot reach:
        # the step cannot pass here, and "not verified" is the verdict that agrees with it
        _result(6, fixed=True, lint_green=True, verified=False, step_here="cruft check needs github.com"),
        _result(7, fixed=True, lint_green=True, verified=True, step_here="safety check needs pyup.io"),
    ]
    got = rh.totals(results)
    assert got["all"] == {
        "cases": 7,
        "errors": 1,
        "fixed": 5,
        "lint_green": 4,
        "matches": 1,
        "verified": 2,
        "agrees": 3,
        "agrees_on_tool": 3,
        "touched_outside": 1,
    }
    assert got["fixable"]["cases"] == 6
    assert got["fixable"]["agrees"] == 3
    assert [r.agrees for r in results] == [True, False, True, None, None, True, False]
    assert [r.agrees_on_tool for r in results] == [True, False, True, None, None, False, True]
    text = rh.table(results)
    assert "| all | 7 | 5 (71%) | 4 (57%) | 1 (14%) | 2 (29%) | 3/5 (60%) | 3/5 (60%) | 1 |" in text
    assert "| c4 | black 24.1.0 | no | no | no | no | no | - | 0 | halted |" in text
    assert rh.percent(0, 0) == "n/a"


def test_reported_files_are_the_files_of_the_checkout_the_output_names(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    output = (
        f"would reformat {tmp_path}/pkg/a.py\n"
        "./b.py:1:1: F401 'os' imported but unused\n"
        "gone.py:3:1: E302\n"  # not in the checkout
        "Oh no! 2 files would be reformatted.\n"
    )
    assert rh.reported_files(output, tmp_path) == ["b.py", "pkg/a.py"]


@pytest.mark.e2e  # our entrypoint in a subprocess
def test_the_log_is_a_failed_github_step_that_triage_reads_back(tmp_path: Path) -> None:
    log = rh.github_log(
        "black --version\nblack --check .", "would reformat a.py\n", 1, "2026-02-03T15:03:18+01:00"
    )
    assert "##[group]Run black --version" in log
    assert all(
        line.startswith("2026-02-03T14:03:18.0000000Z ") for line in log.splitlines()
    )  # when CI ran, UTC
    assert log.rstrip().endswith("##[error]Process completed with exit code 1.")
    path = tmp_path / "failed.log"
    path.write_text(log)
    done = subprocess.run(
        [sys.executable, "-m", "ci_autofix", "triage", str(path)], capture_output=True, text=True, check=False
    )
    assert "black --check ." in done.stdout + done.stderr


def _triaged(log: str, tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "failed.log"
    path.write_text(log)
    done = subprocess.run(
        [sys.executable, "-m", "ci_autofix", "triage", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    diagnosis: dict[str, object] = json.loads(done.stdout)
    return diagnosis


@pytest.mark.e2e  # our entrypoint in a subprocess
def test_a_pre_commit_action_step_logs_its_composite_run_and_the_failed_hook(tmp_path: Path) -> None:
    (case,) = rh.parse_cases(
        GOOD.replace('step = "black --version\\nblack --check ."', 'step = "pre-commit/action@v3.0.1"')
        .replace('setup = "pip"', 'setup = "pre-commit"')
        .replace('formatter = "black"', 'formatter = "black"\nhook = "black"')
    )
    output = rh.step_output(case, "would reformat src/a.py\n1 file would be reformatted.\n", 1)
    log = rh.github_log(case.step, output, 1, "2026-02-03T15:03:18+01:00")
    lines = [line.split(" ", 1)[1] for line in log.splitlines()]
    run = "pre-commit run --show-diff-on-failure --color=always --all-files"
    assert lines[:3] == ["##[group]Run pre-commit/action@v3.0.1", "##[endgroup]", f"##[group]Run {run}"]
    assert f"black{'.' * 68}Failed" in lines  # 79 columns, as pre-commit pads its hook lines
    assert lines[lines.index("- hook id: black") + 1] == "- exit code: 1"
    diagnosis = _triaged(log, tmp_path)
    assert diagnosis["log_commands"] == [run]
    failures = diagnosis["failures"]
    assert isinstance(failures, list)
    assert [(f["tool"], f["file"]) for f in failures] == [("black", "src/a.py")]


@pytest.mark.e2e  # our entrypoint in a subprocess
def test_a_nox_step_logs_its_session_around_the_failed_hook(tmp_path: Path) -> None:
    (case,) = rh.parse_cases(
        GOOD.replace('step = "black --version\\nblack --check ."', 'step = "uvx nox -s lint"')
        .replace('setup = "pip"', 'setup = "nox"')
        .replace('formatter = "black"', 'formatter = "black"\nhook = "black"')
    )
    output = rh.step_output(case, "would reformat src/a.py\n", 1)
    assert output.splitlines()[:3] == [
        "nox > Running session lint",
        f"black{'.' * 68}Failed",
        "- hook id: black",
    ]
    assert output.splitlines()[-1] == "nox > Session lint failed."
    log = rh.github_log(case.step, output, 1, "2026-02-03T15:03:18+01:00")
    assert "##[group]Run uvx nox -s lint" in log
    diagnosis = _triaged(log, tmp_path)
    assert diagnosis["log_commands"] == ["uvx nox -s lint"]
    failures = diagnosis["failures"]
    assert isinstance(failures, list)
    assert [(f["tool"], f["file"]) for f in failures] == [("black", "src/a.py")]


def test_a_case_without_hook_or_session_keeps_the_tools_output_as_it_is() -> None:
    (case,) = rh.parse_cases(GOOD)
    assert rh.step_output(case, "would reformat a.py\n", 1) == "would reformat a.py\n"


def test_the_outcome_is_read_from_what_ci_autofix_printed() -> None:
    assert rh.outcome_of("x\nVerification: verified (the step passes)\n", "", 0) == (
        True,
        "verified (the step passes)",
    )
    assert rh.outcome_of("Verification: unverified (setup failed)\n", "", 0) == (
        False,
        "unverified (setup failed)",
    )
    assert rh.outcome_of("Verification: not run (no workflow step)\n", "", 0) == (
        False,
        "not run (no workflow step)",
    )
    verified, words = rh.outcome_of("", "...\nhalted (agent-disabled): no fixer applies\n", 3)
    assert not verified and words == "exit 3: halted (agent-disabled): no fixer applies"


def test_the_fix_command_is_the_tools_write_mode() -> None:
    assert rh.fix_command("ruff check src") == "ruff check --fix src"
    assert rh.fix_command("black --check --diff src") == "black src"
    assert rh.fix_command("isort --check-only --df src") == "isort src"
    assert rh.fix_command("flake8 src") is None


# ---- JavaScript/TypeScript and Go cases (bench/real_history_js_go.toml) ------------------------
JS_GO = ROOT / "bench" / "real_history_js_go.toml"


def test_the_javascript_and_go_case_file_parses_and_runs_each_tool_from_its_own_ecosystem() -> None:
    cases = rh.parse_cases(JS_GO.read_text(encoding="utf-8"))
    assert {c.tool for c in cases} <= rh.NODE_TOOLS | rh.GO_TOOLS
    assert any(c.tool in rh.NODE_TOOLS for c in cases) and any(c.tool in rh.GO_TOOLS for c in cases)
    for case in cases:
        assert case.command.split()[0] == case.program, case.id
        assert case.setup in ("npm", "yarn", "go", "script", "make"), case.id


def test_a_biome_case_runs_the_biome_program_of_its_npm_package() -> None:
    text = (
        GOOD.replace('tool = "black"', 'tool = "@biomejs/biome"')
        .replace('command = "black --check ."', 'command = "biome ci ."')
        .replace('formatter = "black"', 'formatter = "biome format --write"')
        .replace('version = "24.1.0"', 'version = "1.9.4"')
    )
    (case,) = rh.parse_cases(text)
    assert case.program == "biome" and case.packages == ("@biomejs/biome==1.9.4",)
    assert case.formatter_packages() == ("@biomejs/biome==1.9.4",)
    with pytest.raises(rh.CaseError, match="must start with the tool"):
        rh.parse_cases(text.replace('command = "biome ci ."', 'command = "npx biome ci ."'))


def test_gofmt_and_goimports_listing_files_fail_the_step_though_they_exit_zero() -> None:
    """`gofmt -l` exits 0 and lists the files; the workflow's `test -z "$(gofmt -l .)"` fails on them."""
    assert rh.step_failed("gofmt -l .", 0, "main.go\n")
    assert not rh.step_failed("gofmt -l .", 0, "")
    assert rh.step_failed("goimports -l .", 0, "a/b.go\n")
    assert rh.step_failed("gofmt -d .", 1, "")
    assert rh.step_failed("gofmt -d .", 0, "diff main.go.orig main.go\n")
    assert not rh.step_failed(
        "prettier --check .", 0, "Checking formatting...\nAll matched files use Prettier"
    )
    assert rh.step_failed("prettier --check .", 1, "[warn] src/a.ts")


def test_the_write_mode_of_the_javascript_and_go_tools() -> None:
    assert rh.fix_command("prettier --check '{src,test}/**/*.ts' README.md") == (
        "prettier --write '{src,test}/**/*.ts' README.md"
    )
    assert rh.fix_command("eslint --max-warnings 0 .") == "eslint --fix --max-warnings 0 ."
    assert rh.fix_command("gofmt -l .") == "gofmt -w ."
    assert rh.fix_command("goimports -l -local example.com .") == "goimports -w -local example.com ."
    assert rh.fix_command("biome ci .") == "biome check --write ."
    assert rh.fix_command("biome format src") == "biome format --write src"


def test_files_of_the_javascript_and_go_tools_are_read_from_their_output(tmp_path: Path) -> None:
    for rel in ("src/a.ts", "README.md", "main.go", "pkg/x_test.go"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    output = "[warn] src/a.ts\n[warn] README.md\n[warn] Code style issues found\nmain.go\npkg/x_test.go\n"
    assert rh.reported_files(output, tmp_path) == ["README.md", "main.go", "pkg/x_test.go", "src/a.ts"]


def test_the_harness_run_as_a_script_finds_the_tests_toolchain_mirror(tmp_path: Path) -> None:
    """`--local-mirror` imports the mirror as the tests do (`tests.testing.toolchain_mirror`), from a
    process whose path has `bench/` and not the repository root (as `python bench/real_history.py`)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import real_history; "
        "print(real_history.mirror_module().MirrorServer.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(ROOT / "bench")], cwd=tmp_path, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout.strip()) == (0, "MirrorServer"), done.stderr[-600:]


def test_the_local_mirror_lists_only_the_releases_it_serves(tmp_path: Path) -> None:
    """A declared Node or Go the mirror has no archive for must fall back to the nearest it has,
    not fail on a file the index promised."""
    import json

    (tmp_path / "node" / "v20.20.2").mkdir(parents=True)
    (tmp_path / "node" / "v20.20.2" / "node-v20.20.2-linux-x64.tar.xz").write_bytes(b"x")
    (tmp_path / "node" / "v22.12.0").mkdir()
    (tmp_path / "node" / "v22.12.0" / "SHASUMS256.txt").write_text("")
    (tmp_path / "node" / "index.json").write_text(
        json.dumps([{"version": "v22.12.0"}, {"version": "v20.20.2"}])
    )
    (tmp_path / "go").mkdir()
    (tmp_path / "go" / "go1.19.8.linux-amd64.tar.gz").write_bytes(b"x")
    (tmp_path / "go" / "index.json").write_text(
        json.dumps([{"version": "go1.22.5"}, {"version": "go1.19.8"}])
    )
    served = rh.served_indexes(tmp_path)
    assert [e["version"] for e in json.loads(served["node/index.json"])] == ["v20.20.2"]
    assert [r["version"] for r in json.loads(served["go/index.json"])] == ["go1.19.8"]


def _console_script(where: Path, python: Path) -> Path:
    """`ci-autofix` as pip writes a console script for `python` (distlib's ScriptMaker, which pip uses)."""
    scripts = pytest.importorskip("pip._vendor.distlib.scripts")
    maker = scripts.ScriptMaker(None, str(where))
    maker.executable = str(python)
    maker.variants = {""}
    (made,) = maker.make("ci-autofix = ci_autofix.cli:main")
    return Path(made)


def _venv(where: Path, *pth_lines: str) -> Path:
    """A virtual environment of this interpreter (no pip) at `where`, with `pth_lines` run at startup."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    if pth_lines:
        (site,) = where.glob("lib/python3*/site-packages")
        (site / "startup.pth").write_text("\n".join(pth_lines) + "\n")
    return where / "bin" / "python"


def test_the_python_of_a_console_script_is_read_from_its_first_lines(tmp_path: Path) -> None:
    """pip writes `#!python` for a short path and `#!/bin/sh` with an `exec` line for one longer
    than the kernel reads (127 bytes); `#!/usr/bin/env` finds it on PATH; a binary has none."""
    short = tmp_path / "bin" / "python"
    assert rh.interpreter_of(_console_script(tmp_path, short)) == short
    long = tmp_path / ("very-long-directory-name-" * 6) / "bin" / "python"
    script = _console_script(tmp_path / "long", long)
    assert script.read_text().startswith("#!/bin/sh\n")
    assert rh.interpreter_of(script) == long
    env = tmp_path / "env-script"
    env.write_text("#!/usr/bin/env sh\necho\n")
    assert rh.interpreter_of(env) == Path(str(__import__("shutil").which("sh")))
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x7fELF\x02\x01\x01")
    assert rh.interpreter_of(binary) is None


def test_a_ci_autofix_whose_python_has_no_tarfile_data_filter_is_refused_before_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As on Debian bookworm's Python 3.11.2: ci-autofix would refuse every toolchain, and the cases
    whose job declares Node (datasette's) would read as unverified for a reason of the machine."""
    python = _venv(tmp_path / "old", "import tarfile; del tarfile.data_filter")
    script = _console_script(tmp_path, python)
    code = rh.main(
        ["--ci-autofix", str(script), "--only", "datasette-c3ceaba", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "has no tarfile data filter" in err and "Python 3.11.4 or later" in err
    assert "datasette-c3ceaba" not in err  # no case ran
    assert not list((tmp_path / "out").glob("real-history-*.json"))
    # the same interpreter with its data filter passes the check
    assert rh.tarfile_problem(_venv(tmp_path / "new")) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="ci-autofix runs tools as another uid only when run as root")
def test_a_ci_autofix_whose_python_the_sandbox_uid_cannot_run_is_refused_for_python_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Python in a directory only root enters (a pyenv build under root's home): every Python tool
    ci-autofix installs would read as not installed. JavaScript and Go cases run no Python tool."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    script = _console_script(tmp_path, _venv(private / "venv"))
    code = rh.main(
        ["--ci-autofix", str(script), "--only", "datasette-c3ceaba", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot be run by another uid" in err and "every uid can run" in err
    assert rh.ci_autofix_problem(str(script), python_tools=False) is None
    from ci_autofix.sandbox import others_can_run

    shared = next(
        (p for p in (Path(sys._base_executable), Path("/usr/bin/python3")) if others_can_run(p)), None
    )
    if shared is not None:  # an interpreter every uid can run passes
        assert rh.stranger_problem(shared) is None


def test_a_ci_autofix_that_is_not_there_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere" / "ci-autofix"
    out = tmp_path / "out"
    assert rh.main(["--ci-autofix", str(missing), "--only", "datasette-c3ceaba", "--out", str(out)]) == 2
    assert f"{missing} is not an executable; pass the ci-autofix to measure as --ci-autofix PATH" in (
        capsys.readouterr().err
    )
