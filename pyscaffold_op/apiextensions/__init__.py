"""What the API server does with a CRD's structural schema (our apiextensions-apiserver).

Shared by the generator's offline checks and the emulator, so both agree on what the server keeps,
fills in and rejects. Objects are plain JSON-like dicts; `schema` is a version's `openAPIV3Schema`.
Names load their module on first use (`pyop generate` on a project without rules pays for no CEL
and no pruning); google-re2 comes with the first `pattern`, cel-expr-python with the first CEL rule.

    removed = prune(obj, schema)          # drops unknown fields in place; their paths
    apply_defaults(obj, schema)           # fills defaults in place (drops non-nullable nulls)
    causes = validate(obj, schema)        # 422 causes with kube-openapi's messages, [] when valid
    causes = validate_rules(obj, schema, old)   # x-kubernetes-validations (CEL)
    causes = scale_causes(obj, scale)           # the scale subresource's replica paths
    causes = rules_or_blocked(causes, obj, schema, old)  # CEL, unless earlier causes block it
    check_crd(crd) / crd_causes(crd)      # the rules a CRD itself must pass (structural schema, names)

Modules: `pruning`, `defaulting`, `validation` (each builds its step's closure for one schema node;
`compiled.compile_schema` puts them together per schema, which the emulator keeps per CRD version and
the three functions above build per call), `rules` (CEL rules) over `cel` (compile and run, on
cel-expr-python) and `cellibs` (the Kubernetes CEL libraries),
`patterns` (regular expressions, RE2 semantics), `crdvalidation`, `strategy` (what the server's
custom resource strategy checks around the schema, in its order), `schemacache` (schemas, their
compiled form and a CRD's checks shared by content across API servers of one process).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.apiextensions.crdvalidation import check_crd, check_schema, crd_causes
    from pyscaffold_op.apiextensions.defaulting import apply_defaults
    from pyscaffold_op.apiextensions.pruning import OBJECT_META_FIELDS, prune, unknown_fields
    from pyscaffold_op.apiextensions.rules import MISSING, has_rules, validate_rules
    from pyscaffold_op.apiextensions.strategy import rules_or_blocked, scale_causes, status_causes
    from pyscaffold_op.apiextensions.validation import validate

_MODULE_OF = {
    "MISSING": "rules",
    "OBJECT_META_FIELDS": "pruning",
    "apply_defaults": "defaulting",
    "check_crd": "crdvalidation",
    "check_schema": "crdvalidation",
    "crd_causes": "crdvalidation",
    "has_rules": "rules",
    "prune": "pruning",
    "rules_or_blocked": "strategy",
    "scale_causes": "strategy",
    "status_causes": "strategy",
    "unknown_fields": "pruning",
    "validate": "validation",
    "validate_rules": "rules",
}

__all__ = [
    "MISSING",
    "OBJECT_META_FIELDS",
    "apply_defaults",
    "check_crd",
    "check_schema",
    "crd_causes",
    "has_rules",
    "prune",
    "rules_or_blocked",
    "scale_causes",
    "status_causes",
    "unknown_fields",
    "validate",
    "validate_rules",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
