"""Request bodies decoded with the API server's limits, so no body can exhaust the emulator.

kube-apiserver reads at most 3 MiB, converts YAML with sigs.k8s.io/yaml (go-yaml v2: alias expansion
bounded by `allowedAliasRatio`, "document contains excessive aliasing"; nesting bounded, "exceeded max
depth of 10000") and decodes JSON with encoding/json (nesting bounded: "exceeded max depth"). PyYAML
shares aliased nodes instead of expanding them, so the expansion go-yaml would do is counted while the
document is composed (libyaml scanning), and refused before anything is built: by go-yaml's alias
ratio, by the body limit applied to the expanded size, by the nesting limit.

Nesting is bounded lower than Go's 10,000: the emulator's pruning, validation, managed fields and
deep copies recurse, and Python's stack is ~1,000 frames. No real object comes near `MAX_DEPTH`.
"""

from __future__ import annotations

from typing import Any

import yaml

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.jsonutil import loads

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


_COLLECTION_STARTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)


class _BoundedComposer(yaml.composer.Composer):
    """PyYAML's composer holding the document to go-yaml's limits while it is composed, so a hostile
    body is refused after a bounded prefix, before anything is built.

    Aliases are shared nodes in PyYAML; go-yaml expands them. Each anchored node records what its
    expansion costs (nodes decoded, bytes of scalars, levels of nesting below it); an alias adds
    that cost to the running totals, and the totals are checked at once: go-yaml's alias ratio
    ("document contains excessive aliasing"), the body limit for what the expansion would be (413, as
    if the expanded document had been sent: a 2 MiB string aliased 100 times is 200 MiB), and the
    nesting limit counted through aliases. A node that aliases itself is refused as go-yaml does.
    """

    def __init__(self) -> None:
        yaml.composer.Composer.__init__(self)
        self.decodes = 0  # nodes go-yaml would decode so far, aliases expanded
        self.aliased = 0  # of those, decoded through an alias
        self.size = 0  # bytes of the expanded document, roughly (scalars and brackets)
        self.level = 0  # collections open around the next node
        self.deepest = 0  # deepest collection level reached, aliases expanded
        self.costs: dict[int, tuple[int, int, int]] = {}  # anchored node -> (decodes, size, height)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = yaml.composer.Composer.compose_node(
                self, parent, index
            )  # "found undefined alias" when it is
            cost = self.costs.get(id(node))
            if cost is None:  # still being composed: it contains itself
                raise DecodeError(f"yaml: anchor '{event.anchor}' value contains itself")
            decodes, size, height = cost
            self.decodes += 1 + decodes
            self.aliased += decodes
            self.size += size
            self.deepest = max(self.deepest, self.level + height)
            self._check(expanded=True)
            return node
        event = self.peek_event()
        collection = isinstance(event, _COLLECTION_STARTS)
        if collection and self.level >= MAX_DEPTH:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        decodes, size, deepest = self.decodes, self.size, self.deepest
        self.deepest = self.level
        self.level += collection
        node = yaml.composer.Composer.compose_node(self, parent, index)
        self.level -= collection
        self.decodes += 1
        self.size += 2 if collection else len(node.value) + 1
        self.deepest = max(self.deepest, self.level + collection)
        if event.anchor is not None:
            self.costs[id(node)] = (self.decodes - decodes, self.size - size, self.deepest - self.level)
        self.deepest = max(self.deepest, deepest)
        return node

    def _check(self, expanded: bool) -> None:
        if self.deepest > MAX_DEPTH:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        n, aliased = self.decodes, self.aliased
        if aliased > 100 and n > 1000 and aliased / n > _allowed_alias_ratio(n):
            raise DecodeError("yaml: document contains excessive aliasing")
        if expanded and self.size > MAX_BODY:
            raise E.too_large(MAX_BODY)


class _Loader(_BoundedComposer, yaml.cyaml.CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """libyaml scans and parses (PyYAML's pure-Python scanner is quadratic on deep flow nesting and
    takes ~0.5 us a byte); the composer above bounds the document; SafeConstructor builds it."""

    def __init__(self, body: bytes) -> None:
        yaml.cyaml.CParser.__init__(self, body)  # PyYAML's wheels are built with libyaml
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        _BoundedComposer.__init__(self)


def load_yaml(body: bytes) -> Any:
    """One YAML document, bounded like go-yaml; `yaml.YAMLError` or `DecodeError` when bad. An
    expansion of aliases past the body limit is 413, as if the expanded document had been sent."""
    loader = _Loader(body)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the composer recurses once per level: a last resort
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
        except yaml.YAMLError as err:
            # libyaml 0.2.6+ (PyYAML 6.0.4's wheels) stops at its own nesting limit (1000) while its
            # scanner reads ahead, before the composer counts 200 levels: deeper than go-yaml's anyway
            if getattr(err, "problem", None) == "exceeded maximum nesting depth":
                raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
            raise
        if node is None:
            return None
        if loader.aliased and loader.size > MAX_BODY:  # plain nodes after the last alias
            raise E.too_large(MAX_BODY)
        return loader.construct_document(node)
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
    if yaml_body:  # what sigs.k8s.io/yaml's conversion to JSON makes of its numbers
        from pyscaffold_op.envtest.server.godecode import as_go_json

        obj = as_go_json(obj)
    return obj
