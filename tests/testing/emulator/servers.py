"""HTTP plumbing: two stdlib servers on 127.0.0.1 (API + git, and the signed-blob host)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


Handler = Callable[[Request], Response]


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size_line = self.rfile.readline().strip()
                size = int(size_line.split(b";")[0] or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=unquote(parts.path),
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self._read_body(),
        )
        try:
            response = self.server.app(request)
        except Exception as exc:  # a bug in the emulator: answer 500 and let the test see it
            self.server.errors.append(exc)
            response = Response(500, f"emulator error: {exc!r}".encode(), [("Content-Type", "text/plain")])
        self.send_response(response.status)
        names = set()
        for name, value in response.headers:
            names.add(name.lower())
            self.send_header(name, value)
        if "content-length" not in names:
            self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, app: Handler) -> None:
        super().__init__(("127.0.0.1", 0), _RequestHandler)
        self.app = app
        self.errors: list[Exception] = []

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (a retry, a timeout) is not an emulator bug; anything else is."""
        error = sys.exc_info()[1]
        if isinstance(error, Exception) and not isinstance(error, ConnectionError):
            self.errors.append(error)


class Server:
    """One HTTP server on an ephemeral port, served from a thread until `close()`."""

    def __init__(self, app: Handler) -> None:
        self._server = _Server(app)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def errors(self) -> list[Exception]:
        return self._server.errors

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
