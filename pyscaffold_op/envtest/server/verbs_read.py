"""The reading verbs: get, list, watch, and pods/log."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.registry.scale import to_scale
from pyscaffold_op.envtest.server import partial, selectors, tables, wire
from pyscaffold_op.envtest.server.protocol import (
    HttpRequest,
    Response,
    Target,
    json_response,
    once,
    parse_rv,
    wants_table,
)
from pyscaffold_op.envtest.storage.watch import FutureWatcher, Watcher, event_line, stream

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store


class ReadVerbs:
    """get, list, watch and pods/log over the store."""

    def __init__(self, store: Store, bookmark_interval: float) -> None:
        self.store = store
        self.bookmark_interval = bookmark_interval

    def get(self, req: HttpRequest, t: Target) -> Response:
        asked = req.q("resourceVersion") or ""
        if asked.isascii() and asked.isdigit() and int(asked) > self.store.rv:
            raise E.too_large_resource_version(int(asked), self.store.rv)  # as for a list, below
        obj = self.store.get(t.info, t.namespace or "", t.name or "")
        if t.subresource == "scale":
            return json_response(200, to_scale(t.info, obj))
        obj = wire.served(t.info, obj)
        version = partial.requested(req, listing=False)
        if version is not None:
            return json_response(200, partial.partial(obj, version))
        if wants_table(req):
            return json_response(
                200,
                tables.to_table(
                    t.info,
                    [obj],
                    _include_object(req),
                    {"resourceVersion": obj["metadata"]["resourceVersion"]},
                ),
            )
        return json_response(200, obj)

    def pod_log(self, req: HttpRequest, t: Target) -> Response:
        """pods/log from the kubelet simulator (text/plain, like the kubelet's)."""
        pod = self.store.get(t.info, t.namespace or "", t.name or "")
        containers = [
            c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)
        ]
        container = req.q("container") or (containers[0] if containers else "")
        if container not in containers:
            raise E.bad_request(f"container {container} is not valid for pod {t.name}")
        text = self.store.pod_logs(pod) if self.store.pod_logs is not None else None
        if text is None:
            raise E.bad_request(
                f'container "{container}" in pod "{t.name}" is waiting to start: ContainerCreating'
            )
        if req.q("tailLines"):
            with contextlib.suppress(ValueError):
                n = int(req.q("tailLines") or 0)
                text = "".join(text.splitlines(keepends=True)[-n:]) if n > 0 else ""
        if req.flag("follow"):
            from pyscaffold_op.envtest.server.podlogs import follow

            source = self.store.pod_logs
            assert source is not None
            already = len(source(pod) or "") - len(text)  # lines cut by tailLines are not sent

            def rest(p: dict[str, Any]) -> str | None:
                return (source(p) or "")[already:]

            return Response(200, content_type="text/plain", stream=follow(self.store, pod, container, rest))
        return Response(200, text.encode(), "text/plain")

    def list(self, req: HttpRequest, t: Target) -> Response:
        info = t.info
        pred = selectors.served_selector(req, info)
        try:
            limit = int(req.q("limit") or 0)
        except ValueError:
            raise E.bad_request(f"invalid limit: {req.q('limit')}") from None
        rv_match = req.q("resourceVersionMatch")
        if req.q("resourceVersion") not in (None, "", "0"):
            try:
                parse_rv(req.q("resourceVersion"))
            except E.StatusError as err:  # a list names the bad version a request error (a get: 500)
                raise E.bad_request(f"invalid resource version: {err.message}") from None
        if rv_match and not req.q("resourceVersion"):
            raise E.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    E.cause(
                        "FieldValueForbidden",
                        "resourceVersionMatch",
                        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                ],
            )
        if rv_match not in (None, "", "Exact", "NotOlderThan"):
            raise E.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    E.cause(
                        "FieldValueNotSupported",
                        "resourceVersionMatch",
                        f'Unsupported value: "{rv_match}": supported values: "Exact", "NotOlderThan", ""',
                    )
                ],
            )
        exact = int(parse_rv(req.q("resourceVersion"))) if rv_match == "Exact" else None
        asked = req.q("resourceVersion") or "0"
        if int(parse_rv(asked)) > self.store.rv:
            # kube-apiserver waits up to 3 s for its watch cache to reach the version, then answers
            # this 504 (Retry-After: 1); our store never lags, so waiting could only end the same way
            raise E.too_large_resource_version(int(parse_rv(asked)), self.store.rv)
        version = partial.requested(req, listing=True)
        items, rv, cont, remaining = self.store.list(
            info, t.namespace, pred, max(limit, 0), req.q("continue"), exact_rv=exact
        )
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if cont:
            meta["continue"] = cont
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        if version is not None:
            return json_response(200, partial.partial_list(items, meta, version))
        if wants_table(req):
            items = [wire.served(info, o) for o in items]
            return json_response(200, tables.to_table(info, items, _include_object(req), meta))
        if info.custom:
            out_items = [wire.served(info, o) for o in items]
            # an unstructured list's metadata is a map: `continue` always there, empty at the end
            meta = dict(sorted({**meta, "continue": cont or ""}.items()))
        else:  # typed lists omit each item's apiVersion/kind, as the real server's do
            if info.from_storage is not None:
                items = [info.from_storage(o) for o in items]
            out_items = [{k: v for k, v in o.items() if k != "apiVersion" and k != "kind"} for o in items]
        return json_response(
            200,
            {"apiVersion": info.api_version, "items": out_items, "kind": info.list_kind, "metadata": meta},
        )

    def watch(self, req: HttpRequest, t: Target) -> Response:
        info = t.info
        pred = selectors.served_selector(req, info)
        rv_param = req.q("resourceVersion")
        if rv_param not in (None, "", "0"):
            parse_rv(rv_param)
        send_initial = req.q("sendInitialEvents")
        bookmarks = req.flag("allowWatchBookmarks")
        version = partial.requested(req, listing=False)
        table = wants_table(req) and version is None
        # the watcher converts itself: its selector sees the stored form
        raw_pred = selectors.query_selector(req, info.field_selectors, info)
        initial = rv_param in (None, "", "0") if send_initial is None else send_initial.lower() == "true"
        since: int | None
        since = None if rv_param in (None, "", "0") or initial else int(parse_rv(rv_param))
        namespace = t.namespace if info.namespaced else None
        watcher: Watcher
        floor = since if since is not None and since > self.store.rv else 0
        if floor:
            # kube-apiserver v1.37 accepts a watch from a version it has not reached and stays silent
            # until it passes it (no ERROR, no bookmark): a client of a server that restarted with
            # fresh state waits there (its answer to a *list* at such a version is a 504, `list`).
            watcher = FutureWatcher(info.api_version, namespace, raw_pred, floor)
        else:
            watcher = Watcher(info.api_version, namespace, raw_pred)
        watcher.convert = info.from_storage
        if table:
            watcher.transform = tables.watch_transform(info, _include_object(req))
        elif version is not None:
            watcher.transform = lambda o: partial.partial(o, version)
        timeout = None
        if req.q("timeoutSeconds"):
            try:
                timeout = float(req.q("timeoutSeconds") or 0)
            except ValueError:
                raise E.bad_request(f"invalid timeoutSeconds: {req.q('timeoutSeconds')}") from None
        first: list[bytes] = []
        if initial:
            items, _rv_now, _c, _r = self.store.list(info, t.namespace, pred)
            for o in items:
                obj = wire.served(info, o)
                transform = watcher.transform
                first.append(event_line("ADDED", transform(obj) if transform is not None else obj))
            if send_initial and send_initial.lower() == "true" and bookmarks:
                first.append(self._bookmark_line(info, initial_end=True))
        replay = self.store.watch(watcher, info.bucket, since)
        if replay is None:
            status = E.gone(f"too old resource version: {rv_param} ({self.store.rv})").status()
            return Response(200, stream=once(event_line("ERROR", status)))
        for ev in replay:
            watcher.offer(ev)
        gr = info.bucket
        return Response(
            200,
            stream=stream(
                watcher,
                first,
                timeout_seconds=timeout,
                bookmark=(lambda: self._bookmark(info, floor)) if bookmarks else None,
                bookmark_interval=self.bookmark_interval,
                on_close=lambda: self.store.unwatch(watcher, gr),
            ),
            watcher=watcher,
        )

    def _bookmark(self, info: ServedResource, floor: int) -> bytes | None:
        """The periodic bookmark; None while the store has not passed `floor` (the version a watch
        from the future asked for): the watch cache sends no bookmark older than a watch's version."""
        if floor and self.store.rv <= floor:
            return None
        return self._bookmark_line(info)

    def _bookmark_line(self, info: ServedResource, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(self.store.rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return event_line("BOOKMARK", {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta})


def _include_object(req: HttpRequest) -> str:
    value = req.q("includeObject", "") or ""
    if value not in tables.INCLUDE_OBJECT:
        raise E.bad_request(f'unrecognized includeObject value: "{value}"')
    return value or "Metadata"
