"""AdmissionReview v1 (pkg/webhook/admission): requests, responses, and the two typed handlers.

A `Defaulter` mutates a typed object; the answer is the JSON patch from the object as received to the
object as defaulted (`patchType: JSONPatch`), computed so that fields the Python model does not know
are left alone. A `Validator` returns warnings or raises: a `ValidationError` becomes a 422 Invalid
Status with field causes, any other `Denied` its code, any other exception a plain 403 denial.

Inside a defaulter's or validator's call, `admission_request()` is the request being answered
(controller-runtime's `admission.RequestFromContext(ctx)`): its operation, old object, dry run, user,
subresource and HTTP headers, so the typed signatures `default(obj)` and `validate_*(...)` stay as
they are."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import copy
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pyscaffold_op.runtime.panics import describe, own_cancellation, panic_message, report_panic, safe_str
from pyscaffold_op.runtime.webhook import jsonpatch
from pyscaffold_op.runtime.webhook.daemonthreads import run_in_daemon_thread
from pyscaffold_op.runtime.webhook.decoding import decode
from pyscaffold_op.runtime.webhook.errors import Denied

log = logging.getLogger("pyscaffold_op.runtime.webhook")

ADMISSION_API_VERSION = "admission.k8s.io/v1"


@dataclass
class AdmissionRequest:
    """The `request` of an AdmissionReview, with the objects still as dicts."""

    uid: str
    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    kind: dict[str, str]
    resource: dict[str, str]
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    user_info: dict[str, Any] = field(default_factory=dict)
    """`username`, `uid`, `groups`, `extra` of who made the request (authentication/v1 UserInfo)."""
    options: dict[str, Any] | None = None
    """The operation's options (CreateOptions, UpdateOptions, DeleteOptions) as sent."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The HTTP headers of the webhook call (case-insensitive when served by `WebhookServer`): what
    the API server sent, such as `User-Agent`, not the original client's."""

    @classmethod
    def from_review(cls, review: dict[str, Any]) -> AdmissionRequest:
        """Decode `review["request"]`; a field of the wrong JSON type is a ValueError (a 400), as Go's
        decoder refuses `"uid": [...]` for its string `UID`."""
        req = review.get("request")
        if req is None:
            raise ValueError("AdmissionReview has no request")
        if not isinstance(req, dict):
            raise ValueError(f"AdmissionReview.request must be an object, not {_json_type(req)}")

        def get(key: str, want: type, default: Any) -> Any:
            value = req.get(key)
            if value is None:
                return default
            if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
                what = _JSON_NAMES.get(want, want.__name__)
                raise ValueError(f"AdmissionReview.request.{key} must be {what}, not {_json_type(value)}")
            return value

        uid = get("uid", str, "")
        if not uid:
            raise ValueError("AdmissionReview has no request.uid")
        return cls(
            uid=uid,
            operation=get("operation", str, ""),
            kind=get("kind", dict, {}),
            resource=get("resource", dict, {}),
            name=get("name", str, ""),
            namespace=get("namespace", str, ""),
            sub_resource=get("subResource", str, ""),
            object=get("object", dict, None),
            old_object=get("oldObject", dict, None),
            dry_run=get("dryRun", bool, False),
            user_info=get("userInfo", dict, {}),
            options=get("options", dict, None),
        )


def _json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


_JSON_NAMES: dict[type, str] = {str: "a string", list: "an array", dict: "an object", bool: "a boolean"}


@dataclass
class AdmissionResponse:
    allowed: bool
    status: dict[str, Any] | None = None
    patch: list[dict[str, Any]] | None = None
    warnings: list[str] = field(default_factory=list)

    def review(self, uid: str) -> dict[str, Any]:
        resp: dict[str, Any] = {"uid": uid, "allowed": self.allowed}
        if self.status is not None:
            resp["status"] = self.status
        if self.patch:
            resp["patchType"] = "JSONPatch"
            resp["patch"] = base64.b64encode(json.dumps(self.patch).encode()).decode()
        if self.warnings:
            resp["warnings"] = list(self.warnings)
        return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": resp}

    @classmethod
    def allow(cls, warnings: list[str] | None = None) -> AdmissionResponse:
        return cls(True, {"code": 200}, warnings=list(warnings or []))

    @classmethod
    def deny(cls, err: Denied, warnings: list[str] | None = None) -> AdmissionResponse:
        return cls(False, err.status(), warnings=list(warnings or []))

    @classmethod
    def errored(cls, code: int, message: str) -> AdmissionResponse:
        return cls(False, {"code": code, "message": message})


AdmissionHandler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]

_current: contextvars.ContextVar[AdmissionRequest | None] = contextvars.ContextVar(
    "pyop_admission_request", default=None
)
# set by the webhook server around each call: the HTTP request's headers
http_headers: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "pyop_webhook_headers", default=None
)


def admission_request() -> AdmissionRequest:
    """The admission request a defaulter or validator is answering (controller-runtime's
    `admission.RequestFromContext`): `admission_request().dry_run`, `.user_info["username"]`,
    `.operation`, `.old_object` (a dict), `.sub_resource`, `.headers`. Plain `def` handlers, which
    run on a thread, see it too. Outside a webhook call: LookupError."""
    req = _current.get()
    if req is None:
        raise LookupError("admission_request() is only available while a webhook answers a request")
    return req


@runtime_checkable
class Defaulter(Protocol):
    """`default(obj)` sets defaults on the typed object in place (sync or async)."""

    def default(self, obj: Any, /) -> Any: ...


@runtime_checkable
class Validator(Protocol):
    """Each method returns warnings (a list of strings, or None) or raises to deny (sync or async)."""

    def validate_create(self, obj: Any, /) -> Any: ...
    def validate_update(self, old: Any, new: Any, /) -> Any: ...
    def validate_delete(self, obj: Any, /) -> Any: ...


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a defaulter's or validator's method: `async def` ones on the event loop, plain ones on a
    bounded pool of daemon threads, so a validator that blocks stalls only its own request, and one
    that never returns does not hold the process at exit (`daemonthreads`)."""
    if _is_async(fn):
        return await fn(*args)
    result = await run_in_daemon_thread(fn, *args)
    if inspect.isawaitable(result):  # a plain function that returned a coroutine
        result = await result
    return result


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


def defaulting_handler(cls: type, defaulter: Defaulter) -> AdmissionHandler:
    """Decode `object` as `cls`, call `defaulter.default(obj)`, answer with the JSON patch."""

    async def handle(req: AdmissionRequest) -> AdmissionResponse:
        if req.operation not in ("CREATE", "UPDATE"):
            return AdmissionResponse.allow()  # nothing to default on delete/connect
        try:
            obj = decode(cls, req.object)
        except Exception as err:
            return AdmissionResponse.errored(400, safe_str(err))
        before = obj.to_dict()
        try:
            await _call(defaulter.default, obj)
        except Denied as err:
            return AdmissionResponse.deny(err)
        after = obj.to_dict()
        return AdmissionResponse(True, {"code": 200}, patch=defaulting_patch(req.object or {}, before, after))

    return handle


def defaulting_patch(
    raw: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> list[dict[str, Any]]:
    """The patch taking `raw` to `raw` + (what the defaulter changed between `before` and `after`).

    `before` is `raw` after a round trip through the model, so it may lack unknown fields or carry
    model defaults `raw` lacks: diffing it against `after` keeps only the defaulter's own changes."""
    target = copy.deepcopy(raw)
    for op in jsonpatch.diff(before, after):
        try:
            target = jsonpatch.apply(target, [op])
        except jsonpatch.PatchConflict:
            if op["op"] == "replace":  # a model default `raw` never had: add it
                target = jsonpatch.apply(target, [{**op, "op": "add"}])
            # a removal of something `raw` does not have is already done
    return jsonpatch.diff(raw, target)


def validating_handler(cls: type, validator: Validator) -> AdmissionHandler:
    """Decode the object(s) as `cls` and call validate_create/update/delete."""

    async def handle(req: AdmissionRequest) -> AdmissionResponse:
        try:
            call: tuple[Any, ...]
            if req.operation == "CREATE":
                call = (validator.validate_create, decode(cls, req.object))
            elif req.operation == "UPDATE":
                call = (validator.validate_update, decode(cls, req.old_object), decode(cls, req.object))
            elif req.operation == "DELETE":
                # the object being deleted comes as oldObject
                call = (validator.validate_delete, decode(cls, req.old_object))
            else:
                return AdmissionResponse.allow()
        except Exception as err:
            return AdmissionResponse.errored(400, safe_str(err))
        try:
            warnings = await _call(*call)
        except Denied as err:
            return AdmissionResponse.deny(err, getattr(err, "warnings", None))
        except Exception as err:
            return AdmissionResponse.deny(Denied(describe(err)))
        return AdmissionResponse.allow(list(warnings or []))

    return handle


class Admission:
    """An AdmissionReview endpoint around an `AdmissionHandler` (admission.Webhook)."""

    def __init__(self, handler: AdmissionHandler) -> None:
        self.handler = handler

    async def __call__(self, body: Any) -> dict[str, Any]:
        try:
            if not isinstance(body, dict) or body.get("kind") != "AdmissionReview":
                raise ValueError("the request body is not an AdmissionReview")
            if body.get("apiVersion") != ADMISSION_API_VERSION:
                raise ValueError(f"unsupported AdmissionReview version {body.get('apiVersion')!r}")
            req = AdmissionRequest.from_review(body)
            req.headers = http_headers.get() or {}
        except ValueError as err:
            raw = body.get("request") if isinstance(body, dict) else None
            uid = raw.get("uid") if isinstance(raw, dict) else None
            return AdmissionResponse.errored(400, str(err)).review(uid if isinstance(uid, str) else "")
        token = _current.set(req)
        try:
            resp = await self.handler(req)
        except asyncio.CancelledError as err:
            if own_cancellation():
                raise  # the server's own shutdown
            resp = self._recovered(req, err)
        except BaseException as err:  # anything a handler raises, SystemExit included: a panic
            resp = self._recovered(req, err)
        finally:
            _current.reset(token)
        return resp.review(req.uid)

    @staticmethod
    def _recovered(req: AdmissionRequest, err: BaseException) -> AdmissionResponse:
        """controller-runtime's recovered webhook panic: logged with its stack, counted by the server
        (controller_runtime_webhook_panics_total), answered as a denial with code 500."""
        report_panic()
        message = panic_message(err)
        log.error(
            "Observed a panic in webhook",
            extra={"uid": req.uid, "operation": req.operation, "error": message},
            exc_info=err,
        )
        return AdmissionResponse.errored(500, message)
