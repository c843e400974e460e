from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_autofix.fixers import FixerSpec, plan_fixers, run_fixers
from ci_autofix.sandbox import Sandbox
from ci_autofix.triage.model import Category, Diagnosis
from tests.testing.fixer_projects import BIN, Project, own_version

PYPROJECT = '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n\n[tool.black]\n\n[tool.isort]\nprofile = "black"\n'
MESSY = 'import sys\nimport os\ndef main(argv = None):\n    return {  "os":os, "sys" :sys, "argv": argv }\n'
TIDY = 'import os\nimport sys\n\n\ndef main(argv=None):\n    return {"os": os, "sys": sys, "argv": argv}\n'


def _spec(name: str, package: str, args: tuple[str, ...], scope: tuple[str, ...]) -> FixerSpec:
    return FixerSpec(name, package, args, scope, None, None, "test")


def test_ruff_format_fixes_exactly_what_the_check_reported(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write("src/demo/core.py", 'def f(a,):\n    return {  "a":a }\n')
    project.write("src/demo/ok.py", "X = 1\n")
    project.commit()
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )

    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)

    assert (run.name, run.version, run.exit_code, run.skipped_reason) == (
        "ruff-format",
        own_version("ruff"),
        0,
        None,
    )
    assert run.argv == [str(BIN / "ruff"), "format", "--no-cache", "."]
    assert run.changed_files == ["src/demo/core.py"]
    assert [line for line in project.diff().splitlines() if not line.startswith("index ")] == [
        "diff --git a/src/demo/core.py b/src/demo/core.py",
        "--- a/src/demo/core.py",
        "+++ b/src/demo/core.py",
        "@@ -1,2 +1,4 @@",
        "-def f(a,):",
        '-    return {  "a":a }',
        "+def f(",
        "+    a,",
        "+):",
        '+    return {"a": a}',
    ]
    assert project.git("status", "--porcelain") == " M src/demo/core.py\n"  # no cache or stray file left
    assert not (tmp_path / "tools").exists() or not any((tmp_path / "tools").iterdir())  # nothing installed


def test_isort_then_black_whatever_order_they_were_asked_in(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write("app/main.py", MESSY)
    project.commit()
    diagnosis = project.diagnose("isort --check-only --diff .")
    plan = plan_fixers(project.root, diagnosis, ["black", "isort"], diagnosis.log_commands)
    runs = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert [(r.name, r.changed_files) for r in runs] == [
        ("isort", ["app/main.py"]),
        ("black", ["app/main.py"]),
    ]
    assert project.read("app/main.py") == TIDY
    for argv in (["isort", "--check-only", "."], ["black", "--check", "."]):  # both checks pass now
        assert (
            subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=project.root, capture_output=True).returncode
            == 0
        )


def test_ruff_check_fix_removes_what_it_can(project: Project, tmp_path: Path) -> None:
    project.write("ruff.toml", '[lint]\nselect = ["F", "I"]\n')
    project.write("tool.py", "import sys\nimport os\n\nprint(sys.argv)\n")
    project.commit()
    plan = plan_fixers(
        project.root,
        project.diagnose("ruff check --output-format=concise ."),
        ["auto"],
        ["ruff check --output-format=concise ."],
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert run.argv[1:] == ["check", "--fix", "--no-cache", "."]
    assert run.changed_files == ["tool.py"]
    assert project.read("tool.py") == "import sys\n\nprint(sys.argv)\n"


def test_nothing_to_fix_is_no_change(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write("app.py", TIDY)
    project.commit()
    plan = plan_fixers(
        project.root,
        project.diagnose("python -c 'raise SystemExit(3)'"),
        ["ruff-format", "black"],
        ["python -c 'raise SystemExit(3)'"],
    )
    runs = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert [(r.name, r.exit_code, r.changed_files) for r in runs] == [
        ("black", 0, []),
        ("ruff-format", 0, []),
    ]
    assert project.diff() == ""


def test_the_command_paths_limit_the_fix(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write("src/a.py", "x=1\n")
    project.write("other/b.py", "y=2\n")
    project.commit()
    plan = plan_fixers(project.root, project.diagnose("black --check src"), ["auto"], ["black --check src"])
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert (run.argv[1:], run.changed_files, run.restored) == (["src"], ["src/a.py"], [])
    assert project.read("other/b.py") == "y=2\n"


def test_changes_outside_the_scope_are_undone_and_recorded(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write("src/a.py", "x=1\n")
    project.write("other/b.py", "y=2\n")
    project.write("other/new_untracked.py", "z=3\n")
    project.commit()
    project.write("other/new_untracked.py", "z   =   3\n")  # dirty before the fixer runs: kept as it was
    project.write("notes.txt", "uncommitted notes\n")
    spec = _spec("black", "black", (".",), ("src",))  # a fixer that reaches further than its scope
    [run] = run_fixers(Sandbox(project.root), [spec], tools_dir=tmp_path / "tools", timeout=60)
    assert run.changed_files == ["src/a.py"]
    assert run.restored == ["other/b.py", "other/new_untracked.py"]
    assert project.read("other/b.py") == "y=2\n"
    assert project.read("other/new_untracked.py") == "z   =   3\n"
    assert project.read("src/a.py") == "x = 1\n"
    assert project.read("notes.txt") == "uncommitted notes\n"


def test_protected_paths_are_never_changed(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    project.write(".github/workflows/render.py", "steps=[ 'lint','test' ]\n")
    project.write(".gitlab/ci/generate.py", "jobs=[ 'deploy' ]\n")  # a GitLab child pipeline's generator
    project.write("ci/conf.py", "a=1\n")
    project.write("app.py", "b=2\n")
    project.commit()
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check"), ["auto"], ["ruff format --check"]
    )
    sandbox = Sandbox(project.root, protected=("ci/**",))
    [run] = run_fixers(sandbox, plan, tools_dir=tmp_path / "tools", timeout=60)
    assert run.changed_files == ["app.py"]
    assert run.restored == [".github/workflows/render.py", ".gitlab/ci/generate.py", "ci/conf.py"]
    assert project.git("status", "--porcelain") == " M app.py\n"


def test_output_tail_is_redacted(project: Project, tmp_path: Path) -> None:
    secret = "ghp_" + "a1B2" * 9
    project.write("pyproject.toml", PYPROJECT)
    project.write(f"{secret}.py", "x = (\n")  # a syntax error: the formatter names the file in its output
    project.commit()
    [run] = run_fixers(
        Sandbox(project.root),
        [_spec("ruff-format", "ruff", (".",), (".",))],
        tools_dir=tmp_path / "tools",
        timeout=60,
    )
    assert run.exit_code == 2
    assert "[REDACTED]" in run.output_tail
    assert secret not in run.output_tail


def test_pre_commit_hook_arguments_carry_over(project: Project, tmp_path: Path) -> None:
    project.write(
        ".pre-commit-config.yaml",
        """\
repos:
  - repo: local
    hooks:
      - id: isort
        name: isort
        entry: isort
        language: system
        types: [python]
        args: ["--profile", "black", "--line-length", "40"]
""",
    )
    project.write(
        "app.py",
        "from os.path import join, dirname, basename, exists\n\nprint(join, dirname, basename, exists)\n",
    )
    project.commit()
    excerpt = (
        "isort....................................................................Failed\n- hook id: isort\n"
    )
    diagnosis = Diagnosis([], ["pre-commit run --all-files"], Category.UNKNOWN, excerpt, 0, 6000)
    plan = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert run.argv[1:] == ["--profile", "black", "--line-length", "40", "."]
    assert project.read("app.py").startswith(
        "from os.path import (\n    basename,\n    dirname,\n    exists,\n    join,\n)\n"
    )


def test_a_fixer_that_times_out_leaves_nothing_behind(project: Project, tmp_path: Path) -> None:
    project.write("pyproject.toml", PYPROJECT)
    # far more than black formats in the time allowed (it writes each file only once formatted)
    project.write("big.py", "".join(f"value_{i}=[ {i},{i}+1 ]\n" for i in range(200_000)))
    project.commit()
    [run] = run_fixers(
        Sandbox(project.root),
        [_spec("black", "black", (".",), (".",))],
        tools_dir=tmp_path / "tools",
        timeout=0.2,
    )
    assert (run.argv[1:], run.exit_code) == (["."], None)
    assert run.skipped_reason == "black timed out after 0s and was killed; its changes were undone"
    assert run.changed_files == []
    assert project.git("status", "--porcelain") == ""


def test_tools_dir_inside_the_repository_is_refused(project: Project) -> None:
    project.commit()
    with pytest.raises(ValueError, match="inside the repository"):
        run_fixers(Sandbox(project.root), [], tools_dir=project.root / ".tools", timeout=60)


# ---- Go and Rust: the toolchain's own formatter, from the PATH (in the ladder: the runtime it provisioned)
GO_MESSY = 'package main\n\nimport "fmt"\n\nfunc main() {\n  fmt.Println( "hi" )\n}\n'
GO_TIDY = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n'


@pytest.mark.skipif(shutil.which("gofmt") is None, reason="gofmt is not installed")
def test_gofmt_writes_what_gofmt_l_reported_in_the_commands_paths(project: Project, tmp_path: Path) -> None:
    project.write("go.mod", "module example.com/x\n\ngo 1.19\n")
    project.write("cmd/main.go", GO_MESSY)
    project.write("other/main.go", GO_MESSY)  # not in the failing command's paths: left as it is
    project.commit()
    command = 'test -z "$(gofmt -l cmd)"'
    plan = plan_fixers(
        project.root, Diagnosis([], [command], Category.UNKNOWN, "", 0, 6000), ["auto"], [command]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert (run.argv, run.changed_files, run.skipped_reason) == (
        ["gofmt", "-w", "cmd"],
        ["cmd/main.go"],
        None,
    )
    assert project.read("cmd/main.go") == GO_TIDY and project.read("other/main.go") == GO_MESSY


GO_IMPORTS_MESSY = (
    'package main\n\nimport (\n\t"example.com/x/util"\n\t"os"\n\t"strings"\n)\n\n'
    'func main() {\n\tfmt.Println(strings.ToUpper("hi"), util.X)\n}\n'
)
GO_IMPORTS_TIDY = (
    'package main\n\nimport (\n\t"fmt"\n\t"strings"\n\n\t"example.com/x/util"\n)\n\n'
    'func main() {\n\tfmt.Println(strings.ToUpper("hi"), util.X)\n}\n'
)


@pytest.mark.skipif(shutil.which("goimports") is None, reason="goimports is not installed")
def test_goimports_fixes_the_imports_goimports_l_reported_with_the_steps_local_prefix(
    project: Project, tmp_path: Path
) -> None:
    """Debian's golang-golang-x-tools: an unused import removed, a missing one added, the module's
    own imports grouped last as the step's `-local` asks; gofmt alone passes on this file."""
    project.write("go.mod", "module example.com/x\n\ngo 1.19\n")
    project.write("util/util.go", "package util\n\nconst X = 1\n")
    project.write("main.go", GO_IMPORTS_MESSY)
    project.commit()
    assert Sandbox(project.root).run(["gofmt", "-l", "."]).output.strip() == ""
    command = 'test -z "$(goimports -l -local example.com .)"'
    plan = plan_fixers(
        project.root, Diagnosis([], [command], Category.UNKNOWN, "", 0, 6000), ["auto"], [command]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=60)
    assert (run.argv, run.changed_files, run.skipped_reason) == (
        ["goimports", "-w", "-local", "example.com", "."],
        ["main.go"],
        None,
    )
    assert project.read("main.go") == GO_IMPORTS_TIDY
    assert Sandbox(project.root).run(["goimports", "-l", "-local", "example.com", "."]).output.strip() == ""


def test_goimports_missing_is_skipped_saying_ci_autofix_does_not_install_it(
    project: Project, tmp_path: Path
) -> None:
    project.write("go.mod", "module example.com/x\n")
    project.write("main.go", GO_IMPORTS_MESSY)
    project.commit()
    sandbox = Sandbox(project.root, extra_env={"PATH": str(tmp_path)})  # no goimports there
    [run] = run_fixers(
        sandbox, [_spec("goimports", "goimports", (".",), (".",))], tools_dir=tmp_path / "t", timeout=60
    )
    assert run.skipped_reason is not None
    assert "not part of the Go distribution, and ci-autofix does not install it" in run.skipped_reason
    assert project.git("status", "--porcelain") == ""


RUST_BIN = Path.home() / ".rustup" / "toolchains" / "stable-x86_64-unknown-linux-gnu" / "bin"


@pytest.mark.skipif(not (RUST_BIN / "cargo").is_file(), reason="no stable Rust toolchain installed by rustup")
def test_cargo_fmt_formats_the_crate_cargo_fmt_check_failed_on(project: Project, tmp_path: Path) -> None:
    project.write("Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n')
    project.write("src/main.rs", 'fn main() {\n  println!( "hi" );\n}\n')
    project.commit()
    command = "cargo fmt --all -- --check"
    plan = plan_fixers(
        project.root, Diagnosis([], [command], Category.UNKNOWN, "", 0, 6000), ["auto"], [command]
    )
    # the toolchain's own bin first, as the ladder puts a provisioned one (rustup's proxies need ~/.rustup)
    sandbox = Sandbox(project.root, extra_env={"PATH": f"{RUST_BIN}:{os.environ['PATH']}"})
    [run] = run_fixers(sandbox, plan, tools_dir=tmp_path / "tools", timeout=120)
    assert run.exit_code == 0, run.output_tail
    assert (run.argv, run.changed_files, run.skipped_reason) == (
        ["cargo", "fmt", "--all"],
        ["src/main.rs"],
        None,
    )
    assert project.read("src/main.rs") == 'fn main() {\n    println!("hi");\n}\n'
    assert sandbox.run(["cargo", "fmt", "--check"]).ok


def test_a_missing_runtime_or_node_modules_skips_the_fixer_with_the_reason(
    project: Project, tmp_path: Path
) -> None:
    """prettier comes from the repository's node_modules only (never a global one); gofmt from the PATH."""
    project.write("package.json", '{"devDependencies": {"prettier": "3.3.3"}}')
    project.write("a.js", "x  = 1\n")
    project.commit()
    plan = [_spec("prettier", "prettier", (".",), (".",)), _spec("gofmt", "gofmt", (".",), (".",))]
    sandbox = Sandbox(project.root, extra_env={"PATH": str(tmp_path)})  # no gofmt there
    prettier, gofmt = run_fixers(sandbox, plan, tools_dir=tmp_path / "tools", timeout=60)
    assert (
        prettier.skipped_reason is not None
        and "`node_modules/.bin/prettier` is not in the checkout" in prettier.skipped_reason
    )
    assert gofmt.skipped_reason is not None and "`gofmt` is not installed here" in gofmt.skipped_reason
    assert project.git("status", "--porcelain") == ""
