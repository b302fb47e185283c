"""HTTP/1.1 responses parsed in pure Python (RFC 9112), for the runtime's own client (`http1pool.py`).

Fed the bytes as they arrive, in any split: the status line and headers, a body framed by
Content-Length, chunked (extensions ignored, trailers read and dropped) or read to EOF; 1xx answers
are skipped. Lines may end in a bare LF as well as CRLF (RFC 9112 2.2; Go's client takes both, and
a server or proxy that sends LF would otherwise leave a request waiting for its deadline). Anything
malformed raises `ProtocolError`. The runtime sends no Accept-Encoding, so a
compressed body is refused rather than decoded (the API server compresses only when asked).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Go's http.Transport reads at most 10 MB of response headers; an API server sends a few hundred bytes.
MAX_HEAD = 1 << 20
MAX_LINE = 8192  # a chunk-size line or a trailer line
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(r"[0-9]{1,18}")

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _TO_EOF, _DONE = range(8)


def _line(data: bytes, pos: int, stop: int) -> bytes:
    """The line from `pos` to its LF at `stop`, without the CR before the LF if there is one."""
    return data[pos : stop - 1 if stop > pos and data[stop - 1] == 0x0D else stop]


class HTTPError(ConnectionError):
    """The HTTP exchange failed: no connection, a connection lost, or a response we cannot read.

    A `ConnectionError`, so a broken watch stream is one kind of error for the informer."""


class ConnectError(HTTPError):
    """No connection: `os_error` (also the `__cause__`) is the socket, DNS or TLS error."""

    def __init__(self, message: str, os_error: OSError) -> None:
        super().__init__(message)
        self.os_error = os_error


class ServerDisconnected(HTTPError):
    """The server closed the connection before the response was complete."""


class ProtocolError(HTTPError):
    """The server's bytes are not a valid HTTP/1.1 response."""


class ResponseParser:
    """One connection's responses, one at a time: `reset()` before each, then `feed()` until it
    returns True. The body is collected (`body()`), or handed to `on_body` piece by piece."""

    __slots__ = (
        "_buf",
        "_no_body",
        "_parts",
        "_remaining",
        "_seen",
        "_state",
        "_trailer_bytes",
        "extra",
        "headers",
        "keep_alive",
        "on_body",
        "reason",
        "status",
    )

    def __init__(self, on_body: Callable[[bytes], None] | None = None) -> None:
        self.on_body = on_body
        self.reset()

    def reset(self, no_body: bool = False) -> None:
        """Expect a new response; `no_body` for the answer to a HEAD request."""
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.keep_alive = True
        self.extra = b""  # bytes after the response: the connection is then not reusable
        self._state = _HEAD
        self._buf = b""
        self._parts: list[bytes] = []
        self._remaining = 0
        self._no_body = no_body
        self._seen = False
        self._trailer_bytes = 0

    @property
    def started(self) -> bool:
        """Whether any byte of this response has arrived (a retry is safe only before)."""
        return self._seen

    @property
    def head_done(self) -> bool:
        return self._state != _HEAD

    @property
    def done(self) -> bool:
        return self._state == _DONE

    def body(self) -> bytes:
        parts = self._parts
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def feed(self, data: bytes) -> bool:
        """Parse `data`; True once the response is complete (bytes past it are kept in `extra`)."""
        if not data:
            return self._state == _DONE
        self._seen = True
        if self._buf:
            data, self._buf = self._buf + data, b""
        pos, end = 0, len(data)
        while pos < end or self._state == _DONE:
            state = self._state
            if state in (_LENGTH, _CHUNK_DATA):
                take = min(end - pos, self._remaining)
                self._emit(data[pos : pos + take] if take < end or pos else data)
                pos += take
                self._remaining -= take
                if self._remaining:
                    return False
                self._state = _DONE if state == _LENGTH else _CHUNK_END
            elif state == _HEAD:
                # Lines end in CRLF, or a bare LF (RFC 9112 2.2 lets a recipient take one, as Go's
                # client does): the head ends at the first empty line, "\n\r\n" or "\n\n".
                stop = data.find(b"\n\r\n", pos)
                bare = data.find(b"\n\n", pos, None if stop < 0 else stop)
                if bare >= 0:
                    stop, after = bare, bare + 2
                else:
                    after = stop + 3
                if stop < 0:
                    if end - pos > MAX_HEAD:
                        raise ProtocolError(f"response headers longer than {MAX_HEAD} bytes")
                    self._buf = data[pos:]
                    return False
                self._head(data[pos:stop])
                pos = after
            elif state == _CHUNK_SIZE:
                stop = data.find(b"\n", pos)
                if stop < 0:
                    self._keep(data, pos, "chunk size line")
                    return False
                line = _line(data, pos, stop)
                size = line.split(b";", 1)[0].strip(b" \t")
                if not _HEX.fullmatch(size):
                    raise ProtocolError(f"malformed chunk size {line[:40]!r}")
                pos = stop + 1
                self._remaining = int(size, 16)
                self._state = _CHUNK_DATA if self._remaining else _TRAILERS
            elif state == _CHUNK_END:
                ending = data[pos : pos + 2]
                if ending[:1] == b"\n":
                    pos += 1
                elif ending == b"\r\n":
                    pos += 2
                elif ending == b"\r":  # the LF is in the next read
                    self._buf = b"\r"
                    return False
                else:
                    raise ProtocolError("chunk data not followed by CRLF")
                self._state = _CHUNK_SIZE
            elif state == _TRAILERS:
                stop = data.find(b"\n", pos)
                if stop < 0:
                    self._keep(data, pos, "trailer line")
                    return False
                line = _line(data, pos, stop)
                self._trailer_bytes += stop - pos + 1
                if self._trailer_bytes > MAX_HEAD:
                    raise ProtocolError(f"trailers longer than {MAX_HEAD} bytes")
                if line and b":" not in line:
                    raise ProtocolError(f"malformed trailer line {line[:40]!r}")
                self._state = _TRAILERS if line else _DONE
                pos = stop + 1
            elif state == _TO_EOF:
                self._emit(data[pos:] if pos else data)
                return False
            else:  # _DONE
                if pos < end:
                    self.extra = data[pos:]
                    self.keep_alive = False  # we pipeline nothing: these bytes answer no request
                return True
        return False

    def feed_eof(self) -> bool:
        """The server closed its side: True when that completes the response (a body read to EOF)."""
        if self._state == _TO_EOF:
            self._state = _DONE
            self.keep_alive = False
            return True
        if self._state == _DONE:
            return True
        if not self._seen:
            raise ServerDisconnected("the server closed the connection without answering")
        where = "in the headers" if self._state == _HEAD else "in the body"
        raise ServerDisconnected(f"the server closed the connection mid-response ({where})")

    def _keep(self, data: bytes, pos: int, what: str) -> None:
        if len(data) - pos > MAX_LINE:
            raise ProtocolError(f"{what} longer than {MAX_LINE} bytes")
        self._buf = data[pos:]

    def _emit(self, piece: bytes) -> None:
        if piece:
            if self.on_body is not None:
                self.on_body(piece)
            else:
                self._parts.append(piece)

    def _head(self, raw: bytes) -> None:
        text = raw.decode("latin-1")
        # `raw` ends where the empty line starts: its last line's CR, if any, is still there
        lines = text.replace("\r\n", "\n").removesuffix("\r").split("\n")
        status_line = lines[0]
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if (
            version not in ("HTTP/1.1", "HTTP/1.0")
            or len(code) != 3
            or not (code.isascii() and code.isdigit())
            or (len(rest) > 3 and rest[3] != " ")
        ):
            raise ProtocolError(f"malformed status line {status_line[:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        name = ""
        for line in lines[1:]:
            field, sep, value = line.partition(":")
            if not sep or not field or field[0] in " \t" or field[-1] in " \t":
                if line[:1] in (" ", "\t") and name:  # obs-fold, joined with a space (RFC 9112 5.2)
                    headers[name] += " " + line.strip(" \t")
                    continue
                raise ProtocolError(f"malformed header line {line[:80]!r}")
            name = field.lower()
            value = value.strip(" \t")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if status < 200:
            if status == 101 or status < 100:
                raise ProtocolError(f"unexpected status {status} (we asked for no protocol switch)")
            return  # 100 Continue, 103 Early Hints: the real answer follows
        self.status, self.reason, self.headers = status, rest[4:], headers
        connection = headers.get("connection", "").lower()
        if version == "HTTP/1.1":
            self.keep_alive = "close" not in connection
        else:
            self.keep_alive = "keep-alive" in connection
        encoding = headers.get("content-encoding")
        if encoding and encoding.lower() != "identity":
            raise ProtocolError(f"unsupported Content-Encoding {encoding!r} (we send no Accept-Encoding)")
        self._framing(status, headers)

    def _framing(self, status: int, headers: dict[str, str]) -> None:
        if self._no_body or status in (204, 304):
            self._state = _DONE
            return
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower().replace(" ", "") not in ("chunked", "identity,chunked"):
                raise ProtocolError(f"unsupported Transfer-Encoding {coding!r}")
            if "content-length" in headers:  # RFC 9112 6.3: chunked wins, and the connection closes
                self.keep_alive = False
            self._state = _CHUNK_SIZE
            return
        length = headers.get("content-length")
        if length is None:
            self._state = _TO_EOF
            self.keep_alive = False
            return
        value = length
        if not (length.isascii() and length.isdecimal()):
            values = {v.strip(" \t") for v in length.split(",")}  # repeated equal values are allowed
            value = values.pop()
            if values or not _DIGITS.fullmatch(value):
                raise ProtocolError(f"malformed Content-Length {length[:40]!r}")
        elif len(length) > 18:
            raise ProtocolError(f"malformed Content-Length {length[:40]!r}")
        self._remaining = int(value)
        self._state = _LENGTH if self._remaining else _DONE
