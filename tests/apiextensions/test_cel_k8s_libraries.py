"""The Kubernetes CEL quantity, url, ip, cidr and semver libraries, on the cases of their upstream tests
(k8s.io/apiserver/pkg/cel/library/*_test.go): values, runtime error texts and compile errors."""

from __future__ import annotations

import pytest

from pyscaffold_op.apiextensions import cel

STR = {"type": "string"}


class Err(str):
    """An expected evaluation error text."""


def check(expr: str, expected: object) -> None:
    """`expr` evaluates to the CEL literal `expected`, or fails with the Err text."""
    if isinstance(expected, Err):
        with pytest.raises(cel.EvalError) as failed:
            cel.compile_rule(f"({expr}) == ({expr})", STR).run("")
        assert str(failed.value) == expected
        return
    assert cel.compile_rule(f"({expr}) == ({expected})", STR).run("") is True


def compile_error(expr: str) -> str:
    with pytest.raises(cel.CompileError) as failed:
        cel.compile_rule(f"({expr}) == ({expr})", STR)
    return str(failed.value)


QUANTITY = [
    ('quantity("12Mi") == quantity("12582912")', "true"),
    (
        'quantity("10Mo")',
        Err("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ),
    ('quantity("10Mm")', Err("unable to parse quantity's suffix")),
    ('isQuantity("20")', "true"),
    ('isQuantity("20M")', "true"),
    ('isQuantity("20Mi")', "true"),
    ('isQuantity("20Mo")', "false"),
    ('isQuantity("10Mm")', "false"),
    ('quantity("200M") == quantity("200M")', "true"),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', "true"),
    (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") '
        '&& quantity("0.002G") == quantity("2000k")',
        "true",
    ),
    ('quantity("200M") == quantity("0.3G")', "false"),
    ('quantity("50M").isLessThan(quantity("50Mi"))', "true"),
    ('quantity("50M").isLessThan(quantity("100M"))', "true"),
    ('quantity("100M").isLessThan(quantity("50M"))', "false"),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', "true"),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', "true"),
    ('quantity("50M").isGreaterThan(quantity("100M"))', "false"),
    ('quantity("200M").compareTo(quantity("0.2G"))', "0"),
    ('quantity("50M").compareTo(quantity("50Mi"))', "-1"),
    ('quantity("50Mi").compareTo(quantity("50M"))', "1"),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', "true"),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', "false"),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', "true"),
    ('quantity("50k").sub(20) == quantity("49980")', "true"),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', "-49980"),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', "20"),
    ('quantity("50k").asInteger()', "50000"),
    (
        'quantity("9999999999999999999999999999999999999G").asInteger()',
        Err("cannot convert value to integer"),
    ),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', "false"),
    ('quantity("50").isInteger()', "true"),
    ('quantity("50.703k").asApproximateFloat()', "50703.0"),
    # the doc's examples; its `isQuantity('Mi') // returns false` is not what ParseQuantity does: a bare
    # suffix scans as the number 0 (its numerator stripped to "0"), so the server takes it
    ('quantity("50k").sub(20000).asApproximateFloat()', "30000.0"),
    ('quantity("50000000G").isInteger()', "true"),
    ('isQuantity("1,3G") || isQuantity("200K") || isQuantity("Three")', "false"),
    ('isQuantity("Mi") && quantity("Mi") == quantity("0") && quantity("-") == quantity("0")', "true"),
    # below a nano rounded away from zero; binary suffixes capped at 2^63-1; `1.G` taken
    ('quantity("0.0000000001") == quantity("1n") && quantity("-1e-12") == quantity("-1n")', "true"),
    ('quantity("8Ei") == quantity("9223372036854775807") && quantity("7Ei").isInteger()', "true"),
    ('quantity("1.G") == quantity("1G") && quantity("1e3") == quantity("1k")', "true"),
    (
        'quantity("1.5.5")',
        Err("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ),
    ('quantity(".e-20")', Err("unable to parse numeric part of quantity")),
    ('quantity("1e99999999999999999999")', Err("unable to parse quantity's suffix")),
    # sign is a global function in the server's library
    ('sign(quantity("-1.5")) == -1 && sign(quantity("0")) == 0 && sign(quantity("2m")) == 1', "true"),
]


@pytest.mark.parametrize(("expr", "expected"), QUANTITY)
def test_quantity(expr: str, expected: object) -> None:
    check(expr, expected)


def test_quantity_compile_errors() -> None:
    assert "found no matching overload for 'isQuantity' applied to '(list(int))'" in compile_error(
        "isQuantity([1, 2, 3])"
    )
    # the server declares sign() global: as a method it is undeclared there too
    assert "undeclared reference to 'sign'" in compile_error('quantity("1").sign()')
    assert "found no matching overload for '_+_'" in compile_error('quantity("1") + 1')


IP = [
    ('ip("192.168.0.1") == ip("192.168.0.1")', "true"),
    (
        'ip("192.168.0.1.0")',
        Err(
            'IP Address "192.168.0.1.0" parse error during conversion from string: '
            'ParseAddr("192.168.0.1.0"): IPv4 address too long'
        ),
    ),
    ('isIP("192.168.0.1")', "true"),
    ('isIP("192.168.0.1.0")', "false"),
    ('ip.isCanonical("127.0.0.1")', "true"),
    (
        'ip.isCanonical("127.0.0.1.0")',
        Err(
            'IP Address "127.0.0.1.0" parse error during conversion from string: '
            'ParseAddr("127.0.0.1.0"): IPv4 address too long'
        ),
    ),
    ('ip("192.168.0.1").family()', "4"),
    ('ip("0.0.0.0").isUnspecified()', "true"),
    ('ip("127.0.0.1").isUnspecified()', "false"),
    ('ip("127.0.0.1").isLoopback()', "true"),
    ('ip("1.2.3.4").isLoopback()', "false"),
    ('ip("224.0.0.1").isLinkLocalMulticast()', "true"),
    ('ip("224.0.1.1").isLinkLocalMulticast()', "false"),
    ('ip("169.254.169.254").isLinkLocalUnicast()', "true"),
    ('ip("192.168.0.1").isLinkLocalUnicast()', "false"),
    ('ip("192.168.0.1").isGlobalUnicast()', "true"),
    ('ip("255.255.255.255").isGlobalUnicast()', "false"),
    ('ip("2001:db8::68") == ip("2001:db8::68")', "true"),
    (
        'ip("2001:db8:::68")',
        Err(
            'IP Address "2001:db8:::68" parse error during conversion from string: '
            'ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit '
            '(at ":68")'
        ),
    ),
    ('isIP("2001:db8::68")', "true"),
    ('isIP("2001:db8:::68")', "false"),
    ('ip.isCanonical("2001:db8::68")', "true"),
    ('ip.isCanonical("2001:DB8::68")', "false"),
    ('ip.isCanonical("2001:db8::0:0:0:abcd")', "false"),
    ('ip("2001:db8::68").family()', "6"),
    ('ip("::").isUnspecified()', "true"),
    ('ip("::1").isUnspecified()', "false"),
    ('ip("::1").isLoopback()', "true"),
    ('ip("2001:db8::abcd").isLoopback()', "false"),
    ('ip("ff02::1").isLinkLocalMulticast()', "true"),
    ('ip("fd00::1").isLinkLocalMulticast()', "false"),
    ('ip("fe80::1").isLinkLocalUnicast()', "true"),
    ('ip("fd80::1").isLinkLocalUnicast()', "false"),
    ('ip("2001:db8::abcd").isGlobalUnicast()', "true"),
    ('ip("ff00::1").isGlobalUnicast()', "false"),
    ('string(ip("192.168.0.1"))', "'192.168.0.1'"),
    ('string(ip("2001:DB8:0:0::1"))', "'2001:db8::1'"),
    ('type(ip("192.168.0.1")) == net.IP', "true"),
    # Kubernetes' strict parsing
    ('isIP("::ffff:1.2.3.4") || isIP("fe80::1%eth0") || isIP("010.0.0.1")', "false"),
    ('ip("::ffff:1.2.3.4")', Err('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed')),
    ('ip("fe80::1%eth0")', Err('IP address "fe80::1%eth0" with zone value is not allowed')),
    (
        'ip("010.0.0.1")',
        Err(
            'IP Address "010.0.0.1" parse error during conversion from string: '
            'ParseAddr("010.0.0.1"): IPv4 field has octet with leading zero'
        ),
    ),
]


@pytest.mark.parametrize(("expr", "expected"), IP)
def test_ip(expr: str, expected: object) -> None:
    check(expr, expected)


CIDR = [
    ('cidr(dyn("192.168.0.0/24")) == cidr("192.168.0.0/24")', "true"),
    (
        'cidr("192.168.0.0/")',
        Err(
            "network address parse error during conversion from string: network address parse error "
            'during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""'
        ),
    ),
    ('cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', "true"),
    ('cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', "false"),
    ('cidr("192.168.0.0/24").containsIP("192.168.0.1")', "true"),
    ('cidr("192.168.0.0/24").containsIP("192.168.1.1")', "false"),
    ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', "true"),
    ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', "false"),
    ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', "true"),
    ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', "false"),
    ('cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', "true"),
    ('cidr("192.168.0.0/24").masked() == cidr("192.168.0.0/24")', "true"),
    ('cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', "true"),
    ('cidr("192.168.0.1/24") == cidr("192.168.0.1/24").masked()', "false"),
    ('cidr("192.168.0.0/24").prefixLength()', "24"),
    ('cidr("2001:db8::/32") == cidr("2001:db8::/32")', "true"),
    (
        'cidr("2001:db8::/")',
        Err(
            "network address parse error during conversion from string: network address parse error "
            'during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""'
        ),
    ),
    ('cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', "true"),
    ('cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', "false"),
    ('cidr("2001:db8::/32").containsIP("2001:db8::1")', "true"),
    ('cidr("2001:db8::/32").containsIP("2001:dc8::1")', "false"),
    ('cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', "true"),
    ('cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', "false"),
    ('cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', "true"),
    ('cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', "false"),
    ('cidr("2001:db8::/32").ip() == ip("2001:db8::")', "true"),
    ('cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', "true"),
    ('cidr("2001:db8::/32").prefixLength()', "32"),
    ('cidr("192.168.0.1/24").ip().family()', "4"),
    ('type(cidr("192.168.0.0/24")) == net.CIDR', "true"),
    ('isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0/33") && !isCIDR("10.0.0.0/08")', "true"),
    # an IPv4 address is never in an IPv6 prefix; a bad address string is no IP to the server
    ('cidr("::/0").containsIP("1.2.3.4")', "false"),
    ('cidr("10.0.0.0/8").containsIP("10.0.0.256")', Err("no such overload")),
    (
        'cidr("::ffff:1.2.3.4/120")',
        Err(
            "network address parse error during conversion from string: "
            'IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed'
        ),
    ),
]


@pytest.mark.parametrize(("expr", "expected"), CIDR)
def test_cidr(expr: str, expected: object) -> None:
    check(expr, expected)


def test_ip_and_cidr_compile_errors() -> None:
    assert "found no matching overload for 'isIP' applied to '(net.CIDR)'" in compile_error(
        'isIP(cidr("192.168.0.0/24"))'
    )
    assert "found no matching overload for 'cidr' applied to '(int)'" in compile_error("cidr(192168)")


URL = [
    ('url("https://user:pass@example.com:80/path?query=val#fragment") == url("/absolute-path")', "false"),
    ('isURL("https://user:pass@example.com:80/path?query=val#fragment")', "true"),
    ('isURL("/absolute-path")', "true"),
    ('isURL("https://a:b:c/")', "false"),
    ('isURL("../relative-path")', "false"),
    (
        'url("https://a:b:c/")',
        Err(
            "URL parse error during conversion from string: "
            'parse "https://a:b:c/": invalid port ":c" after host'
        ),
    ),
    (
        'url("../relative-path")',
        Err(
            'URL parse error during conversion from string: parse "../relative-path": invalid URI for request'
        ),
    ),
    ('url("/path").getScheme()', "''"),
    ('url("https://example.com/").getScheme()', "'https'"),
    ('url("https://example.com:80/").getHost()', "'example.com:80'"),
    ('url("https://example.com/").getHost()', "'example.com'"),
    ('url("https://[::1]:80/").getHost()', "'[::1]:80'"),
    ('url("https://[::1]/").getHost()', "'[::1]'"),
    ('url("/path").getHost()', "''"),
    ('url("https://example.com:80/").getHostname()', "'example.com'"),
    ('url("https://127.0.0.1:80/").getHostname()', "'127.0.0.1'"),
    ('url("https://[::1]:80/").getHostname()', "'::1'"),
    ('url("/path").getHostname()', "''"),
    ('url("https://example.com:80/").getPort()', "'80'"),
    ('url("https://example.com/").getPort()', "''"),
    ('url("/path").getPort()', "''"),
    ('url("https://example.com/path").getEscapedPath()', "'/path'"),
    ('url("https://example.com/path with spaces/").getEscapedPath()', "'/path%20with%20spaces/'"),
    ('url("https://example.com").getEscapedPath()', "''"),
    ('url("https://example.com/path?k1=a&k2=b&k2=c").getQuery()', "{'k1': ['a'], 'k2': ['b', 'c']}"),
    (
        'url("https://example.com/path?key with spaces=value with spaces").getQuery()',
        "{'key with spaces': ['value with spaces']}",
    ),
    ('url("https://example.com/path?").getQuery()', "{}"),
    ('url("https://example.com/path").getQuery()', "{}"),
    # Go's net/url: the scheme is lowercased, an escaped path kept as written, a fragment cut off
    ('url("HTTPS://example.com/a%2Fb#frag").getScheme()', "'https'"),
    ('url("https://example.com/a%2Fb#frag").getEscapedPath()', "'/a%2Fb'"),
    ('url("https://example.com/?a=1;b=2&c=%zz&d=%41+x").getQuery()', "{'d': ['A x']}"),
    ('isURL("http://exa mple.com/")', "false"),
    ('isURL("mailto:someone@example.com") && isURL("*")', "true"),
    (
        'url("https://example.com/%zz")',
        Err(
            "URL parse error during conversion from string: "
            'parse "https://example.com/%zz": invalid URL escape "%zz"'
        ),
    ),
    (
        'url(":no-scheme")',
        Err('URL parse error during conversion from string: parse ":no-scheme": missing protocol scheme'),
    ),
]


@pytest.mark.parametrize(("expr", "expected"), URL)
def test_url(expr: str, expected: object) -> None:
    check(expr, expected)


SEMVER = [
    ('semver("1.2.3") == semver("1.2.3")', "true"),
    ('semver("v1.0")', Err("No Major.Minor.Patch elements found")),
    ('isSemver("1.2.3-beta.1+build.1")', "true"),
    ('isSemver("")', "false"),
    ('isSemver("v1.0.0")', "false"),
    ('isSemver(" 1.0.0")', "false"),
    ('isSemver("1. 0.0")', "false"),
    ('isSemver("1.0.0 ")', "false"),
    ('isSemver("01.01.01")', "false"),
    ('isSemver("1")', "false"),
    ('isSemver("1.1")', "false"),
    ('isSemver("", true)', "false"),
    ('isSemver(" 1.0.0", true)', "false"),
    ('isSemver("1. 0.0", true)', "false"),
    ('isSemver("1.0.0 ", true)', "false"),
    ('isSemver("v1.0.0", true)', "true"),
    ('isSemver("01.01.01", true)', "true"),
    ('isSemver("1", true)', "true"),
    ('isSemver("1.1", true)', "true"),
    ('semver("v01.01", true) == semver("1.1.0")', "true"),
    ('semver("1.2.3") == semver("1.0.0")', "false"),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', "true"),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', "false"),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', "true"),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', "false"),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', "0"),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', "-1"),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', "1"),
    ('semver("1.2.3").major()', "1"),
    ('semver("1.2.3").minor()', "2"),
    ('semver("1.2.3").patch()', "3"),
    # semver.org precedence; build metadata is ignored
    (
        'semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1")) '
        '&& semver("1.0.0-alpha.beta").isLessThan(semver("1.0.0-beta")) '
        '&& semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11")) '
        '&& semver("1.0.0-rc.1").isLessThan(semver("1.0.0")) '
        '&& semver("1.0.0-1").isLessThan(semver("1.0.0-a"))',
        "true",
    ),
    ('semver("1.0.0+build.1") == semver("1.0.0+build.2")', "true"),
    ('semver("1.0.0-01")', Err('Numeric PreRelease version must not contain leading zeroes "01"')),
    ('semver("1.01.0")', Err('Minor number must not contain leading zeroes "01"')),
    ('semver("1.x.0")', Err('Invalid character(s) found in minor number "x"')),
    (
        'semver("1.0", true) == semver("1.0.0") && semver("1-rc", true) == semver("1.0.0")',
        Err("short version cannot contain PreRelease/Build meta data"),
    ),
]


@pytest.mark.parametrize(("expr", "expected"), SEMVER)
def test_semver(expr: str, expected: object) -> None:
    check(expr, expected)


def test_semver_and_quantity_comparisons_are_typed() -> None:
    assert "found no matching overload for 'isQuantity' applied to" in compile_error("isQuantity([1])")
    assert "found no matching overload for 'isSemver' applied to" in compile_error("isSemver([1, 2, 3])")
    assert (
        "found no matching overload for 'compareTo' applied to '(kubernetes.Semver, kubernetes.Quantity)'"
        in (compile_error('semver("1.0.0").compareTo(quantity("1"))'))
    )


def test_what_the_emulator_cannot_compile_says_so() -> None:
    text = compile_error('format.dns1123Label().validate("a").hasValue()')
    assert "undeclared reference to 'format'" in text
    assert "the Kubernetes format library is not emulated" in text
    text = compile_error('string(cidr("10.0.0.0/8"))')
    assert "found no matching overload for 'string' applied to '(net.CIDR)'" in text
    assert "string() of a cidr is not emulated" in text
    assert "pyop envtest" not in compile_error("self.nosuchfn()")
