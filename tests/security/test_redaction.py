"""Class 7: no neighbouring character, no encoding and no shape gets a secret past redaction.

End to end: a failing test prints the run's own tokens (the GitHub token, a `ci-token` and an
Anthropic key of arbitrary shape) and token-shaped strings right after word characters, escaped
newlines (`\\n`, `%0A`), with suffixes, base64-encoded (the git auth header and an `env | base64`
blob at every alignment) and URL-encoded. The propose flow runs as the runner runs it, with a
scripted model; none of it may reach the PR, the job summary, the outputs, stdout/stderr or the
model's requests."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import quote, quote_plus

from tests.security.workflow_commands_helpers import REPO, propose, seed
from tests.testing.calc_scenario import EDITOR, messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use

CI_TOKEN = "Tr0ub4dor&3:horse/battery+staple"  # a token of no known shape, given as `ci-token`
API_KEY = "pass+word/with=odd&chars-42"  # the Anthropic key, of no known shape either
# token-shaped strings that are not ours: the patterns must catch them whatever is next to them
FOREIGN = {
    "ghp": "ghp_" + "Pq7" * 12,
    "ghs": "ghs_" + "Zx9" * 12,
    "pat": "github_pat_" + "11ABCDEFG0" + "Yw8" * 20,
    "ant": "sk-ant-api03-" + "Rt6" * 14,
}


def _forms(secret: str) -> list[str]:
    """How a test can print a secret so that a boundary-based or literal-only redactor misses it."""
    header = base64.b64encode(f"x-access-token:{secret}".encode()).decode()
    blobs = [
        base64.b64encode(f"{'#' * pad}PATH=/usr/bin\nINPUT_TOKEN={secret}\nHOME=/root\n".encode()).decode()
        for pad in range(3)
    ]
    return [
        f"user:\\n{secret}",
        f"a%0A{secret}",
        f"token={secret}_old",
        f"x{secret}y",
        f"AUTHORIZATION: basic {header}",
        header,
        *blobs,
        quote(secret, safe=""),
        quote_plus(secret),
    ]


def _test_source(secrets: list[str]) -> str:
    lines = [form for secret in secrets for form in _forms(secret)]
    lines += [f"user:\\n{FOREIGN['ghp']}", f"a%0A{FOREIGN['ghp']}", f"token={FOREIGN['ghs']}_old"]
    lines += [f"x{FOREIGN['pat']}", f"abc{FOREIGN['ant']}", f"%0A{FOREIGN['ant']}_old"]
    message = f"user:\\n{secrets[0]} a%0A{FOREIGN['ghp']} token={secrets[1]}_old"
    return (
        "from calc import add\n\n\n"
        "def test_add():\n"
        f"    print({chr(10).join(lines)!r})\n"
        f"    assert add(2, 3) == 5, {message!r}\n"
    )


def _decoded_runs(text: str) -> list[str]:
    """Every base64-looking run in `text`, decoded at each of the four alignments."""
    out = []
    for run in re.findall(r"[A-Za-z0-9+/]{12,}={0,2}", text):
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            try:
                out.append(base64.b64decode(chunk).decode("utf-8", "replace"))
            except ValueError:
                continue
    return out


def assert_no_secret(where: str, text: str, secrets: list[str]) -> None:
    for secret in secrets:
        for shown in (secret, quote(secret, safe=""), quote_plus(secret)):
            assert shown not in text, f"{where} shows {shown!r}"
        assert not [d for d in _decoded_runs(text) if secret in d], f"{where} shows {secret!r} in base64"
    for name, token in FOREIGN.items():
        body = token.split("_")[-1] if name != "ant" else token.removeprefix("sk-ant-api03-")
        assert body not in text, f"{where} shows the {name} token"


def test_no_form_of_a_secret_reaches_the_pr_the_summary_the_log_or_the_model(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    emu.add_token(CI_TOKEN, "release-bot")
    secrets = [emu.token, CI_TOKEN, API_KEY]
    broken = seed(emu, tmp_path, _test_source(secrets))
    turns = [
        reply(
            tool_use(
                EDITOR,
                {"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"},
            )
        ),
        reply(
            tool_use(
                "finish",
                {
                    "summary": f"Fixed add. The log showed a%0A{FOREIGN['ghp']} and x{CI_TOKEN}.",
                    "root_cause": f"calc.py:3; token={emu.token}_old",
                    "confidence": "high",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]
    with messages_process(turns, tmp_path) as (url, record):
        result = propose(emu, tmp_path, broken, url, {"anthropic-api-key": API_KEY, "ci-token": CI_TOKEN})
    assert result.outputs["status"] == "proposed", result.log
    [pull] = emu.pulls(REPO)
    assert "[REDACTED]" in pull.body  # the excerpt was there, masked

    sent = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(sent) == 2
    assert "Captured stdout" in json.dumps(sent[0]["body"])  # the model saw the excerpt, masked
    for i, request in enumerate(sent):
        assert_no_secret(f"model request {i}", json.dumps(request["body"]), secrets)
    assert_no_secret("the PR body", pull.body, secrets)
    assert_no_secret("the PR title", pull.title, secrets)
    assert_no_secret("the job summary", result.summary, secrets)
    assert_no_secret("the outputs", json.dumps(result.outputs), secrets)
    # stdout starts with our own ::add-mask:: lines: everything after them is checked
    masks = [line for line in result.stdout.splitlines() if line.startswith("::add-mask::")]
    shown = "\n".join(line for line in result.stdout.splitlines() if not line.startswith("::add-mask::"))
    assert masks, result.stdout
    assert_no_secret("stdout", shown, secrets)
    assert_no_secret("stderr", result.stderr, secrets)
