"""json_copy: the store's deep copy of JSON trees."""

from __future__ import annotations

from pyscaffold_op.envtest.jsonutil import json_copy


def test_json_copy_is_deep_and_exact() -> None:
    tree = {
        "metadata": {"name": "a", "labels": {"x": "y"}, "managedFields": [{"fieldsV1": {"f:spec": {}}}]},
        "spec": {"n": 2**62, "f": 0.1 + 0.2, "b": True, "none": None, "list": [1, "two", [3.5]]},
        "ünïcode": "✓",
    }
    out = json_copy(tree)
    assert out == tree and out is not tree
    assert type(out["spec"]["f"]) is float and out["spec"]["f"] == 0.1 + 0.2
    out["metadata"]["labels"]["x"] = "changed"
    out["spec"]["list"][2].append(4)
    assert tree["metadata"]["labels"] == {"x": "y"} and tree["spec"]["list"][2] == [3.5]


def test_json_copy_falls_back_to_deepcopy_for_objects_json_cannot_encode() -> None:
    class Opaque:
        def __init__(self) -> None:
            self.items = [1]

    tree = {"a": [Opaque()]}
    out = json_copy(tree)
    assert type(out["a"][0]) is Opaque and out["a"][0] is not tree["a"][0]
    assert out["a"][0].items == [1] and out["a"][0].items is not tree["a"][0].items
