"""A resource.Quantity's canonical string, as Go writes a parsed Quantity back (`0.25` is `250m`,
`1.5Gi` is `1536Mi`, `1000` is `1k`): apimachinery's CanonicalizeBytes over ParseQuantity.

The value is kept exactly (a Fraction), rounded away from zero to nanos as ParseQuantity does. The
suffix picks the format: binary (Ki..Ei), decimal exponent (e3, E6) or decimal SI (the rest). A binary
quantity that is not a whole number, or lies strictly between -1024 and 1024, is written as decimal
SI; decimal forms use an exponent that is a multiple of three."""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

from pyscaffold_op.apiextensions import celquantity

_BINARY = re.compile(r"[KMGTPE]i$")
_EXPONENT = re.compile(r"[eE][-+]?[0-9]+$")
_BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NANO = 10**9


# Pure string -> string, and the same few spellings come back on every write of a workload: cached
# (parsing through Fractions costs ~30 us a value).
@functools.lru_cache(maxsize=4096)
def canonical(text: str) -> str:
    """Go's `resource.MustParse(text).String()`; celquantity.QuantityError (Go's message) when
    `text` is no quantity."""
    parsed = celquantity.parse(text)
    if _kept_as_written(text):
        return text
    value = Fraction(parsed.mantissa) * Fraction(10) ** parsed.exponent
    nanos = value * _NANO
    if nanos.denominator != 1:  # finer than nano: rounded away from zero
        nanos = Fraction(math.copysign(math.ceil(abs(nanos)), nanos))
    value = nanos / _NANO
    if value == 0:
        return "0"
    if _BINARY.search(text) and value.denominator == 1 and abs(value) >= 1024:
        return _binary(int(value))
    return _decimal(int(nanos), exponent_form=bool(_EXPONENT.search(text)))


@functools.lru_cache(maxsize=4096)
def rounded_up_to_milli(text: str) -> str:
    """A ResourceList value as core/v1's SetDefaults_ResourceList leaves it: `Quantity.RoundUp(-3)`
    (away from zero: `1n` is `1m`, `1500u` is `2m`) then String(); a value already whole in millis is
    just canonical (RoundUp keeps the parsed string then)."""
    parsed = celquantity.parse(text)
    value = Fraction(parsed.mantissa) * Fraction(10) ** parsed.exponent
    millis = value * 1000
    if millis.denominator == 1:
        return canonical(text)
    rounded = math.ceil(abs(millis)) * (1 if millis > 0 else -1)
    return _decimal(rounded * 10**6, exponent_form=bool(_EXPONENT.search(text)))


_PARTS = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)")
_DECIMAL_EXPONENTS = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_INT64_MAX = 2**63 - 1


def _kept_as_written(text: str) -> bool:
    """ParseQuantity's fast path keeps the string it was given when it is already in a canonical
    shape (`5e0`, `100`, `1023Ki`); String() then returns it as written."""
    if text == "0":
        return True
    parts = _PARTS.fullmatch(text)
    if parts is None:
        return False
    num, denom, suffix = parts.group(2) or "0", parts.group(3) or "", parts.group(4)
    shifted = num + denom
    if suffix in _BINARY_SUFFIXES[1:]:
        exponent = 10 * _BINARY_SUFFIXES.index(suffix)
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return False
        value = int(shifted)
        return value << exponent <= _INT64_MAX and value & 7 != 0
    if suffix in _DECIMAL_EXPONENTS:
        exponent = _DECIMAL_EXPONENTS[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE":
        exponent = int(suffix[1:])
    else:
        return False
    scale = exponent - len(denom)
    if 18 - len(shifted) < 0 or scale < -9 or int(shifted) > _INT64_MAX:
        return False
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _binary(value: int) -> str:
    times = 0
    while value % 1024 == 0 and times < len(_BINARY_SUFFIXES) - 1:
        value //= 1024
        times += 1
    return f"{value}{_BINARY_SUFFIXES[times]}"


def _decimal(nanos: int, exponent_form: bool) -> str:
    mantissa, exponent = nanos, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    remainder = exponent % 3 if exponent >= 0 else -((-exponent) % 3)  # Go's % keeps the sign
    if remainder in (1, -2):
        mantissa, exponent = mantissa * 10, exponent - 1
    elif remainder in (2, -1):
        mantissa, exponent = mantissa * 100, exponent - 2
    if exponent_form or exponent not in _DECIMAL_SUFFIXES:
        return f"{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
