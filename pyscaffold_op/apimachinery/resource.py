"""`KubeObject`, `CustomResource`, `ObjectMeta`, `OwnerReference` and `Condition` as pydantic v2 models.

Field names are snake_case in Python and camelCase on the wire: every model validates from either and
dumps by alias, so `obj.to_dict()` is exactly what the API server expects.

No `from __future__ import annotations` here: pydantic evaluates a base's string annotations again
for every subclass (a ForwardRef compiled per field per kind), so these are objects.
"""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import SchemaValidator

from pyscaffold_op.apimachinery.fields import Duration, Int64
from pyscaffold_op.apimachinery.naming import pluralize


class GroupVersionKind(NamedTuple):
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class KubeModel(BaseModel):
    """Base for every Kubernetes-shaped model: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Off: pydantic would read and parse each model's source file at import (about 10 ms a module,
        # every operator start). `pyop generate` reads attribute docstrings itself (gen/markers.py).
        use_attribute_docstrings=False,
        extra="ignore",
        # Built on first validation, not at import: `pyop generate` never validates with the
        # project's classes (gen/fastschema.py reads their fields), and an operator builds only the
        # models it uses, when it first uses them.
        defer_build=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # a plain `timedelta` field speaks metav1.Duration (`1h30m`), like `Duration`: the API server
        # and every Go client write and expect Go's form, never pydantic's ISO 8601 `PT1H30M`
        changed = False
        for info in cls.__pydantic_fields__.values():
            if info.annotation is timedelta:
                info.annotation, changed = Duration, True
            elif info.annotation == timedelta | None:
                info.annotation, changed = Duration | None, True
        if changed:
            cls.model_rebuild(force=True)


# Keys of a core schema that hold Python objects, not schemas: copied as they are.
_OPAQUE_KEYS = frozenset({"cls", "function", "serialization", "metadata", "config", "ref", "default"})


def _hook_name(node: dict[str, Any]) -> str:
    function = node.get("function")
    fn = function.get("function") if isinstance(function, dict) else None
    return getattr(fn, "__name__", "") if fn is not None else ""


def _without_hooks(node: Any, cls: type) -> Any:
    """A copy of a core schema without KubeObject's Python hooks: `_pyop_meta_only` everywhere (it
    only words an error for Python objects) and `_fill_type_meta` of `cls` itself."""
    if isinstance(node, list):
        return [_without_hooks(item, cls) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind == "function-before" and _hook_name(node) == "_pyop_meta_only":
        return _without_hooks(node["schema"], cls)
    if kind == "function-after" and _hook_name(node) == "_fill_type_meta":
        inner = node["schema"]
        if isinstance(inner, dict) and inner.get("cls") is cls:
            stripped = dict(_without_hooks(inner, cls))
            if "ref" in node and "ref" not in stripped:  # what definition-refs point at
                stripped["ref"] = node["ref"]
            return stripped
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "fields" and isinstance(value, dict):  # field name -> field schema ("metadata" too)
            out[key] = {name: _without_hooks(field, cls) for name, field in value.items()}
        else:
            out[key] = value if key in _OPAQUE_KEYS else _without_hooks(value, cls)
    return out


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    """Mimic Go's `omitempty`: empty maps, lists and None are left out of the wire form."""
    return {k: v for k, v in data.items() if v is not None and v != {} and v != []}


class OwnerReference(KubeModel):
    """Identifies an owning object; the garbage collector deletes dependents when owners are gone."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_empty(handler(self))


class ObjectMeta(KubeModel):
    """metadata of every object. Unknown keys are kept so nothing the server sends is lost."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: int | None = None
    self_link: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
    managed_fields: list[dict[str, Any]] | None = None

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_empty(handler(self))


ConditionStatus = Literal["True", "False", "Unknown"]

# metav1.Condition's kubebuilder markers (k8s.io/apimachinery/pkg/apis/meta/v1/types.go)
_DNS_SUBDOMAIN_PREFIX = r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
CONDITION_TYPE_PATTERN = "^" + _DNS_SUBDOMAIN_PREFIX + r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


def _as_go_condition(schema: dict[str, Any]) -> None:
    # Go requires every field but observedGeneration and declares no defaults; here message and
    # lastTransitionTime have Python defaults, so they are on the wire all the same
    schema["required"] = ["lastTransitionTime", "message", "reason", "status", "type"]
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


# metav1.Condition's Go comments, as controller-gen writes them into a CRD
_CONDITION_DOCS = {
    "observedGeneration": (
        "observedGeneration represents the .metadata.generation that the condition was set based upon.\n"
        "For instance, if .metadata.generation is currently 12, but the "
        ".status.conditions[x].observedGeneration is 9, the condition is out of date\n"
        "with respect to the current state of the instance."
    ),
    "lastTransitionTime": (
        "lastTransitionTime is the last time the condition transitioned from one status to another.\n"
        "This should be when the underlying condition changed.  If that is not known, then using the time "
        "when the API field changed is acceptable."
    ),
    "reason": (
        "reason contains a programmatic identifier indicating the reason for the condition's last "
        "transition.\nProducers of specific condition types may define expected values and meanings for "
        "this field,\nand whether the values are considered a guaranteed API.\n"
        "The value should be a CamelCase string.\nThis field may not be empty."
    ),
    "message": "message is a human readable message indicating details about the transition.\n"
    "This may be an empty string.",
}


class Condition(KubeModel):
    """Condition contains details for one aspect of the current state of this API Resource."""

    # metav1.Condition's schema exactly (descriptions are its Go comments, as controller-gen writes them):
    # every field but observedGeneration required (message and
    # lastTransitionTime have Python defaults, so they are always on the wire), same patterns and limits

    model_config = ConfigDict(json_schema_extra=_as_go_condition)

    type: str = Field(
        max_length=316,
        pattern=CONDITION_TYPE_PATTERN,
        description="type of condition in CamelCase or in foo.example.com/CamelCase.",
    )
    status: ConditionStatus = Field(description="status of the condition, one of True, False, Unknown.")
    observed_generation: Annotated[Int64, Field(ge=0)] | None = Field(
        default=None, description=_CONDITION_DOCS["observedGeneration"]
    )
    last_transition_time: datetime = Field(
        default_factory=lambda: datetime.now(UTC).replace(microsecond=0),
        description=_CONDITION_DOCS["lastTransitionTime"],
    )
    reason: str = Field(
        min_length=1,
        max_length=1024,
        pattern=CONDITION_REASON_PATTERN,
        description=_CONDITION_DOCS["reason"],
    )
    message: str = Field(default="", max_length=32768, description=_CONDITION_DOCS["message"])


def find_condition(conditions: list[Condition], type_: str) -> Condition | None:
    """The condition of the given type, or None."""
    return next((c for c in conditions if c.type == type_), None)


def set_condition(conditions: list[Condition], new: Condition) -> bool:
    """Add or update `new` in place, like apimachinery's meta.SetStatusCondition.

    lastTransitionTime moves only when the status changes. Returns True when anything changed.
    """
    existing = find_condition(conditions, new.type)
    if existing is None:
        conditions.append(new)
        return True
    changed = False
    if existing.status != new.status:
        existing.status = new.status
        existing.last_transition_time = new.last_transition_time
        changed = True
    for attr in ("reason", "message", "observed_generation"):
        if getattr(existing, attr) != getattr(new, attr):
            setattr(existing, attr, getattr(new, attr))
            changed = True
    return changed


def remove_condition(conditions: list[Condition], type_: str) -> bool:
    """Remove the condition of the given type; True when one was removed."""
    for index, condition in enumerate(conditions):
        if condition.type == type_:
            del conditions[index]
            return True
    return False


class KubeObject(KubeModel):
    """Base of every top-level Kubernetes object: built-in kinds (`pyscaffold_op.models`) and custom
    resources alike. Class attributes name where the kind lives in the API; the runtime reads them.

    `apiVersion` and `kind` are filled from `gvk`; a body naming another type is rejected.
    """

    gvk: ClassVar[GroupVersionKind]
    plural: ClassVar[str]
    namespaced: ClassVar[bool] = True

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @field_validator("metadata", mode="before")
    @classmethod
    def _pyop_meta_only(cls, value: Any) -> Any:
        # another model library's ObjectMeta: say which, and the fix, rather than pydantic's type error
        if value is not None and not isinstance(value, (Mapping, ObjectMeta)):
            kind = type(value)
            raise ValueError(
                f"metadata is {kind.__module__}.{kind.__qualname__}; pyop models take "
                "pyscaffold_op.apimachinery.ObjectMeta (snake_case: ObjectMeta(name=..., "
                "owner_references=...)), or build the whole object with the other library's models"
            )
        return value

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        gvk = cls.__dict__.get("gvk")
        if gvk is None:
            return  # an abstract intermediate base
        if not isinstance(gvk, GroupVersionKind):
            raise TypeError(f"{cls.__name__}.gvk must be a GroupVersionKind, got {gvk!r}")
        if "plural" not in cls.__dict__:
            cls.plural = pluralize(gvk.kind)

    @model_validator(mode="after")
    def _fill_type_meta(self) -> Self:
        gvk = type(self).__dict__.get("gvk") or getattr(type(self), "gvk", None)
        if gvk is None:
            return self
        if not self.api_version:
            self.api_version = gvk.api_version
        elif self.api_version != gvk.api_version:
            raise ValueError(f"apiVersion {self.api_version!r} does not match {gvk.api_version!r}")
        if not self.kind:
            self.kind = gvk.kind
        elif self.kind != gvk.kind:
            raise ValueError(f"kind {self.kind!r} does not match {gvk.kind!r}")
        return self

    @classmethod
    def wire_validator(cls) -> SchemaValidator:
        """The class's validator without its two Python hooks, for objects the API server sent.

        `_fill_type_meta` and `_pyop_meta_only` are Python calls inside every validation: a quarter
        of a small object's decode. A server's object never holds another library's ObjectMeta, and
        `ResourceInfo.decode` checks apiVersion and kind itself (filling them where a list's items
        leave them out), so it validates with this one: the same instances, without the two calls.
        Built once per class; an object of another kind nested in this one keeps its hooks."""
        validator: SchemaValidator | None = cls.__dict__.get("_pyop_wire_validator")
        if validator is None:
            if not cls.__pydantic_complete__:
                cls.model_rebuild()
            validator = SchemaValidator(_without_hooks(cls.__pydantic_core_schema__, cls))
            type.__setattr__(cls, "_pyop_wire_validator", validator)
        return validator

    @classmethod
    def api_group(cls) -> str:
        return cls.gvk.group

    @classmethod
    def api_version_string(cls) -> str:
        return cls.gvk.api_version

    def to_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, no nulls, datetimes as RFC 3339 strings."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class CustomResource(KubeObject):
    """Base class of every custom resource kind.

    A subclass names its API with class attributes and declares `spec` (and usually `status`):

        class At(CustomResource):
            gvk = GroupVersionKind("programming-kubernetes.viper.run", "v1alpha1", "At")
            plural = "ats"          # optional: computed from the kind like kubebuilder does
            namespaced = True       # optional: False for cluster-scoped kinds
            spec: AtSpec
            status: AtStatus | None = None

    `apiVersion` and `kind` are filled from `gvk`; a body naming another type is rejected.
    Every concrete subclass is recorded in `CustomResource.registry` by GVK.
    """

    registry: ClassVar[dict[GroupVersionKind, type["CustomResource"]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        gvk = cls.__dict__.get("gvk")
        if gvk is not None:
            CustomResource.registry[gvk] = cls
