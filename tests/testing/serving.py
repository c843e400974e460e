"""A request handler served over HTTP on 127.0.0.1, for the local stand-ins of what users download
(the toolchain mirror, the package indexes)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """`handler` served at a free port of 127.0.0.1 from a thread until the block ends. Shutdown is
    polled every 50 ms: `serve_forever`'s 0.5 s default was waited out at every teardown."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
