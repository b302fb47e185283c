"""Read the Go types of k8s.io/api (the release hack/oracles/versions.env pins, from the Go module
cache) into the emulator's tables of what Go's encoding/json does with them:

- `envtest/registry/_go_fields.json`: every struct's JSON field names (inline embeds merged), which
  decide the unknown fields of built-in objects at any depth (`registry/builtin_fields.prune_nested`);
- `envtest/registry/gozero.py`: the fields Go writes although unset (non-pointer times as `null`,
  non-pointer structs as `{}` with their fields that have no `omitempty` as zeros).

    go mod download k8s.io/api@v0.37.2   # once, if the module cache lacks it
    python -m pyscaffold_op.dev.go_types

Keys are the models' type names, `<group>_<version>.<Type>` (the package's directory)."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REGISTRY = REPO / "pyscaffold_op" / "envtest" / "registry"
_SCALAR_ZERO = {"string": '""', "bool": "False", "int32": "0", "int64": "0", "int": "0", "float64": "0"}
_STRUCT = re.compile(r"^type (\w+) struct \{")
_ALIAS = re.compile(r"^type (\w+) (string|bool|int32|int64|int|float64)\s*$", re.M)
_FIELD = re.compile(r'^\s+(?:(\w+)\s+)?([\w.*\[\]]+)\s+`json:"([^"]*)"')


@dataclass
class Struct:
    fields: list[str] = field(default_factory=list)  # JSON names, in order
    inline: list[str] = field(default_factory=list)  # same-package types embedded inline
    null_times: list[str] = field(default_factory=list)
    empty_structs: list[str] = field(default_factory=list)
    zeros: dict[str, str] = field(default_factory=dict)  # JSON name -> Python literal


def module_dir() -> Path:
    env = (REPO / "hack" / "oracles" / "versions.env").read_text()
    kube = re.search(r"^KUBERNETES_VERSION=v1\.(\d+\.\d+)", env, re.M)
    assert kube is not None, "KUBERNETES_VERSION missing from versions.env"
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout
    return Path(cache.strip()) / "k8s.io" / f"api@v0.{kube.group(1)}"


def read_package(files: list[Path]) -> dict[str, Struct]:
    text = "\n".join(f.read_text() for f in files)
    aliases = dict(_ALIAS.findall(text))
    names = {m.group(1) for line in text.splitlines() if (m := _STRUCT.match(line))}
    out: dict[str, Struct] = {}
    current: Struct | None = None
    for line in text.splitlines():
        if m := _STRUCT.match(line):
            current = out.setdefault(m.group(1), Struct())
            continue
        if line.startswith("}"):
            current = None
            continue
        f = _FIELD.match(line)
        if current is None or f is None:
            continue
        go_type: str = f.group(2)
        json_name, *opts = f.group(3).split(",")
        if json_name == "-":
            continue
        if "inline" in opts or (f.group(1) is None and not json_name):
            if go_type in names:
                current.inline.append(go_type)
            continue
        current.fields.append(json_name)
        if "omitzero" in opts:
            continue
        if go_type in ("metav1.Time", "metav1.MicroTime"):
            current.null_times.append(json_name)
        elif go_type in names or go_type == "metav1.ObjectMeta":  # a template's metadata: {}
            current.empty_structs.append(json_name)
        elif "omitempty" not in opts and aliases.get(go_type, go_type) in _SCALAR_ZERO:
            current.zeros[json_name] = _SCALAR_ZERO[aliases.get(go_type, go_type)]
    for s in out.values():  # inline embeds of the same package (a webhook's Rule in RuleWithOperations)
        for embedded in s.inline:
            s.fields.extend(out[embedded].fields)
    return out


def read_all(root: Path) -> dict[str, Struct]:
    out: dict[str, Struct] = {}
    for types in sorted(root.glob("*/*/types.go")):
        package = types.parent
        files = [
            p
            for p in sorted(package.glob("*.go"))
            if not p.name.endswith(("_test.go", "generated.go")) and not p.name.startswith("zz_")
        ]
        prefix = f"{package.parent.name}_{package.name}"
        for name, struct in read_package(files).items():
            out[f"{prefix}.{name}"] = struct
    return out


def _tuples(table: dict[str, list[str]]) -> str:
    return "\n".join(f'    "{k}": ({", ".join(json.dumps(x) for x in v)},),' for k, v in table.items() if v)


_ZERO_COMMENT = (
    "# a struct type's fields without omitempty -> their zero values, written in a struct the\n"
    "# server made (an `EMPTY_WHEN_UNSET` field); fields a client sent are left to validation\n"
)


def write(structs: dict[str, Struct]) -> None:
    fields = {k: s.fields for k, s in sorted(structs.items()) if s.fields}
    (REGISTRY / "_go_fields.json").write_text(
        json.dumps(fields, separators=(",", ":"), sort_keys=True) + "\n"
    )
    zeros = "\n".join(
        f'    "{k}": {{{", ".join(f"{json.dumps(n)}: {v}" for n, v in s.zeros.items())}}},'
        for k, s in structs.items()
        if s.zeros
    )
    (REGISTRY / "gozero.py").write_text(
        (REGISTRY / "gozero.py").read_text().split("NULL_WHEN_UNSET:")[0]
        + "NULL_WHEN_UNSET: dict[str, tuple[str, ...]] = {\n"
        + _tuples({k: s.null_times for k, s in structs.items()})
        + "\n}\n\nEMPTY_WHEN_UNSET: dict[str, tuple[str, ...]] = {\n"
        + _tuples({k: s.empty_structs for k, s in structs.items()})
        + "\n}\n\n"
        + _ZERO_COMMENT
        + "ZERO_FIELDS: dict[str, dict[str, object]] = {\n"
        + zeros
        + "\n}\n"
    )


def main() -> None:
    write(read_all(module_dir()))
    subprocess.run(["ruff", "format", "-q", str(REGISTRY / "gozero.py")], check=False)


if __name__ == "__main__":
    main()
