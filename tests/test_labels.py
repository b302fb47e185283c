"""Label selectors: the one parser and matcher the emulator and the runtime share."""

from __future__ import annotations

import pytest

from pyscaffold_op.apimachinery.labels import Selector, SelectorError, matcher, parse, render

OBJS = {
    "a": {"app": "web", "tier": "front"},
    "b": {"app": "web"},
    "c": {"app": "db", "tier": "back"},
    "d": {},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web,tier=front", ["a"]),
        ("app!=web", ["c", "d"]),
        ("app in (web,db)", ["a", "b", "c"]),
        ("app notin (web)", ["c", "d"]),
        ("tier", ["a", "c"]),
        ("!tier", ["b", "d"]),
        ("app in (web, db),!tier", ["b"]),
        ("", ["a", "b", "c", "d"]),
        ("  app = web  ,  tier  ", ["a"]),
        ("tier in (back,)", ["c"]),  # `,)` adds the empty value, which no present label has
        ("tier=", []),
        ("tier!=", ["a", "b", "c", "d"]),  # absent counts as "not equal"
    ],
)
def test_match(selector: str, expected: list[str]) -> None:
    sel = parse(selector)
    assert [name for name, labels in OBJS.items() if sel.matches(labels)] == expected


def test_runtime_forms_dicts_strings_and_none() -> None:
    match = matcher("app=x,tier in (a, b),!legacy,env!=prod")
    assert match.matches({"app": "x", "tier": "b"})
    assert not match.matches({"app": "x", "tier": "b", "legacy": "1"})
    assert not match.matches({"app": "x", "tier": "b", "env": "prod"})
    assert matcher({"app": "x"}).matches({"app": "x", "more": "y"})
    assert not matcher({"app": "x"}).matches({"app": "y"})
    assert matcher(None) == Selector() and matcher(None).matches({"any": "thing"})
    assert render({"app": "x", "tier": "web"}) == "app=x,tier=web"
    assert render(None) is None and render("") is None and render({}) is None


def test_greater_and_less_than_compare_integers() -> None:
    assert parse("gen>1").matches({"gen": "2"})
    assert not parse("gen>1").matches({"gen": "1"})
    assert parse("gen<1").matches({"gen": "-3"})
    assert not parse("gen<1").matches({"gen": "x"})  # not an integer: no match
    assert not parse("gen<1").matches({})


def test_string_form_round_trips() -> None:
    text = "example.com/app=x,tier in (a,b),!legacy,gen>3,env"
    assert str(parse(text)) == text
    assert parse(str(parse(text))) == parse(text)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a b c", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
        ("a in x", "unable to parse requirement: found 'x', expected: '('"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a,,b", "found ',', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        (
            "a in ()",
            "unable to parse requirement: values: Invalid value: []: for 'in', 'notin' operators, values set "
            "can't be empty",
        ),
        (
            "a>b",
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the "
            "value must be an integer",
        ),
    ],
)
def test_syntax_errors_carry_the_servers_message(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as raised:
        parse(selector)
    assert str(raised.value) == message


def test_keys_and_values_are_checked_like_the_server() -> None:
    with pytest.raises(
        SelectorError, match=r'^unable to parse requirement: key: Invalid value: "-a": name part'
    ):
        parse("-a=b")
    with pytest.raises(SelectorError, match=r'values\[0\]\[a\]: Invalid value: "-b": a valid label must be'):
        parse("a=-b")
    with pytest.raises(SelectorError, match="prefix part"):
        parse("Bad_Prefix/a=b")
    with pytest.raises(ValueError):  # the runtime's callers catch ValueError
        matcher({"a": "not valid!"})
