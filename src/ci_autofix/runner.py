"""Everything written back to the runner goes through here: masks, logs, outputs, summary, annotations.

Secrets are masked (`::add-mask::`) before anything else is printed, and every text that
passes through is redacted, so no other module has to remember to.

Workflow commands are made only by the methods named for them (`mask`, `warning`, `error`,
`group`, `annotate`), with their data escaped so it cannot end the command. Everything else
printed is text, ours or not (`info`, `stage`: a progress line can name a model's tool, a halt
can quote the model or a log): a text that the runner could read as a command (`::name::` at
the start of a line, or `##[` anywhere in one) is printed inside a `::stop-commands::<token>`
... `::<token>::` block, with a fresh unguessable token that is not in the text and is never
printed before the block starts. So no caller can print a command by mistake.
"""

from __future__ import annotations

import re
import secrets
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TextIO

from ci_autofix.redact import Redacted, Redactor

MAX_SUMMARY_BYTES = 1024 * 1024  # the runner refuses larger step summaries
MAX_ANNOTATIONS = 10  # per type per step; more are dropped by the runner
MAX_ANNOTATION_CHARS = 4096


# Line breaks that some readers of a log split on besides \r and \n (Python's str.splitlines does)
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# What the runner may act on: `::command::` at the start of a line, `##[command]` anywhere in one
_COMMAND_LIKE = re.compile(r"::|##\[")


def escape_data(text: str) -> str:
    """A command's data as the runner unescapes it: it cannot end the command's line."""
    text = _OTHER_BREAKS.sub(" ", text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def stop_token(text: str) -> str:
    """A fresh, unguessable `::stop-commands::` token that does not occur in `text`."""
    while True:
        token = secrets.token_hex(16)
        if token not in text:
            return token


class Located(Protocol):
    """What an annotation needs of a failure (triage's `Failure` has it)."""

    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def column(self) -> int | None: ...
    @property
    def tool(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


class Runner:
    """The runner's side channel. Outside Actions it prints plain progress to the stream."""

    def __init__(
        self,
        *,
        in_actions: bool,
        output_path: Path | None = None,
        summary_path: Path | None = None,
        stream: TextIO | None = None,
        words: Callable[[str], str] | None = None,
    ) -> None:
        """`words` rewords each message for where we run (a local command names flags, not inputs)."""
        self.in_actions = in_actions
        self.words = words or (lambda text: text)
        self.output_path = output_path
        self.summary_path = summary_path
        self.stream = stream or sys.stdout
        self.redactor = Redactor()
        self._started = time.monotonic()

    # ---- secrets -------------------------------------------------------------------------------
    def mask(self, secrets: Iterable[str]) -> None:
        """`::add-mask::` each new secret (each line of it), and redact it from all later text."""
        for secret in secrets:
            if secret and secret not in self.redactor.secrets:
                self.redactor.add([secret])
                if self.in_actions:
                    for line in secret.splitlines():
                        if line.strip():
                            self._emit(f"::add-mask::{escape_data(line)}")

    def clean(self, text: str) -> str:
        """`text` with every secret masked so far (and every secret-shaped string) redacted."""
        return self.redactor.text(text)

    def redact(self, text: str) -> Redacted:
        """`text` redacted, for posting on GitHub."""
        return self.redactor(text)

    # ---- log -------------------------------------------------------------------------------------
    def _emit(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def _text(self, text: str) -> None:
        """Print text, redacted, so that no line of it is read as a workflow command."""
        text = self.clean(text)
        if not _COMMAND_LIKE.search(text):
            self._emit(text)
            return
        token = stop_token(text)
        self._emit(f"::stop-commands::{token}")
        self._emit(text)
        self._emit(f"::{token}::")

    def info(self, message: str) -> None:
        self._text(self.words(message))

    def stage(self, name: str) -> None:
        elapsed = time.monotonic() - self._started
        self._text(f"[{elapsed:6.1f}s] {name}")

    def warning(self, message: str) -> None:
        text = self.clean(self.words(message))
        if self.in_actions:
            self._emit(f"::warning::{escape_data(text)}")
        else:
            self._text(f"warning: {text}")

    def error(self, message: str) -> None:
        text = self.clean(self.words(message))
        if self.in_actions:
            self._emit(f"::error::{escape_data(text)}")
        else:
            self._text(f"error: {text}")

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        if self.in_actions:
            self._emit(f"::group::{escape_data(self.clean(title))}")
        else:
            self.stage(title)
        try:
            yield
        finally:
            if self.in_actions:
                self._emit("::endgroup::")

    # ---- annotations -------------------------------------------------------------------------------
    def annotate(self, failures: Iterable[Located]) -> int:
        """`::error file=,line=::` for located failures; returns how many were written."""
        written = 0
        for failure in failures:
            if not failure.file or written >= MAX_ANNOTATIONS:
                continue
            props = [f"file={escape_property(self.clean(failure.file))}"]
            if failure.line:
                props.append(f"line={failure.line}")
            if failure.column:
                props.append(f"col={failure.column}")
            props.append(f"title={escape_property(self.clean(f'{failure.tool}: {failure.kind}'))}")
            message = self.clean(failure.message)[:MAX_ANNOTATION_CHARS]
            if self.in_actions:
                self._emit(f"::error {','.join(props)}::{escape_data(message)}")
            else:
                where = f"{failure.file}:{failure.line}" if failure.line else failure.file
                self._text(f"{where}: {message}")
            written += 1
        return written

    # ---- outputs and summary ---------------------------------------------------------------------
    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        if self.output_path is None:
            return
        with self.output_path.open("a", encoding="utf-8") as fh:
            for name, value in outputs.items():
                text = self.clean(value)
                if "\n" in text or "\r" in text:
                    delimiter = f"ghadelimiter_{uuid.uuid4()}"
                    fh.write(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
                else:
                    fh.write(f"{name}={text}\n")

    def summary(self, markdown: str) -> None:
        text = self.clean(markdown)
        if self.summary_path is None:
            if not self.in_actions:
                self._text(text)
            return
        data = text.encode("utf-8")
        if len(data) > MAX_SUMMARY_BYTES - 1024:
            data = (
                data[: MAX_SUMMARY_BYTES - 1024].decode("utf-8", "ignore").encode()
                + b"\n\n*(summary truncated)*\n"
            )
        with self.summary_path.open("ab") as fh:
            fh.write(data + b"\n")
