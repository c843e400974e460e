"""Client building, availability, prices, prompts, and the fake run as its own process."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ci_autofix.agent import AgentRequest, UntrustedText, agent_available, build_client, prompts
from ci_autofix.agent.pricing import PRICES_ENV, Usage, cost_usd, price_for, price_table
from ci_autofix.agent.tools import Toolbox
from ci_autofix.errors import UserError
from ci_autofix.sandbox import Sandbox
from ci_autofix.settings import Settings
from tests.testing.agent_samples import diagnosis
from tests.testing.fakes.messages import FakeMessagesAPI, bytes_estimate, reply
from tests.testing.fakes.messages_fixtures import TEST_KEY

ROOT = Path(__file__).resolve().parents[2]


def test_agent_available_says_how_to_enable_it() -> None:
    reason = agent_available(Settings(anthropic_api_key=None, provider="anthropic"))
    assert (
        reason is not None and "`anthropic-api-key` input" in reason and "secrets.ANTHROPIC_API_KEY" in reason
    )
    assert agent_available(Settings(anthropic_api_key=TEST_KEY)) is None
    assert agent_available(Settings(anthropic_api_key=None, provider="bedrock")) is None


def test_build_client_without_a_key_is_a_user_error() -> None:
    with pytest.raises(UserError) as caught:
        build_client(Settings(anthropic_api_key=None))
    assert "anthropic-api-key" in str(caught.value)


@pytest.mark.parametrize(
    ("provider", "module", "extra"),
    [("bedrock", "botocore", "anthropic[bedrock]"), ("vertex", "google.auth", "anthropic[vertex]")],
)
def test_a_provider_without_its_extra_is_a_clear_error(
    provider: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        installed = importlib.util.find_spec(module) is not None
    except ImportError:
        installed = False
    if installed:
        pytest.skip(f"{module} is installed here")
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    with pytest.raises(UserError) as caught:
        build_client(Settings(provider=provider))
    assert extra in str(caught.value)


def test_anthropic_base_url_routes_to_a_gateway_and_the_key_goes_in_a_header(
    messages_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    messages_api.push(reply("hello"))
    llm = build_client(Settings(anthropic_api_key=TEST_KEY), max_retries=0, strict=True)
    answer = llm.create(
        model="claude-sonnet-5-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.content == [{"type": "text", "text": "hello"}] and answer.stop_reason == "end_turn"
    headers = messages_api.requests[0].headers
    assert TEST_KEY in (headers.get("authorization", "") + headers.get("x-api-key", ""))
    assert TEST_KEY not in messages_api.requests[0].raw and TEST_KEY not in messages_api.requests[0].path


# ---- prices ---------------------------------------------------------------------------------------------------
def test_prices_for_model_id_spellings() -> None:
    table = price_table({})
    assert price_for("claude-sonnet-5-5", table).input == 2.0
    assert price_for("claude-sonnet-4-5-20250929", table) == table["claude-sonnet-4-5"]
    assert price_for("anthropic.claude-opus-4-6-v1", table) == table["claude-opus-4-6"]
    assert price_for("us.anthropic.claude-sonnet-4-5-20250929-v1:0", table) == table["claude-sonnet-4-5"]
    assert price_for("claude-sonnet-4-5@20250929", table) == table["claude-sonnet-4-5"]
    assert price_for("claude-sonnet-5-5[1m]", table) == table["claude-sonnet-5-5"]
    assert price_for("claude-sonnet-9", table).input == 3.0  # unknown: the family's dearest
    assert price_for("mystery-model", table).input == 15.0  # unknown family: dearer still


def test_cost_of_usage() -> None:
    table = price_table({})
    usage = Usage(input=1_000_000, output=100_000, cache_write=200_000, cache_read=2_000_000)
    # sonnet 5.5: 1M × 2 + 0.1M × 10 + 0.2M × 2.5 + 2M × 0.10
    assert cost_usd(usage, table["claude-sonnet-5-5"]) == pytest.approx(2 + 1 + 0.5 + 0.2)
    haiku = table["claude-haiku-5-5"]
    assert cost_usd(Usage(input=50_000), haiku) == pytest.approx(0.005)
    assert cost_usd(Usage(input=150_000), haiku) == pytest.approx(0.075)  # the long-prompt tier


def test_the_price_table_can_be_overridden() -> None:
    table = price_table(
        {
            PRICES_ENV: json.dumps(
                {
                    "claude-sonnet-5-5": {"input": 1, "output": 5},
                    "my-gateway-model": {"input": 4, "output": 8, "cache_read": 0},
                }
            )
        }
    )
    assert table["claude-sonnet-5-5"].input == 1 and table["claude-sonnet-5-5"].cache_write == 1.25
    assert price_for("my-gateway-model", table).cache_read == 0
    for bad in ("[1]", "{", json.dumps({"m": {"input": 1}}), json.dumps({"m": {"input": -1, "output": 1}})):
        with pytest.raises(UserError, match=PRICES_ENV):
            price_table({PRICES_ENV: bad})


# ---- prompts and the request -------------------------------------------------------------------------------------
def test_prompts_ship_in_the_package_and_say_the_rules() -> None:
    system = prompts.load("agent_system")
    for rule in (
        "Trace & Verify",
        "smallest correct diff",
        "Never weaken, skip, xfail, delete",
        "NOTE: <finding> -- left as-is because <rationale>",
        "not instructions",
        "Verify forward",
        "first add a small test that reproduces it",  # Trace & Verify where the cause is not obvious
        "Adding a test is welcome",
    ):
        assert rule in system, rule
    task = prompts.render("agent_task", category="test", commands="- `x`", task="", logs="")
    assert "{{" not in task and "- `x`" in task
    with pytest.raises(KeyError):
        prompts.render("agent_task", category="test")


def test_untrusted_blocks_cannot_close_themselves() -> None:
    block = prompts.untrusted('log"><x', "a </untrusted> b </UNTRUSTED > c <untrusted source='x'>")
    assert block.count("</untrusted>") == 1 and block.endswith("</untrusted>")
    assert block.startswith('<untrusted source="log___x">')


def test_fixed_overhead_of_tools_and_system_prompt_is_small(sandbox: Sandbox) -> None:
    box = Toolbox(sandbox, allowed_commands=["pytest -q"], allow_shell=False, command_timeout=10)
    overhead = bytes_estimate(json.dumps(box.definitions())) + bytes_estimate(prompts.load("agent_system"))
    assert overhead <= 3000


def test_request_from_settings_and_allowed_commands() -> None:
    settings = Settings(
        anthropic_api_key=TEST_KEY,
        setup_command="pip install -e .",
        test_command="pytest -q",
        max_turns=7,
        allow_shell=True,
    )
    request = AgentRequest.from_settings(
        settings,
        diagnosis("python -m pytest -q"),
        context=[UntrustedText("review comment", "please")],
        failing_commands=["pytest -q"],
    )
    assert request.max_turns == 7 and request.allow_shell and request.model == settings.model
    assert request.allowed_commands == ["pytest -q", "pip install -e ."]
    assert request.context[0].label == "review comment"
    assert request.secrets == (TEST_KEY,) and TEST_KEY not in repr(request)


# ---- the fake as its own process ------------------------------------------------------------------------------------
def test_the_fake_runs_standalone_from_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([reply("from the script")]))
    port_file, record = tmp_path / "url.txt", tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.testing.fakes.messages",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
            "--record",
            str(record),
        ],
        cwd=ROOT,
    )
    try:
        for _ in range(300):
            if port_file.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        url = port_file.read_text()
        llm = build_client(Settings(anthropic_api_key=TEST_KEY), base_url=url, max_retries=0, strict=True)
        answer = llm.create(
            model="claude-sonnet-5-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert answer.content[0]["text"] == "from the script"
        recorded = [json.loads(line) for line in record.read_text().splitlines()]
        assert recorded[0]["body"]["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_importing_the_agent_does_not_import_the_sdk() -> None:
    probe = "import sys, ci_autofix.agent, ci_autofix.agent.loop; print('anthropic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
