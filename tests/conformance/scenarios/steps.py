"""Shorthands for writing steps."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Step


def get(path: Any, **kw: Any) -> Step:
    return Step("GET", path, **kw)


def post(path: Any, body: Any, **kw: Any) -> Step:
    return Step("POST", path, body, **kw)


def put(path: Any, body: Any, **kw: Any) -> Step:
    return Step("PUT", path, body, **kw)


def patch(path: Any, body: Any, kind: str = "merge", **kw: Any) -> Step:
    return Step("PATCH", path, body, patch=kind, **kw)


def apply(path: Any, body: Any, manager: str = "m1", force: bool = False, **kw: Any) -> Step:
    sep = "&" if "?" in str(path) else "?"
    q = f"fieldManager={manager}" + ("&force=true" if force else "")
    full = (lambda ctx: f"{path(ctx)}{sep}{q}") if callable(path) else f"{path}{sep}{q}"
    return Step("PATCH", full, body, patch="apply", **kw)


def delete(path: Any, body: Any = None, **kw: Any) -> Step:
    return Step("DELETE", path, body, **kw)


def setup(step: Step) -> Step:
    step.compare = False
    return step


def names(body: Any) -> Any:
    """A list's kind and item names (the order the server gives)."""
    return {
        "kind": body.get("kind"),
        "apiVersion": body.get("apiVersion"),
        "names": [i["metadata"]["name"] for i in body.get("items", [])],
        "continue": body.get("metadata", {}).get("continue"),
        "remainingItemCount": body.get("metadata", {}).get("remainingItemCount"),
    }


def meta(body: Any) -> Any:
    """An object's metadata fields that two servers must agree on."""
    m = body.get("metadata", {})
    return {k: m.get(k) for k in ("name", "namespace", "labels", "annotations", "finalizers", "generation")}


def at(*path: str) -> Any:
    def view(body: Any) -> Any:
        for p in path:
            body = body.get(p) if isinstance(body, dict) else None
        return body

    return view
