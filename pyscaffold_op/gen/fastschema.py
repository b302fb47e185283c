"""pydantic's JSON schema of a model, read from its fields without building the model.

`cls.model_json_schema()` needs the model's core schema, so pydantic builds the class (core schema,
validator, serializer) and then walks that core schema in Python: ~8 ms of a CronJob-like kind. The
generator needs neither: it needs the JSON schema `gen.schema._Run` turns into a structural one. This
module writes that JSON schema from `model_fields`, as pydantic's `GenerateJsonSchema` would in
validation mode with `by_alias=True`, for the shapes our API types use:

- a field's type is a leaf (no model inside) or a model, `X | None`, `list[X]`, `dict[str, X]` of
  those. A leaf's schema is pydantic's own (a `TypeAdapter` of the annotation and the field's
  constraints, cached per converter: a project repeats the same few), so our custom types (Int32,
  Quantity, IntOrString, Duration...), enums, literals and constraints need no second implementation;
- the field's default, title, description, examples, deprecation and `json_schema_extra`, and the
  class's title, docstring, `extra` and `json_schema_extra`, as pydantic applies them.

Anything else raises `Unsupported` and the caller takes pydantic's path: root and generic models,
custom `__get_pydantic_json_schema__`, plain validators, `json_schema_input_type`, discriminators,
alias choices, constraints on a model-holding type, recursion, configs that change a schema, defaults
pydantic cannot encode. `tests/gen/test_fastschema.py` checks both paths give the same CRD schema.
"""

from __future__ import annotations

import collections.abc
import contextlib
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined, to_jsonable_python

# config keys that do not change a validation-mode JSON schema (others: pydantic's path)
_NEUTRAL_CONFIG = {
    "alias_generator",
    "validate_by_name",
    "validate_by_alias",
    "serialize_by_alias",
    "populate_by_name",
    "use_attribute_docstrings",
    "extra",
    "json_schema_extra",
    "defer_build",
    "title",
    "frozen",
    "validate_assignment",
    "validate_default",
    "revalidate_instances",
    "protected_namespaces",
    "from_attributes",
    "arbitrary_types_allowed",
}
_NULL = {"type": "null"}
_UNIONS = (Union, types.UnionType)


class Unsupported(Exception):
    """A shape this module does not write; pydantic's own generator does."""


def _has_model(tp: Any) -> bool:
    if get_origin(tp) is None and isinstance(tp, type):
        try:
            return issubclass(tp, BaseModel)
        except TypeError:
            return False
    return any(_has_model(arg) for arg in get_args(tp))


_SLOT = "x-pyop-slot"


@dataclass(frozen=True)
class _Slot:
    """Stands for the model a field's type holds, so that pydantic writes the rest of the type (a
    list, `| None`, constraints, `ListType`...) without building the model; its schema is a mark
    that `_fill_slots` replaces with the model's `$ref`, where pydantic would write that `$ref`."""

    index: int

    def __get_pydantic_json_schema__(self, core: Any, handler: Any) -> dict[str, Any]:
        return {_SLOT: self.index}


def _with_slots(tp: Any, held: list[type[BaseModel]]) -> Any:
    """`tp` with each model it holds replaced by a slot (the models appended to `held`)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            held.append(tp)
            return Annotated[Any, _Slot(len(held) - 1)]
        return tp
    if not _has_model(tp):
        return tp
    if origin is Annotated:
        return Annotated[(_with_slots(args[0], held), *tp.__metadata__)]
    inner = tuple(_with_slots(arg, held) for arg in args)
    if origin in _UNIONS:
        return Union[inner]  # noqa: UP007 - a tuple of types, built at run time
    if origin is list and len(inner) == 1:
        return list[inner[0]]  # type: ignore[valid-type]
    if origin is dict and len(inner) == 2:
        return dict[inner[0], inner[1]]  # type: ignore[valid-type]
    raise Unsupported(f"a model in {tp!r}")


def _contains_key(node: Any, keys: tuple[str, ...]) -> bool:
    if isinstance(node, dict):
        return any(k in node for k in keys) or any(_contains_key(v, keys) for v in node.values())
    if isinstance(node, list):
        return any(_contains_key(v, keys) for v in node)
    return False


def _title(name: str) -> str:
    return name.title().replace("_", " ").strip()  # GenerateJsonSchema.get_title_from_name


class FastSchema:
    """Writes models' JSON schemas for one converter; its leaf schemas are cached across models.

    `generator` is the converter's `GenerateJsonSchema` subclass (for leaves and default encoding);
    `builtin` names a built-in model's spec definition (or None); `model_key`/`builtin_key` are the
    tags the converter's pydantic path puts on a model's schema and a built-in's definition.
    """

    def __init__(
        self,
        generator: Callable[[dict[str, type]], type[Any]],
        builtin: Callable[[type], str | None],
        model_key: str,
        builtin_key: str,
    ) -> None:
        self._generator = generator
        self._builtin = builtin
        self._model_key = model_key
        self._builtin_key = builtin_key
        self._encoder = generator({})  # for defaults: it records no models
        self._leaves: dict[Any, tuple[dict[str, Any], dict[str, Any]] | None] = {}
        self._checked: dict[type, bool] = {}

    # ---------------------------------------------------------- entry point

    def json_schema(self, cls: type[BaseModel], models: dict[str, type]) -> dict[str, Any]:
        """What `cls.model_json_schema(by_alias=True, schema_generator=...)` gives, for the converter:
        the model's schema with its `$defs`; `models` gets each model's tag, as the pydantic path's."""
        run = _Run(self, models)
        if self._builtin(cls) is not None:
            raise Unsupported("a built-in model at the root")
        root = run.model_def(cls)
        if run.defs:
            root["$defs"] = run.defs
        return root

    # ---------------------------------------------------------- checks and leaves

    def check_model(self, cls: type[BaseModel]) -> None:
        if cls not in self._checked:
            self._checked[cls] = self._supported(cls)
        if not self._checked[cls]:
            raise Unsupported(cls.__name__)

    @staticmethod
    def _supported(cls: type[BaseModel]) -> bool:
        if cls.__pydantic_root_model__ or not getattr(cls, "__pydantic_fields_complete__", False):
            return False
        generic = cls.__pydantic_generic_metadata__
        if generic.get("args") or generic.get("parameters"):
            return False
        for hook in ("__get_pydantic_json_schema__", "__get_pydantic_core_schema__"):
            if getattr(cls, hook).__func__ is not getattr(BaseModel, hook).__func__:
                return False
        if not set(cls.model_config) <= _NEUTRAL_CONFIG:
            return False
        for decorator in cls.__pydantic_decorators__.field_validators.values():
            info = decorator.info
            if info.mode == "plain" or info.json_schema_input_type is not PydanticUndefined:
                return False
        return not any("__pydantic_extra__" in getattr(k, "__annotations__", {}) for k in cls.__mro__)

    def leaf(self, annotation: Any, metadata: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """pydantic's schema of a type holding no model (with the field's constraints) and its defs."""
        try:
            key: Any = (annotation, tuple(metadata))
            hash(key)
        except TypeError:
            key = None
        if key is None or key not in self._leaves:
            value = self._leaf(annotation, metadata)
            if key is None:
                if value is None:
                    raise Unsupported("leaf")
                return value
            self._leaves[key] = value
        cached = self._leaves[key]
        if cached is None:
            raise Unsupported("leaf")
        return cached

    def _leaf(self, annotation: Any, metadata: list[Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        item = Annotated[(annotation, *metadata)] if metadata else annotation
        models: dict[str, type] = {}
        try:
            # in a list, so that pydantic never unpacks a top-level $ref: items are the field's form
            schema = TypeAdapter(list[item]).json_schema(  # type: ignore[valid-type]
                by_alias=True, schema_generator=self._generator(models)
            )
        except Exception:  # a type only a model's own config makes valid, and the like
            return None
        if models or _contains_key(schema, (self._builtin_key, self._model_key)):
            return None
        return schema["items"], schema.get("$defs", {})

    def encode_default(self, cls: type[BaseModel], default: Any) -> Any:
        """The default as pydantic's `default_schema` writes it (the converter's encoder, the model's
        config)."""
        if isinstance(default, collections.abc.Set) and len(default) > 1:
            with contextlib.suppress(TypeError):
                default = sorted(default)
        if default is None or type(default) in (str, int, bool):
            return default  # what the encoder gives them, without an encoder
        generator = self._encoder(by_alias=True)
        with generator._config_wrapper_stack.push(cls.model_config):
            try:
                return generator.encode_default(default)
            except Exception as err:  # pydantic leaves the default out, with a warning
                raise Unsupported("default") from err


class _Run:
    """One root model: its definitions by name, in the order pydantic would write them."""

    def __init__(self, owner: FastSchema, models: dict[str, type]) -> None:
        self.owner = owner
        self.models = models
        self.defs: dict[str, Any] = {}
        self.names: dict[type, str] = {}
        self.building: set[type] = set()

    def ref(self, cls: type[BaseModel]) -> dict[str, Any]:
        if cls in self.building:
            raise Unsupported("recursive model")  # pydantic's path names it in the error
        if cls not in self.names:
            name = f"{cls.__module__}.{cls.__qualname__}"
            if name in self.defs:
                raise Unsupported("two classes of one name")
            builtin = self.owner._builtin(cls)
            if builtin is not None:
                self.defs[name] = {self.owner._builtin_key: builtin}
            else:
                self.building.add(cls)
                self.defs[name] = self.model_def(cls)
                self.building.discard(cls)
            self.names[cls] = name
        return {"$ref": f"#/$defs/{self.names[cls]}"}

    def model_def(self, cls: type[BaseModel]) -> dict[str, Any]:
        self.owner.check_model(cls)
        self.building.add(cls)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, info in cls.__pydantic_fields__.items():
            alias = info.validation_alias
            if alias is None:
                alias = info.alias
            if alias is not None and not isinstance(alias, str):
                raise Unsupported("alias choices")
            key = alias or name
            properties[key] = self.field(cls, name, info)
            if info.is_required():
                required.append(key)
        self.building.discard(cls)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        self._update_class_schema(schema, cls)
        key = f"{cls.__module__}:{cls.__qualname__}"
        self.models[key] = cls
        schema[self.owner._model_key] = key
        return schema

    @staticmethod
    def _update_class_schema(schema: dict[str, Any], cls: type[BaseModel]) -> None:
        config = cls.model_config
        title = config.get("title")
        schema.setdefault("title", cls.__name__ if title is None else title)
        if cls.__doc__:
            schema.setdefault("description", inspect.cleandoc(cls.__doc__))
        extra = config.get("extra")
        if "additionalProperties" not in schema and extra in ("allow", "forbid"):
            schema["additionalProperties"] = extra == "allow"
        json_schema_extra: Any = config.get("json_schema_extra")
        if isinstance(json_schema_extra, (staticmethod, classmethod)):
            json_schema_extra = json_schema_extra.__get__(cls)
        if isinstance(json_schema_extra, dict):
            schema.update(json_schema_extra)
        elif callable(json_schema_extra):
            if len(inspect.signature(json_schema_extra).parameters) > 1:
                json_schema_extra(schema, cls)
            else:
                json_schema_extra(schema)
        elif json_schema_extra is not None:
            raise Unsupported("json_schema_extra")
        if "__deprecated__" in cls.__dict__:
            schema.setdefault("deprecated", True)

    def field(self, cls: type[BaseModel], name: str, info: Any) -> dict[str, Any]:
        if info.discriminator is not None:
            raise Unsupported("discriminator")
        held: list[type[BaseModel]] = []
        annotation = _with_slots(info.annotation, held)
        leaf, defs = self.owner.leaf(annotation, info.metadata)
        self._merge_defs(defs)
        schema = self._fill_slots(leaf, held) if held else dict(leaf)
        if info.default is not PydanticUndefined:
            schema["default"] = self.owner.encode_default(cls, info.default)
        updates = {
            "title": info.title,
            "description": info.description,
            "deprecated": bool(info.deprecated) or info.deprecated == "" or None,
            "examples": to_jsonable_python(info.examples),
        }
        schema.update({k: v for k, v in updates.items() if v is not None})
        extra = info.json_schema_extra
        if isinstance(extra, dict):
            schema.update(to_jsonable_python(extra))
        elif extra is not None:
            raise Unsupported("a callable json_schema_extra on a field")
        if "title" not in schema and _titled(schema):
            schema["title"] = _title(name)
        if "$ref" in schema:  # GenerateJsonSchema.handle_ref_overrides
            target = self.defs[schema["$ref"].rsplit("/", 1)[-1]]
            schema = {k: v for k, v in schema.items() if k == "$ref" or k not in target or target[k] != v}
        return schema

    def _fill_slots(self, node: Any, held: list[type[BaseModel]]) -> Any:
        """The leaf schema with each model's slot replaced by its `$ref` (keywords beside it kept)."""
        if isinstance(node, dict):
            if _SLOT in node:
                rest = {k: v for k, v in node.items() if k != _SLOT}
                return {**self.ref(held[node[_SLOT]]), **rest}
            return {k: self._fill_slots(v, held) for k, v in node.items()}
        if isinstance(node, list):
            return [self._fill_slots(v, held) for v in node]
        return node

    def _merge_defs(self, defs: dict[str, Any]) -> None:
        for name, schema in defs.items():
            if self.defs.setdefault(name, schema) != schema:
                raise Unsupported(f"two definitions named {name}")


def _titled(schema: dict[str, Any]) -> bool:
    """Whether pydantic titles a field of this schema from its name: not when its type has a
    definition of its own (a model, an enum), bare or `| None`."""
    if "$ref" in schema:
        return False
    members = [m for m in schema.get("anyOf", []) if m != _NULL]
    return not (len(members) == 1 and "$ref" in members[0] and len(schema["anyOf"]) == 2)


__all__ = ["FastSchema", "Unsupported"]
