"""Plain dicts as objects of the runtime `Client` (docs/design.md "One type world": the object model is
the typed models plus untyped dicts): the kind is found from the dict's apiVersion and kind, the dict is
filled with the server's answer, and stays a dict."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.models.core_v1 import ConfigMap
from pyscaffold_op.runtime import Client, NotFound
from pyscaffold_op.runtime.adapters import NotAdapted

from .widgets import Widget


def config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


async def test_a_built_in_kind_as_a_dict_is_created_updated_patched_and_deleted(api: Client) -> None:
    cm = {**config_map("plain"), "data": {"k": "v"}}
    created = await api.create(cm)
    assert created is cm and type(cm) is dict  # filled in place with the server's JSON, still a dict
    assert cm["metadata"]["uid"] and cm["metadata"]["resourceVersion"] and cm["data"] == {"k": "v"}
    cm["data"]["k"] = "w"
    await api.update(cm)
    assert cm["data"] == {"k": "w"} and (await api.get(ConfigMap, "plain", "default")).data == {"k": "w"}
    patched = await api.patch(cm, patch={"data": {"x": "y"}})
    assert patched is cm and cm["data"] == {"k": "w", "x": "y"}
    await api.delete(cm)
    with pytest.raises(NotFound):
        await api.delete(config_map("plain"))


async def test_a_custom_resource_as_a_dict_reads_back_as_its_model(api: Client) -> None:
    raw: dict[str, Any] = {
        "apiVersion": Widget.gvk.api_version,
        "kind": "Widget",
        "metadata": {"name": "untyped", "namespace": "default"},
        "spec": {"size": 3},
    }
    await api.create(raw)
    typed = await api.get(Widget, "untyped", namespace="default")
    assert typed.spec.size == 3 and typed.metadata.uid == raw["metadata"]["uid"]


async def test_a_dict_without_a_known_kind_is_refused_with_what_to_do(api: Client) -> None:
    with pytest.raises(TypeError, match="needs its apiVersion and kind"):
        await api.create({"metadata": {"name": "x", "namespace": "default"}})
    with pytest.raises(TypeError, match="import its CustomResource subclass first"):
        await api.create({"apiVersion": "nowhere.example.com/v1", "kind": "Ghost", "metadata": {"name": "x"}})
    with pytest.raises(TypeError, match="import its CustomResource subclass first"):
        await api.create({"apiVersion": "v1", "kind": "NoSuchKind", "metadata": {"name": "x"}})


async def test_dict_is_no_kind_class_and_the_message_says_so(api: Client) -> None:
    with pytest.raises(NotAdapted, match="for an object, a dict with the apiVersion and kind") as refused:
        await api.get(dict, "plain", namespace="default")
    assert not str(refused.value).endswith("or a dict")  # the old message promised what get cannot do
