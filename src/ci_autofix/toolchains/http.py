"""The one place toolchains are fetched over HTTP: fixed schemes, no credentials, capped sizes.

urllib with only the HTTP handlers (proxies from the environment, redirects between http and
https, nothing else: no `file:`, no `ftp:`, no netrc); a body is streamed to a file or memory
and refused once it passes its cap. The SHA-256 is computed while streaming.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import urllib.error
import urllib.request
from pathlib import Path
from typing import BinaryIO

from ci_autofix.toolchains.errors import NotPublished, ToolchainError

TIMEOUT = 60.0
_CHUNK = 256 * 1024


def _opener() -> urllib.request.OpenerDirector:
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPRedirectHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    opener.addheaders = [("User-Agent", "ci-autofix")]
    return opener


def _copy(url: str, out: BinaryIO, cap: int) -> str:
    """Stream `url` into `out`; its SHA-256 (hex). Refused past `cap` bytes."""
    if not url.startswith(("https://", "http://")):
        raise ToolchainError(f"{url} is not an http(s) URL", "Set the toolchain mirror to an http(s) URL.")
    digest = hashlib.sha256()
    size = 0
    try:
        with _opener().open(url, timeout=TIMEOUT) as response:
            while chunk := response.read(_CHUNK):
                size += len(chunk)
                if size > cap:
                    raise ToolchainError(
                        f"{url} is larger than {cap} bytes, more than such a file can be",
                        "Check the toolchain mirror (or the network path to the publisher): it serves "
                        "something else than the publisher's file.",
                    )
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise NotPublished(
                f"{url} does not exist (HTTP 404)", "Declare a version that is published."
            ) from None
        raise ToolchainError(
            f"downloading {url} failed: HTTP {exc.code}", "Re-run the job; if it persists, check the mirror."
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ToolchainError(
            f"downloading {url} failed: {reason}",
            "Check that the runner reaches the publisher, or set CI_AUTOFIX_TOOLCHAIN_MIRROR.",
        ) from None
    return digest.hexdigest()


def fetch(url: str, *, cap: int) -> bytes:
    """A small file (an index, a checksum list, a manifest) in memory."""
    buffer = io.BytesIO()
    _copy(url, buffer, cap)
    return buffer.getvalue()


def download(url: str, path: Path, *, cap: int) -> str:
    """`url` streamed into `path` (created, mode 0600); its SHA-256 (hex)."""
    with path.open("xb") as out:
        path.chmod(0o600)
        return _copy(url, out, cap)
