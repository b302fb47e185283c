"""The Kubernetes CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) on exact integers.

`parse` follows apimachinery's `resource.ParseQuantity` step by step (its grammar, suffixes and error
texts; values below a nano rounded away from zero; binary-suffixed values capped at 2^63-1); a
quantity is then its exact value, `mantissa * 10**exponent`, and arithmetic and comparisons are
exact, like `Quantity.Add`/`Cmp`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apiextensions import celtypes
from pyscaffold_op.apiextensions.celtypes import Decl

__all__ = ["Quantity", "QuantityError", "declarations", "parse"]

TYPE = "kubernetes.Quantity"
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_NANO = -9
_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")


class QuantityError(ValueError):
    """The string is not a quantity; `str()` is apimachinery's error text."""


@dataclass(frozen=True, order=False)
class Quantity:
    """An exact value, `mantissa * 10**exponent`, normalized (no trailing zeros in the mantissa)."""

    mantissa: int
    exponent: int

    @staticmethod
    def of(mantissa: int, exponent: int = 0) -> Quantity:
        if mantissa == 0:
            return Quantity(0, 0)
        while mantissa % 10 == 0:
            mantissa //= 10
            exponent += 1
        return Quantity(mantissa, exponent)

    def sign(self) -> int:
        return (self.mantissa > 0) - (self.mantissa < 0)

    def _aligned(self, other: Quantity) -> tuple[int, int, int]:
        low = min(self.exponent, other.exponent)
        return (
            self.mantissa * 10 ** (self.exponent - low),
            other.mantissa * 10 ** (other.exponent - low),
            low,
        )

    def compare(self, other: Quantity) -> int:
        if self.sign() != other.sign() or self.sign() == 0:
            return (self.sign() > other.sign()) - (self.sign() < other.sign())
        # magnitudes far apart decide without writing out 10**(difference)
        self_digits = len(str(abs(self.mantissa))) + self.exponent
        other_digits = len(str(abs(other.mantissa))) + other.exponent
        if self_digits != other_digits:
            return self.sign() if self_digits > other_digits else -self.sign()
        a, b, _ = self._aligned(other)
        return (a > b) - (a < b)

    def add(self, other: Quantity) -> Quantity:
        a, b, exponent = self._aligned(other)
        return Quantity.of(a + b, exponent)

    def negated(self) -> Quantity:
        return Quantity(-self.mantissa, self.exponent)

    def as_int64(self) -> int | None:
        """The value as an int64, or None when it has a fraction or overflows (`AsInt64`)."""
        if self.exponent < 0:
            return None
        if self.exponent > 19:  # beyond int64 whatever the mantissa
            return None
        value = self.mantissa * 10**self.exponent
        return value if _INT64_MIN <= value <= _INT64_MAX else None

    def as_float(self) -> float:
        """`AsApproximateFloat64`: the mantissa as a float times 10**exponent (inf past the range)."""
        base = float(self.mantissa) if abs(self.mantissa) < 1 << 1023 else float("inf") * self.sign()
        if self.exponent == 0:
            return base
        if self.exponent > 308:
            return base * float("inf") if base else 0.0
        if self.exponent < -323:
            return 0.0 * base
        return base * float(f"1e{self.exponent}")

    def canonical(self) -> str:
        return f"{self.mantissa}e{self.exponent}"

    @staticmethod
    def from_canonical(text: str) -> Quantity:
        mantissa, exponent = text.split("e")
        return Quantity(int(mantissa), int(exponent))


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """apimachinery's parseQuantityString: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] != "-"
        pos += 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in "0123456789":
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in "0123456789":
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    raise QuantityError(_FORMAT_WRONG)


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix; QuantityError when it is none."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body and body.isascii() and body.isdigit():
            parsed = int(digits)
            if _INT64_MIN <= parsed <= _INT64_MAX:
                wrapped = (parsed + (1 << 31)) % (1 << 32) - (1 << 31)  # Go's int32(parsed)
                return 10, wrapped, "DecimalExponent"
    raise QuantityError("unable to parse quantity's suffix")


def parse(text: str) -> Quantity:
    """`resource.ParseQuantity`; QuantityError with its text when `text` is no quantity."""
    if not text:
        raise QuantityError(_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0)
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if fmt == "BinarySI":
        precision = 15 - len(num) - (exponent * 3) // 10 - 1 if not denom else -1
        scale, multiplier = 0, 1 << exponent
    else:
        precision = 18 - len(num) - len(denom)
        scale, multiplier = exponent, 1
    scale -= len(denom)
    if precision >= 0 and scale >= _NANO:  # Go's int64 fast path: exact, no rounding, no cap
        result = int(num + denom) * multiplier
        if result <= _INT64_MAX:
            return Quantity.of(result if positive else -result, scale)
    digits = value.lstrip("+-")
    whole, _, fraction = digits.partition(".")
    if not (whole + fraction):
        raise QuantityError("unable to parse numeric part of quantity")
    mantissa = int(whole + fraction)
    scale = -len(fraction)
    if base == 10:
        scale += exponent
    else:
        mantissa <<= exponent
    if not positive:
        mantissa = -mantissa
    if mantissa and scale < _NANO:
        # rounded away from zero to a nano: some resources, however small the request
        step = 10 ** (_NANO - scale)
        magnitude = -(-abs(mantissa) // step)
        mantissa = magnitude if mantissa > 0 else -magnitude
        scale = _NANO
    quantity = Quantity.of(mantissa, scale)
    if fmt == "BinarySI" and quantity.compare(Quantity(_INT64_MAX, 0)) > 0:
        quantity = Quantity.of(_INT64_MAX)
    if fmt == "BinarySI" and quantity.compare(Quantity(_INT64_MIN + 1, 0)) < 0:
        quantity = Quantity.of(_INT64_MIN + 1)
    return quantity


# ------------------------------------------------------------------ the CEL functions


def _q(value: Any) -> Quantity:
    return Quantity.from_canonical(celtypes.state(value))


def _wrap(quantity: Quantity) -> Any:
    return celtypes.make(TYPE, quantity.canonical())


def _to_quantity(text: str) -> Any:
    return _wrap(parse(text))


def _is_quantity(text: str) -> bool:
    try:
        parse(text)
    except QuantityError:
        return False
    return True


def _as_integer(value: Any) -> int:
    got = _q(value).as_int64()
    if got is None:
        raise ValueError("cannot convert value to integer")
    return got


def declarations() -> dict[str, list[Any]]:
    """Overloads by function name."""
    from cel_expr_python import cel

    T = cel.Type
    Q = celtypes.message_type(TYPE)

    def member(oid: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return Decl(oid, ret, params, is_member=True, impl=impl)

    return {
        "quantity": [Decl("string_to_quantity", Q, [T.STRING], impl=_to_quantity)],
        "isQuantity": [Decl("is_quantity_string", T.BOOL, [T.STRING], impl=_is_quantity)],
        # a global function in the server's library, whatever its doc says (`sign(q)`, not `q.sign()`)
        "sign": [Decl("quantity_sign", T.INT, [Q], impl=lambda q: _q(q).sign())],
        "isGreaterThan": [
            member("quantity_is_greater_than", T.BOOL, [Q, Q], lambda a, b: _q(a).compare(_q(b)) == 1)
        ],
        "isLessThan": [
            member("quantity_is_less_than", T.BOOL, [Q, Q], lambda a, b: _q(a).compare(_q(b)) == -1)
        ],
        "compareTo": [member("quantity_compare_to", T.INT, [Q, Q], lambda a, b: _q(a).compare(_q(b)))],
        "asApproximateFloat": [member("quantity_get_float", T.DOUBLE, [Q], lambda q: _q(q).as_float())],
        "asInteger": [member("quantity_get_int", T.INT, [Q], _as_integer)],
        "isInteger": [member("quantity_is_integer", T.BOOL, [Q], lambda q: _q(q).as_int64() is not None)],
        "add": [
            member("quantity_add", Q, [Q, Q], lambda a, b: _wrap(_q(a).add(_q(b)))),
            member("quantity_add_int", Q, [Q, T.INT], lambda a, n: _wrap(_q(a).add(Quantity.of(n)))),
        ],
        "sub": [
            member("quantity_sub", Q, [Q, Q], lambda a, b: _wrap(_q(a).add(_q(b).negated()))),
            member("quantity_sub_int", Q, [Q, T.INT], lambda a, n: _wrap(_q(a).add(Quantity.of(-n)))),
        ],
    }
