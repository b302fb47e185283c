"""The Kubernetes CEL ip and cidr libraries (k8s.io/apiserver/pkg/cel/library/{ip,cidr}.go).

Addresses are parsed as Go's `netip.ParseAddr`/`ParsePrefix` parse them, with their error texts
(no leading zeros in IPv4 fields, zones only after IPv6), then refused as the libraries refuse them
(zones, IPv4-mapped IPv6); Python's `ipaddress` does the rest.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from pyscaffold_op.apiextensions import celtypes
from pyscaffold_op.apiextensions.celtypes import Decl

__all__ = ["AddrError", "declarations", "parse_addr", "parse_prefix"]

IP_TYPE = "net.IP"
CIDR_TYPE = "net.CIDR"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddrError(ValueError):
    """Not an address or prefix; `str()` is the library's error text."""


def _addr_error(text: str, msg: str, at: str | None = None) -> AddrError:
    q = celtypes.go_quote
    suffix = f" (at {q(at)})" if at is not None else ""
    return AddrError(f"ParseAddr({q(text)}): {msg}{suffix}")


def _ipv4_fields(whole: str, part: str) -> list[int]:
    fields: list[int] = []
    value = 0
    digits = 0
    for i, ch in enumerate(part):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(whole, "IPv4 field has octet with leading zero")
            value = value * 10 + int(ch)
            digits += 1
            if value > 255:
                raise _addr_error(whole, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(part) - 1 or part[i - 1] == ".":
                raise _addr_error(whole, "IPv4 field must have at least one digit", part[i:])
            if len(fields) == 3:
                raise _addr_error(whole, "IPv4 address too long")
            fields.append(value)
            value = 0
            digits = 0
        else:
            raise _addr_error(whole, "unexpected character", part[i:])
    if len(fields) < 3:
        raise _addr_error(whole, "IPv4 address too short")
    fields.append(value)
    return fields


def _ipv6(whole: str) -> tuple[bytes, str]:
    s = whole
    zone = ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if not zone:
            raise _addr_error(whole, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if not s:
            return bytes(ip), zone
    i = 0
    while i < 16:
        off = 0
        acc = 0
        while off < len(s):
            ch = s[off].lower()
            if "0" <= ch <= "9" or "a" <= ch <= "f":
                acc = (acc << 4) + int(ch, 16)
            else:
                break
            if off > 3:
                raise _addr_error(whole, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(whole, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(whole, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    whole, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _addr_error(
                    whole, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            ip[i : i + 4] = bytes(_ipv4_fields(whole, s))
            s = ""
            i += 4
            break
        ip[i] = acc >> 8
        ip[i + 1] = acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(whole, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(whole, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(whole, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(whole, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(whole, "address string too short")
        n = 16 - i
        ip[ellipsis + n : 16] = ip[ellipsis:i]
        ip[ellipsis : ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise _addr_error(whole, "the :: must expand to at least one field of zeros", whole)
    return bytes(ip), zone


def _go_parse_addr(text: str) -> tuple[Address, str]:
    """netip.ParseAddr: the address and its zone; AddrError with netip's text."""
    for ch in text:
        if ch == ".":
            return ipaddress.IPv4Address(bytes(_ipv4_fields(text, text))), ""
        if ch == ":":
            packed, zone = _ipv6(text)
            return ipaddress.IPv6Address(packed), zone
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _is_4in6(addr: Address) -> bool:
    return isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None


def parse_addr(text: str) -> Address:
    """The ip library's parseIPAddr: no zones, no IPv4-mapped IPv6."""
    q = celtypes.go_quote
    try:
        addr, zone = _go_parse_addr(text)
    except AddrError as err:
        raise AddrError(f"IP Address {q(text)} parse error during conversion from string: {err}") from None
    if zone:
        raise AddrError(f"IP address {q(text)} with zone value is not allowed")
    if _is_4in6(addr):
        raise AddrError(f"IPv4-mapped IPv6 address {q(text)} is not allowed")
    return addr


def _prefix_error(text: str, msg: str) -> AddrError:
    return AddrError(f"netip.ParsePrefix({celtypes.go_quote(text)}): {msg}")


def _go_parse_prefix(text: str) -> tuple[Address, int]:
    """netip.ParsePrefix: the (unmasked) address and the prefix length."""
    slash = text.rfind("/")
    if slash < 0:
        raise _prefix_error(text, "no '/'")
    try:
        addr, zone = _go_parse_addr(text[:slash])
    except AddrError as err:
        raise _prefix_error(text, str(err)) from None
    if zone:
        raise _prefix_error(text, "IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    bad = _prefix_error(text, f"bad bits after slash: {celtypes.go_quote(bits_text)}")
    if len(bits_text) > 1 and not ("1" <= bits_text[0] <= "9"):
        raise bad
    body = bits_text[1:] if bits_text[:1] in ("+", "-") else bits_text
    if not body or not body.isascii() or not body.isdigit():
        raise bad
    bits = int(bits_text)
    if abs(bits) >= 1 << 63:
        raise bad
    if bits < 0 or bits > addr.max_prefixlen:
        raise _prefix_error(text, "prefix length out of range")
    return addr, bits


def parse_prefix(text: str) -> tuple[Address, int]:
    """The cidr library's parseCIDR (its error texts wrapped twice, as the server prints them)."""
    wrap = "network address parse error during conversion from string: "
    try:
        addr, bits = _go_parse_prefix(text)
    except AddrError as err:
        raise AddrError(f"{wrap}{wrap}{err}") from None
    if _is_4in6(addr):
        raise AddrError(f"{wrap}IPv4-mapped IPv6 address {celtypes.go_quote(text)} is not allowed")
    return addr, bits


# ------------------------------------------------------------------ address properties, as netip has them


def _is_link_local_multicast(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address):
        return addr.packed[:3] == b"\xe0\x00\x00"
    return (int.from_bytes(addr.packed[:2], "big") & 0xFF0F) == 0xFF02


def _is_link_local_unicast(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address):
        return addr.packed[:2] == b"\xa9\xfe"
    return (int.from_bytes(addr.packed[:2], "big") & 0xFFC0) == 0xFE80


def _is_global_unicast(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address) and int(addr) in (0, 0xFFFFFFFF):
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or _is_link_local_unicast(addr))


def _is_loopback(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv4Address):
        return addr.packed[0] == 127
    return int(addr) == 1


# ------------------------------------------------------------------ the CEL functions


def _ip(value: Any) -> Address:
    return ipaddress.ip_address(celtypes.state(value))


def _cidr(value: Any) -> tuple[Address, int]:
    addr, _, bits = celtypes.state(value).rpartition("/")
    return ipaddress.ip_address(addr), int(bits)


def _wrap_ip(addr: Address) -> Any:
    return celtypes.make(IP_TYPE, str(addr))


def _wrap_cidr(addr: Address, bits: int) -> Any:
    return celtypes.make(CIDR_TYPE, f"{addr}/{bits}")


def _masked(addr: Address, bits: int) -> Address:
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False).network_address


def _contains_ip(cidr: Any, addr: Address) -> bool:
    net, bits = _cidr(cidr)
    return net.version == addr.version and _masked(net, bits) == _masked(addr, bits)


def _contains_ip_string(cidr: Any, text: str) -> bool:
    try:
        addr = parse_addr(text)
    except AddrError:
        # the server's cidrContainsIP gets the parse error where an IP belongs: no such overload
        raise ValueError("no such overload") from None
    return _contains_ip(cidr, addr)


def _contains_cidr(cidr: Any, other: tuple[Address, int]) -> bool:
    net, bits = _cidr(cidr)
    addr, other_bits = other
    # netip: Masked() == PrefixFrom(other.Addr(), bits), the other address itself not masked
    same = net.version == addr.version and _masked(net, bits) == addr
    return same and bits <= other_bits


def _is(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except AddrError:
        return False
    return True


def declarations() -> dict[str, list[Any]]:
    """Overloads by function name."""
    from cel_expr_python import cel

    T = cel.Type
    IP = celtypes.message_type(IP_TYPE)
    CIDR = celtypes.message_type(CIDR_TYPE)

    def member(oid: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return Decl(oid, ret, params, is_member=True, impl=impl)

    def canonical(text: str) -> bool:
        return str(parse_addr(text)) == text

    return {
        "ip": [
            Decl("string_to_ip", IP, [T.STRING], impl=lambda s: _wrap_ip(parse_addr(s))),
            member("cidr_ip", IP, [CIDR], lambda c: _wrap_ip(_cidr(c)[0])),
        ],
        "isIP": [Decl("is_ip", T.BOOL, [T.STRING], impl=lambda s: _is(parse_addr, s))],
        "ip.isCanonical": [Decl("ip_is_canonical", T.BOOL, [T.STRING], impl=canonical)],
        "family": [member("ip_family", T.INT, [IP], lambda a: _ip(a).version)],
        "isUnspecified": [member("ip_is_unspecified", T.BOOL, [IP], lambda a: _ip(a).is_unspecified)],
        "isLoopback": [member("ip_is_loopback", T.BOOL, [IP], lambda a: _is_loopback(_ip(a)))],
        "isLinkLocalMulticast": [
            member("ip_is_link_local_multicast", T.BOOL, [IP], lambda a: _is_link_local_multicast(_ip(a)))
        ],
        "isLinkLocalUnicast": [
            member("ip_is_link_local_unicast", T.BOOL, [IP], lambda a: _is_link_local_unicast(_ip(a)))
        ],
        "isGlobalUnicast": [
            member("ip_is_global_unicast", T.BOOL, [IP], lambda a: _is_global_unicast(_ip(a)))
        ],
        "string": [
            Decl("ip_to_string", T.STRING, [IP], impl=lambda a: str(_ip(a))),
            Decl("cidr_to_string", T.STRING, [CIDR], impl=lambda c: "{}/{}".format(*_cidr(c))),
        ],
        "cidr": [Decl("string_to_cidr", CIDR, [T.STRING], impl=lambda s: _wrap_cidr(*parse_prefix(s)))],
        "isCIDR": [Decl("is_cidr", T.BOOL, [T.STRING], impl=lambda s: _is(parse_prefix, s))],
        "containsIP": [
            member("cidr_contains_ip_string", T.BOOL, [CIDR, T.STRING], _contains_ip_string),
            member("cidr_contains_ip_ip", T.BOOL, [CIDR, IP], lambda c, a: _contains_ip(c, _ip(a))),
        ],
        "containsCIDR": [
            member(
                "cidr_contains_cidr_string",
                T.BOOL,
                [CIDR, T.STRING],
                lambda c, s: _contains_cidr(c, parse_prefix(s)),
            ),
            member("cidr_contains_cidr", T.BOOL, [CIDR, CIDR], lambda c, o: _contains_cidr(c, _cidr(o))),
        ],
        "prefixLength": [member("cidr_prefix_length", T.INT, [CIDR], lambda c: _cidr(c)[1])],
        "masked": [
            member("cidr_masked", CIDR, [CIDR], lambda c: _wrap_cidr(_masked(*_cidr(c)), _cidr(c)[1]))
        ],
    }
