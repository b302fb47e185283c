"""Kinds for the webhook tests: Widget (test.pyop.io/v1, from widgets.py) gets a defaulter and a
validator; Shape has two versions with different schemas (v1 hub `size`, v2 spoke `dimensions.width`)."""

from __future__ import annotations

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.runtime.webhook import Denied, FieldError, Hub, ValidationError
from tests.runtime.widgets import Widget


class WidgetDefaulter:
    def default(self, obj: Widget) -> None:
        if obj.spec.color == "":
            obj.spec.color = "green"
        obj.metadata.labels = {**(obj.metadata.labels or {}), "defaulted": "true"}


class WidgetValidator:
    async def validate_create(self, obj: Widget) -> list[str]:
        return self._check(obj)

    async def validate_update(self, old: Widget, new: Widget) -> list[str]:
        if new.spec.size < old.spec.size:
            raise Denied("widgets may not shrink")
        return self._check(new)

    def validate_delete(self, obj: Widget) -> None:
        if (obj.metadata.labels or {}).get("protected") == "true":
            raise Denied(f"widget {obj.metadata.name} is protected")

    def _check(self, obj: Widget) -> list[str]:
        errs = []
        if obj.spec.size > 10:
            errs.append(FieldError.invalid("spec.size", obj.spec.size, "must be at most 10"))
        if obj.spec.color not in ("green", "blue", "red"):
            errs.append(FieldError.not_supported("spec.color", obj.spec.color, ["blue", "green", "red"]))
        if errs:
            raise ValidationError(Widget, obj.metadata.name or "", errs)
        return ["size 0 widgets are invisible"] if obj.spec.size == 0 else []


class ShapeV1Spec(KubeModel):
    size: int = 0


class Shape(CustomResource, Hub):
    gvk = GroupVersionKind("shapes.pyop.io", "v1", "Shape")
    spec: ShapeV1Spec = ShapeV1Spec()


class Dimensions(KubeModel):
    width: int = 0


class ShapeV2Spec(KubeModel):
    dimensions: Dimensions = Dimensions()


class ShapeV2(CustomResource):
    gvk = GroupVersionKind("shapes.pyop.io", "v2", "Shape")
    spec: ShapeV2Spec = ShapeV2Spec()

    def convert_to(self) -> Shape:
        return Shape(metadata=self.metadata, spec=ShapeV1Spec(size=self.spec.dimensions.width))

    @classmethod
    def convert_from(cls, hub: Shape) -> ShapeV2:
        return cls(metadata=hub.metadata, spec=ShapeV2Spec(dimensions=Dimensions(width=hub.spec.size)))
