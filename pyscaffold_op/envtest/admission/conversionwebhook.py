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


def _response_error(review: Obj, answer: Obj) -> str | None:
    """What is wrong with a ConversionReview answer (getConvertedObjectsFromResponse's words), or None."""
    if answer.get("apiVersion") != "apiextensions.k8s.io/v1" or answer.get("kind") != "ConversionReview":
        got = f"{answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}"
        return f"expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}"
    resp = answer.get("response")
    if not isinstance(resp, dict):
        return "no response provided"
    expected = review["request"]["uid"]
    if resp.get("uid", "") != expected:
        return f'expected response.uid="{expected}", got "{resp.get("uid", "")}"'
    result = resp.get("result") or {}
    if result.get("status") != "Success":
        status = result.get("status", "")
        return result.get("message") or f"response.result.status was '{status}', not 'Success'"
    return None


def _metadata_error(original: Obj, converted: Obj) -> str | None:
    """validateConvertedObject: what a conversion may not change (labels and annotations it may)."""
    before, after = original.get("metadata") or {}, converted.get("metadata") or {}
    checks = [
        ("kind", original.get("kind", ""), converted.get("kind", "")),
        ("name", before.get("name", ""), after.get("name", "")),
        ("namespace", before.get("namespace", ""), after.get("namespace", "")),
        ("UID", before.get("uid", ""), after.get("uid", "")),
    ]
    for what, expected, got in checks:
        if expected != got:
            return f"must have the same {what}: {expected} != {got}"
    return None


def _restored_metadata(original: Obj, converted: Obj) -> Obj | str:
    """restoreObjectMeta: the original's metadata with the converted object's labels and annotations
    (left out there, they are dropped), or what is wrong with the converted metadata."""
    after = converted.get("metadata")
    if not isinstance(after, dict):
        return "missing metadata in converted object"
    metadata = dict(original.get("metadata") or {})
    for key in ("labels", "annotations"):
        value = after.get(key)
        if value is None:
            metadata.pop(key, None)
        elif not isinstance(value, dict):
            return f"invalid metadata.{key} of type {type(value).__name__} in converted object"
        else:
            metadata[key] = dict(value)
    return {**converted, "metadata": metadata}


async def convert(services: ServiceRegistry, conversion: Obj, obj: Obj, desired: str) -> Obj:
    """`obj` converted to `desired` by the CRD's conversion webhook, in a review of its own; a failure
    is a 500 worded as apiextensions-apiserver's webhook converter words it.

    One review per object, a list's items too: kube-apiserver converts each object as its storage
    decodes it (a served version's storage, and its watch cache, hold that version), so a webhook never
    sees a list from the API server (apiextensions-apiserver's converter can send one, nothing there
    calls it with a list). A list's conversion failure is the first failing item's; the real server
    puts its storage error around the message (`StorageError: corrupt object, ...: conversion webhook
    for ...`)."""
    if obj.get("apiVersion") == desired:
        return obj
    what = _gvk(obj)
    review: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": str(uuid.uuid4()), "desiredAPIVersion": desired, "objects": [obj]},
    }
    client_config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    try:
        answer = await post_review(services, client_config, review, TIMEOUT)
    except CallError as err:
        raise E.internal(f"conversion webhook for {what} failed: {err}") from None
    problem = _response_error(review, answer)
    if problem is not None:
        raise E.internal(f"conversion webhook for {what} failed: {problem}")
    converted = answer["response"].get("convertedObjects") or []
    if len(converted) != 1:
        raise E.internal(f"conversion webhook for {what} returned {len(converted)} objects, expected 1")
    new = converted[0]
    invalid = "returned invalid object"
    at = f"{invalid} at index 0"
    if new.get("apiVersion") != desired:
        raise E.internal(
            f"conversion webhook for {what} {at}: invalid groupVersion "
            f"(expected {desired}, received {new.get('apiVersion', '')})"
        )
    if new.get("kind") != obj.get("kind"):
        raise E.internal(
            f"conversion webhook for {what} {at}: invalid kind "
            f"(expected {obj.get('kind', '')}, received {new.get('kind', '')})"
        )
    problem = _metadata_error(obj, new)
    if problem is not None:
        raise E.internal(f"conversion webhook for {what} {invalid}: {problem}")
    restored = _restored_metadata(obj, new)
    if isinstance(restored, str):
        raise E.internal(f"conversion webhook for {what} returned invalid metadata: {restored}")
    return restored


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
        doc["items"] = [await convert(services, conversion, o, to) for o in full]
        if doc.get("apiVersion") == storage:
            doc["apiVersion"] = to
        return dumps(doc)
    if doc.get("apiVersion") == storage and doc.get("kind") != "Status":
        return dumps(await convert(services, conversion, doc, to))
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
        event["object"] = await convert(services, conversion, obj, to)
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
