"""Every secret format the issue lists is masked by `redact` and named by `find_secrets`."""

from __future__ import annotations

import pytest

from ci_autofix.redact import MASK, find_secrets, redact

# Built by concatenation so that no scanner mistakes this file for a leak.
GH = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CASES = [
    ("github-token", f"token ghp_{GH} used", f"ghp_{GH}"),
    ("github-token", f"gho_{GH}", f"gho_{GH}"),
    ("github-token", f"ghu_{GH}", f"ghu_{GH}"),
    ("github-token", f"ghs_{GH}", f"ghs_{GH}"),
    ("github-token", f"ghr_{GH}", f"ghr_{GH}"),
    ("github-pat", "github_pat_" + "11ABCDEFG0" * 3 + "_" + "x1Y2z3" * 10, "github_pat_11ABCDEFG0"),
    ("anthropic-key", "key sk-ant-api03-" + "Zz9_" * 10 + " end", "sk-ant-api03-Zz9_"),
    ("openai-key", "OPENAI sk-proj-" + "Ab1" * 12, "sk-proj-Ab1"),
    ("aws-access-key", "id AKIA" + "IOSFODNN7EXAMPLE" + " ok", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_" + "a1B2" * 9, "npm_a1B2"),
    ("slack-token", "xoxb-" + "123456789012-abcdefABCDEF", "xoxb-123456789012"),
    ("authorization-header", "curl -H 'Authorization: token s3cr3tvalue' https://api", "s3cr3tvalue"),
    ("authorization-header", "> authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("bearer-token", "sending Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx", "eyJhbGciOiJIUzI1NiJ9"),
    ("url-credentials", "git clone https://x-access-token:v1.abcdef@github.com/o/r.git", "v1.abcdef"),
    ("url-credentials", "pip index https://user:hunter22@pypi.example.org/simple", "hunter22"),
    ("secret-assignment", "export NPM_TOKEN=abcd1234efgh", "abcd1234efgh"),
    ("secret-assignment", "  DATABASE_PASSWORD: correct-horse-battery", "correct-horse-battery"),
    ("secret-assignment", 'MY_API_KEY="k-42-zzzz"', "k-42-zzzz"),
    ("secret-assignment", "CLIENT_SECRET=topsecretvalue", "topsecretvalue"),
    ("secret-flag", "mysql --password=hunter22 -h db", "hunter22"),
    ("secret-flag", "GET /hook?token=abcdef123&x=1", "abcdef123"),
]


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_format_is_masked_and_named(name: str, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert MASK in out
    assert name in find_secrets(text)
    assert redact(out) == out  # idempotent: a mask is never masked again


def test_private_key_block_spanning_lines() -> None:
    body = "MIIEpAIBAAKCAQEA7x\nq9Zk3b2Lw0aXy\n"
    text = f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nafter"
    out = redact(text)
    assert "MIIEpAIBAAKCAQEA7x" not in out and "q9Zk3b2Lw0aXy" not in out
    assert out.startswith("before\n") and out.endswith("\nafter")
    assert find_secrets(text) == ["private-key"]


def test_a_private_key_cut_off_is_masked_to_the_end() -> None:
    out = redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU")
    assert "b3BlbnNzaC1rZXktdjE" not in out


def test_names_and_context_are_kept() -> None:
    assert redact("GITHUB_TOKEN=abcdefgh1234 rest") == f"GITHUB_TOKEN={MASK} rest"
    assert redact("Authorization: Bearer abcdefgh12345678") == f"Authorization: {MASK}"
    assert redact("https://u:p4ssw0rd@host.example/x") == f"https://{MASK}@host.example/x"


def test_known_values_are_masked_wherever_they_appear() -> None:
    assert redact("value=plainvalue and plainvalue", extra_secrets=["plainvalue", "ab"]) == (
        f"value={MASK} and {MASK}"
    )


@pytest.mark.parametrize(
    "text",
    [
        "token: ***",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        'TOKEN = os.environ["GITHUB_TOKEN"]',
        "API_KEY=$API_KEY",
        "password = settings.password",
        "See https://github.com/octo/repo for more",
        "git@github.com:octo/repo.git",
        "the keyboard and the monkey",
        "sk-short",
    ],
)
def test_harmless_text_is_untouched(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


# Each pattern runs only where its hints occur (a long log skips most patterns): these spellings
# hold a hint only through case, an unusual keyword or a letter `re.IGNORECASE` equates with ASCII.
HINTED = [
    ("authorization-header", "PROXY-AUTHORIZATION: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("authorization-header", "Authorızation: token s3cr3tvalue", "s3cr3tvalue"),  # dotless ı
    ("authorization-header", "AUTHORİZATION: hunter2secretvalue", "hunter2secretvalue"),  # dotted İ
    ("secret-flag", "tool --apİkey=abcdefgh12345", "abcdefgh12345"),
    ("aws-secret-key", "AWS_ſECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("secret-assignment", "ACCESS_KEY=abcd1234efgh", "abcd1234efgh"),
    ("secret-assignment", "PRIVATE_KEY=abcd1234efgh", "abcd1234efgh"),
    ("secret-assignment", "APIKEY=abcd1234efgh", "abcd1234efgh"),
    ("secret-assignment", "DB_PASSWD=abcd1234efgh", "abcd1234efgh"),
    ("secret-flag", "tool --API-KEY=abcd1234efgh", "abcd1234efgh"),
    ("secret-flag", "tool --apikey abcd1234efgh", "abcd1234efgh"),
    ("secret-flag", "tool --api_key=abcd1234efgh", "abcd1234efgh"),
    ("secret-flag", "GET /x?access_token=abcd1234efgh", "abcd1234efgh"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n", "b3BlbnNzaC1rZXk"),
]


@pytest.mark.parametrize(
    ("name", "text", "secret"), HINTED, ids=[f"{c[0]}-{i}" for i, c in enumerate(HINTED)]
)
def test_a_pattern_runs_wherever_it_can_match(name: str, text: str, secret: str) -> None:
    assert secret not in redact(text), name
    assert secret not in redact("x" * 100_000 + "\n" + text + "\n" + "y" * 100_000)


@pytest.mark.parametrize("twin", ["İ", "ı", "ſ", "K"])
def test_every_pattern_still_runs_when_a_letter_is_swapped_for_its_ignorecase_twin(twin: str) -> None:
    """Each case above with each ASCII letter that `twin` case-folds to swapped in, wherever the
    pattern still matches: the hints must not skip it."""
    from ci_autofix.redact import SECRET_PATTERNS

    ascii_of = {"İ": "iI", "ı": "iI", "ſ": "sS", "K": "kK"}[twin]
    for _, text, secret in CASES + HINTED:
        swapped = "".join(twin if ch in ascii_of and ch not in secret else ch for ch in text)
        if any(p.regex.search(swapped) for p in SECRET_PATTERNS):
            assert secret not in redact(swapped), swapped
