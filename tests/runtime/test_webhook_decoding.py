"""An admission request's object is decoded as controller-runtime's decoder decodes it: a missing
field takes its zero value, an unknown one is ignored, a constraint is the API server's to judge
(its schema validation runs after mutating webhooks and says `Required value`); only a value of the
wrong JSON type fails, with Go's one line. pyop used to answer pydantic's multi-line error."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from pydantic import Field

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.runtime.webhook.admission import Admission, defaulting_handler, validating_handler


class GadgetSpec(KubeModel):
    command: str = Field(min_length=1)
    size: int = Field(default=1, ge=0)
    mode: Literal["fast", "slow"] = "fast"
    tags: list[str] | None = None


class Gadget(CustomResource):
    gvk = GroupVersionKind("test.pyop.io", "v1", "Gadget")
    spec: GadgetSpec


class Defaulter:
    def __init__(self) -> None:
        self.seen: list[Gadget] = []

    def default(self, obj: Gadget) -> None:
        self.seen.append(obj)
        obj.spec.tags = ["defaulted"]


class Validator:
    def validate_create(self, obj: Gadget) -> None: ...
    def validate_update(self, old: Gadget, new: Gadget) -> None: ...
    def validate_delete(self, obj: Gadget) -> None: ...


def review(obj: dict[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "test.pyop.io", "version": "v1", "kind": "Gadget"},
            "resource": {"group": "test.pyop.io", "version": "v1", "resource": "gadgets"},
            "operation": operation,
            "object": obj,
            **({"oldObject": obj} if operation == "UPDATE" else {}),
        },
    }


def gadget(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "test.pyop.io/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec}


async def test_missing_unknown_and_constraint_failing_fields_decode_as_in_go() -> None:
    defaulter = Defaulter()
    raw = gadget({"size": -3, "mode": "odd", "extra": True})  # no command; size < 0; mode not allowed
    answer = (await Admission(defaulting_handler(Gadget, defaulter))(review(raw)))["response"]
    assert answer["allowed"] is True, answer
    spec = defaulter.seen[0].spec
    assert (spec.command, spec.size, spec.mode) == ("", -3, "odd")
    # the patch adds only the defaulter's change: the API server's schema then refuses the rest
    patch = json.loads(base64.b64decode(answer["patch"]))
    assert patch == [{"op": "add", "path": "/spec/tags", "value": ["defaulted"]}]
    for operation in ("CREATE", "UPDATE", "DELETE"):
        body = review(raw, operation)
        if operation == "DELETE":
            body["request"]["oldObject"] = raw
        validated = (await Admission(validating_handler(Gadget, Validator()))(body))["response"]
        assert validated["allowed"] is True, (operation, validated)


async def test_a_value_of_the_wrong_type_is_one_line_in_gos_words() -> None:
    cases = {
        "json: cannot unmarshal string into Go struct field GadgetSpec.spec.size of type int64": {
            "command": "x",
            "size": "three",
        },
        "json: cannot unmarshal number into Go struct field GadgetSpec.spec.tags of type string": {
            "command": "x",
            "tags": [1],
        },
    }
    for message, spec in cases.items():
        for handler in (defaulting_handler(Gadget, Defaulter()), validating_handler(Gadget, Validator())):
            answer = (await Admission(handler)(review(gadget(spec))))["response"]
            assert answer["allowed"] is False
            assert answer["status"] == {"code": 400, "message": message}
    answer = (await Admission(defaulting_handler(Gadget, Defaulter()))(review(gadget("x"))))["response"]
    # a struct's Go type is <package>.<Name>, the package an api/<version> module's (none here)
    wrong = "json: cannot unmarshal string into Go struct field Gadget.spec of type GadgetSpec"
    assert answer["status"]["message"] == wrong
