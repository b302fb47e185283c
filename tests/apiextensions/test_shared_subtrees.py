"""check_schema on `properties` maps shared between CRDs: checked once, reported everywhere.

Each case compares with the same schema deep-copied (nothing shared, so nothing cached) and names the
paths it expects, so a cache that hid an error, or reported it at the first place only, fails.
"""

from __future__ import annotations

import copy
from typing import Any

from pyscaffold_op.apiextensions.crdvalidation import check_schema
from pyscaffold_op.apiextensions.shared import share


def _bad_properties() -> dict[str, Any]:
    """A properties map with one error of each walk that descends into properties."""
    return share(
        {
            "untyped": {"description": "no type"},  # structural: type required
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},  # openapi
            "choice": {  # completeness: `b` only inside anyOf; the message names the nested path too
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "anyOf": [{"properties": {"b": {"type": "string"}}}],
            },
        }
    )


def _root(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}


def _errors_under(errors: list[str], path: str) -> list[str]:
    """The errors at or below `path`, with `path` (also where a message names it) as `<here>`."""
    return sorted(e.replace(path, "<here>") for e in errors if e.startswith(path + ".properties["))


def test_errors_of_a_shared_map_are_reported_at_every_place_it_appears() -> None:
    shared = _bad_properties()
    schema = _root(
        first={"type": "object", "properties": shared},
        second={"type": "array", "items": {"type": "object", "properties": shared}},
        third={"type": "object", "additionalProperties": {"type": "object", "properties": shared}},
    )
    errors = check_schema(schema)
    assert errors == check_schema(copy.deepcopy(schema))
    spec = "openAPIV3Schema.properties[spec].properties"
    places = [
        f"{spec}[first]",
        f"{spec}[second].items",
        f"{spec}[third].additionalProperties",
    ]
    relative = [_errors_under(errors, place) for place in places]
    assert relative[0] == relative[1] == relative[2]
    assert relative[0] == [
        "<here>.properties[choice].anyOf[0].properties[b].type: Forbidden: must be empty to be structural",
        "<here>.properties[choice].properties[b]: Required value: because it is defined in "
        "<here>.properties[choice].anyOf[0].properties[b]",
        "<here>.properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the "
        "runtime complexity becomes quadratic",
        "<here>.properties[untyped].type: Required value: must not be empty for specified object fields",
    ]
    assert len(errors) == 3 * len(relative[0])


def test_a_cached_map_is_rerooted_for_a_later_schema() -> None:
    shared = _bad_properties()
    check_schema(_root(early={"type": "object", "properties": shared}))  # fills the cache
    schema = _root(late={"type": "object", "properties": shared})
    errors = check_schema(schema, "spec.versions[3].schema.openAPIV3Schema")
    assert errors == check_schema(copy.deepcopy(schema), "spec.versions[3].schema.openAPIV3Schema")
    assert not [e for e in errors if "early" in e or "\x00" in e]
    assert (
        "spec.versions[3].schema.openAPIV3Schema.properties[spec].properties[late].properties[untyped]"
        ".type: Required value: must not be empty for specified object fields"
    ) in errors


def test_context_of_the_place_is_part_of_the_cache_key() -> None:
    """The same map under a junctor (the nested rules) and under properties (the structural ones)."""
    shared = share({"name": {"type": "string", "description": "inside a junctor, description is forbidden"}})
    schema = _root(
        plain={"type": "object", "properties": shared},
        junctor={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "allOf": [{"properties": shared}],
        },
    )
    errors = check_schema(schema)
    assert errors == check_schema(copy.deepcopy(schema))
    spec = "openAPIV3Schema.properties[spec].properties"
    assert errors == [
        f"{spec}[junctor].allOf[0].properties[name].description: Forbidden: must be empty to be structural",
        f"{spec}[junctor].allOf[0].properties[name].type: Forbidden: must be empty to be structural",
    ]


def test_invalid_defaults_in_a_shared_map_are_reported_at_every_place() -> None:
    shared = share(
        {
            "replicas": {"type": "integer", "minimum": 1, "default": 0},
            "mode": {"type": "object", "properties": {"x": {"type": "string"}}, "default": {"y": "z"}},
        }
    )
    schema = _root(one={"type": "object", "properties": shared}, two={"type": "object", "properties": shared})
    errors = check_schema(schema)
    assert errors == check_schema(copy.deepcopy(schema))
    for place in ("one", "two"):
        here = f"openAPIV3Schema.properties[spec].properties[{place}].properties"
        assert (
            f"{here}[replicas].default: Invalid value: 0: <root> in body should be greater than or equal to 1"
            in errors
        )
        assert f"{here}[mode].default: Invalid value: must not have unknown fields (y)" in errors
    assert len(errors) == 4


def test_where_defaults_are_forbidden_is_part_of_the_cache_key() -> None:
    """A default is fine under spec, forbidden inside additionalProperties of embedded metadata."""
    shared = share({"level": {"type": "string", "default": "info"}})
    meta_map = {"type": "object", "additionalProperties": {"type": "object", "properties": shared}}
    schema = _root(
        plain={"type": "object", "properties": shared},
        embedded={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"kind": {"type": "string"}, "metadata": meta_map},
        },
    )
    errors = check_schema(schema)
    assert errors == check_schema(copy.deepcopy(schema))
    assert (
        "openAPIV3Schema.properties[spec].properties[embedded].properties[metadata].additionalProperties"
        ".properties[level].default: Forbidden: inside additionalProperties applying to object metadata"
    ) in errors
    assert not [e for e in errors if "[plain]" in e]
