"""A local fake of the Anthropic Messages API, driven by a queue of scripted turns.

The real SDK talks to it over HTTP (`base_url`), so the tests exercise the SDK's request
building, strict response validation, retries and error classes. Every request is
recorded, so tests can assert on what we sent (cache breakpoints, tool results, that no
secret left the process).

A turn is a dict, the same in Python and in a script file:

- a reply: `{"content": [blocks...], "stop_reason": "tool_use", "usage": {...}, "stop_details": {...}}`
  (`usage` is optional: without it the fake bills the request the way the API would, given
  its cache breakpoints: see `CacheModel`);
- an error: `{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded",
  "retry_after_ms": 1}}`;
- either, late: `"delay_s": 2.5` in the turn (`slow(2.5, turn)`) sends its answer that many
  seconds after the request, as a slow API does; a client that timed out meanwhile has had its
  turn (a retry takes the next one).

Standalone, for a container or another process (it prints nothing but errors):

    python -m tests.testing.fakes.messages --script turns.json --port-file port.txt [--record requests.jsonl]

`--port-file` receives `http://127.0.0.1:<port>` once the server listens (the port is the part a
container on a bridge network needs, with `--host 0.0.0.0`); SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def bytes_estimate(text: str) -> int:
    """Tokens as bytes / 4 (rounded up): the fake's tokenizer."""
    return (len(text.encode("utf-8")) + 3) // 4


# ---- turn builders ------------------------------------------------------------------------------------
_ids = itertools.count(1)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id or f"toolu_{next(_ids):04d}", "name": name, "input": arguments}


def reply(
    *content: dict[str, Any] | str,
    stop_reason: str | None = None,
    usage: dict[str, int] | None = None,
    stop_details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    blocks = [text(c) if isinstance(c, str) else c for c in content]
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    turn: dict[str, Any] = {"content": blocks, "stop_reason": stop_reason}
    if usage is not None:
        turn["usage"] = usage
    if stop_details is not None:
        turn["stop_details"] = stop_details
    return turn


def slow(seconds: float, turn: dict[str, Any]) -> dict[str, Any]:
    """`turn`, answered `seconds` after its request."""
    return {**turn, "delay_s": seconds}


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    retry_after_ms: int | None = 1,
    should_retry: bool | None = None,
) -> dict[str, Any]:
    return {
        "error": {
            "status": status,
            "type": type or ERROR_TYPES.get(status, "api_error"),
            "message": message or f"fake error {status}",
            "retry_after_ms": retry_after_ms,
            "should_retry": should_retry,
        }
    }


# ---- billing as the API does it --------------------------------------------------------------------
@dataclass
class Billed:
    input: int
    cache_write: int
    cache_read: int

    @property
    def total(self) -> int:
        return self.input + self.cache_write + self.cache_read


@dataclass
class CacheModel:
    """Prompt caching as documented: the prefix `tools → system → messages` up to a block marked
    `cache_control` is written to the cache (if it reaches the model's minimum cacheable length)
    and read back by a later request whose prefix is identical up to that block; a lookup
    checks each breakpoint and up to `lookback` earlier block boundaries. At most 4 breakpoints.
    """

    min_cacheable: int = 1024
    lookback: int = 20
    estimate: Callable[[str], int] = bytes_estimate
    cached: set[str] = field(default_factory=set)

    def blocks(self, body: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
        out: list[tuple[dict[str, Any], bool]] = []
        for tool in body.get("tools") or []:
            out.append((tool, "cache_control" in tool))
        system = body.get("system") or []
        for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
            out.append((block, "cache_control" in block))
        for message in body.get("messages", []):
            content = message["content"]
            for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                out.append(({"role": message["role"], **block}, "cache_control" in block))
        return out

    def bill(self, body: dict[str, Any]) -> Billed:
        blocks = self.blocks(body)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        if len(breakpoints) > 4:
            raise ValueError(
                f"A maximum of 4 blocks with cache_control may be provided. Found {len(breakpoints)}."
            )
        sizes, keys = [], []
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        for block, _ in blocks:
            canonical = json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)
            sizes.append(self.estimate(canonical))
            digest.update(canonical.encode())
            keys.append(digest.hexdigest())
        prefix = list(itertools.accumulate(sizes))
        total = prefix[-1] if prefix else 0
        read_at = -1
        for b in breakpoints:
            for i in range(b, max(b - self.lookback, 0) - 1, -1):
                if keys[i] in self.cached and i > read_at:
                    read_at = i
                    break
        read = prefix[read_at] if read_at >= 0 else 0
        written = 0
        for b in breakpoints:
            if b > read_at and prefix[b] >= self.min_cacheable:
                self.cached.add(keys[b])
                written = prefix[b] - read
        return Billed(input=total - read - written, cache_write=written, cache_read=read)


# ---- the server -------------------------------------------------------------------------------------
@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: str
    status: int = 0
    response: Any = None
    delay_s: float = 0.0


class FakeMessagesAPI:
    def __init__(
        self,
        turns: Iterable[dict[str, Any]] = (),
        *,
        cache: CacheModel | None = None,
        record_path: Path | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.turns: deque[dict[str, Any]] = deque(turns)
        self.cache = cache or CacheModel()
        self.requests: list[Recorded] = []
        self.record_path = record_path
        self._lock = threading.Lock()
        self._counter = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                fake._handle(self)

            def do_GET(self) -> None:
                fake._handle(self)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host  # noqa: S104 - naming it, not binding
        self.url = f"http://{shown}:{self.server.server_address[1]}"
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> FakeMessagesAPI:
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-messages",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # script and records
    def push(self, *turns: dict[str, Any]) -> None:
        with self._lock:
            self.turns.extend(turns)

    @property
    def message_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.message_requests]

    def everything_sent(self) -> str:
        """Headers and bodies of every request, as one text (to look for secrets)."""
        return "\n".join(json.dumps(r.headers) + "\n" + r.raw for r in self.requests)

    # handling
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        record = Recorded(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body, raw
        )
        with self._lock:
            self.requests.append(record)
            status, headers, payload = self._respond(record)
            record.status = status
            record.response = payload
            if self.record_path:
                with self.record_path.open("a", encoding="utf-8") as out:
                    out.write(
                        json.dumps(
                            {"path": record.path, "headers": record.headers, "body": body, "status": status}
                        )
                        + "\n"
                    )
        data = json.dumps(payload).encode()
        if record.delay_s:
            time.sleep(record.delay_s)  # outside the lock: other requests are answered meanwhile
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.send_header("request-id", f"req_fake_{len(self.requests):04d}")
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
            handler.close_connection = True

    def _respond(self, record: Recorded) -> tuple[int, dict[str, str], Any]:
        path = record.path.split("?")[0]
        if record.method != "POST" or path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return _error_body(404, "not_found_error", f"fake: no route {record.method} {path}")
        if not (record.headers.get("authorization") or record.headers.get("x-api-key")):
            return _error_body(401, "authentication_error", "fake: no credentials sent")
        if not isinstance(record.body, dict):
            return _error_body(400, "invalid_request_error", "fake: body is not a JSON object")
        if path.endswith("count_tokens"):
            return (
                200,
                {},
                {"input_tokens": CacheModel(estimate=self.cache.estimate).bill(_unmarked(record.body)).total},
            )
        if not self.turns:
            return _error_body(400, "invalid_request_error", "fake: the script has no more turns")
        turn = self.turns.popleft()
        record.delay_s = float(turn.get("delay_s") or 0)
        if "error" in turn:
            spec = turn["error"]
            headers = {}
            if spec.get("retry_after_ms") is not None:
                headers["retry-after-ms"] = str(spec["retry_after_ms"])
            if spec.get("should_retry") is not None:
                headers["x-should-retry"] = "true" if spec["should_retry"] else "false"
            status, _, payload = _error_body(spec["status"], spec["type"], spec["message"])
            return status, headers, payload
        try:
            billed = self.cache.bill(record.body)
        except ValueError as exc:
            return _error_body(400, "invalid_request_error", str(exc))
        content = turn["content"]
        usage = turn.get("usage") or {
            "input_tokens": billed.input,
            "cache_creation_input_tokens": billed.cache_write,
            "cache_read_input_tokens": billed.cache_read,
            "output_tokens": max(1, self.cache.estimate(json.dumps(content))),
        }
        message = {
            "id": f"msg_fake_{next(self._counter):04d}",
            "type": "message",
            "role": "assistant",
            "model": record.body.get("model", "fake"),
            "content": content,
            "stop_reason": turn.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }
        if "stop_details" in turn:
            message["stop_details"] = turn["stop_details"]
        return 200, {}, message


def _unmarked(body: dict[str, Any]) -> dict[str, Any]:
    clean = json.loads(json.dumps(body))
    for block in CacheModel().blocks(clean):
        block[0].pop("cache_control", None)
    return clean


def _error_body(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"type": "error", "error": {"type": kind, "message": message}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.testing.fakes.messages", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--script", type=Path, required=True, help="JSON file: a list of turns")
    parser.add_argument("--port-file", type=Path, required=True, help="receives the base URL once listening")
    parser.add_argument("--record", type=Path, help="append every request here as JSON lines")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (a container on a bridge network needs the bridge's address or 0.0.0.0)",
    )
    args = parser.parse_args(argv)
    turns = json.loads(args.script.read_text(encoding="utf-8"))
    fake = FakeMessagesAPI(turns, record_path=args.record, host=args.host).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(fake.url, encoding="utf-8")
    tmp.replace(args.port_file)
    stop.wait()
    fake.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
