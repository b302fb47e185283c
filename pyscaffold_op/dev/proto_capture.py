"""Capture the Kubernetes protobuf schema into `pyscaffold_op/envtest/server/_protobuf.json.xz`, which
the emulator's protobuf decoder reads (envtest/server/protoschema.py) on the first protobuf request.

    PYTHONPATH=$PWD python -m pyscaffold_op.dev.proto_capture

Sources: the pinned modules' `generated.proto` files in the Go module cache (field numbers, types,
repeated and map fields), and the Go structs beside them (their `json` and `protobuf` tags: the JSON
name, `omitempty`/`omitzero`, `,inline`, and whether the Go field is a pointer). The JSON name comes
from the Go tag, not the proto name: they differ (JSONSchemaProps' `ref` is `$ref`, `Volume`'s
`volumeSource` is inlined, ...). Go's encoding/json rules need the rest: an absent pointer is `null`
unless `omitempty`, a zero non-pointer scalar is written unless `omitempty`.

Each message is a list of fields in Go declaration order (the order encoding/json writes):
`[number, json name ("" when inlined), type, flags, Go field name, Go type]`; type is a proto scalar
(`string`, `int32`, ...) or a message's full name; flags are letters: r repeated, m map (string
keys; type is the value type), o omitempty, z omitzero, p Go pointer, i inlined. `slices` names the
messages that are Go slices (`type ExtraValue []string`: their JSON is the `items` array). `groups`
maps an apiVersion to its proto package. The Go type is the field's as reflect prints it, pointer
left out (`[]v1.Container`, `v1.Protocol`, `map[string][]uint8`): what Go's JSON decoding errors name
(envtest/server/godecode.py). Run it again after moving the pinned Kubernetes version."""

from __future__ import annotations

import json
import lzma
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "envtest" / "server" / "_protobuf.json.xz"
VERSION = "v0.37.2"
# module -> directories holding generated.proto (relative to the module)
MODULES: dict[str, list[str]] = {
    "k8s.io/api": ["."],
    "k8s.io/apimachinery": [
        "pkg/apis/meta/v1",
        "pkg/runtime",
        "pkg/runtime/schema",
        "pkg/util/intstr",
        "pkg/api/resource",
    ],
    "k8s.io/apiextensions-apiserver": ["pkg/apis/apiextensions/v1", "pkg/apis/apiextensions/v1beta1"],
    "k8s.io/kube-aggregator": ["pkg/apis/apiregistration/v1", "pkg/apis/apiregistration/v1beta1"],
}

# messages with hand-written protobuf marshalling (no protobuf tags): the decoder knows them
SPECIAL = {"Time", "MicroTime", "Quantity", "QuantityValue", "FieldsV1"}

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MESSAGE = re.compile(r"^message (\w+) \{(.*?)^\}", re.S | re.M)
_FIELD = re.compile(
    r"^\s*(optional|repeated)?\s*(map<string,\s*([\w.]+)>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;", re.M
)
_PACKAGE = re.compile(r"^package ([\w.]+);", re.M)
_GO_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_GO_SLICE = re.compile(r"^type (\w+) \[\]", re.M)
_GO_FIELD = re.compile(r"^\s*(\w+)?\s*([^`\s][^`]*?)?\s*`([^`]*)`", re.M)
_TAG = re.compile(r'(\w+):"([^"]*)"')
_GROUP_NAME = re.compile(r'^(?:// \+groupName=(\S*)|const GroupName = "([^"]*)")', re.M)


def _modcache() -> Path:
    out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


_GO_PACKAGE = re.compile(r"^package (\w+)", re.M)
_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(\w+\s+)?"([\w./-]+)"\s*$', re.M)
_GO_BUILTINS = {"byte": "uint8", "rune": "int32", "interface{}": "interface {}", "any": "interface {}"}


def _go_type(expr: str, package: str, imports: dict[str, str]) -> str:
    """A field's Go type as reflect prints it (`[]v1.Container`, `map[string]string`, `v1.Time`,
    `[]uint8`), the pointer encoding/json follows left out."""
    expr = expr.strip().removeprefix("*")
    if expr.startswith("[]"):
        return "[]" + _go_type(expr[2:], package, imports)
    if expr.startswith("map["):
        depth, i = 0, 3
        for i in range(3, len(expr)):
            depth += {"[": 1, "]": -1}.get(expr[i], 0)
            if depth == 0:
                break
        return f"map[{_go_type(expr[4:i], package, imports)}]{_go_type(expr[i + 1 :], package, imports)}"
    if expr in _GO_BUILTINS:
        return _GO_BUILTINS[expr]
    if "." in expr:
        alias, name = expr.split(".", 1)
        return f"{imports.get(alias, alias)}.{name}"
    if expr[:1].islower():  # string, bool, int32, ...
        return expr
    return f"{package}.{expr}"


def _imports(text: str) -> dict[str, str]:
    """A Go file's import names -> the imported package's name (the path's last element)."""
    out: dict[str, str] = {}
    block = re.search(r"^import \((.*?)^\)", text, re.S | re.M)
    lines = block.group(1) if block else "\n".join(re.findall(r"^import .*$", text, re.M))
    for alias, path in _GO_IMPORT.findall(lines):
        name = path.rsplit("/", 1)[-1]
        out[alias.strip() or name] = name
    return out


def _go_fields(pkg_dir: Path) -> tuple[dict[str, dict[int, dict[str, Any]]], set[str]]:
    """Go struct name -> protobuf number -> what the Go tags and type say; and the slice types."""
    structs: dict[str, dict[int, dict[str, Any]]] = {}
    slices: set[str] = set()
    for src in sorted(pkg_dir.glob("*.go")):
        if src.name.endswith("_test.go") or src.name.startswith(("zz_", "generated")):
            continue
        text = src.read_text()
        package_match = _GO_PACKAGE.search(text)
        package = package_match.group(1) if package_match else pkg_dir.name
        imports = _imports(text)
        slices.update(_GO_SLICE.findall(text))
        for name, body in _GO_STRUCT.findall(text):
            fields: dict[int, dict[str, Any]] = {}
            order = 0
            for line in body.splitlines():
                line = line.split("//")[0] if "`" not in line else line
                m = _GO_FIELD.match(line)
                if not m:
                    continue
                ident, gotype, tags = m.group(1), m.group(2), dict(_TAG.findall(m.group(3)))
                if "protobuf" not in tags or tags["protobuf"] == "-":
                    continue
                if gotype is None or gotype.startswith("."):
                    # an embedded field: `VolumeSource \`json:",inline" ...\``, `metav1.ObjectMeta ...`
                    ident, gotype = None, (ident or "") + (gotype or "")
                pb = tags["protobuf"].split(",")
                jtag = tags.get("json", "").split(",")
                fields[int(pb[1])] = {
                    "order": order,
                    "go": ident or (gotype or "").lstrip("*").split(".")[-1],
                    "json": jtag[0],
                    "omitempty": "omitempty" in jtag[1:],
                    "omitzero": "omitzero" in jtag[1:],
                    "inline": "inline" in jtag[1:] or (ident is None and not jtag[0]),
                    "pointer": (gotype or "").startswith("*"),
                    "gotype": _go_type(gotype or "", package, imports),
                }
                order += 1
            structs[name] = fields
    return structs, slices


def _proto_messages(proto: Path) -> tuple[str, dict[str, list[tuple[str, str, str, int, str | None]]]]:
    text = _COMMENT.sub("", proto.read_text())
    package = _PACKAGE.search(text)
    assert package, proto
    messages: dict[str, list[tuple[str, str, str, int, str | None]]] = {}
    for name, body in _MESSAGE.findall(text):
        fields = []
        for label, ftype, mapval, fname, num in _FIELD.findall(body):
            fields.append((label, ftype, fname, int(num), mapval or None))
        messages[name] = fields
    return package.group(1), messages


def _group_name(pkg_dir: Path) -> str | None:
    """The API group of a package (register.go's GroupName, else doc.go's +groupName); None for
    packages that serve no kinds (runtime, intstr, resource)."""
    for name in ("register.go", "doc.go"):
        src = pkg_dir / name
        m = _GROUP_NAME.search(src.read_text()) if src.exists() else None
        if m:
            return m.group(1) if m.group(1) is not None else m.group(2)
    return None


def _resolve(ftype: str, package: str) -> str:
    if ftype in {"string", "bytes", "bool", "int32", "int64", "double", "float", "uint32", "uint64"}:
        return ftype
    return ftype.lstrip(".") if ftype.startswith(".") else f"{package}.{ftype}"


def capture() -> dict[str, Any]:
    cache = _modcache()
    messages: dict[str, list[list[Any]]] = {}
    slices: list[str] = []
    groups: dict[str, str] = {}
    problems: list[str] = []
    for module in MODULES:
        if not (cache / f"{module}@{VERSION}").is_dir():
            raise FileNotFoundError(f"{module}@{VERSION} (go mod download {module}@{VERSION})")
    protos = [
        p
        for module, dirs in MODULES.items()
        for d in dirs
        for p in sorted(
            (cache / f"{module}@{VERSION}" / d).glob("**/generated.proto" if d == "." else "generated.proto")
        )
    ]
    go_packages = {proto: _go_fields(proto.parent) for proto in protos}
    go_structs_by_name: dict[str, dict[int, dict[str, Any]]] = {}
    for structs, _slices in go_packages.values():
        for sname, sfields in structs.items():
            go_structs_by_name.setdefault(sname, sfields)
    for proto in protos:
        package, parsed = _proto_messages(proto)
        structs, go_slices = go_packages[proto]
        group = _group_name(proto.parent)
        if group is not None:
            groups[f"{group}/{proto.parent.name}" if group else proto.parent.name] = package
        for name, fields in parsed.items():
            full = f"{package}.{name}"
            if name in go_slices:
                slices.append(full)
            # `type MatchCondition v1.MatchCondition`: the tags are the other package's
            go = structs.get(name) or go_structs_by_name.get(name, {})
            out: list[tuple[int, list[Any]]] = []
            for label, ftype, fname, num, mapval in fields:
                info = go.get(num)
                if info is None:
                    if name not in go_slices and name not in SPECIAL:
                        problems.append(f"{full}.{fname} ({num}): no Go field")
                    info = {
                        "order": num,
                        "go": fname[:1].upper() + fname[1:],
                        "json": fname,
                        "omitempty": True,
                        "omitzero": False,
                        "inline": False,
                        "pointer": False,
                        "gotype": "",
                    }
                flags = "r" if label == "repeated" else ""
                flags += "m" if mapval else ""
                flags += "o" if info["omitempty"] else ""
                flags += "z" if info["omitzero"] else ""
                flags += "p" if info["pointer"] else ""
                flags += "i" if info["inline"] else ""
                jname = "" if info["inline"] else info["json"]
                out.append(
                    (
                        info["order"],
                        [num, jname, _resolve(mapval or ftype, package), flags, info["go"], info["gotype"]],
                    )
                )
            messages[full] = [f for _o, f in sorted(out, key=lambda of: of[0])]
    for p in problems:
        print("warning:", p, file=sys.stderr)
    return {
        "version": VERSION,
        "groups": dict(sorted(groups.items())),
        "slices": sorted(slices),
        "messages": messages,
    }


def main() -> None:
    data = capture()
    OUT.write_bytes(
        lzma.compress(json.dumps(data, separators=(",", ":"), sort_keys=False).encode(), preset=9)
    )
    print(f"{OUT}: {len(data['messages'])} messages, {len(data['groups'])} group-versions")


if __name__ == "__main__":
    main()
