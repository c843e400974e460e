"""A log read in line-aligned chunks, never whole: one pass indexes it, any line is read back on demand.

`LogFile(source)` reads a file (or bytes already in memory) in chunks of about `CHUNK_BYTES`, each
cut just after a line break, and keeps only where each chunk starts (its offset in the source, its
first line, its offset in the normalised log). A line is read back by re-reading its chunk; a few
chunks are cached. Memory is the index (a few entries per MiB of log) plus the cache, whatever the
log's size.

A chunk is normalised as `normalize.to_text` normalises a whole log: invalid UTF-8 replaced, NUL
dropped, `\\r\\n` and a lone `\\r` end a line, a leading byte-order mark removed. A cut after `\\n`
(or after a `\\r` that a byte other than NUL or `\\n` follows) is a line break of the whole text too,
and no decoding or newline rule looks across it, so the chunks' lines are exactly the whole text's
lines. The one exception: a line of more than `MAX_LINE_BYTES` without any line break is cut there.
"""

from __future__ import annotations

import bisect
import io
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 1 << 20  # read at a time by the indexing pass
BLOCK_BYTES = 16 << 10  # indexed (and read back) at a time
MAX_LINE_BYTES = 8 << 20  # a "line" longer than this without a line break is cut
CACHED_BLOCKS = 64
BOM = b"\xef\xbb\xbf"


def normal_bytes(raw: bytes, first: bool) -> bytes:
    """The chunk's bytes with the line breaks and the characters `to_text` drops normalised."""
    if first and raw.startswith(BOM):
        raw = raw[3:]
    if b"\x00" in raw:
        raw = raw.replace(b"\x00", b"")
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if first and raw.startswith(BOM):
        raw = raw[3:]
    return raw


def normal_text(raw: bytes, first: bool) -> str:
    """The chunk's text exactly as the same bytes would read inside `to_text` of the whole log."""
    if first and raw.startswith(BOM):
        raw = raw[3:]
    text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if first and text.startswith("\ufeff"):
        text = text[1:]
    return text


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def line_count(data: bytes) -> int:
    """The number of lines in normalised bytes (a last line without a break counts)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def line_count_in(data: bytes, lo: int, hi: int) -> int:
    """`line_count(data[lo:hi])` without the copy."""
    if hi <= lo:
        return 0
    return data.count(b"\n", lo, hi) + (0 if data[hi - 1] == 0x0A else 1)


def _cut(buffer: bytes) -> int:
    """Where `buffer` may be cut without changing a line: after its last `\\n`, else after a lone `\\r`."""
    cut = buffer.rfind(b"\n") + 1
    if cut:
        return cut
    p = buffer.rfind(b"\r")
    while p != -1:
        q = p + 1
        while q < len(buffer) and buffer[q] == 0:
            q += 1
        if q < len(buffer) and buffer[q] not in (0x0A, 0x0D):
            return p + 1
        p = buffer.rfind(b"\r", 0, p)
    return 0


def read_chunks(stream: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, bytes]]:
    """(offset, raw bytes) of consecutive chunks of `stream`, each cut at a line break (see `_cut`)."""
    offset = 0
    carry = b""
    while True:
        block = stream.read(chunk_bytes)
        if not block:
            if carry:
                yield offset, carry
            return
        buffer = carry + block if carry else block
        cut = _cut(buffer)
        if not cut:
            if len(buffer) < MAX_LINE_BYTES:
                carry = buffer
                continue
            cut = len(buffer)
        yield offset, buffer[:cut]
        offset += cut
        carry = buffer[cut:]


@dataclass(frozen=True)
class Block:
    """Where one block of whole lines is: in the source (raw bytes), in lines, in the normalised log."""

    offset: int
    length: int
    first_line: int
    lines: int
    position: int
    size: int  # its normalised bytes


class LogFile:
    """A log on disk (or in memory), indexed by blocks of about `BLOCK_BYTES`; `line(i)` reads line `i` back.

    The index is three arrays of 8-byte integers per block (raw offset, first line, normalised
    position): 1.5 MiB for a 1 GB log. A read decodes one block, not the chunk it came in."""

    def __init__(self, source: Path | bytes, block_bytes: int = BLOCK_BYTES) -> None:
        self.block_bytes = block_bytes
        self._path = source if isinstance(source, Path) else None
        self._data = source if isinstance(source, bytes) else None
        self._offsets = array("q")
        self._firsts = array("q")
        self._positions = array("q")
        self._cache: OrderedDict[int, list[str]] = OrderedDict()
        self.lines = 0
        self.size = 0  # bytes of the normalised log
        self._end = 0  # raw bytes indexed

    def open(self) -> BinaryIO:
        if self._path is not None:
            return self._path.open("rb")
        return io.BytesIO(self._data or b"")

    def add(self, offset: int, raw: bytes, normal: bytes) -> None:
        """Index the next chunk (the indexing pass calls this with each chunk, in order). A chunk
        that needed no normalisation is indexed as blocks of about `BLOCK_BYTES` whole lines."""
        step = self.block_bytes
        if raw is normal and len(raw) > step:
            lo = 0
            while lo < len(raw):
                hi = raw.rfind(b"\n", lo, lo + step) + 1 if lo + step < len(raw) else len(raw)
                if hi <= lo:
                    hi = raw.find(b"\n", lo + step) + 1 or len(raw)
                self._add(offset + lo, line_count_in(raw, lo, hi), hi - lo)
                lo = hi
        else:
            self._add(offset, line_count(normal), len(normal))
        self._end = offset + len(raw)

    def _add(self, offset: int, lines: int, size: int) -> None:
        self._offsets.append(offset)
        self._firsts.append(self.lines)
        self._positions.append(self.size)
        self.lines += lines
        self.size += size

    def __len__(self) -> int:
        """The number of blocks."""
        return len(self._offsets)

    def block(self, k: int) -> Block:
        last = k + 1 == len(self._offsets)
        offset = self._offsets[k]
        end = self._end if last else self._offsets[k + 1]
        first = self._firsts[k]
        position = self._positions[k]
        return Block(
            offset,
            end - offset,
            first,
            (self.lines if last else self._firsts[k + 1]) - first,
            position,
            (self.size if last else self._positions[k + 1]) - position,
        )

    def block_at(self, position: int) -> int:
        """The block that holds byte `position` of the normalised log (0 before the start)."""
        return max(0, bisect.bisect_right(self._positions, position) - 1)

    def raw(self, offset: int, length: int) -> bytes:
        if self._data is not None:
            return self._data[offset : offset + length]
        with self.open() as f:
            f.seek(offset)
            return f.read(length)

    def text(self, first: int, last: int) -> str:
        """The normalised text of blocks `first`..`last` (inclusive)."""
        a, b = self.block(first), self.block(last)
        return normal_text(self.raw(a.offset, b.offset + b.length - a.offset), a.offset == 0)

    def block_lines(self, k: int) -> list[str]:
        lines = self._cache.get(k)
        if lines is None:
            lines = split_lines(self.text(k, k))
            self._cache[k] = lines
            if len(self._cache) > CACHED_BLOCKS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(k)
        return lines

    def line(self, i: int) -> str:
        """The raw (uncleaned) text of line `i`."""
        if not 0 <= i < self.lines:
            raise IndexError(i)
        k = bisect.bisect_right(self._firsts, i) - 1
        return self.block_lines(k)[i - self._firsts[k]]
