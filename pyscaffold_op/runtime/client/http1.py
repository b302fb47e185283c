"""HTTP/1.1 responses for the runtime's own client (`http1pool.py`), parsed by llhttp (httptools).

Fed the bytes as they arrive, in any split: the status line and headers, a body framed by
Content-Length, chunked (extensions ignored, trailers read and dropped) or read to EOF; 1xx answers
are skipped. Lines may end in a bare LF as well as CRLF (RFC 9112 2.2; Go's client takes both, and
a server or proxy that sends LF would otherwise leave a request waiting for its deadline); a folded
header line is joined with a space (RFC 9112 5.2). Anything malformed raises `ProtocolError`. The
runtime sends no Accept-Encoding, so a compressed body is refused rather than decoded (the API
server compresses only when asked).

Why llhttp and not our own: the parser runs for every response and every watch event. The pure-Python
parser it replaces cost ~10% of an operator's CPU per object on kube-apiserver (docs/benchmarks.md,
*pyop vs controller-runtime*); llhttp (Node's parser, the one uvicorn and the emulator's front use)
does the framing in C and calls back once per header and once per body piece. Stricter than the old
parser in two corners no Go server produces: whitespace around a chunk extension's `;` and a chunk-size
line ended by a bare LF are refused.
"""

from __future__ import annotations

from collections.abc import Callable

import httptools

# Go's http.Transport reads at most 10 MB of response headers; an API server sends a few hundred bytes.
# llhttp does not buffer, but httptools collects each header's name and value: the head is bounded here.
MAX_HEAD = 1 << 20


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


class _PastTheEnd(Exception):
    """Raised from llhttp's callback when a second response starts: it answers no request."""


# header names as sent -> lowercased and checked: a server sends the same few names every time
_NAMES: dict[bytes, str] = {}


class _HeadOnly(Exception):
    """Raised from llhttp's callback to stop at the head of an answer that has no body (HEAD)."""


class ResponseParser:
    """One connection's responses, one at a time: `reset()` before each, then `feed()` until it
    returns True. The body is collected (`body()`), or handed to `on_body` piece by piece."""

    __slots__ = (
        "_error",
        "_head_bytes",
        "_head_done",
        "_interim",
        "_llhttp",
        "_no_body",
        "_parts",
        "_reason",
        "_seen",
        "_state",
        "extra",
        "headers",
        "keep_alive",
        "on_body",
        "reason",
        "status",
    )

    def __init__(self, on_body: Callable[[bytes], None] | None = None) -> None:
        self.on_body = on_body
        self._state = 0  # 0 reading, 1 complete
        self.keep_alive = True
        self._no_body = False
        self.reset()

    def reset(self, no_body: bool = False) -> None:
        """Expect a new response; `no_body` for the answer to a HEAD request."""
        # llhttp starts over by itself after a complete response; after anything else, a new parser
        reuse = self._state == 1 and self.keep_alive and not self._no_body
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.keep_alive = True
        self.extra = False  # bytes came after the response: the connection is then not reusable
        self._state = 0
        self._head_done = False
        self._interim = False  # inside a 1xx answer, which the real one follows
        self._head_bytes = 0
        self._reason: list[bytes] = []
        self._parts: list[bytes] = []
        self._no_body = no_body
        self._seen = False
        self._error: BaseException | None = None
        if reuse:
            return
        self._llhttp = parser = httptools.HttpResponseParser(_Callbacks(self))
        # A bare LF ends a line as CRLF does (RFC 9112 2.2); a length beside chunked is framed as
        # chunked and the connection dropped after (RFC 9112 6.3); folded header lines are joined
        parser.set_dangerous_leniencies(
            lenient_optional_cr_before_lf=True,
            lenient_chunked_length=True,
            lenient_headers=True,  # folded lines; a field name with whitespace is refused in _on_header
            lenient_spaces_after_chunk_size=True,  # as Go's chunked reader trims them
        )

    @property
    def started(self) -> bool:
        """Whether any byte of this response has arrived (a retry is safe only before)."""
        return self._seen

    @property
    def head_done(self) -> bool:
        return self._head_done

    @property
    def done(self) -> bool:
        return self._state == 1

    def body(self) -> bytes:
        parts = self._parts
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def feed(self, data: bytes) -> bool:
        """Parse `data`; True once the response is complete (bytes past it make `extra` True)."""
        if not data:
            return self._state == 1
        self._seen = True
        if self._state == 1:
            self._past_the_end()
            return True
        try:
            self._llhttp.feed_data(data)
        except httptools.HttpParserCallbackError as err:
            error, self._error = self._error, None
            if isinstance(error, _PastTheEnd):
                self._past_the_end()
                return True
            if isinstance(error, _HeadOnly):
                return True
            if isinstance(error, HTTPError):
                raise error from None
            raise ProtocolError(f"malformed response: {error or err}") from error
        except httptools.HttpParserError as err:
            raise ProtocolError(f"malformed response: {err}") from err
        if not self._head_done:  # httptools keeps a header until its end: the head is bounded here
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD:
                raise ProtocolError(f"response headers longer than {MAX_HEAD} bytes")
        return self._state == 1

    def feed_eof(self) -> bool:
        """The server closed its side: True when that completes the response (a body read to EOF)."""
        if self._state == 1:
            return True
        if not self._seen:
            raise ServerDisconnected("the server closed the connection without answering")
        if self._head_done and not self._interim and self._to_eof():
            self._state = 1
            self.keep_alive = False
            return True
        where = "in the body" if self._head_done else "in the headers"
        raise ServerDisconnected(f"the server closed the connection mid-response ({where})")

    def _to_eof(self) -> bool:
        headers = self.headers
        return "transfer-encoding" not in headers and "content-length" not in headers

    def _past_the_end(self) -> None:
        self.extra = True
        self.keep_alive = False  # we pipeline nothing: these bytes answer no request

    # -- llhttp's callbacks, through _Callbacks ----------------------------------------------------
    def _fail(self, error: BaseException) -> BaseException:
        self._error = error  # httptools reports a failed callback without its exception
        return error

    def _on_message_begin(self) -> None:
        if self._state == 1:
            raise self._fail(_PastTheEnd())

    def _on_status(self, reason: bytes) -> None:
        self._reason.append(reason)

    def _on_header(self, name: bytes, value: bytes) -> None:
        if self._head_done:
            return  # a trailer: read and dropped
        key = _NAMES.get(name)
        if key is None:
            key = name.decode("latin-1").lower()
            if not key or key[0] in " \t" or key[-1] in " \t":  # "Name : v" is ambiguous (RFC 9112 5.1)
                raise self._fail(ProtocolError(f"malformed header name {key[:40]!r}"))
            if len(_NAMES) < 256:
                _NAMES[name] = key
        text = value.decode("latin-1")
        if "\n" in text or "\t" in text:  # a folded line (obs-fold): joined with a space (RFC 9112 5.2)
            text = " ".join(text.replace("\r", " ").replace("\n", " ").replace("\t", " ").split())
        headers = self.headers
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def _on_headers_complete(self) -> None:
        parser = self._llhttp
        status = parser.get_status_code()
        if parser.get_http_version() not in ("1.1", "1.0"):
            raise self._fail(ProtocolError(f"unsupported HTTP version {parser.get_http_version()!r}"))
        if status < 200:
            if status == 101 or status < 100:
                raise self._fail(
                    ProtocolError(f"unexpected status {status} (we asked for no protocol switch)")
                )
            self._interim = True  # 100 Continue, 103 Early Hints: the real answer follows
            self.headers = {}
            self._reason = []
            return
        headers = self.headers
        self.status = status
        self.reason = b"".join(self._reason).decode("latin-1")
        encoding = headers.get("content-encoding")
        if encoding and encoding.lower() != "identity":
            raise self._fail(
                ProtocolError(f"unsupported Content-Encoding {encoding!r} (we send no Accept-Encoding)")
            )
        coding = headers.get("transfer-encoding")
        if coding is not None and coding.lower().replace(" ", "") not in ("chunked", "identity,chunked"):
            raise self._fail(ProtocolError(f"unsupported Transfer-Encoding {coding!r}"))
        self.keep_alive = parser.should_keep_alive() and not (
            coding is not None and "content-length" in headers  # RFC 9112 6.3: not trusted again
        )
        self._head_done = True
        if self._no_body:
            self._state = 1
            raise self._fail(_HeadOnly())

    def _on_body(self, piece: bytes) -> None:
        if self.on_body is not None:
            self.on_body(piece)
        else:
            self._parts.append(piece)

    def _on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        self._state = 1


class _Callbacks:
    """The callbacks llhttp makes (httptools looks them up by name once per parser)."""

    __slots__ = (
        "on_body",
        "on_header",
        "on_headers_complete",
        "on_message_begin",
        "on_message_complete",
        "on_status",
    )

    def __init__(self, parser: ResponseParser) -> None:
        self.on_message_begin = parser._on_message_begin
        self.on_status = parser._on_status
        self.on_header = parser._on_header
        self.on_headers_complete = parser._on_headers_complete
        self.on_body = parser._on_body
        self.on_message_complete = parser._on_message_complete
