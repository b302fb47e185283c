"""What controller-gen writes for built-in types, as an overlay on the compact spec:
`python -m pyscaffold_op.dev.builtin_overlay [--controller-gen bin/controller-gen]`.

pyop embeds a built-in type (a `batchv1.JobTemplateSpec` field) from the published OpenAPI
(`pyscaffold_op/models/_spec.json`, see `gen/builtin.py`); controller-gen reads the Go markers of
k8s.io/api instead, and the two disagree in places (`+structType=atomic` on ConfigMapEnvSource is
`x-kubernetes-map-type: atomic` in a CRD but not in the OpenAPI; a `+default=false` field the OpenAPI
leaves bare; defaults the OpenAPI has and Go does not). The faithful source is controller-gen's output
over k8s.io/api at the pinned release, so this script

1. writes a Go package whose one root type has a field for a covering set of the spec's k8s.io/api and
   meta/v1 definitions (every definition reachable from one of them),
2. runs the real controller-gen over it (`pyscaffold_op.dev.controllergen`),
3. walks controller-gen's schema beside the spec and records, per definition and relative path (a
   property, `items`, `additionalProperties`), the schema keywords that differ, and
4. writes `pyscaffold_op/gen/_builtin_overlay.json`, which `gen/builtin.py` applies when it embeds,
   and `_builtin_descriptions.json.xz`: the descriptions controller-gen writes (the Go comments of
   k8s.io/api) per definition and relative path, which `gen/builtin.py` loads only when a CRD embeds
   a built-in type (xz: 0.55 MB of text in 90 kB).

Structural differences (a property one side has and the other has not) are printed, not patched.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path
from typing import Any

from pyscaffold_op.dev.controllergen import REPO_ROOT, run_controller_gen

OUT = REPO_ROOT / "pyscaffold_op" / "gen" / "_builtin_overlay.json"
DESCRIPTIONS = OUT.with_name("_builtin_descriptions.json.xz")
# spec module -> (Go import alias, import path)
GO_PACKAGES = {
    "core_v1": ("corev1", "k8s.io/api/core/v1"),
    "apps_v1": ("appsv1", "k8s.io/api/apps/v1"),
    "batch_v1": ("batchv1", "k8s.io/api/batch/v1"),
    "networking_v1": ("networkingv1", "k8s.io/api/networking/v1"),
    "rbac_v1": ("rbacv1", "k8s.io/api/rbac/v1"),
    "policy_v1": ("policyv1", "k8s.io/api/policy/v1"),
    "coordination_v1": ("coordinationv1", "k8s.io/api/coordination/v1"),
    "autoscaling_v1": ("autoscalingv1", "k8s.io/api/autoscaling/v1"),
    "autoscaling_v2": ("autoscalingv2", "k8s.io/api/autoscaling/v2"),
    "storage_v1": ("storagev1", "k8s.io/api/storage/v1"),
    "admissionregistration_v1": ("admissionregistrationv1", "k8s.io/api/admissionregistration/v1"),
    "meta_v1": ("metav1", "k8s.io/apimachinery/pkg/apis/meta/v1"),
}
# The schema keywords pyop takes from the spec (gen/builtin.py's _KEEP plus required); every other
# keyword controller-gen writes (minLength, maxItems, x-kubernetes-validations from k8s.io/api's
# declarative validation markers, ...) is compared too, except descriptions (the spec has none).
KEYWORDS = (
    "type",
    "format",
    "default",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "required",
)
STRUCTURE = ("properties", "items", "additionalProperties", "description")


def _refs(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        if "$ref" in node:
            out.add(node["$ref"])
        for value in node.values():
            out |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            out |= _refs(value)
    return out


def _closure(name: str, definitions: dict[str, Any], known: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current in known or current not in definitions:
            continue
        seen.add(current)
        todo.extend(_refs(definitions[current]))
    return seen


def roots(definitions: dict[str, Any], known: set[str]) -> list[str]:
    """A covering set: the fewest big definitions whose closures hold every embeddable definition."""
    candidates = [
        name
        for name, schema in definitions.items()
        if name.split(".", 1)[0] in GO_PACKAGES and name not in known and schema.get("type") == "object"
    ]
    closures = {name: _closure(name, definitions, known) for name in candidates}
    covered: set[str] = set()
    chosen: list[str] = []
    for name in sorted(candidates, key=lambda n: (-len(closures[n]), n)):
        if name in covered:
            continue
        chosen.append(name)
        covered |= closures[name]
    return sorted(chosen)


def go_source(names: list[str]) -> str:
    used = sorted({name.split(".", 1)[0] for name in names} | {"meta_v1"})
    imports = "\n".join(f'\t{GO_PACKAGES[m][0]} "{GO_PACKAGES[m][1]}"' for m in used)
    fields = "\n".join(
        f'\tF{i} {GO_PACKAGES[n.split(".", 1)[0]][0]}.{n.split(".", 1)[1]} `json:"f{i},omitempty"`'
        for i, n in enumerate(names)
    )
    return f"""// +kubebuilder:object:generate=false
// +groupName=builtins.pyop.dev
package v1

import (
{imports}
)

// +kubebuilder:object:root=true
type Builtins struct {{
\tmetav1.TypeMeta   `json:",inline"`
\tmetav1.ObjectMeta `json:"metadata,omitempty"`
\tSpec BuiltinsSpec `json:"spec,omitempty"`
}}

type BuiltinsSpec struct {{
{fields}
}}
"""


class Walker:
    """Walks controller-gen's schema beside the spec, recording keyword differences per definition."""

    def __init__(self, definitions: dict[str, Any], known: dict[str, Any]) -> None:
        self.definitions = definitions
        self.known = known
        self.patches: dict[str, dict[str, dict[str, Any]]] = {}
        # definition -> {(owner, path) of each place it is embedded: the patch there}
        self.embedded: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self.structural: set[str] = set()
        self.conflicts: set[str] = set()
        # definition -> relative path -> the description controller-gen writes there ("": the type's
        # own, seen where a field without a comment embeds it or a list holds it)
        self.descriptions: dict[str, dict[str, str]] = {}

    @staticmethod
    def _diff(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
        patch: dict[str, Any] = {}
        extra = sorted(k for k in theirs if k not in KEYWORDS and k not in STRUCTURE)
        for key in (*KEYWORDS, *extra):
            mine, real = ours.get(key), theirs.get(key)
            if key == "required":
                mine, real = sorted(mine or []), sorted(real or [])
                if mine != real:
                    patch[key] = real
            elif mine != real:
                patch[key] = real  # None: remove the keyword
        return patch

    def _record(self, owner: str, path: str, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
        self._store(owner, path, self._diff(ours, theirs))

    def _store(self, owner: str, path: str, patch: dict[str, Any]) -> None:
        if not patch:
            return
        slot = self.patches.setdefault(owner, {})
        if path in slot and slot[path] != patch:
            self.conflicts.add(f"{owner} {path}: {slot[path]} vs {patch}")
        slot[path] = patch

    def _describe(self, owner: str, path: str, real: dict[str, Any]) -> None:
        text = real.get("description")
        if text:
            slot = self.descriptions.setdefault(owner, {})
            if slot.get(path, text) != text:
                self.conflicts.add(f"{owner} {path}: description {slot[path]!r} vs {text!r}")
            slot[path] = text

    def walk(self, node: dict[str, Any], real: dict[str, Any], owner: str, path: str) -> None:
        if "$ref" in node:
            name = node["$ref"]
            # a root field has no comment, and the items of a list (values of a map) carry none: what
            # controller-gen writes there is the type's own doc, for a user's field of that type
            if owner == "<root>" or path.rsplit("/", 1)[-1] in ("items", "additionalProperties"):
                self._describe(name, "", real)
            if owner != "<root>":
                self._describe(owner, path, real)
            if name in self.known:
                self._record(owner, path, self.known[name](), real)
                return
            definition = self.definitions[name]
            patch = self._diff(_with_int_or_string(definition), real)
            places = self.embedded.setdefault(name, {})
            if (owner, path) in places and places[(owner, path)] != patch:
                self.conflicts.add(f"{owner} {path}: {places[(owner, path)]} vs {patch}")
            places[(owner, path)] = patch
            self._children(definition, real, name, "")
            return
        self._describe(owner, path, real)
        self._record(owner, path, _with_int_or_string(node), real)
        self._children(node, real, owner, path)

    def settle(self) -> None:
        """A difference every embedding of a definition shares is the type's own (a `+structType`, a
        `+required` inside): it goes on the definition (path ""); the rest on the embedding field."""
        for name, places in self.embedded.items():
            patches = list(places.values())
            if all(p == patches[0] for p in patches):
                self._store(name, "", patches[0])
            else:
                for (owner, path), patch in places.items():
                    self._store(owner, path, patch)

    def _children(self, node: dict[str, Any], real: dict[str, Any], owner: str, path: str) -> None:
        prefix = f"{path}/" if path else ""
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                if isinstance(real.get(key), dict):
                    self.walk(node[key], real[key], owner, prefix + key)
                else:
                    self.structural.add(f"{owner} {prefix}{key}: not in controller-gen's schema")
        props, real_props = node.get("properties", {}), real.get("properties", {})
        for prop in sorted(set(props) | set(real_props)):
            if prop not in real_props:
                self.structural.add(f"{owner} {prefix}properties/{prop}: not in controller-gen's schema")
            elif prop not in props:
                self.structural.add(f"{owner} {prefix}properties/{prop}: only in controller-gen's schema")
            else:
                self.walk(props[prop], real_props[prop], owner, f"{prefix}properties/{prop}")


def _with_int_or_string(node: dict[str, Any]) -> dict[str, Any]:
    """The keywords gen/builtin.py writes for a spec node (before the overlay)."""
    from pyscaffold_op.gen import builtin

    out = {k: node[k] for k in KEYWORDS if k in node}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.update(builtin._INT_OR_STRING)
    return out


def build(controller_gen: Path) -> tuple[dict[str, Any], Walker, int]:
    from pyscaffold_op.gen import builtin
    from pyscaffold_op.models import spec

    definitions = spec.load()["definitions"]
    known = builtin._KNOWN
    chosen = roots(definitions, set(known))
    crds = run_controller_gen({"api/v1/types.go": go_source(chosen)}, controller_gen)
    (crd,) = crds.values()
    real_spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    walker = Walker(definitions, known)
    for i, name in enumerate(chosen):
        walker.walk({"$ref": name}, real_spec["properties"][f"f{i}"], "<root>", f"f{i}")
    walker.settle()
    walker.patches.pop("<root>", None)
    overlay = {
        "source": f"controller-gen over k8s.io/api (python -m pyscaffold_op.dev.builtin_overlay); "
        f"{len(chosen)} root types",
        "patches": {owner: dict(sorted(p.items())) for owner, p in sorted(walker.patches.items())},
    }
    return overlay, walker, len(chosen)


def descriptions_file(walker: Walker) -> bytes:
    """The descriptions as `_builtin_descriptions.json.xz` holds them: sorted JSON, xz-compressed."""
    table = {owner: dict(sorted(paths.items())) for owner, paths in sorted(walker.descriptions.items())}
    document = {"source": "controller-gen over k8s.io/api (python -m pyscaffold_op.dev.builtin_overlay)"}
    text = json.dumps({**document, "descriptions": table}, separators=(",", ":"), sort_keys=True)
    return lzma.compress(text.encode(), preset=9 | lzma.PRESET_EXTREME)


def read_descriptions(data: bytes) -> Any:
    """What a descriptions file holds (compared decompressed: another liblzma may compress otherwise)."""
    return json.loads(lzma.decompress(data))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controller-gen", type=Path, default=REPO_ROOT / "bin" / "controller-gen")
    parser.add_argument("--check", action="store_true", help="fail if the checked-in overlay differs")
    args = parser.parse_args(argv)
    overlay, walker, count = build(args.controller_gen)
    for line in sorted(walker.structural):
        print("structural:", line)
    for line in sorted(walker.conflicts):
        print("conflict:", line)
    text = json.dumps(overlay, indent=1, sort_keys=False) + "\n"
    patched = sum(len(p) for p in overlay["patches"].values())
    described = descriptions_file(walker)
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.name}: {'up to date' if same else 'OUT OF DATE'} ({patched} patches)")
        same_text = DESCRIPTIONS.is_file() and read_descriptions(DESCRIPTIONS.read_bytes()) == (
            read_descriptions(described)
        )
        print(f"{DESCRIPTIONS.name}: {'up to date' if same_text else 'OUT OF DATE'}")
        return 0 if same and same_text else 1
    OUT.write_text(text, encoding="utf-8")
    DESCRIPTIONS.write_bytes(described)
    print(f"wrote {OUT} ({count} root types, {len(overlay['patches'])} definitions, {patched} patches)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
