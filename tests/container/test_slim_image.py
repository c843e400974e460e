"""What the Dockerfile strips to keep the image small is not needed by the action (issue 6: ≤ 250 MB),
and the image stays a normal Debian system: apt installs packages with no repair line (issue 16).

- git is installed without perl, liberror-perl and git-man: every git command the action runs works
  in the image, fetch and push over smart HTTP to the GitHub emulator included;
- third-party packages are bytecode only (no .py): they import, and anyio still finds its own source;
- cryptography is gone (PyGithub wants it only for GitHub App JWTs): PyGithub still makes a
  token-authenticated request.

Each test runs the image with podman and talks to fakes on 127.0.0.1 (host networking); values such
as tokens travel in the environment, never in argv. Skipped unless CI_AUTOFIX_IMAGE names an image."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

from tests.testing.emulator import GitHubEmulator
from tests.testing.git import Author, init_repo

REPO = "acme/slim"

# Every git subcommand ci_autofix runs (src/ci_autofix: git.py, sandbox, ladder, apply, ...), each
# printing a `name=value` line the test checks. `set -e`: any failing command fails the script.
GIT_SCRIPT = r"""
set -eu
export HOME=/tmp/home GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git config --global user.name slim && git config --global user.email slim@example.com
git init -q -b main /tmp/w && cd /tmp/w
git config remote.origin.url "$REMOTE_URL"
git config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'
git fetch -q origin
echo "fetched=$(git rev-parse origin/main)"
git checkout -q -B main origin/main
echo "symbolic=$(git symbolic-ref HEAD)"
echo "tracked=$(git ls-files | tr '\n' ' ')"
printf 'one\ntwo\n' > notes.txt
git diff --quiet && echo "diff-before=clean"
git add notes.txt
echo "status=$(git status --porcelain | tr '\n' ' ')"
git commit -q -m "Add notes"
printf 'one\nTWO\n' > notes.txt
git diff > /tmp/change.patch
git checkout -q -- notes.txt
echo "checkout-restored=$(sed -n 2p notes.txt)"
git apply --check /tmp/change.patch && git apply /tmp/change.patch
echo "applied=$(sed -n 2p notes.txt)"
git read-tree HEAD
git add notes.txt
tree=$(git write-tree)
fix=$(git commit-tree -p HEAD -m "Upper-case two" "$tree")
echo "fix=$fix"
echo "fix-type=$(git cat-file -t "$fix")"
echo "fix-tree-matches=$(test "$(git cat-file -p "$fix^{tree}" | wc -l)" -ge 1 && echo yes)"
git branch -q side "$fix"
echo "count=$(git rev-list --count side)"
echo "subject=$(git log -1 --format=%s side)"
git worktree add -q /tmp/wt side
echo "worktree-file=$(sed -n 2p /tmp/wt/notes.txt)"
git worktree remove /tmp/wt
touch untracked.tmp
git clean -fdq
echo "cleaned=$(test -e untracked.tmp && echo no || echo yes)"
git push -q origin side:refs/heads/slim
git fetch -q origin
echo "pushed=$(git rev-parse origin/slim)"
dpkg-query -W -f '${db:Status-Abbrev}' perl 2>/dev/null | grep -q '^ii' && echo "perl=installed" || echo "perl=absent"
"""


def _podman_run(image: str, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`sh -c script` in `image` on host networking; `env` passed by name (values stay out of argv)."""
    argv = ["podman", "run", "--rm", "--network", "host", "--entrypoint", "sh"]
    for name in env:
        argv += ["--env", name]
    argv += [image, "-c", script]
    return subprocess.run(
        argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=180, check=False
    )


def _values(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


def _seed(emu: GitHubEmulator, tmp_path: Path) -> str:
    source = tmp_path / "source"
    init_repo(source, {"README.md": "slim\n"}, message="Start", author=Author("a", "a@example.com"))
    emu.create_repo(REPO, source=source)
    head = emu.branch_sha(REPO, "main")
    assert head is not None
    return head


def test_git_without_perl_runs_every_command_the_action_uses(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator
) -> None:
    emu = github_emulator
    main = _seed(emu, tmp_path)
    basic = base64.b64encode(f"x-access-token:{emu.token}".encode()).decode()
    env = {
        "REMOTE_URL": emu.clone_url(REPO),
        # the credential as the action passes it: an extra header from the environment
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
    }

    proc = _podman_run(image, GIT_SCRIPT, env)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = _values(proc.stdout)
    assert got["perl"] == "absent", proc.stdout  # the measure under test is in effect
    assert got["fetched"] == main
    assert got["symbolic"] == "refs/heads/main"
    assert got["tracked"].split() == ["README.md"]
    assert got["diff-before"] == "clean"
    assert got["status"].split() == ["A", "notes.txt"]
    assert got["checkout-restored"] == "two"
    assert got["applied"] == "TWO"
    assert got["fix-type"] == "commit"
    assert got["fix-tree-matches"] == "yes"
    assert got["count"] == "3"  # Start, Add notes, Upper-case two
    assert got["subject"] == "Upper-case two"
    assert got["worktree-file"] == "TWO"
    assert got["cleaned"] == "yes"
    # pushed over smart HTTP: the emulator's bare repository holds the commit made in the image
    assert got["pushed"] == got["fix"] == emu.branch_sha(REPO, "slim")
    assert emu.token not in proc.stdout + proc.stderr


BYTECODE_SCRIPT = r"""
import importlib.util, pathlib, sys, sysconfig
site = pathlib.Path(sysconfig.get_path("purelib"))
print("third-party-py=%d" % sum(1 for p in site.rglob("*.py") if p.parts[len(site.parts)] not in ("ci_autofix", "anyio")))
print("ci_autofix-py=%d" % sum(1 for _ in (site / "ci_autofix").rglob("*.py")))
import anthropic, github, pydantic, pydantic_settings, unidiff, httpx2, jiter
print("anthropic-origin=" + pathlib.Path(anthropic.__spec__.origin).name)
print("anthropic-client=" + anthropic.Anthropic.__name__)
import anyio
print("anyio-lazy=" + str("__getattr__" in vars(anyio)))
print("anyio-attr=" + anyio.create_task_group.__name__)
import ci_autofix.cli
print("ours-origin=" + pathlib.Path(ci_autofix.cli.__spec__.origin).name)
"""


def test_third_party_packages_import_from_bytecode_alone(image: str) -> None:
    proc = _podman_run(image, f"python - <<'EOF'\n{BYTECODE_SCRIPT}\nEOF", {})

    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = _values(proc.stdout)
    assert got["third-party-py"] == "0"
    assert int(got["ci_autofix-py"]) > 10  # our own sources stay: tracebacks show our lines
    assert got["anthropic-origin"] == "__init__.pyc"
    assert got["anthropic-client"] == "Anthropic"
    assert got["anyio-lazy"] == "True"  # its lazy importer read its kept source
    assert got["anyio-attr"] == "create_task_group"
    assert got["ours-origin"] == "__init__.py"  # ci_autofix.cli is a package


TOKEN_SCRIPT = r"""
import importlib.util, os
print("cryptography=" + ("present" if importlib.util.find_spec("cryptography") else "absent"))
import github
gh = github.Github(auth=github.Auth.Token(os.environ["GH_TOKEN"]), base_url=os.environ["GITHUB_API_URL"])
repo = gh.get_repo(os.environ["GITHUB_REPOSITORY"])
print("repo=" + repo.full_name)
print("default-branch=" + repo.default_branch)
"""


def test_pygithub_makes_token_requests_without_cryptography(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator
) -> None:
    emu = github_emulator
    _seed(emu, tmp_path)
    env = {"GH_TOKEN": emu.token, "GITHUB_API_URL": emu.api_url, "GITHUB_REPOSITORY": REPO}

    proc = _podman_run(image, f"python - <<'EOF'\n{TOKEN_SCRIPT}\nEOF", env)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = _values(proc.stdout)
    assert got["cryptography"] == "absent"
    assert got["repo"] == REPO
    assert got["default-branch"] == "main"
    # the emulator answered an authenticated request (it refuses unknown tokens with 401)
    assert any(r.path.endswith(f"/repos/{REPO}") and r.status == 200 for r in emu.api_requests("GET"))


APT_SCRIPT = r"""
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get check >/dev/null && echo "check-before=ok"
dpkg-query -W -f '${db:Status-Abbrev}' perl 2>/dev/null | grep -q '^ii' && echo "perl=installed" || echo "perl=absent"
apt-get update -qq
apt-get install -y -qq --no-install-recommends jq >/dev/null
echo "jq=$(jq -n '1 + 1')"
apt-get check >/dev/null && echo "check-after=ok"
"""


def test_apt_installs_a_package_with_no_repair_line(image: str) -> None:
    """What a `setup-command` does: `apt-get install -y PKG` in the image, with nothing first (issue 16:
    the perl purge once left git's dependencies unmet, and this needed `--fix-broken`). Needs a
    Debian mirror reachable from the container, as on GitHub's runners."""
    proc = _podman_run(image, APT_SCRIPT, {})

    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = _values(proc.stdout)
    assert got == {"check-before": "ok", "perl": "absent", "jq": "2", "check-after": "ok"}, proc.stdout
