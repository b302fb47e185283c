"""Request bodies decoded with the API server's limits, so no body can exhaust the emulator.

kube-apiserver reads at most 3 MiB, converts YAML with sigs.k8s.io/yaml (go-yaml v2: alias expansion
bounded by `allowedAliasRatio`, "document contains excessive aliasing"; nesting bounded, "exceeded max
depth of 10000") and decodes JSON with encoding/json (nesting bounded: "exceeded max depth"). PyYAML
shares aliased nodes instead of expanding them, so the expansion go-yaml would do is counted on the
composed graph before anything is built; the decoded object is then held to the body limit too.

Nesting is bounded lower than Go's 10,000: the emulator's pruning, validation, managed fields and
deep copies recurse, and Python's stack is ~1,000 frames. No real object comes near `MAX_DEPTH`.
"""

from __future__ import annotations

from typing import Any

import yaml

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.jsonutil import dumps, loads

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's maxRequestBodyBytes
MAX_DEPTH = 200
# An object's managedFields nest up to ~5 levels deeper than its fields: objects are held to less, so
# whatever the emulator stores can be sent back in full (GET then PUT) within MAX_DEPTH.
MAX_OBJECT_DEPTH = MAX_DEPTH - 8

# go-yaml v2 decode.go: aliases may drive 99% of the first 400,000 decodes, scaling down to 10% at 4M.
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _RATIO_LOW:
        return 0.99
    if decodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


class DecodeError(ValueError):
    """The body cannot be decoded; the message is go's (yaml: ..., exceeded max depth)."""


def _check_yaml_graph(root: yaml.Node) -> int:
    """Walk the document as go-yaml's decoder would expand it: count every node decoded and those
    decoded through an alias (a node met again after its anchor), and stop at its limits. Returns
    the number of nodes decoded through aliases."""
    decodes = aliased = 0
    seen: set[int] = set()
    # (node, depth, inside an alias)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, in_alias = stack.pop()
        if isinstance(node, yaml.CollectionNode):
            if depth > MAX_DEPTH:
                raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
            if id(node) in seen:
                in_alias = True
            seen.add(id(node))
        decodes += 1
        if in_alias:
            aliased += 1
            if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
                raise DecodeError("yaml: document contains excessive aliasing")
        if isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, depth + 1, in_alias))
                stack.append((key, depth + 1, in_alias))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1, in_alias) for item in reversed(node.value))
    return aliased


def load_yaml(body: bytes) -> Any:
    """One YAML document, bounded like go-yaml; `yaml.YAMLError` or `DecodeError` when bad. An
    expansion of aliases past the body limit is 413, as if the expanded document had been sent."""
    loader = yaml.SafeLoader(body)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the composer recurses once per level
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
        if node is None:
            return None
        aliased = _check_yaml_graph(node)
        obj = loader.construct_document(node)
        if aliased and len(dumps(obj)) > MAX_BODY:
            raise E.too_large(MAX_BODY)
        return obj
    finally:
        loader.dispose()


def _depth_exceeds(obj: Any, limit: int) -> bool:
    """Whether objects and arrays nest deeper than `limit` (scalars do not count, as in Go)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def load_json(body: bytes) -> Any:
    """JSON with nesting bounded; `ValueError` (or `DecodeError`) when bad."""
    try:
        obj = loads(body)
    except RecursionError:  # msgspec stops at the interpreter's recursion limit
        raise DecodeError("exceeded max depth") from None
    # a value nested N deep needs N brackets: only bodies with that many are walked
    if body.count(b"{") + body.count(b"[") > MAX_DEPTH and _depth_exceeds(obj, MAX_DEPTH):
        raise DecodeError("exceeded max depth")
    return obj


def check_object_depth(obj: dict[str, Any], raw: bytes, kind: str) -> None:
    """400 for an object whose fields (metadata aside) nest deeper than MAX_OBJECT_DEPTH."""
    if raw.count(b"{") + raw.count(b"[") <= MAX_OBJECT_DEPTH:
        return
    fields = {k: v for k, v in obj.items() if k != "metadata"}
    if _depth_exceeds(fields, MAX_OBJECT_DEPTH):
        raise E.bad_request(
            f"{kind} cannot be handled: exceeded max depth of {MAX_OBJECT_DEPTH} (the emulator's limit)"
        )


def summarize(body: bytes, max_length: int = 30) -> str:
    """How apiserver's transformDecodeError quotes a body it could not read (`summarizeData`)."""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        text = body[:max_length].decode(errors="replace")
        return text + " ..." if len(body) > max_length else text
    return body[:max_length].hex() + (" ..." if len(body) > max_length else "")


def decode_body(body: bytes, yaml_body: bool, kind: str) -> Any:
    """The body as Python data, or the API server's 400 (and 413 for an expansion past the limit)."""
    try:
        obj = load_yaml(body) if yaml_body else load_json(body)
    except DecodeError as err:
        if yaml_body:
            raise E.bad_request(
                f"the object provided is unrecognized (must be of type {kind}): {err} ({summarize(body)})"
            ) from None
        raise E.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: {err} ({summarize(body)})"
        ) from None
    except (ValueError, yaml.YAMLError) as err:
        raise E.bad_request(f"error decoding body: {str(err).splitlines()[0] if str(err) else err}") from None
    return obj
