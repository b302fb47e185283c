"""CRD conversion webhooks (`spec.conversion.strategy: Webhook`), as apiextensions-apiserver calls them.

Objects are stored in the storage version. A request through another served version is answered
through the storage version: bodies are converted to it before the verb runs (a JSON or merge patch is
applied to the object converted to the request's version first), and every object in the answer
(get, list, watch events, write results) is converted back by a ConversionReview. Validation of such
writes uses the storage version's schema (the real server validates the request's version)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.admission.webhookclient import CallError, ServiceRegistry, post_review
from pyscaffold_op.envtest.jsonutil import dumps, loads
from pyscaffold_op.envtest.types import Obj

TIMEOUT = 30.0  # the API server's conversion webhook timeout


def _gvk(obj: Obj) -> str:
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


async def convert(services: ServiceRegistry, conversion: Obj, objs: list[Obj], desired: str) -> list[Obj]:
    """`objs` (all of one kind) converted to `desired` by the CRD's conversion webhook."""
    todo = [i for i, o in enumerate(objs) if o.get("apiVersion") != desired]
    if not todo:
        return objs
    what = _gvk(objs[todo[0]])
    review: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "desiredAPIVersion": desired,
            "objects": [objs[i] for i in todo],
        },
    }
    client_config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    try:
        answer = await post_review(services, client_config, review, TIMEOUT)
    except CallError as err:
        raise E.internal(f"conversion webhook for {what} failed: {err}") from None
    resp = answer.get("response") or {}
    if resp.get("uid") != review["request"]["uid"]:
        raise E.internal(f"conversion webhook for {what} returned a response with a different uid")
    result = resp.get("result") or {}
    if result.get("status") != "Success":
        raise E.internal(f"conversion webhook for {what} returned failure: {result.get('message', '')}")
    converted = resp.get("convertedObjects") or []
    if len(converted) != len(todo):
        raise E.internal(
            f"conversion webhook for {what} returned {len(converted)} objects, expected {len(todo)}"
        )
    out = list(objs)
    for i, new in zip(todo, converted, strict=True):
        if new.get("apiVersion") != desired:
            raise E.internal(
                f"conversion webhook for {what} returned invalid converted object at index {i}: "
                f'invalid apiVersion "{new.get("apiVersion")}", expected "{desired}"'
            )
        before, after = objs[i].get("metadata") or {}, new.get("metadata") or {}
        for key in ("name", "namespace", "uid", "resourceVersion"):
            if before.get(key) != after.get(key):
                raise E.internal(
                    f"conversion webhook for {what} returned invalid metadata: must not change metadata.{key}"
                )
        out[i] = new
    return out


async def convert_body(
    services: ServiceRegistry, conversion: Obj, body: bytes, storage: str, to: str
) -> bytes:
    """A JSON answer (object, list, or Status) with every object of `storage` converted to `to`."""
    try:
        doc = loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict):
        return body
    if isinstance(doc.get("items"), list):
        items = doc["items"]
        kind = doc.get("kind", "")[: -len("List")] if doc.get("kind", "").endswith("List") else ""
        full = [{"apiVersion": storage, "kind": kind, **o} if "apiVersion" not in o else o for o in items]
        doc["items"] = await convert(services, conversion, full, to)
        if doc.get("apiVersion") == storage:
            doc["apiVersion"] = to
        return dumps(doc)
    if doc.get("apiVersion") == storage and doc.get("kind") != "Status":
        return dumps((await convert(services, conversion, [doc], to))[0])
    return body


async def _convert_event(
    services: ServiceRegistry, conversion: Obj, line: bytes, storage: str, to: str
) -> bytes:
    try:
        event = loads(line)
    except ValueError:
        return line
    obj = event.get("object") if isinstance(event, dict) else None
    if not isinstance(obj, dict) or obj.get("apiVersion") != storage or event.get("type") == "BOOKMARK":
        return line
    try:
        event["object"] = (await convert(services, conversion, [obj], to))[0]
    except E.StatusError as err:
        event = {"type": "ERROR", "object": err.status()}
    return dumps(event) + b"\n"


async def convert_stream(
    services: ServiceRegistry, conversion: Obj, stream: AsyncIterator[bytes], storage: str, to: str
) -> AsyncGenerator[bytes, None]:
    """Watch event lines (a chunk may hold several) with their objects converted."""
    try:
        async for chunk in stream:
            out = []
            for line in chunk.splitlines(keepends=True):
                out.append(await _convert_event(services, conversion, line, storage, to))
            yield b"".join(out)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
