"""The writing verbs: create, update, patch (merge, JSON, strategic, apply), scale, delete."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pyscaffold_op import apiextensions
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.jsonutil import json_copy
from pyscaffold_op.envtest.registry import fieldtypes, managed, patch
from pyscaffold_op.envtest.registry.builtin_fields import prune_nested, prune_unknown
from pyscaffold_op.envtest.registry.kindrules import ORPHAN_BY_DEFAULT
from pyscaffold_op.envtest.registry.quantities import canonicalize as canonical_quantities
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.registry.scale import set_path, to_scale
from pyscaffold_op.envtest.server import godecode, selectors, wire
from pyscaffold_op.envtest.server.decode import load_json
from pyscaffold_op.envtest.server.duplicates import duplicate_fields, may_repeat
from pyscaffold_op.envtest.server.metatypes import check_meta_types
from pyscaffold_op.envtest.server.protocol import (
    PATCH_TYPES,
    PROTOBUF,
    HttpRequest,
    Response,
    Target,
    check_write_options,
    json_response,
    media_type,
    to_storage,
)
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339

if TYPE_CHECKING:
    from pyscaffold_op.envtest.admission.gate import AdmissionGate
    from pyscaffold_op.envtest.storage.objectstore import Store


class WriteVerbs:
    """create, update, patch (merge, JSON, strategic, apply), scale and delete over the store; every
    write passes the admission `gate` (webhooks, see `admission.gate`)."""

    def __init__(self, store: Store, gate: AdmissionGate) -> None:
        self.store = store
        self.gate = gate

    async def create(
        self, req: HttpRequest, t: Target, prepare: Callable[[dict[str, Any]], None] | None = None
    ) -> Response:
        """POST of a new object; `prepare` changes the decoded body first (a CSR's requester)."""
        if t.subresource:
            raise E.method_not_allowed("POST")
        if t.info.namespaced and t.namespace is None:
            raise E.method_not_allowed("POST")
        obj = wire.read_body(req, t.info, options="CreateOptions", custom_kind_later=True)
        wire.check_namespace(obj, t)
        _check_custom_kind(t.info, obj)
        # etcd3's store.Create refuses it after validation, a dry run never reaches it
        rv_set = bool((obj.get("metadata") or {}).get("resourceVersion"))
        unknown = self._unknown_fields(req, t.info, obj)
        if prepare is not None:
            prepare(obj)
        pruned = t.info.custom and _field_validation(req) in _PRUNED_ON_DECODE

        def write(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
            return self.store.create(
                t.info,
                t.namespace or "",
                to_storage(t.info, o),
                manager=wire.field_manager(req),
                dry_run=dry_run,
                fresh=True,
                pruned=pruned and o is obj,  # no webhook gave another object since
                resource_version_set=rv_set,
            )

        created, warnings = await _warned(self.gate.admitted(req, t, "CREATE", obj, None, write), unknown)
        return self.gate.warn(json_response(201, wire.served(t.info, created)), unknown, *warnings)

    def _unknown_fields(self, req: HttpRequest, info: ServedResource, obj: dict[str, Any]) -> str:
        """fieldValidation=Strict rejects unknown fields, Warn (the server's default since field
        validation went GA) reports them in a Warning header, Ignore says nothing. Custom resources
        are pruned later against their schema; built-ins lose them here, as decoding into the Go
        type drops them."""
        mode = _field_validation(req)
        # before pruning: the decoded object still has every key the body gave once
        repeats = mode != "Ignore" and bool(req.body) and may_repeat(req.body, obj)
        if info.custom:
            if mode not in _PRUNED_ON_DECODE:
                return ""
            # in place, as the server's decoder prunes a custom resource before anything sees it
            # (`obj` is this request's freshly decoded body; the store prunes again after webhooks)
            found = info.compiled_schema.prune(obj)
        else:
            # the Go types were checked as the body was read (wire.read_body); quantities are stored
            # as Go writes them back
            wrong = canonical_quantities(info.api_version, info.kind, obj)
            if wrong is not None:
                raise E.bad_request(
                    f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {wrong}'
                )
            found = prune_unknown(info.group, info.kind, obj, info.version) + prune_nested(
                info.group, info.kind, obj, info.version
            )
        if mode == "Ignore":
            return ""
        duplicates, order = duplicate_fields(req.body) if repeats or len(found) > 1 else ([], {})
        # the decoder's order: where each problem is in the document
        problems = sorted(
            [*(f'duplicate field "{d}"' for d in duplicates), *(f'unknown field "{f}"' for f in found)],
            key=lambda p: order.get(_problem_path(p), len(order)),
        )
        if not problems:
            return ""
        if mode == "Strict":
            raise E.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                "strict decoding error: " + ", ".join(problems)
            )
        return ", ".join('299 - "' + p.replace('"', '\\"') + '"' for p in problems)

    async def update(self, req: HttpRequest, t: Target) -> Response:
        if t.subresource == "scale":
            return self._update_scale(
                req, t, wire.read_body(req, t.info, check_kind=False, options="UpdateOptions")
            )
        obj = wire.read_body(req, t.info, options="UpdateOptions", custom_kind_later=True)
        wire.check_namespace(obj, t)
        _check_custom_kind(t.info, obj)
        named = (obj.get("metadata") or {}).get("name") or ""
        if named != t.name:  # checkName, before the object is looked up
            raise E.bad_request(
                f"the name of the object ({named}) does not match the name on the URL ({t.name})"
            )
        unknown = self._unknown_fields(req, t.info, obj)

        def write(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
            return self.store.update(
                t.info,
                t.namespace or "",
                t.name or "",
                to_storage(t.info, o),
                subresource=t.subresource,
                manager=wire.field_manager(req),
                dry_run=dry_run,
            )

        current = self.store.find(
            t.info.bucket, (t.namespace or "") if t.info.namespaced else "", t.name or ""
        )
        if current is None and t.info.create_on_update and not t.subresource:
            return await self._create_on_update(req, t, obj, unknown)
        old = wire.served(t.info, current) if current is not None else None
        updated, warnings = await _warned(self.gate.admitted(req, t, "UPDATE", obj, old, write), unknown)
        return self.gate.warn(json_response(200, wire.served(t.info, updated)), unknown, *warnings)

    async def _create_on_update(
        self, req: HttpRequest, t: Target, obj: dict[str, Any], unknown: str
    ) -> Response:
        """A PUT of a missing object of a kind whose strategy allows create on update: a create (201,
        CREATE admission), its managedFields entry an Update, as the update handler records it."""

        def write(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
            return self.store.create(
                t.info,
                t.namespace or "",
                to_storage(t.info, o),
                manager=wire.field_manager(req),
                dry_run=dry_run,
                fresh=True,
            )

        created, warnings = await _warned(self.gate.admitted(req, t, "CREATE", obj, None, write), unknown)
        return self.gate.warn(json_response(201, wire.served(t.info, created)), unknown, *warnings)

    async def patch(self, req: HttpRequest, t: Target) -> Response:
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in PATCH_TYPES:  # refused before the patch handler runs: a bare 415
            raise E.StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
        info = t.info
        if ctype == "application/strategic-merge-patch+json" and info.custom:
            raise E.unsupported_media(
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json-patch+json, application/merge-patch+json, "
                "application/apply-patch+yaml"
            )
        if ctype == "application/apply-patch+yaml":
            return await self._apply(req, t)
        check_write_options(req, "PatchOptions")
        if req.q("force") is not None:
            raise E.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [
                    E.cause(
                        "FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch"
                    )
                ],
            )
        try:
            body = load_json(req.body) if req.body else None
        except ValueError as err:
            raise E.bad_request(f"error decoding patch: {err}") from None
        ns, name = t.namespace or "", t.name or ""
        current = self.store.get(info, ns, name)
        # the patch functions never mutate their target, so the stored object serves as the base
        base = to_scale(info, current) if t.subresource == "scale" else wire.served(info, current)
        if ctype == "application/json-patch+json":
            patched = patch.json_patch(base, body)
        elif ctype == "application/merge-patch+json":
            if not isinstance(body, dict):
                raise E.bad_request("merge patch must be a JSON object")
            patched = patch.merge_patch(base, body)
        else:
            patched = patch.strategic_merge_patch(base, body)
        if not isinstance(patched, dict):
            raise E.bad_request("patch result must be an object")
        if t.subresource == "scale":
            return self._update_scale(req, t, patched)
        patched_meta = patched.get("metadata")
        if not isinstance(patched_meta, dict) or not patched_meta.get("name"):
            raise E.bad_request(
                f"the name of the object ({name} based on URL) was undeterminable: name must be provided"
            )
        if info.custom:
            unknown = _decode_custom_patched(req, info, patched)
        else:
            unknown = _decode_patched(req, info, patched)
        check_meta_types(patched.setdefault("metadata", {}))
        if not patched["metadata"].get("resourceVersion"):
            patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]

        def write(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
            return self.store.update(
                info,
                ns,
                name,
                to_storage(info, o),
                subresource=t.subresource,
                manager=wire.field_manager(req),
                dry_run=dry_run,
                require_rv=False,
            )

        updated, warnings = await self.gate.admitted(req, t, "UPDATE", patched, base, write)
        return self.gate.warn(json_response(200, wire.served(info, updated)), unknown, *warnings)

    async def _apply(self, req: HttpRequest, t: Target) -> Response:
        info = t.info
        manager = req.q("fieldManager")
        if not manager:  # ValidatePatchOptions: 422 on the PatchOptions "kind"
            raise E.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [
                    E.cause(
                        "FieldValueRequired", "fieldManager", "Required value: is required for apply patch"
                    )
                ],
            )
        applied = wire.read_body(req, info, options="PatchOptions", check_kind=False)
        if not applied.get("apiVersion") or not applied.get("kind"):
            raise E.bad_request("apiVersion and kind must be set in an apply request")
        scale = t.subresource == "scale"
        want = ("autoscaling/v1", "Scale") if scale else (info.api_version, info.kind)
        if (applied["apiVersion"], applied["kind"]) != want:
            group_version = (
                applied["apiVersion"] if "/" in str(applied["apiVersion"]) else f"/{applied['apiVersion']}"
            )
            raise E.bad_request(f"invalid object type: {group_version}, Kind={applied['kind']}")
        scale_body = applied
        if scale:  # the Scale's replicas applied to the object's replicas path, owned under /scale
            self.store.get(info, t.namespace or "", t.name or "")  # 404 for a missing object
            applied = _scale_as_object(info, t.name or "", applied)
        meta = applied.setdefault("metadata", {})
        if meta.get("name") and meta["name"] != t.name:
            raise E.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({t.name})"
            )
        wire.check_namespace(applied, t)
        ns, name = t.namespace or "", t.name or ""
        current = self.store.find(info.bucket, ns if info.namespaced else "", name)
        apply_req = managed.ApplyRequest(
            manager=manager,
            now=now_rfc3339(),
            schema=info.schema,
            custom=info.custom,
            api_version=info.api_version,
            subresource=t.subresource,
            kind=info.kind,
            force=req.flag("force"),
            group=info.group,
            resource=info.plural,
            name=name,
        )
        if current is None:
            if t.subresource:
                raise E.not_found(info.group, info.plural, name)
            meta["name"] = name
            obj = managed.apply(None, applied, apply_req)
            _convert_applied(info, obj)

            def create(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
                return self.store.create(
                    info,
                    ns,
                    to_storage(info, o),
                    dry_run=dry_run,
                    managed_fields=o["metadata"].get("managedFields"),
                    fresh=True,
                )

            created, warnings = await self.gate.admitted(req, t, "CREATE", obj, None, create)
            return self.gate.warn(json_response(201, wire.served(info, created)), *warnings)
        new = managed.apply(wire.served(info, current), applied, apply_req)
        _convert_applied(info, new)
        if scale:  # after the conflicts, as the server checks the Scale
            _check_applied_scale(info, name, scale_body)
        new["metadata"]["resourceVersion"] = (
            meta.get("resourceVersion") or current["metadata"]["resourceVersion"]
        )
        old = wire.served(info, current)

        def update(o: dict[str, Any], dry_run: bool) -> dict[str, Any]:
            return self.store.update(
                info,
                ns,
                name,
                to_storage(info, o),
                subresource=t.subresource,
                dry_run=dry_run,
                require_rv=False,
                managed_fields=o["metadata"].get("managedFields", []),
            )

        updated, warnings = await self.gate.admitted(req, t, "UPDATE", new, old, update)
        answer = to_scale(info, updated) if scale else wire.served(info, updated)
        return self.gate.warn(json_response(200, answer), *warnings)

    def _update_scale(self, req: HttpRequest, t: Target, scale: dict[str, Any]) -> Response:
        info = t.info
        ns, name = t.namespace or "", t.name or ""
        current = self.store.get(info, ns, name)
        spec = scale.get("spec") or {}
        replicas = spec.get("replicas") if isinstance(spec, dict) else None
        if not isinstance(replicas, int) or replicas < 0:
            raise _invalid_scale_replicas(name, replicas)
        new = json_copy(current)
        set_path(new, (info.scale or {}).get("specReplicasPath", ".spec.replicas"), replicas)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        new["metadata"]["resourceVersion"] = rv or current["metadata"]["resourceVersion"]
        updated = self.store.update(
            info, ns, name, new, subresource="scale", manager=wire.field_manager(req), require_rv=False
        )
        return json_response(200, to_scale(info, updated))

    def _delete_options(self, req: HttpRequest) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if req.body:
            try:
                if media_type(req) == PROTOBUF:  # client-go with protobuf sends its DeleteOptions so
                    from pyscaffold_op.envtest.server.protobuf import delete_options

                    parsed = delete_options(req.body)
                else:
                    parsed = load_json(req.body)
            except ValueError as err:
                raise E.bad_request(f"error decoding DeleteOptions: {err}") from None
            if isinstance(parsed, dict):
                opts = parsed
        if req.q("propagationPolicy"):
            opts["propagationPolicy"] = req.q("propagationPolicy")
        if req.q("gracePeriodSeconds"):
            try:
                opts["gracePeriodSeconds"] = int(req.q("gracePeriodSeconds") or 0)
            except ValueError:
                raise E.bad_request(f'invalid gracePeriodSeconds: "{req.q("gracePeriodSeconds")}"') from None
        if opts.get("orphanDependents") is not None and opts.get("propagationPolicy") is not None:
            raise E.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    E.cause(
                        "FieldValueInvalid",
                        "propagationPolicy",
                        'Invalid value: "' + str(opts["propagationPolicy"]) + '": orphanDependents and '
                        "deletionPropagation cannot be both set",
                    )
                ],
            )
        dry_run = opts.get("dryRun")
        check_write_options(
            req,
            "DeleteOptions",
            [*req.query.get("dryRun", []), *(dry_run if isinstance(dry_run, list) else [])],
        )
        if opts.get("orphanDependents") is True:
            opts["propagationPolicy"] = "Orphan"
        pp = opts.get("propagationPolicy")
        if pp not in (None, "Orphan", "Background", "Foreground"):
            raise E.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    E.cause(
                        "FieldValueNotSupported",
                        "propagationPolicy",
                        f'Unsupported value: "{pp}": supported values: "Foreground", "Background", '
                        '"Orphan", "nil"',
                    )
                ],
            )
        return opts

    async def delete(self, req: HttpRequest, t: Target) -> Response:
        info = t.info
        opts = self._delete_options(req)
        dry = wire.dry_run(req) or "All" in (opts.get("dryRun") or [])
        if (
            opts.get("propagationPolicy") is None
            and (info.group, info.version, info.plural) in ORPHAN_BY_DEFAULT
        ):
            opts["propagationPolicy"] = "Orphan"  # the strategy's DefaultGarbageCollectionPolicy

        def delete(_o: Any, dry_run: bool) -> tuple[dict[str, Any], bool]:
            return self.store.delete(
                info,
                t.namespace or "",
                t.name or "",
                propagation=opts.get("propagationPolicy"),
                preconditions=opts.get("preconditions"),
                dry_run=dry_run,
                grace_period=_grace(opts),
            )

        current = self.store.find(info.bucket, (t.namespace or "") if info.namespaced else "", t.name or "")
        old = wire.served(info, current) if current is not None else None
        (obj, gone), warnings = await self.gate.admitted(req, t, "DELETE", None, old, delete, dry_run=dry)
        warn = self.gate.warn
        # gone with a deletionTimestamp: this request set finalizers (foreground, orphan) that the
        # controllers here cleared at once; the server answers before its GC runs, with the object
        if not gone or obj["metadata"].get("deletionTimestamp"):
            # like the real handler: 202 only when the client explicitly asked for cascading deletion
            # with orphanDependents=false; otherwise 200 with the object that finalizers still hold
            code = 202 if opts.get("orphanDependents") is False else 200
            return warn(json_response(code, wire.served(info, obj)), *warnings)
        if info.delete_returns_object:  # custom resources answer with the Status, as built-ins mostly do
            return warn(json_response(200, wire.served(info, obj)), *warnings)
        return warn(
            json_response(
                200, E.success(obj["metadata"]["name"], info.group, info.plural, obj["metadata"]["uid"])
            ),
            *warnings,
        )

    async def delete_collection(self, req: HttpRequest, t: Target) -> Response:
        info = t.info
        opts = self._delete_options(req)
        dry = wire.dry_run(req) or "All" in (opts.get("dryRun") or [])
        pred = selectors.served_selector(req, info)
        items, _rv, _c, _r = self.store.list(info, t.namespace, pred)
        deleted = []
        for obj in list(items):
            meta = obj["metadata"]

            def delete(_o: Any, dry_run: bool, meta: dict[str, Any] = meta) -> tuple[dict[str, Any], bool]:
                return self.store.delete(
                    info,
                    meta.get("namespace", ""),
                    meta["name"],
                    propagation=opts.get("propagationPolicy"),
                    dry_run=dry_run,
                    grace_period=_grace(opts),
                )

            item = Target(info, meta.get("namespace") or t.namespace, meta["name"], "")
            old = wire.served(info, obj)
            try:
                (o, _gone), _w = await self.gate.admitted(req, item, "DELETE", None, old, delete, dry_run=dry)
                deleted.append(wire.served(info, o))
            except E.StatusError as err:
                if err.code != 404:
                    raise
        list_meta: dict[str, Any] = {"resourceVersion": str(self.store.rv)}
        if info.custom:  # an unstructured list's metadata always has `continue`
            list_meta = {"continue": "", **list_meta}
        return json_response(
            200,
            {"apiVersion": info.api_version, "kind": info.list_kind, "metadata": list_meta, "items": deleted},
        )


def _scale_as_object(info: ServedResource, name: str, scale: dict[str, Any]) -> dict[str, Any]:
    """An applied Scale as the partial object it changes: its `spec.replicas` at the resource's
    replicas path (kube-apiserver's scale handler does the same to apply it to the parent)."""
    spec = scale.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    partial: dict[str, Any] = {"apiVersion": info.api_version, "kind": info.kind, "metadata": {"name": name}}
    if replicas is not None:
        set_path(partial, (info.scale or {}).get("specReplicasPath", ".spec.replicas"), replicas)
    return partial


def _check_applied_scale(info: ServedResource, name: str, scale: dict[str, Any]) -> None:
    """A Scale applied without conflicts: a custom resource's is the server's 500 (its scale
    handler cannot convert the result back, kube-apiserver v1.37), a negative count 422."""
    if info.custom:
        meta = scale.get("metadata") if isinstance(scale.get("metadata"), dict) else {}
        where = f"{(meta or {}).get('namespace', '')}/{name}; autoscaling/v1, Kind=Scale"
        raise E.StatusError(
            500,
            "",
            f"failed to convert new object ({where}) to proper version: request to convert CR to an "
            "invalid group/version: autoscaling/v1",
        )
    spec = scale.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
        raise _invalid_scale_replicas(name, replicas)


def _convert_applied(info: ServedResource, obj: dict[str, Any]) -> None:
    """The applied result converted to the built-in's Go type, as the apply patcher does: its
    quantities stored canonical; one that does not parse is the server's 500."""
    if info.custom:
        return
    bad = canonical_quantities(info.api_version, info.kind, obj)
    if bad is None:
        return
    meta = obj.get("metadata") or {}
    gvk = f"{info.group}/{info.version}, Kind={info.kind}"
    raise E.StatusError(
        500,
        "",
        f"failed to convert new object ({meta.get('namespace', '')}/{meta.get('name', '')}; {gvk}) to proper "
        f"version: unable to convert unstructured object to {gvk}: {bad}",
    )


def _check_custom_kind(info: ServedResource, obj: dict[str, Any]) -> None:
    """The custom resource strategy's type check (ValidateTypeMeta): an object of another kind or
    apiVersion is decoded as is (no defaults, no pruning) and refused, 422 under the kind it
    names; the CEL rules still run over it."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    causes = []
    if kind != info.kind:
        causes.append(E.cause("FieldValueInvalid", "kind", f'Invalid value: "{kind}": must be {info.kind}'))
    if api_version != info.api_version:
        causes.append(
            E.cause(
                "FieldValueInvalid",
                "apiVersion",
                f'Invalid value: "{api_version}": must be {info.api_version}',
            )
        )
    if not info.custom or not causes:
        return
    causes += apiextensions.rules_or_blocked(causes, obj, info.schema)
    name = (obj.get("metadata") or {}).get("name") or ""
    raise E.invalid(info.group, str(kind), name, causes)


def _decode_custom_patched(req: HttpRequest, info: ServedResource, patched: dict[str, Any]) -> str:
    """A patched custom resource as the server decodes it: unknown fields per fieldValidation
    (Strict: 422 on the field `patch`; Warn: named in a Warning header), then the strategy's type
    check."""
    mode = _field_validation(req)
    found = info.compiled_schema.prune(json_copy(patched)) if mode in _PRUNED_ON_DECODE else []
    if found and mode == "Strict":
        unknown = ", ".join(f'unknown field "{f}"' for f in found)
        raise _invalid_patch(patched, f"strict decoding error: {unknown}", unstructured=True)
    _check_custom_kind(info, patched)
    return ", ".join(f'299 - "unknown field \\"{f}\\""' for f in found)


def _decode_patched(req: HttpRequest, info: ServedResource, patched: dict[str, Any]) -> str:
    """The patched built-in decoded into its Go type, as the patch handler does: a field of the
    wrong JSON type, or under fieldValidation=Strict an unknown one, is 422 on the field `patch`
    with the patched object as its value; otherwise unknown fields are dropped (and named in a
    Warning header unless Ignore)."""
    api_version, kind = patched.get("apiVersion"), patched.get("kind")
    if (api_version, kind) != (info.api_version, info.kind):  # decoded as the type it now names
        group_version = api_version if isinstance(api_version, str) else ""
        if fieldtypes.kind_schema(group_version, str(kind)) is None:
            raise _invalid_patch(
                patched,
                f'no kind "{kind}" is registered for version "{group_version}" in scheme '
                '"pkg/runtime/scheme.go:111"',
            )
    wrong = godecode.decode_error(info.api_version, info.kind, patched)
    if wrong is not None:
        raise _invalid_patch(patched, wrong)
    bad_quantity = canonical_quantities(info.api_version, info.kind, patched)
    if bad_quantity is not None:
        raise _invalid_patch(patched, bad_quantity)
    schema = fieldtypes.kind_schema(info.api_version, info.kind)
    mode = _field_validation(req)
    # pruned on a copy: the patch result shares the subtrees it did not change with the stored object
    probe = json_copy(patched)
    found = prune_unknown(info.group, info.kind, probe, info.version)
    found += prune_nested(info.group, info.kind, probe, info.version)
    if schema is not None:  # the deeper fields the tables above do not list, from the kind's type
        found += [f for f in fieldtypes.unknown_fields(probe, schema, drop=True) if f not in found]
    if not found:
        return ""
    if mode == "Strict":
        unknown = ", ".join(f'unknown field "{f}"' for f in found)
        raise _invalid_patch(patched, f"strict decoding error: {unknown}")
    patched.clear()
    patched.update(probe)
    if mode == "Ignore":
        return ""
    return ", ".join(f'299 - "unknown field \\"{f}\\""' for f in found)


def _invalid_patch(patched: dict[str, Any], why: str, *, unstructured: bool = False) -> E.StatusError:
    """NewInvalid with no kind or name: `"" is invalid: patch: Invalid value: "<object>": <why>`;
    an `unstructured` object (a custom resource) is shown as Go marshals a map, keys sorted."""
    text = json.dumps(patched, separators=(",", ":"), ensure_ascii=False, sort_keys=unstructured)
    shown = json.dumps(text, ensure_ascii=False)
    return E.invalid("", "", "", [E.cause("FieldValueInvalid", "patch", f"Invalid value: {shown}: {why}")])


def _grace(opts: dict[str, Any]) -> int | None:
    grace = opts.get("gracePeriodSeconds")
    return grace if isinstance(grace, int) and not isinstance(grace, bool) else None


# fieldValidation modes in which a custom resource's body is pruned as it is decoded (to find unknown fields)
_PRUNED_ON_DECODE = ("Strict", "Warn")


def _field_validation(req: HttpRequest) -> str:
    return req.q("fieldValidation", "") or "Warn"  # Warn: the server's default since field validation GA


def _problem_path(problem: str) -> str:
    """The key of `problem` in duplicate_fields' document order."""
    kind, _, quoted = problem.partition(" field ")
    path = quoted.strip('"')
    return f"duplicate {path}" if kind == "duplicate" else path


_T = TypeVar("_T")


async def _warned(write: Awaitable[_T], warning: str) -> _T:
    """`write`'s result; when it fails, the error carries `warning` (the decoder's, already earned)."""
    try:
        return await write
    except E.StatusError as err:
        if warning:
            err.warnings.insert(0, warning)
        raise


def _invalid_scale_replicas(name: str, replicas: object) -> E.StatusError:
    """The Scale strategy's 422 for spec.replicas (a PUT or patch of /scale, an apply to it)."""
    cause = E.cause(
        "FieldValueInvalid", "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"
    )
    return E.invalid("autoscaling", "Scale", name, [cause])
