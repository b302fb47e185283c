"""The Kubernetes CEL url library (k8s.io/apiserver/pkg/cel/library/urls.go) on a port of Go's net/url.

`url()` checks its string with `url.ParseRequestURI` (an absolute URI or an absolute path; the error
texts are Go's) and keeps what `url.Parse` makes of it; the getters are `URL.Scheme`, `Host`,
`Hostname()`, `Port()`, `EscapedPath()` and `Query()`. Two URLs are equal when their strings are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apiextensions import celtypes
from pyscaffold_op.apiextensions.celtypes import Decl

__all__ = ["URL", "URLError", "declarations", "parse", "parse_request_uri"]

TYPE = "kubernetes.URL"
_HEX = frozenset("0123456789abcdefABCDEF")
_HOST_OK = frozenset("!$&'()*+,;=:[]<>\"")
_UNRESERVED = frozenset("-_.~")
_RESERVED = frozenset("$&+,/:;=?@")


class URLError(ValueError):
    """Go's url.Error text: `parse "<url>": <reason>`."""


@dataclass(frozen=True)
class URL:
    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""


# ------------------------------------------------------------------ escaping (net/url's shouldEscape)


def _should_escape(c: str, mode: str) -> bool:
    if c.isascii() and c.isalnum():
        return False
    if mode in ("host", "zone") and c in _HOST_OK:
        return False
    if c in _UNRESERVED:
        return False
    if c in _RESERVED:
        if mode == "path":
            return c == "?"
        if mode == "user":
            return c in "@/?:"
        if mode == "query":
            return True
        if mode == "fragment":
            return False
    return not (mode == "fragment" and c in "!()*")


def _unescape(s: str, mode: str) -> str:
    data = s.encode()
    i = 0
    while i < len(data):
        c = chr(data[i])
        if c == "%":
            if i + 2 >= len(data) or chr(data[i + 1]) not in _HEX or chr(data[i + 2]) not in _HEX:
                bad = data[i : i + 3].decode(errors="replace")
                raise ValueError(f"invalid URL escape {celtypes.go_quote(bad)}")
            pair = data[i : i + 3].decode()
            if mode == "host" and int(pair[1], 16) < 8 and pair != "%25":
                raise ValueError(f"invalid URL escape {celtypes.go_quote(pair)}")
            if mode == "zone":
                value = chr(int(pair[1:], 16))
                if pair != "%25" and value != " " and _should_escape(value, "host"):
                    raise ValueError(f"invalid URL escape {celtypes.go_quote(pair)}")
            i += 3
            continue
        if mode in ("host", "zone") and data[i] < 0x80 and _should_escape(c, mode):
            raise ValueError(f"invalid character {celtypes.go_quote(c)} in host name")
        i += 1
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == ord("%"):
            out.append(int(data[i + 1 : i + 3], 16))
            i += 3
        elif data[i] == ord("+") and mode == "query":
            out.append(ord(" "))
            i += 1
        else:
            out.append(data[i])
            i += 1
    return out.decode(errors="replace")


def _escape(s: str, mode: str) -> str:
    out = []
    for byte in s.encode():
        c = chr(byte)
        if byte < 0x80 and not _should_escape(c, mode):
            out.append(c)
        elif c == " " and mode == "query":
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def _valid_encoded(s: str) -> bool:
    for c in s:
        if c in "!$&'()*+,;=:@[]%":
            continue
        if not c.isascii() or _should_escape(c, "path"):
            return False
    return True


# ------------------------------------------------------------------ parsing (net/url's parse)


def _get_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if (c.isascii() and c.isdigit()) or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _valid_optional_port(port: str) -> bool:
    if not port:
        return True
    return port[0] == ":" and all("0" <= c <= "9" for c in port[1:])


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise ValueError("missing ']' in host")
        colon_port = host[end + 1 :]
        if not _valid_optional_port(colon_port):
            raise ValueError(f"invalid port {celtypes.go_quote(colon_port)} after host")
        zone = host[:end].find("%25")
        if zone >= 0:
            return (
                _unescape(host[:zone], "host")
                + _unescape(host[zone:end], "zone")
                + _unescape(host[end:], "host")
            )
    else:
        colon = host.rfind(":")
        if colon != -1 and not _valid_optional_port(host[colon:]):
            raise ValueError(f"invalid port {celtypes.go_quote(host[colon:])} after host")
    return _unescape(host, "host")


def _valid_userinfo(s: str) -> bool:
    return all((c.isascii() and c.isalnum()) or c in "-._:~!$&'()*+,;=%@" for c in s)


def _parse_authority(authority: str) -> str:
    at = authority.rfind("@")
    host = _parse_host(authority[at + 1 :] if at >= 0 else authority)
    if at >= 0:
        userinfo = authority[:at]
        if not _valid_userinfo(userinfo):
            raise ValueError("net/url: invalid userinfo")
        for part in userinfo.split(":", 1):
            _unescape(part, "user")
    return host


def _parse(raw: str, via_request: bool) -> URL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise ValueError("empty url")
    if raw == "*":
        return URL(path="*")
    scheme, rest = _get_scheme(raw)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest, raw_query = rest[:-1], ""
    else:
        rest, _, raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return URL(scheme=scheme, opaque=rest, raw_query=raw_query)
        if via_request:
            raise ValueError("invalid URI for request")
        if ":" in rest.split("/", 1)[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    host = ""
    if (scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        host = _parse_authority(authority)
    path = _unescape(rest, "path")
    raw_path = "" if _escape(path, "path") == rest else rest
    return URL(scheme=scheme, host=host, path=path, raw_path=raw_path, raw_query=raw_query)


def _error(raw: str, err: ValueError) -> URLError:
    return URLError(f"parse {celtypes.go_quote(raw)}: {err}")


def parse_request_uri(raw: str) -> URL:
    """url.ParseRequestURI."""
    try:
        return _parse(raw, True)
    except ValueError as err:
        raise _error(raw, err) from None


def parse(raw: str) -> URL:
    """url.Parse: the fragment is cut off first, then checked."""
    rest, hashed, fragment = raw.partition("#")
    try:
        url = _parse(rest, False)
    except ValueError as err:
        raise _error(rest, err) from None
    if hashed:
        try:
            _unescape(fragment, "fragment")
        except ValueError as err:
            raise _error(raw, err) from None
    return url


def escaped_path(url: URL) -> str:
    if url.raw_path and _valid_encoded(url.raw_path):
        try:
            if _unescape(url.raw_path, "path") == url.path:
                return url.raw_path
        except ValueError:
            pass
    if url.path == "*":
        return "*"
    return _escape(url.path, "path")


def _split_host_port(host_port: str) -> tuple[str, str]:
    host, port = host_port, ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def query(url: URL) -> dict[str, list[str]]:
    """url.Query(): pairs that do not parse are left out, as Go drops them."""
    out: dict[str, list[str]] = {}
    for pair in url.raw_query.split("&") if url.raw_query else []:
        if ";" in pair or not pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, "query"), _unescape(value, "query")
        except ValueError:
            continue
        out.setdefault(key, []).append(value)
    return out


# ------------------------------------------------------------------ the CEL functions


def _to_url(text: str) -> Any:
    try:
        parse_request_uri(text)
        parse(text)
    except URLError as err:
        raise ValueError(f"URL parse error during conversion from string: {err}") from None
    return celtypes.make(TYPE, text)


def _is_url(text: str) -> bool:
    try:
        parse_request_uri(text)
    except URLError:
        return False
    return True


def _u(value: Any) -> URL:
    return parse(celtypes.state(value))


def declarations() -> dict[str, list[Any]]:
    """Overloads by function name."""
    from cel_expr_python import cel

    T = cel.Type
    U = celtypes.message_type(TYPE)

    def member(oid: str, ret: Any, impl: Any) -> Any:
        return Decl(oid, ret, [U], is_member=True, impl=impl)

    return {
        "url": [Decl("string_to_url", U, [T.STRING], impl=_to_url)],
        "isURL": [Decl("is_url_string", T.BOOL, [T.STRING], impl=_is_url)],
        "getScheme": [member("url_get_scheme", T.STRING, lambda u: _u(u).scheme)],
        "getHost": [member("url_get_host", T.STRING, lambda u: _u(u).host)],
        "getHostname": [member("url_get_hostname", T.STRING, lambda u: _split_host_port(_u(u).host)[0])],
        "getPort": [member("url_get_port", T.STRING, lambda u: _split_host_port(_u(u).host)[1])],
        "getEscapedPath": [member("url_get_escaped_path", T.STRING, lambda u: escaped_path(_u(u)))],
        "getQuery": [member("url_get_query", T.Map(T.STRING, T.List(T.STRING)), lambda u: query(_u(u)))],
    }
