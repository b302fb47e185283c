"""Admission webhooks, called as kube-apiserver's admission chain calls them (the built-in mutating
plugins are in admission.py).

The write verbs run: mutating webhooks (on the decoded, defaulted object) -> schema validation ->
validating webhooks -> storage. Webhooks come from the stored Mutating/ValidatingWebhookConfigurations,
configurations in name order, webhooks in list order. A webhook is called when a rule matches
(operations, apiGroups, apiVersions, resources with `sub/resources` and `*`, scope), or under
`matchPolicy: Equivalent` when it matches another served version of the same resource (the object is
sent in that version), and when its namespaceSelector and objectSelector match.

Not emulated: matchConditions (CEL) are refused at call time rather than ignored, and
`auditAnnotations`; admission of the scale subresource."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.admission.webhookclient import CallError, ServiceRegistry, post_review
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.types import Obj

log = logging.getLogger("pyscaffold_op.envtest.admission.webhooks")

GROUP = "admissionregistration.k8s.io"
MUTATING, VALIDATING = "mutatingwebhookconfigurations", "validatingwebhookconfigurations"
_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}

Converter = Callable[[Obj, ServedResource], Awaitable[Obj]]


@dataclass
class Attributes:
    """One admission request: the object in the version of the request (`info`)."""

    operation: str  # CREATE | UPDATE | DELETE
    info: ServedResource
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None = None
    subresource: str = ""
    dry_run: bool = False
    user: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Hook:
    config: str
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))


def _rule_matches(rule: Obj, op: str, info: ServedResource, sub: str, namespace: str) -> bool:
    ops = rule.get("operations") or []
    if "*" not in ops and op not in ops:
        return False
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    if "*" not in groups and info.group not in groups:
        return False
    if "*" not in versions and info.version not in versions:
        return False
    scope = rule.get("scope") or "*"
    is_ns = info.group_resource == ("", "namespaces")
    if scope == "Namespaced" and (is_ns or not namespace):
        return False
    if scope == "Cluster" and not (is_ns or not namespace):
        return False
    for res in rule.get("resources") or []:
        r, _, s = res.partition("/")
        if (r == "*" or r == info.plural) and (s == "*" or s == sub):
            return True
    return False


def _selector_matches(selector: Obj | None, lbls: dict[str, str]) -> bool:
    if not selector:
        return True
    reqs = [labels.parse(f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        text = {
            "In": f"{key} in ({','.join(values)})",
            "NotIn": f"{key} notin ({','.join(values)})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op)
        if text is None:
            return False
        reqs.append(labels.parse(text))
    return all(r.matches(lbls) for r in reqs)


class Admission:
    """The webhook admission plugins (MutatingAdmissionWebhook, ValidatingAdmissionWebhook)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.services = ServiceRegistry()

    # -- which webhooks ---------------------------------------------------------------------------------
    def _hooks(self, resource: str) -> list[_Hook]:
        info = self.store.registry.get(GROUP, "v1", resource)
        if info is None:
            return []
        items = self.store.list(info, None)[0]
        out = []
        for cfg in sorted(items, key=lambda o: o["metadata"]["name"]):
            out += [_Hook(cfg["metadata"]["name"], w) for w in cfg.get("webhooks") or []]
        return out

    def active(self) -> bool:
        store = self.store
        if not (store.has_objects((GROUP, MUTATING)) or store.has_objects((GROUP, VALIDATING))):
            return False  # every request asks: answered without listing and sorting
        return bool(self._hooks(MUTATING) or self._hooks(VALIDATING))

    def _matched_version(self, hook: _Hook, a: Attributes) -> ServedResource | None:
        """The version to send the object in, or None when the webhook does not apply."""
        if a.info.group == GROUP and a.info.plural in (MUTATING, VALIDATING):
            return None  # the server never lets webhooks intercept their own configurations
        rules = hook.spec.get("rules") or []
        if not any(_rule_matches(r, a.operation, a.info, a.subresource, a.namespace) for r in rules):
            if (hook.spec.get("matchPolicy") or "Equivalent") != "Equivalent":
                return None
            others = [
                i
                for i in self.store.registry.all()
                if i.group_resource == a.info.group_resource and i is not a.info and i.stored_as is None
            ]
            found = next(
                (
                    i
                    for i in others
                    if any(_rule_matches(r, a.operation, i, a.subresource, a.namespace) for r in rules)
                ),
                None,
            )
            if found is None:
                return None
            matched = found
        else:
            matched = a.info
        if not self._selectors_match(hook, a):
            return None
        return matched

    def _selectors_match(self, hook: _Hook, a: Attributes) -> bool:
        ns_sel = hook.spec.get("namespaceSelector")
        if ns_sel:
            if a.info.group_resource == ("", "namespaces"):
                ns_labels = ((a.obj or a.old or {}).get("metadata") or {}).get("labels") or {}
            elif a.namespace:
                ns = self.store.find(("", "namespaces"), "", a.namespace)
                ns_labels = ((ns or {}).get("metadata") or {}).get("labels") or {}
            else:
                ns_labels = None  # cluster-scoped: the namespace selector does not apply
            if ns_labels is not None and not _selector_matches(ns_sel, ns_labels):
                return False
        obj_sel = hook.spec.get("objectSelector")
        if obj_sel:
            candidates = [o for o in (a.obj, a.old) if o is not None]
            if not any(
                _selector_matches(obj_sel, (o.get("metadata") or {}).get("labels") or {}) for o in candidates
            ):
                return False
        return True

    def matching(self, resource: str, a: Attributes) -> list[tuple[_Hook, ServedResource]]:
        out = []
        for hook in self._hooks(resource):
            version = self._matched_version(hook, a)
            if version is not None:
                out.append((hook, version))
        return out

    # -- calling ----------------------------------------------------------------------------------------
    def _review(
        self, hook: _Hook, a: Attributes, version: ServedResource, obj: Obj | None, old: Obj | None
    ) -> Obj:
        req: Obj = {
            "uid": str(uuid.uuid4()),
            "kind": {"group": version.group, "version": version.version, "kind": version.kind},
            "resource": {"group": version.group, "version": version.version, "resource": version.plural},
            "requestKind": {"group": a.info.group, "version": a.info.version, "kind": a.info.kind},
            "requestResource": {"group": a.info.group, "version": a.info.version, "resource": a.info.plural},
            "name": a.name,
            "operation": a.operation,
            "userInfo": a.user,
            "object": obj,
            "oldObject": old,
            "dryRun": a.dry_run,
            "options": {
                "apiVersion": "meta.k8s.io/v1",
                "kind": _OPTIONS_KIND.get(a.operation, "CreateOptions"),
            },
        }
        if a.subresource:
            req["subResource"] = a.subresource
            req["requestSubResource"] = a.subresource
        if a.namespace:
            req["namespace"] = a.namespace
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}

    async def _call(
        self, hook: _Hook, a: Attributes, version: ServedResource, obj: Obj | None, convert: Converter
    ) -> Obj | None:
        """The webhook's `response`, or None when it failed and failurePolicy is Ignore."""
        spec = hook.spec
        if a.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise E.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        if spec.get("matchConditions"):
            raise E.internal(f'webhook "{hook.name}": matchConditions are not supported by the emulator')
        try:
            sent_obj = await convert(obj, version) if obj is not None else None
            sent_old = await convert(a.old, version) if a.old is not None else None
            review = self._review(hook, a, version, sent_obj, sent_old)
            timeout = float(spec.get("timeoutSeconds") or 10)
            answer = await post_review(self.services, spec.get("clientConfig") or {}, review, timeout)
            resp = answer.get("response")
            if not isinstance(resp, dict):
                raise CallError("received invalid webhook response: no response")
            if resp.get("uid") != review["request"]["uid"]:
                raise CallError(
                    f'expected response.uid="{review["request"]["uid"]}", got "{resp.get("uid", "")}"'
                )
            return resp
        except CallError as err:
            if (spec.get("failurePolicy") or "Fail") == "Ignore":
                log.warning('failed calling webhook "%s" (failurePolicy Ignore): %s', hook.name, err)
                return None
            raise E.internal(f'failed calling webhook "{hook.name}": {err}') from None

    @staticmethod
    def _denied(hook: _Hook, resp: Obj) -> E.StatusError:
        """ToStatusErr: the webhook's Status, code >= 400, its message prefixed with who denied."""
        result = resp.get("status") or {}
        code = int(result.get("code") or 0)
        code = code if code >= 400 else 400
        denied_by = f'admission webhook "{hook.name}" denied the request'
        if result.get("message"):
            message = f"{denied_by}: {result['message']}"
        elif result.get("reason"):
            message = f"{denied_by}: {result['reason']}"
        else:
            message = f"{denied_by} without explanation"
        return E.StatusError(code, result.get("reason", ""), message, result.get("details"))

    async def mutate(self, a: Attributes, convert: Converter) -> tuple[Obj | None, list[str]]:
        """Run the mutating webhooks; returns the (possibly patched) object and the warnings."""
        hooks = self.matching(MUTATING, a)
        if not hooks:
            return a.obj, []
        warnings: list[str] = []
        obj = a.obj
        changes = 0
        seen: dict[int, int] = {}  # hook index -> changes when it last ran

        async def run(i: int, hook: _Hook, version: ServedResource) -> None:
            nonlocal obj, changes
            seen[i] = changes
            resp = await self._call(hook, a, version, obj, convert)
            if resp is None:
                return
            warnings.extend(resp.get("warnings") or [])
            if not resp.get("allowed"):
                raise self._denied(hook, resp)
            if resp.get("patch") and obj is not None:
                if resp.get("patchType", "JSONPatch") != "JSONPatch":
                    raise E.internal(f'failed calling webhook "{hook.name}": unsupported patch type')
                try:
                    ops = json.loads(base64.b64decode(resp["patch"]))
                    sent = await convert(obj, version)
                    patched = jsonpatch.apply_patch(sent, ops)
                except (ValueError, jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as err:
                    raise E.internal(
                        f'failed calling webhook "{hook.name}": JSON patch failed: {err}'
                    ) from None
                patched = await convert(patched, a.info)
                if patched != obj:
                    obj, changes = patched, changes + 1

        for i, (hook, version) in enumerate(hooks):
            await run(i, hook, version)
        # reinvocationPolicy IfNeeded: once more if a later webhook changed the object since it ran
        for i, (hook, version) in enumerate(hooks):
            if hook.spec.get("reinvocationPolicy") == "IfNeeded" and changes > seen[i]:
                await run(i, hook, version)
        return obj, warnings

    async def validate(self, a: Attributes, convert: Converter) -> list[str]:
        """Run the validating webhooks (concurrently, as the server does); the first denial in
        configuration order wins, where kube-apiserver returns whichever arrives first: deterministic,
        so a test fails the same way every time (docs/envtest.md). Returns the warnings."""
        hooks = self.matching(VALIDATING, a)
        if not hooks:
            return []
        results = await asyncio.gather(
            *(self._call(h, a, v, a.obj, convert) for h, v in hooks), return_exceptions=True
        )
        warnings: list[str] = []
        for (hook, _v), resp in zip(hooks, results, strict=True):
            if isinstance(resp, BaseException):
                raise resp
            if resp is None:
                continue
            warnings.extend(resp.get("warnings") or [])
            if resp.get("patch"):
                raise E.internal(
                    f'failed calling webhook "{hook.name}": validating webhook may not return a patch'
                )
            if not resp.get("allowed"):
                raise self._denied(hook, resp)
        return warnings


def warning_header(warnings: list[str]) -> str:
    """RFC 7234 warning values as the server sends them (`299 - "text"`), joined into one header."""
    return ", ".join(f"299 - {json.dumps(w)}" for w in warnings)


def copy_obj(obj: Obj) -> Obj:
    return copy.deepcopy(obj)
