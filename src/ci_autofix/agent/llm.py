"""The only module that imports `anthropic`: builds the client and turns its errors into ours.

`anthropic` is imported when the agent runs, not when the package loads (its import takes
seconds and the container must start fast). The loop sees plain data (`Reply`), never SDK
objects, and SDK errors arrive as `Halt` (model unavailable, context exceeded) or
`UserError` (credentials, missing provider extras).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ci_autofix.agent.pricing import Usage
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.redact import redact

if TYPE_CHECKING:
    from ci_autofix.settings import Settings

KEY_INPUT = "`anthropic-api-key` input (secrets.ANTHROPIC_API_KEY)"
DEFAULT_MAX_RETRIES = 4  # the SDK's own retries for 408/409/429/5xx/529 and connection errors
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Reply:
    """One assistant turn as plain JSON-able data."""

    id: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    stop_details: dict[str, Any] | None
    usage: Usage
    retries: int = 0


class Model(Protocol):
    """The Messages API, as the agent loop uses it (`agent.llm.LLM`)."""

    def create(self, **params: Any) -> Reply: ...


class LLM:
    """A Messages API client for the loop: `create(**params) -> Reply`."""

    def __init__(self, client: Any, *, provider: str = "anthropic") -> None:
        self.client = client
        self.provider = provider

    def create(self, **params: Any) -> Reply:
        import anthropic

        model = str(params.get("model", ""))
        try:
            raw = self.client.messages.with_raw_response.create(**params)
            message = raw.parse()
        except anthropic.AuthenticationError as exc:
            raise UserError(
                f"The Messages API rejected the credentials (HTTP 401: {_said(exc)}).",
                f"Check the {KEY_INPUT}: it must be a valid, active Anthropic API key "
                "(or the credentials of the selected `provider`).",
            ) from None
        except anthropic.PermissionDeniedError as exc:
            raise UserError(
                f"The Messages API refused the request (HTTP 403: {_said(exc)}).",
                f"Check that the key in the {KEY_INPUT} may use model `{model}`.",
            ) from None
        except anthropic.NotFoundError as exc:
            raise Halt(
                HaltReason.MODEL_UNAVAILABLE,
                f"model `{model}` is not available here (HTTP 404: {_said(exc)}); "
                "set the `model` input to a model your account can use",
            ) from None
        except anthropic.BadRequestError as exc:
            text = _said(exc)
            if "too long" in text.lower() or "context" in text.lower():
                raise Halt(
                    HaltReason.CONTEXT_EXCEEDED, f"the conversation no longer fits the model: {text}"
                ) from None
            raise UserError(
                f"The Messages API rejected the request (HTTP 400: {text}).",
                "Check the `model` input; if it is right, this is a bug in ci-autofix: please report "
                "it with the job log.",
            ) from None
        except anthropic.APIStatusError as exc:
            if exc.status_code == 413:
                raise Halt(HaltReason.CONTEXT_EXCEEDED, f"the request is too large: {_said(exc)}") from None
            if exc.status_code == 402:
                raise UserError(
                    f"The Messages API needs payment (HTTP 402: {_said(exc)}).",
                    "Check the billing of the account behind the key.",
                ) from None
            raise Halt(
                HaltReason.MODEL_UNAVAILABLE,
                f"the Messages API answered HTTP {exc.status_code} ({_said(exc)}) after "
                f"{self._retries()} retries",
            ) from None
        except anthropic.APITimeoutError:
            raise Halt(
                HaltReason.MODEL_UNAVAILABLE,
                f"the Messages API did not answer within {self._timeout()} (tried "
                f"{self._retries() + 1} times); re-run the job later (https://status.anthropic.com "
                "shows incidents)",
            ) from None
        except anthropic.APIConnectionError as exc:
            raise Halt(
                HaltReason.MODEL_UNAVAILABLE,
                f"could not reach the Messages API ({type(exc).__name__}) after {self._retries()} retries",
            ) from None
        except (ImportError, anthropic.AnthropicError) as exc:
            if isinstance(exc, ImportError) or "missing required dependency" in str(exc):
                raise _missing_extra(self.provider) from None
            raise
        usage = message.usage
        return Reply(
            id=message.id,
            content=[block.model_dump(mode="json", exclude_none=True) for block in message.content],
            stop_reason=message.stop_reason,
            stop_details=message.stop_details.model_dump(mode="json") if message.stop_details else None,
            usage=Usage(
                input=usage.input_tokens,
                output=usage.output_tokens,
                cache_write=usage.cache_creation_input_tokens or 0,
                cache_read=usage.cache_read_input_tokens or 0,
            ),
            retries=getattr(raw, "retries_taken", 0),
        )

    def _retries(self) -> int:
        return int(getattr(self.client, "max_retries", 0))

    def _timeout(self) -> str:
        """The client's timeout for one request, as text (`300s`)."""
        timeout = getattr(self.client, "timeout", None)
        seconds = getattr(timeout, "read", timeout)  # a float, or httpx.Timeout's read timeout
        return f"{seconds:g}s" if isinstance(seconds, int | float) else "the client's timeout"


def _said(exc: Any) -> str:
    """What the API said, without anything secret-looking, kept short."""
    message = getattr(exc, "api_message", None) or getattr(exc, "message", None) or str(exc)
    return redact(str(message))[:300]


def check_provider(settings: Settings) -> None:
    """Raise the `UserError` that building the client for `settings.provider` would raise for its
    environment (a missing extra, the Vertex region), without importing the SDK: a run that may
    call the agent checks it at start-up, before any work."""
    provider = settings.provider
    if (
        provider == "bedrock"
        and not _installed("botocore")
        and not os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    ):
        raise _missing_extra(provider)
    if provider == "vertex":
        if not _installed("google.auth"):
            raise _missing_extra(provider)
        if not os.environ.get("CLOUD_ML_REGION"):
            raise UserError(
                "The `vertex` provider needs the Google Cloud region.",
                "Set `CLOUD_ML_REGION` (and `ANTHROPIC_VERTEX_PROJECT_ID`) in the step's `env:`.",
            )


def _missing_extra(provider: str) -> UserError:
    extra = {"bedrock": "anthropic[bedrock]", "vertex": "anthropic[vertex]"}.get(provider, "anthropic")
    return UserError(
        f"The `{provider}` provider needs the `{extra}` extra, which this image does not include.",
        f"Build an image with `pip install '{extra}'`, or use `provider: anthropic` with the {KEY_INPUT}.",
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # the parent package is missing
        return False


def agent_available(settings: Settings) -> str | None:
    """Why the agent cannot run with these settings, or None when it can."""
    if settings.provider == "anthropic" and not (
        settings.anthropic_api_key and settings.anthropic_api_key.get_secret_value().strip()
    ):
        return (
            "no Anthropic API key is configured: set the " + KEY_INPUT + " to let the agent fix what the "
            "deterministic fixers cannot"
        )
    return None


def build_client(
    settings: Settings,
    *,
    base_url: str | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT_S,
    strict: bool = False,
) -> LLM:
    """The Messages API client for `settings.provider`.

    `base_url` (or `ANTHROPIC_BASE_URL`, for gateways) points the Anthropic client elsewhere;
    Bedrock and Vertex take theirs from `ANTHROPIC_BEDROCK_BASE_URL` / `ANTHROPIC_VERTEX_BASE_URL`.
    `strict` turns on the SDK's strict response validation (tests).
    """
    import anthropic

    common: dict[str, Any] = {
        "max_retries": max_retries,
        "timeout": timeout,
        "_strict_response_validation": strict,
    }
    provider = settings.provider
    if provider == "anthropic":
        if reason := agent_available(settings):
            raise UserError(
                reason[0].upper() + reason[1:] + ".", f"Add the {KEY_INPUT} to the step's `with:`."
            )
        assert settings.anthropic_api_key is not None
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        client: Any = anthropic.Anthropic(
            api_key=settings.anthropic_api_key.get_secret_value(), base_url=url, **common
        )
    elif provider == "bedrock":
        check_provider(settings)
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        client = anthropic.AnthropicBedrock(aws_region=region, base_url=base_url, **common)
    elif provider == "vertex":
        check_provider(settings)
        region = os.environ["CLOUD_ML_REGION"]
        if project := os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID"):
            common["project_id"] = project
        client = anthropic.AnthropicVertex(region=region, base_url=base_url, **common)
    else:  # pragma: no cover - the settings model allows only the three above
        raise UserError(f"Unknown provider `{provider}`.", "Use `anthropic`, `bedrock` or `vertex`.")
    return LLM(client, provider=provider)
