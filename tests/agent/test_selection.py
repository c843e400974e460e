"""The test-selection grammar: which runner commands the agent may run beyond the exact allowed ones.

The grammar tables run without any runner installed; the runs through the real sandbox (a
`Toolbox` on a small broken project) skip when npm, go or cargo is not installed here.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_autofix.agent.selection import Kind, NotARunner, Refused, TestRunner, check, grammar_text, runners
from ci_autofix.agent.tools import Toolbox
from ci_autofix.sandbox import Sandbox
from tests.testing.git import Author, commit, init

ALLOWED = [
    "python3 -m pytest -q tests/",
    "pytest",
    "npm test",
    "npx jest",
    "vitest run",
    "go test ./...",
    "cargo test",
    "ruff check .",
]
RUNNERS = runners(ALLOWED)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_calc.py").write_text("def test_add():\n    assert True\n")
    (repo / "pkg").mkdir()
    (tmp_path / "outside").mkdir()
    (repo / "out").symlink_to(tmp_path / "outside")
    return repo


def accepted(command: str, root: Path) -> list[str]:
    return check(command, RUNNERS, Sandbox(root).relative)


def refusal(command: str, root: Path) -> str:
    with pytest.raises(Refused) as caught:
        accepted(command, root)
    return str(caught.value)


# ---- which allowed commands are runners ---------------------------------------------------------------------
def test_runners_come_only_from_allowed_commands_with_their_program_word_for_word() -> None:
    assert runners(ALLOWED) == [
        TestRunner(Kind.PYTEST, ("python3", "-m", "pytest")),
        TestRunner(Kind.PYTEST, ("pytest",)),
        TestRunner(Kind.JS, ("npm", "test"), separator=True),
        TestRunner(Kind.JS, ("npx", "jest")),
        TestRunner(Kind.JS, ("vitest", "run")),
        TestRunner(Kind.GO, ("go", "test")),
        TestRunner(Kind.CARGO, ("cargo", "test")),
    ]
    # shell syntax, an environment prefix, another subcommand: no runner
    assert (
        runners(["cd sub && pytest", "FOO=1 pytest", "go vet ./...", "npm run lint", "python3 -c 'x'"]) == []
    )
    assert runners(["pnpm run test", "cargo +nightly test", ".venv/bin/python -m pytest"]) == [
        TestRunner(Kind.JS, ("pnpm", "run", "test"), separator=True),
        TestRunner(Kind.CARGO, ("cargo", "+nightly", "test")),
        TestRunner(Kind.PYTEST, (".venv/bin/python", "-m", "pytest")),
    ]


# ---- accepted ----------------------------------------------------------------------------------------------
ACCEPTED = [
    # pytest, both spellings of the allowed runners
    "python3 -m pytest tests/test_calc.py::test_add -x",
    "python3 -m pytest -k 'add and not mul' -q",
    "python3 -m pytest -m 'not slow' -v --tb=short --maxfail=1",
    "python3 -m pytest -xvs -rA --lf -p no:cacheprovider",
    "python3 -m pytest 'tests/test_calc.py::TestCalc::test_add[1-2]' -vv",
    "python3 -m pytest -kadd -rfE --tb line --durations=5 -n 0",
    "pytest tests --co -q",
    # npm test (after --), jest and vitest directly
    "npm test -- -t 'adds two numbers'",
    "npm test -- tests/calc.test.js --testNamePattern=adds",
    "npx jest -t adds -i --ci",
    "vitest run tests/calc.test.ts -t adds --bail",
    # go test
    "go test ./pkg -run TestAdd",
    "go test ./... -run 'TestAdd|TestMul$' -v -count=1",
    "go test -run=TestAdd -failfast -timeout=30s .",
    # cargo test
    "cargo test add",
    "cargo test tests::add -- --exact --nocapture",
    "cargo test -p calc --test integration add -- --test-threads=1",
    "cargo test --lib -- --exact tests::add tests::mul",
]


@pytest.mark.parametrize("command", ACCEPTED)
def test_accepted(command: str, root: Path) -> None:
    assert accepted(command, root) == shlex.split(command)


# ---- refused, each with its reason --------------------------------------------------------------------------
REFUSED = [
    # shell syntax
    ("python3 -m pytest; rm -rf ~", "`;`: shell operators"),
    ("python3 -m pytest | tee log", "`|`: shell operators"),
    ("python3 -m pytest & sleep 1", "`&`: shell operators"),
    ("python3 -m pytest > out.txt", "`>`: shell operators"),
    ("python3 -m pytest < in.txt", "`<`: shell operators"),
    ("python3 -m pytest (x)", "`(`: shell operators"),
    ("python3 -m pytest `id`", "command substitution"),
    ('python3 -m pytest -k "`id`"', "command substitution"),
    ("python3 -m pytest $(id)", "a shell expansion"),
    ("python3 -m pytest $HOME/tests", "a shell expansion"),
    ('python3 -m pytest -k "${X}"', "a shell expansion"),
    ("python3 -m pytest $'\\x41'", "a shell expansion"),
    ("python3 -m pytest\nid", "a newline"),
    ("python3 -m pytest -k 'a\nb'", "a newline"),
    ("python3 -m pytest tests/*.py", "`*` unquoted: a shell would expand it as a glob"),
    ("python3 -m pytest tests/test_?.py", "`?` unquoted"),
    ("python3 -m pytest tests/test_calc.py::test[1]", "`[` unquoted"),
    ("python3 -m pytest tests/{a,b}.py", "would expand braces"),
    ("python3 -m pytest ~/tests", "`~` at the start of a word"),
    ("python3 -m pytest #comment", "`#` at the start of a word"),
    ("python3 -m pytest 'tests", "does not parse"),
    # not a runner of this configuration: another interpreter or program
    ("python -m pytest", "does not start with an allowed test runner"),
    ("/usr/bin/python3 -m pytest", "does not start with an allowed test runner"),
    ("py.test", "does not start with an allowed test runner"),
    ("node --test", "does not start with an allowed test runner"),
    ("ruff check --fix .", "does not start with an allowed test runner"),
    # pytest: options that load code or configuration
    ("python3 -m pytest -p evil", "loads a plugin"),
    ("python3 -m pytest -pevil", "loads a plugin"),
    ("python3 -m pytest -p=evil", "loads a plugin"),
    ("python3 -m pytest -xpevil", "loads a plugin"),
    ("python3 -m pytest --plugins evil", "loads a plugin"),
    ("python3 -m pytest -c other.ini", "reads another configuration"),
    ("python3 -m pytest --config-file=other.ini", "reads another configuration"),
    ("python3 -m pytest --inifile other.ini", "reads another configuration"),
    ("python3 -m pytest -o addopts=-pevil", "overrides the configuration"),
    ("python3 -m pytest --override-ini=addopts=-pevil", "overrides the configuration"),
    ("python3 -m pytest --rootdir=/tmp", "changes the root"),
    ("python3 -m pytest --confcutdir=/", "changes which conftest.py files load"),
    ("python3 -m pytest --noconftest", "changes which conftest.py files load"),
    ("python3 -m pytest --import-mode=importlib", "changes how test modules are imported"),
    ("python3 -m pytest --pyargs os", "imports packages by name"),
    ("python3 -m pytest --basetemp=tmp", "empties the base temporary directory"),
    ("python3 -m pytest @args.txt", "would read more arguments from that file"),
    # pytest: anything else outside the allow-list, and bad values
    ("python3 -m pytest --cov=calc", "not a test-selection option. Allowed for `python3 -m pytest`: -x -q"),
    ("python3 -m pytest -- -p evil", "`--` is not a test-selection option"),
    ("python3 -m pytest --tb=evil", "the value must be --tb=STYLE"),
    ("python3 -m pytest -rZ", "`-rZ` is not a test-selection option"),
    ("python3 -m pytest --maxfail=one", "the value must be --maxfail=N"),
    ("python3 -m pytest -k", "`-k` needs a value"),
    ("python3 -m pytest -k -p evil", "`-k` needs a value"),
    # pytest: paths inside the repository
    ("python3 -m pytest ../other/tests", "outside the repository"),
    ("python3 -m pytest /etc/passwd", "outside the repository"),
    ("python3 -m pytest out/test_x.py::test_a", "outside the repository"),  # a symlink out
    ("python3 -m pytest .git/hooks", "inside .git/"),
    ("python3 -m pytest ::test_add", "starts with a file path"),
    # npm/jest/vitest
    ("npm test -t adds", "only after `--`"),
    ("npm test --prefix /tmp -- -t adds", "only after `--`"),
    ("npm test -- -t 'a;id'", "`npm` runs the script through a shell"),
    ("npm test -- -t '$(id)'", "`npm` runs the script through a shell"),
    ('npm test -- -t "it\'s"', "`npm` runs the script through a shell"),
    ("npm test -- --require ./evil.js", "`--require` is refused: it loads code"),
    ("npm test -- -r ./evil.js", "`-r` is refused: it loads code"),
    ("npx jest -r./evil.js", "`-r./evil.js` is refused: it loads code"),
    ("npx jest --loader ./evil.mjs", "`--loader` is refused: it loads code"),
    ("npx jest --import ./evil.mjs", "`--import` is refused: it loads code"),
    (
        "npx jest --experimental-loader=./evil.mjs",
        "`--experimental-loader=./evil.mjs` is refused: it loads code",
    ),
    ("npx jest --setupFiles ./evil.js", "`--setupFiles` is refused: it loads code"),
    ("npx jest --setupFilesAfterEnv ./evil.js", "`--setupFilesAfterEnv` is refused: it loads code"),
    ("npx jest --globalSetup ./evil.js", "`--globalSetup` is refused: it loads code"),
    ("npx jest --globalTeardown ./evil.js", "`--globalTeardown` is refused: it loads code"),
    ("npx jest --reporters ./evil.js", "`--reporters` is refused: it loads code"),
    ("vitest run --reporter ./evil.js", "`--reporter` is refused: it loads code"),
    ("npx jest --testRunner ./evil.js", "`--testRunner` is refused: it loads code"),
    ("npx jest --transform '{}'", "`--transform` is refused: it loads code"),
    ("npx jest --testEnvironment ./evil.js", "`--testEnvironment` is refused: it loads code"),
    ("vitest run --environment ./evil.js", "`--environment` is refused: it loads code"),
    ("npx jest --resolver ./evil.js", "`--resolver` is refused: it loads code"),
    ("npx jest --config ./evil.json", "`--config` is refused: it reads another configuration"),
    ("npx jest -c ./evil.json", "`-c` is refused: it reads another configuration"),
    ("npx jest --preset ./evil", "`--preset` is refused: it reads another configuration"),
    ("npx jest --rootDir /", "`--rootDir` is refused: it reads another configuration"),
    ("npx jest --roots /", "`--roots` is refused: it reads another configuration"),
    ("vitest run --dir /", "`--dir` is refused: it reads another configuration"),
    ("npm test -- --prefix /tmp", "`--prefix` is refused: it reads another configuration"),
    ("npm test -- --userconfig /tmp/npmrc", "`--userconfig` is refused: it reads another configuration"),
    ("npm test -- --globalconfig /tmp/npmrc", "`--globalconfig` is refused: it reads another configuration"),
    ("npm test -- --workspace ../x", "`--workspace` is refused: it reads another configuration"),
    ("npm test -- -w ../x", "`-w` is refused: it reads another configuration"),
    ("npx jest --watch", "`--watch` is not a test-selection option. Allowed for `npx jest`: -t NAME"),
    ("npx jest -t", "`-t` needs a value"),
    ("npm test -- ../other/calc.test.js", "outside the repository"),
    # go test
    ("go test -exec ./evil.sh ./...", "`-exec` is refused: it runs the test binary through another program"),
    ("go test -toolexec=./evil.sh ./...", "`-toolexec=./evil.sh` is refused: it runs the compiler tools"),
    ("go test -overlay overlay.json ./...", "`-overlay` is refused: it replaces source files"),
    ("go test -modfile ../go.mod ./...", "`-modfile` is refused: it reads another configuration"),
    ("go test -ldflags=-X ./...", "`-ldflags=-X` is refused: it passes flags to the linker"),
    ("go test -gcflags all=-N ./...", "`-gcflags` is refused: it passes flags to the compiler"),
    ("go test -asmflags x ./...", "`-asmflags` is refused: it passes flags to the assembler"),
    ("go test -C /tmp ./...", "`-C` is refused: it changes to another directory"),
    ("go test ./... -args -test.run X", "`-args` is refused: it passes the rest of the line"),
    ("go test --run TestAdd ./...", "`--run` is not a test-selection option. Allowed for `go test`: -run"),
    ("go test -count=many ./...", "the value must be -count=N"),
    ("go test -run", "`-run` needs a value"),
    ("go test example.com/other", "name packages by a relative path"),
    ("go test ../other/...", "outside the repository"),
    ("go test ./out/...", "outside the repository"),
    # cargo test
    ("cargo test --config build.rustc-wrapper=./evil.sh", "`--config` is refused: it overrides cargo's"),
    ("cargo test -Z unstable-options", "`-Z` is refused: it enables unstable cargo features"),
    ("cargo test -Zunstable-options", "`-Zunstable-options` is refused: it enables unstable cargo features"),
    (
        "cargo test --manifest-path ../x/Cargo.toml",
        "`--manifest-path` is refused: it builds another manifest",
    ),
    ("cargo test --target-dir /tmp/t", "`--target-dir` is refused: it writes the build elsewhere"),
    ("cargo test -- --logfile /tmp/log", "`--logfile` is refused: it writes a file"),
    ("cargo test -- -Z unstable-options", "`-Z` is refused: it enables unstable libtest options"),
    ("cargo test --features evil", "`--features` is not a test-selection option. Allowed for `cargo test`"),
    ("cargo test -- --format json", "Allowed after `--` for `cargo test`: --exact"),
    ("cargo test add mul", "cargo test takes one name filter"),
    ("cargo test ../x", "a test name filter is letters, digits"),
    ("cargo test -p ../x", "the value must be -p CRATE"),
]


@pytest.mark.parametrize(("command", "reason"), REFUSED)
def test_refused_with_the_reason(command: str, reason: str, root: Path) -> None:
    assert reason in refusal(command, root)


def test_a_command_of_no_runner_is_told_apart_from_a_refused_selection(root: Path) -> None:
    with pytest.raises(NotARunner):
        accepted("curl http://example.com", root)
    with pytest.raises(Refused) as caught:
        accepted("pytest -p evil", root)
    assert not isinstance(caught.value, NotARunner)


def test_the_description_names_each_runner_and_its_options() -> None:
    text = grammar_text(RUNNERS)
    assert "- `python3 -m pytest [PATHS] -x -q -v -s -l -k EXPR" in text
    assert "- `npm test -- [PATHS] -t NAME" in text
    assert "- `go test [./PKG/...] -run REGEX" in text
    assert "- `cargo test [NAME] -p CRATE" in text and "-- --exact --nocapture" in text
    assert "-p evil" not in text and "--rootdir" not in text


def test_the_run_tool_documents_the_grammar_only_when_a_runner_is_allowed(tmp_path: Path) -> None:
    def description(allowed: list[str], *, allow_shell: bool = False) -> str:
        toolbox = Toolbox(
            Sandbox(tmp_path), allowed_commands=allowed, allow_shell=allow_shell, command_timeout=5
        )
        [run] = [d for d in toolbox.definitions() if d["name"] == "run"]
        return str(run["description"])

    assert "- `go test [./PKG/...] -run REGEX" in description(["go test ./...", "ruff check ."])
    assert "Also allowed" not in description(["ruff check ."])
    assert "Also allowed" not in description(["go test ./..."], allow_shell=True)


# ---- through the real sandbox, via the Toolbox ---------------------------------------------------------------
def project(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    init(repo)
    commit(repo, {}, "init", Author("t", "t@example.com"))
    return repo


def box(repo: Path, allowed: str, *, home: Path, extra_env: dict[str, str] | None = None) -> Toolbox:
    sandbox = Sandbox(repo, timeout=300, home=home, extra_env=extra_env or {})
    return Toolbox(sandbox, allowed_commands=[allowed], allow_shell=False, command_timeout=300)


EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('the plugin ran')\n"


def test_pytest_runs_the_one_selected_test_and_refuses_a_plugin(tmp_path: Path, broken_repo: Path) -> None:
    python = sys.executable
    toolbox = box(
        broken_repo, f"{python} -m pytest -q -p no:cacheprovider tests/test_calc.py", home=tmp_path / "h"
    )
    text, error = toolbox.dispatch(
        "run", {"command": f"{python} -m pytest -q -p no:cacheprovider tests/test_calc.py::test_add"}
    )
    assert not error and "[exit code 1]" in text
    assert "1 failed" in text and "passed" not in text and "test_mul" not in text
    text, error = toolbox.dispatch(
        "run", {"command": f"{python} -m pytest -q -p no:cacheprovider -k test_mul"}
    )
    assert not error and "[exit code 0]" in text and "1 passed, 1 deselected" in text
    text, error = toolbox.dispatch("run", {"command": f"{python} -m pytest -p evil tests"})
    assert error and "`-p evil` is refused: it loads a plugin" in text
    assert [line for line, _ in toolbox.commands_run] == [
        f"{python} -m pytest -q -p no:cacheprovider tests/test_calc.py::test_add",
        f"{python} -m pytest -q -p no:cacheprovider -k test_mul",
    ]


def test_the_plugin_attack_is_real_and_refused(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = project(
        tmp_path,
        {
            "evil.py": EVIL.format(marker=str(marker)),
            "evil.ini": "[pytest]\naddopts = -p evil\n",
            "args.txt": "-c\nevil.ini\n",
            "tests/test_ok.py": "def test_ok():\n    assert True\n",
        },
    )
    python = sys.executable
    toolbox = box(repo, f"{python} -m pytest -q tests", home=tmp_path / "h")
    attacks = ("-p evil", "-pevil", "-xpevil", "-p=evil", "-o addopts=-pevil", "-c evil.ini", "@args.txt")
    for attack in attacks:
        text, error = toolbox.dispatch("run", {"command": f"{python} -m pytest {attack} tests"})
        assert error and "is refused" in text, text
    assert not marker.exists() and toolbox.commands_run == []
    # the same argv run without the grammar does import evil.py: the refusal is what stopped it
    for attack in (["-p", "evil"], ["-c", "evil.ini"], ["@args.txt"]):
        marker.unlink(missing_ok=True)
        toolbox.sandbox.run([python, "-m", "pytest", "-q", *attack, "tests"], timeout=120)
        assert marker.read_text() == "the plugin ran", attack


JS_RUNNER = """\
const args = process.argv.slice(2);
const at = args.indexOf("-t");
const only = at >= 0 ? args[at + 1] : null;
const add = (a, b) => a - b;
const tests = { "adds numbers": () => add(2, 3) === 5, "multiplies numbers": () => 2 * 3 === 6 };
let failed = 0;
for (const [name, test] of Object.entries(tests)) {
  if (only && !name.includes(only)) continue;
  const ok = test();
  console.log((ok ? "PASS " : "FAIL ") + name);
  if (!ok) failed += 1;
}
process.exit(failed ? 1 : 0);
"""


def test_npm_test_runs_the_one_selected_test_and_refuses_require(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed here")
    marker = tmp_path / "marker"
    repo = project(
        tmp_path,
        {
            "package.json": json.dumps(
                {"name": "calc", "version": "1.0.0", "scripts": {"test": "node run.js"}}
            ),
            "run.js": JS_RUNNER,
            "evil.js": f"require('fs').writeFileSync({str(marker)!r}, 'ran');\n",
        },
    )
    toolbox = box(repo, "npm test", home=tmp_path / "h")
    text, error = toolbox.dispatch("run", {"command": "npm test -- -t adds"})
    assert not error and "[exit code 1]" in text, text
    assert "FAIL adds numbers" in text and "multiplies" not in text
    text, error = toolbox.dispatch("run", {"command": "npm test -- -t multiplies"})
    assert not error and "[exit code 0]" in text and "PASS multiplies numbers" in text and "adds" not in text
    text, error = toolbox.dispatch("run", {"command": "npm test -- --require ./evil.js"})
    assert error and "`--require` is refused" in text
    text, error = toolbox.dispatch("run", {"command": "npm test --node-options=--require=./evil.js"})
    assert error and "only after `--`" in text
    assert not marker.exists()


GO_CALC = (
    "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Mul(a, b int) int { return a * b }\n"
)
GO_TEST = """\
package calc

import "testing"

func TestAdd(t *testing.T) {
\tif Add(2, 3) != 5 {
\t\tt.Fatal("Add(2, 3) != 5")
\t}
}

func TestMul(t *testing.T) {
\tif Mul(2, 3) != 6 {
\t\tt.Fatal("Mul(2, 3) != 6")
\t}
}
"""


def go_version() -> str:
    out = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout
    return ".".join(out.strip().removeprefix("go").split(".")[:2])


def test_go_test_runs_the_one_selected_test_and_refuses_toolexec(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed here")
    marker = tmp_path / "marker"
    repo = project(
        tmp_path,
        {
            "go.mod": f"module example.com/calc\n\ngo {go_version()}\n",
            "calc/calc.go": GO_CALC,
            "calc/calc_test.go": GO_TEST,
            "evil.sh": f'#!/bin/sh\necho ran > {marker}\nexec "$@"\n',
        },
    )
    (repo / "evil.sh").chmod(0o755)
    toolbox = box(
        repo, "go test ./...", home=tmp_path / "h", extra_env={"GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    )
    text, error = toolbox.dispatch("run", {"command": "go test ./calc -run 'TestAdd$' -v -count=1"})
    assert not error and "[exit code 1]" in text, text
    assert "--- FAIL: TestAdd" in text and "TestMul" not in text
    text, error = toolbox.dispatch("run", {"command": "go test ./... -run TestMul -v"})
    assert not error and "[exit code 0]" in text and "--- PASS: TestMul" in text and "TestAdd" not in text
    text, error = toolbox.dispatch("run", {"command": "go test -toolexec ./evil.sh ./..."})
    assert error and "`-toolexec` is refused" in text
    assert not marker.exists()


CARGO_LIB = """\
pub fn add(a: i32, b: i32) -> i32 { a - b }
pub fn mul(a: i32, b: i32) -> i32 { a * b }

#[cfg(test)]
mod tests {
    #[test]
    fn add() { assert_eq!(super::add(2, 3), 5); }
    #[test]
    fn mul() { assert_eq!(super::mul(2, 3), 6); }
}
"""


def rustup_home() -> str | None:
    if shutil.which("cargo") is None:
        return None
    if os.environ.get("RUSTUP_HOME"):
        return os.environ["RUSTUP_HOME"]
    if shutil.which("rustup") is None:
        return None  # a cargo of its own, not a rustup proxy: nothing to point at
    done = subprocess.run(["rustup", "show", "home"], capture_output=True, text=True)
    return done.stdout.strip() or None


def test_cargo_test_runs_the_one_selected_test_and_refuses_config(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed here")
    marker = tmp_path / "marker"
    repo = project(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": CARGO_LIB,
            "evil.sh": f'#!/bin/sh\necho ran > {marker}\nexec "$@"\n',
        },
    )
    (repo / "evil.sh").chmod(0o755)
    env = {"CARGO_HOME": str(tmp_path / "cargo"), "CARGO_NET_OFFLINE": "true"}
    if home := rustup_home():  # the sandbox's HOME is new: the toolchains stay where rustup keeps them
        env["RUSTUP_HOME"] = home
    toolbox = box(repo, "cargo test", home=tmp_path / "h", extra_env=env)
    text, error = toolbox.dispatch("run", {"command": "cargo test tests::add -- --exact"})
    assert not error and "[exit code 101]" in text, text
    assert "test tests::add ... FAILED" in text and "1 filtered out" in text and "tests::mul" not in text
    text, error = toolbox.dispatch("run", {"command": "cargo test mul -- --exact tests::mul"})
    assert not error and "[exit code 0]" in text and "test tests::mul ... ok" in text
    text, error = toolbox.dispatch("run", {"command": "cargo test --config build.rustc-wrapper=./evil.sh"})
    assert error and "`--config` is refused" in text
    assert not marker.exists()
