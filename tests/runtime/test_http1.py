"""The runtime's HTTP/1.1 response parser: framing (Content-Length, chunked, to EOF), 1xx, keep-alive,
and malformed responses refused, whatever way the bytes are split across reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pyscaffold_op.runtime.client.http1 import ProtocolError, ResponseParser, ServerDisconnected

CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;name=value;other\r\nhello\r\n"
    b"1 ;spaced\r\n \r\n"
    b'A\r\n{"a": [1]}\r\n'
    b"0\r\nX-Checksum: abc\r\nX-Other: d\r\n\r\n"
)
RESPONSES = {
    "length": (
        b"HTTP/1.1 201 Created\r\nContent-Length: 11\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello world",
        201,
        b"hello world",
    ),
    "chunked": (CHUNKED, 200, b'hello {"a": [1]}'),
    "informational": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}",
        404,
        b"{}",
    ),
    "empty chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, b""),
    "no reason": (b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 200, b""),
    # RFC 9112 2.2: a recipient may take a bare LF as a line's end (Go's client does)
    "bare LF": (b"HTTP/1.1 200 OK\nContent-Length: 3\nX-A: 1\n\n{}\n", 200, b"{}\n"),
    "bare LF chunked": (
        b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5\r\nhel\nl\r\n2;x\r\n\n\n\r\n0\r\nX-T: 1\n\n",
        200,
        b"hel\nl\n\n",
    ),
    "mixed endings": (b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n{}", 200, b"{}"),
}


def splits(data: bytes) -> Iterator[list[bytes]]:
    """`data` in two pieces at every boundary, then one byte at a time."""
    for i in range(len(data) + 1):
        yield [data[:i], data[i:]]
    yield [data[i : i + 1] for i in range(len(data))]


@pytest.mark.parametrize("name", RESPONSES)
def test_responses_parse_alike_at_every_split(name: str) -> None:
    raw, status, body = RESPONSES[name]
    for pieces in splits(raw):
        parser = ResponseParser()
        done = [parser.feed(piece) for piece in pieces if piece]
        assert done[-1] and not any(done[:-1]), pieces  # complete with its last byte, not before
        assert (parser.status, parser.body(), parser.keep_alive, parser.extra) == (status, body, True, False)
    parser = ResponseParser()
    parser.feed(raw)
    if name == "length":
        assert parser.headers["x-a"] == "1, 2" and parser.reason == "Created"


def test_a_streamed_body_arrives_in_pieces_as_it_comes() -> None:
    pieces: list[bytes] = []
    parser = ResponseParser(on_body=pieces.append)
    head, first, rest = CHUNKED.partition(b"hello\r\n")
    assert not parser.feed(head + first[:3]) and parser.head_done and pieces == [b"hel"]
    assert parser.feed(first[3:] + rest)
    assert b"".join(pieces) == b'hello {"a": [1]}' and parser.body() == b""


def test_keep_alive_follows_the_version_and_connection_header() -> None:
    cases = {
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n": False,
        b"HTTP/1.1 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n": True,
        b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n": False,
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n": True,
        # chunked and a length: chunked wins, and the connection is not trusted again (RFC 9112 6.3)
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n": False,
    }
    for raw, keep_alive in cases.items():
        parser = ResponseParser()
        assert parser.feed(raw) and parser.keep_alive is keep_alive, raw


def test_no_body_for_head_204_and_304_whatever_the_length_says() -> None:
    head = ResponseParser()
    head.reset(no_body=True)
    assert head.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 120\r\n\r\n") and head.body() == b""
    for status in (b"204 No Content", b"304 Not Modified"):
        parser = ResponseParser()
        assert parser.feed(b"HTTP/1.1 " + status + b"\r\nContent-Length: 7\r\n\r\n")


def test_a_body_without_length_is_read_to_eof() -> None:
    parser = ResponseParser()
    assert not parser.feed(b"HTTP/1.1 200 OK\r\n\r\npart one, ")
    assert not parser.feed(b"part two")
    assert parser.feed_eof() and parser.body() == b"part one, part two" and not parser.keep_alive


def test_eof_before_the_end_is_a_disconnect_and_says_whether_anything_came() -> None:
    silent = ResponseParser()
    with pytest.raises(ServerDisconnected, match="without answering"):
        silent.feed_eof()
    assert not silent.started
    for raw in (
        b"HTTP/1.1 200 OK\r\nContent-Le",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
        CHUNKED[:-2],
    ):
        parser = ResponseParser()
        parser.feed(raw)
        with pytest.raises(ServerDisconnected, match="mid-response"):
            parser.feed_eof()
        assert parser.started


def test_bytes_past_the_response_make_the_connection_unusable() -> None:
    parser = ResponseParser()
    assert parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n")
    assert parser.body() == b"ok" and parser.extra and not parser.keep_alive
    later = ResponseParser()  # or in a later read
    assert later.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    assert later.keep_alive and later.feed(b"HTTP/1.1") and later.extra and not later.keep_alive


def test_a_folded_header_line_is_joined_with_a_space() -> None:
    parser = ResponseParser()
    assert parser.feed(b"HTTP/1.1 200 OK\r\nX-Long: one\r\n\t two\r\nContent-Length: 0\r\n\r\n")
    assert parser.headers["x-long"] == "one two"


MALFORMED = {
    "version": b"HTTP/2 200 OK\r\n\r\n",
    "not http": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "status letters": b"HTTP/1.1 2x0 OK\r\n\r\n",
    "status unicode digit": "HTTP/1.1 20\u00b2 OK\r\n\r\n".encode("latin-1"),
    "status glued": b"HTTP/1.1 200OK\r\n\r\n",
    "header without colon": b"HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n",
    "space before colon": b"HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
    "fold first": b"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
    "length letters": b"HTTP/1.1 200 OK\r\nContent-Length: 1a\r\n\r\n",
    "length negative": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "lengths differ": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "transfer gzip": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    "content gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n",
    "switching": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
    "chunk size letters": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "chunk size 0x": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    "chunk size underscore": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n",
    "chunk size empty": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
    "chunk too long": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
    "trailer without colon": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n",
    # llhttp is stricter than Go's chunked reader in two corners no Go server writes: a chunk-size
    # line ended by a bare LF, and whitespace after an extension's ";"
    "chunk size bare LF": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n",
    "chunk extension spaced": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5; x\r\nhello\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_responses_are_refused_at_every_split(name: str) -> None:
    for pieces in splits(MALFORMED[name]):
        parser = ResponseParser()
        with pytest.raises(ProtocolError):
            for piece in pieces:
                parser.feed(piece)


def test_endless_headers_are_refused_and_chunk_extensions_are_not_kept() -> None:
    parser = ResponseParser()
    with pytest.raises(ProtocolError, match="headers longer"):
        parser.feed(b"HTTP/1.1 200 OK\r\n")
        for _ in range(20):
            parser.feed(b"X-Filler: " + b"a" * 65536 + b"\r\n")
    # llhttp reads a chunk extension without keeping it: a long one holds no memory, the chunk is read
    chunked = ResponseParser()
    chunked.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(20):
        assert not chunked.feed(b"5;" + b"x" * 65536 if _ == 0 else b"x" * 65536)
    assert chunked.feed(b"\r\nhello\r\n0\r\n\r\n") and chunked.body() == b"hello"


def test_one_parser_reads_a_connections_responses_one_after_another() -> None:
    parser = ResponseParser()
    for raw, status, body in (*RESPONSES.values(), *RESPONSES.values()):
        parser.reset()
        assert parser.feed(raw) and (parser.status, parser.body(), parser.keep_alive) == (status, body, True)
    parser.reset(no_body=True)  # a HEAD's answer: its length names a body that does not come
    assert parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 120\r\n\r\n") and parser.body() == b""
    parser.reset()
    assert parser.feed(b"HTTP/1.1 404 Not Found\r\nX-A: 1\r\nContent-Length: 2\r\n\r\n{}")
    assert (parser.status, parser.reason, parser.headers["x-a"], parser.body()) == (
        404,
        "Not Found",
        "1",
        b"{}",
    )
