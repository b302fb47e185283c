"""CEL rules as the API server compiles and evaluates them (cel-expr-python behind apiextensions.cel)."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apiextensions import cel, validate_rules
from pyscaffold_op.apiextensions.crdvalidation import check_schema

INT = {"type": "integer"}
STR = {"type": "string"}
INTS = {"type": "array", "items": INT}
STRS = {"type": "array", "items": STR}


def obj(rules: list[dict[str, Any]], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "x-kubernetes-validations": rules}


def run(rule: str, schema: dict[str, Any], value: Any, old: Any = cel.MISSING) -> Any:
    program = cel.compile_rule(rule, schema)
    return program.run(
        cel.to_cel(value, schema), cel.MISSING if old is cel.MISSING else cel.to_cel(old, schema)
    )


SCALE = {"type": "object", "properties": {"minReplicas": INT, "replicas": INT, "maxReplicas": INT}}


# The examples of the Kubernetes docs' "Validation rules" table (CRD tasks page), true and false cases.
@pytest.mark.parametrize(
    ("rule", "schema", "value", "expected"),
    [
        (
            "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
            SCALE,
            {"minReplicas": 1, "replicas": 2, "maxReplicas": 3},
            True,
        ),
        (
            "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
            SCALE,
            {"minReplicas": 3, "replicas": 2, "maxReplicas": 3},
            False,
        ),
        (
            "'Available' in self.stateCounts",
            {
                "type": "object",
                "properties": {"stateCounts": {"type": "object", "additionalProperties": INT}},
            },
            {"stateCounts": {"Available": 1}},
            True,
        ),
        (
            "'Available' in self.stateCounts",
            {
                "type": "object",
                "properties": {"stateCounts": {"type": "object", "additionalProperties": INT}},
            },
            {"stateCounts": {"Busy": 1}},
            False,
        ),
        (
            "(size(self.list1) == 0) != (size(self.list2) == 0)",
            {"type": "object", "properties": {"list1": STRS, "list2": STRS}},
            {"list1": ["a"], "list2": []},
            True,
        ),
        (
            "(size(self.list1) == 0) != (size(self.list2) == 0)",
            {"type": "object", "properties": {"list1": STRS, "list2": STRS}},
            {"list1": ["a"], "list2": ["b"]},
            False,
        ),
        (
            "!('MY_KEY' in self) || self['MY_KEY'].matches('^[a-zA-Z]*$')",
            {"type": "object", "additionalProperties": STR},
            {"MY_KEY": "abc"},
            True,
        ),
        (
            "!('MY_KEY' in self) || self['MY_KEY'].matches('^[a-zA-Z]*$')",
            {"type": "object", "additionalProperties": STR},
            {"other": "1"},
            True,
        ),
        (
            "self.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
            {
                "type": "object",
                "properties": {
                    "envars": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"name": STR, "value": STR}},
                    }
                },
            },
            {"envars": [{"name": "MY_ENV", "value": "a1"}]},
            False,
        ),
        # formatted strings are timestamps and durations (where `self` is typed: see cel.to_cel)
        (
            "self < timestamp('2023-01-01T02:00:00Z')",
            {"type": "string", "format": "date-time"},
            "2023-01-01T01:00:00Z",
            True,
        ),
        (
            "self < timestamp('2023-01-01T02:00:00Z')",
            {"type": "string", "format": "date-time"},
            "2023-01-01T03:00:00+00:00",
            False,
        ),
        (
            "self.all(d, d <= duration('1h'))",
            {"type": "array", "items": {"type": "string", "format": "duration"}},
            ["30m", "1h"],
            True,
        ),
        (
            "self.all(d, d <= duration('1h'))",
            {"type": "array", "items": {"type": "string", "format": "duration"}},
            ["1h1s"],
            False,
        ),
        (
            "self.health.startsWith('ok')",
            {"type": "object", "properties": {"health": STR}},
            {"health": "okay"},
            True,
        ),
        (
            "self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
            {
                "type": "object",
                "properties": {
                    "widgets": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"key": STR, "foo": INT}},
                    }
                },
            },
            {"widgets": [{"key": "x", "foo": 12}]},
            False,
        ),
        ("type(self) == string ? self == '99%' : self == 42", {"x-kubernetes-int-or-string": True}, 42, True),
        (
            "type(self) == string ? self == '99%' : self == 42",
            {"x-kubernetes-int-or-string": True},
            "98%",
            False,
        ),
        ("self.metadata.name == 'singleton'", {"type": "object"}, {"metadata": {"name": "x"}}, False),
        (
            "self.set1.all(e, !(e in self.set2))",
            {"type": "object", "properties": {"set1": STRS, "set2": STRS}},
            {"set1": ["a"], "set2": ["b"]},
            True,
        ),
        (
            "size(self.names) == size(self.details) && self.names.all(n, n in self.details)",
            {
                "type": "object",
                "properties": {"names": STRS, "details": {"type": "object", "additionalProperties": STR}},
            },
            {"names": ["a"], "details": {"b": "x"}},
            False,
        ),
        (
            "size(self.clusters.filter(c, c.name == self.primary)) == 1",
            {
                "type": "object",
                "properties": {
                    "primary": STR,
                    "clusters": {"type": "array", "items": {"type": "object", "properties": {"name": STR}}},
                },
            },
            {"primary": "a", "clusters": [{"name": "a"}, {"name": "b"}]},
            True,
        ),
        (
            "self.items.exists_one(i, i == 2)",
            {"type": "object", "properties": {"items": INTS}},
            {"items": [2, 2]},
            False,
        ),
        (
            "self.items.map(i, i * 2) == [2, 4]",
            {"type": "object", "properties": {"items": INTS}},
            {"items": [1, 2]},
            True,
        ),
        (
            "self.?spec.replicas.orValue(1) == 1",
            {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": INT}}}},
            {},
            True,
        ),
        # int/uint/double: JSON numbers of a `number` field are doubles; ints and uints do not mix
        (
            "self.ratio + 0.5 > 1.0",
            {"type": "object", "properties": {"ratio": {"type": "number"}}},
            {"ratio": 1},
            True,
        ),
        ("7 / 2 == 3 && -7 % 3 == -1 && uint(3) == 3u", INT, 0, True),
        # Kubernetes libraries: lists, regex, sets, strings (v2)
        ("self.isSorted() && self.sum() == 6 && self.min() == 1 && self.max() == 3", INTS, [1, 2, 3], True),
        ("self.isSorted()", INTS, [2, 1], False),
        ("self.indexOf('b') == 1 && self.lastIndexOf('a') == 2", STRS, ["a", "b", "a"], True),
        ("self.find('[0-9]+') == '12' && self.findAll('[a-z]') == ['a', 'b']", STR, "ab12", True),
        ("sets.contains(self, [1, 2]) && !sets.intersects(self, [9])", INTS, [1, 2, 3], True),
        (
            "self.lowerAscii().split('-').join('.') == 'a.b' && self.replace('-', '') == 'AB'",
            STR,
            "A-B",
            True,
        ),
        (
            "'%s=%d'.format(['n', 1]) == 'n=1' && ' x '.trim() == 'x' && self.substring(1) == '-B'",
            STR,
            "A-B",
            True,
        ),
        # escaped property names
        (
            "self.foo__dash__bar == 1 && self.__namespace__ == 2",
            {"type": "object", "properties": {"foo-bar": INT, "namespace": INT}},
            {"foo-bar": 1, "namespace": 2},
            True,
        ),
    ],
)
def test_rules_from_the_kubernetes_docs(
    rule: str, schema: dict[str, Any], value: Any, expected: bool
) -> None:
    assert run(rule, schema, value) is expected


@pytest.mark.parametrize(
    ("rule", "value", "expected"),
    [
        ("self.x.matches('^[a-z]+$')", {"x": "abc"}, True),
        ("self.x.matches('^[a-z]+$')", {"x": "abc\n"}, False),  # RE2: `$` is the end of the text
        ("self.x.matches('^\\\\p{L}+$')", {"x": "été"}, True),
        ("self.x.matches('^\\\\d+$')", {"x": "١٢"}, False),  # `\d` is ASCII in RE2
    ],
)
def test_matches_is_re2(rule: str, value: Any, expected: bool) -> None:
    assert run(rule, {"type": "object", "properties": {"x": STR}}, value) is expected


def test_transition_rules() -> None:
    assert run("self == oldSelf", STR, "a", "a") is True
    assert run("self == oldSelf", STR, "a", "b") is False
    assert cel.compile_rule("self == oldSelf", STR).uses_old_self
    assert not cel.compile_rule("self == 'oldSelf'", STR).uses_old_self


def test_optional_old_self() -> None:
    program = cel.compile_rule("!oldSelf.hasValue() || self >= oldSelf.value()", INT, optional_old_self=True)
    assert program.run(1) is True  # create: oldSelf is optional.none()
    assert program.run(1, 2) is False
    assert program.run(3, 2) is True


@pytest.mark.parametrize(
    ("rule", "schema", "message"),
    [
        (
            "self.x ==",
            {"type": "object", "properties": {"x": INT}},
            "compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting",
        ),
        (
            "self.name.startWith('a')",
            {"type": "object", "properties": {"name": STR}},
            "compilation failed: ERROR: <input>:1:20: undeclared reference to 'startWith' (in container '')",
        ),
        (
            "self.all(x, x > 0)",
            STR,
            "compilation failed: ERROR: <input>:1:1: expression of type 'string' cannot be the range of a "
            "comprehension",
        ),
        ("self + 1", INT, "cel expression must evaluate to a bool"),
        (
            "self + 1u > 0",
            INT,
            "compilation failed: ERROR: <input>:1:6: found no matching overload for '_+_' "
            "applied to '(int, uint)'",
        ),
        ("nope(self)", INT, "compilation failed: ERROR: <input>:1:5: undeclared reference to 'nope'"),
    ],
)
def test_rules_that_do_not_compile(rule: str, schema: dict[str, Any], message: str) -> None:
    with pytest.raises(cel.CompileError) as err:
        cel.compile_rule(rule, schema)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("optional_old_self", [False, True])
def test_cel_bind_is_not_in_the_servers_environment(optional_old_self: bool) -> None:
    # kube-apiserver's CRD environment has no bindings library: "undeclared reference to 'cel'"
    with pytest.raises(cel.CompileError) as err:
        cel.compile_rule("cel.bind(n, size(self), n > 1 && n < 5)", STR, optional_old_self=optional_old_self)
    assert "undeclared reference to 'cel' (in container '')" in str(err.value)


def test_check_schema_names_the_rule_its_field_and_the_compiler_message() -> None:
    schema = {"type": "object", "properties": {"spec": obj([{"rule": "self.x =="}], x=INT)}}
    [problem] = check_schema(schema, "spec.validation.openAPIV3Schema")
    assert problem.startswith(
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
        'apiextensions.ValidationRule{Rule:"self.x ==", Message:"", MessageExpression:"", '
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: '
        "compilation failed: ERROR: <input>:1:10: Syntax error:"
    )
    bad_message = obj([{"rule": "self.x > 0", "messageExpression": "self.x > 1"}], x=INT)
    [problem] = check_schema({"type": "object", "properties": {"spec": bad_message}}, "s")
    assert problem.startswith(
        "s.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: "
    )
    assert problem.endswith(": messageExpression must evaluate to a string")


def test_every_failed_rule_is_reported_with_the_servers_texts() -> None:
    spec = obj(
        [
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {
                "rule": "self.min < 0",
                "messageExpression": "'min is ' + string(self.min)",
                "fieldPath": ".min",
            },
            {"rule": "self.max < 100", "reason": "FieldValueForbidden"},
            {"rule": "self.max < 50", "reason": "FieldValueDuplicate"},
            {"rule": "self.missing == 1"},
        ],
        min=INT,
        max=INT,
    )
    schema = {"type": "object", "properties": {"spec": spec}}
    causes = validate_rules({"spec": {"min": 300, "max": 200}}, schema)
    assert [(c["field"], c["message"]) for c in causes] == [
        ("spec", 'Invalid value: "object": min must not exceed max'),
        ("spec.min", 'Invalid value: "object": min is 300'),
        ("spec", "Forbidden: failed rule: self.max < 100"),
        ("spec", 'Duplicate value: "object"'),
        ("spec", 'Invalid value: "object": no such key: missing evaluating rule: self.missing == 1'),
    ]


def test_message_expression_that_cannot_be_used_stops_validation() -> None:
    spec = obj(
        [
            {"rule": "self.n > 0", "messageExpression": "' '"},
            {"rule": "self.n > 1", "message": "never reported"},
        ],
        n=INT,
    )
    causes = validate_rules({"spec": {"n": 0}}, {"type": "object", "properties": {"spec": spec}})
    assert [c["message"] for c in causes] == [
        'Invalid value: "object": messageExpression should evaluate to a non-empty string'
    ]


def test_transition_rules_run_only_on_updates_with_an_old_value() -> None:
    spec = obj([{"rule": "self.name == oldSelf.name", "message": "name is immutable"}], name=STR)
    schema = {"type": "object", "properties": {"spec": spec}}
    assert validate_rules({"spec": {"name": "a"}}, schema) == []
    assert validate_rules({"spec": {"name": "a"}}, schema, {"spec": {"name": "a"}}) == []
    [failure] = validate_rules({"spec": {"name": "b"}}, schema, {"spec": {"name": "a"}})
    assert failure["message"] == 'Invalid value: "object": name is immutable'


def test_rules_on_null_values_do_not_run() -> None:
    spec = obj([{"rule": "false"}], x=INT)
    assert validate_rules({"spec": None}, {"type": "object", "properties": {"spec": spec}}) == []
