"""The differential conformance harness: scenarios (request sequences) run against two API servers.

A `Scenario` is data: a name, the family it belongs to, and `Step`s. Each step is one HTTP request
(method, path, headers, body); any field may be a callable of the `Ctx` (the scenario's namespace
and the earlier steps' responses), so a later step can use an earlier response's resourceVersion.
`run` sends the steps to one `Target`; `compare` normalises the two runs' responses (what
legitimately differs between two servers: uids, timestamps, resourceVersion values, generated names,
server addresses, message wording) and lists the differences.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: Any
    events: list[Any] | None = None  # a watch step's events


@dataclass
class Ctx:
    ns: str
    responses: list[Response] = field(default_factory=list)

    def __getitem__(self, i: int) -> Any:
        return self.responses[i].body

    def rv(self, i: int) -> str:
        return str(self.responses[i].body["metadata"]["resourceVersion"])


Value = Any  # a value, or a callable of Ctx returning it


@dataclass
class Step:
    method: str
    path: Value
    body: Value = None
    headers: dict[str, str] = field(default_factory=dict)
    patch: str | None = None  # json | merge | strategic | apply: the Content-Type
    content_type: str | None = None
    compare: bool = True  # False: a setup step whose response is not compared
    watch: int = 0  # a watch: read this many events, then hang up
    view: Callable[[Any], Any] | None = None  # what of the (normalised) body to compare
    status_only: bool = False
    compare_headers: tuple[str, ...] = ()
    messages: bool = False  # compare Status messages word for word
    # sent again (for up to 10 s) until its answer satisfies this: for what a server learns
    # asynchronously, e.g. kube-apiserver's RBAC authorizer reads bindings from an informer cache
    until: Callable[[Response], bool] | None = None


@dataclass
class Scenario:
    name: str
    family: str
    steps: list[Step]
    namespace: bool = True  # the runner creates the scenario's namespace first


def _resolve(value: Value, ctx: Ctx) -> Any:
    if callable(value):
        return value(ctx)
    if isinstance(value, str):
        return value.replace("{ns}", ctx.ns)
    if isinstance(value, dict):
        return {_resolve(k, ctx): _resolve(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, ctx) for v in value]
    return value


class Target:
    """One API server reached over HTTP(S) with a bearer token (one keep-alive connection)."""

    def __init__(self, name: str, url: str, token: str, ca_pem: bytes | None = None) -> None:
        self.name = name
        self.url = url
        parts = urllib.parse.urlsplit(url)
        self.netloc = parts.netloc
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or (443 if self.https else 80)
        self.token = token
        self.ssl = ssl.create_default_context(cadata=ca_pem.decode()) if ca_pem else None
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self, timeout: float = 30.0) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def send(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], *, watch: int = 0
    ) -> Response:
        hdrs = {"Authorization": f"Bearer {self.token}", "Accept": "application/json", **headers}
        if watch:
            return self._watch(method, path, body, hdrs, watch)
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = self._connect()
            try:
                self._conn.request(method, path, body=body, headers=hdrs)
                resp = self._conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, OSError):
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                if attempt:
                    raise
        if resp.will_close and self._conn is not None:
            self._conn.close()
            self._conn = None
        headers = _headers(resp.getheaders())
        return Response(resp.status, headers, _decode(raw, headers.get("content-type", "")))

    def _watch(self, method: str, path: str, body: bytes | None, hdrs: dict[str, str], n: int) -> Response:
        conn = self._connect(timeout=5.0)
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            headers = _headers(resp.getheaders())
            if resp.status != 200:
                return Response(resp.status, headers, _decode(resp.read(), headers.get("content-type", "")))
            if headers.get("content-type", "").startswith(PROTOBUF):
                return Response(resp.status, headers, None, _protobuf_events(resp, n))
            events: list[Any] = []
            deadline = time.monotonic() + 5.0
            while len(events) < n and time.monotonic() < deadline:
                try:
                    line = resp.readline()
                except TimeoutError:
                    break
                if not line:
                    break
                if line.strip():
                    event = json.loads(line)
                    if event.get("type") == "BOOKMARK":
                        continue
                    events.append(event)
            return Response(resp.status, headers, None, events)
        finally:
            conn.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _headers(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Response headers by lower-case name; a repeated header (Go writes each Warning on its own
    line) is its values joined with ", ", which HTTP defines as the same thing."""
    out: dict[str, str] = {}
    for k, v in pairs:
        out[k.lower()] = f"{out[k.lower()]}, {v}" if k.lower() in out else v
    return out


PROTOBUF = "application/vnd.kubernetes.protobuf"


def _decode(raw: bytes, content_type: str = "") -> Any:
    if content_type.startswith(PROTOBUF):
        return _protobuf_body(raw)
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def _protobuf_body(raw: bytes) -> Any:
    """A protobuf answer as its JSON (what the two servers' bytes mean, compared like any body) and
    whether pyop's encoder writes exactly these bytes for that JSON: on the real server's answers,
    that judges the emulator's encoder byte for byte."""
    from pyscaffold_op.envtest.server.protobuf import ProtobufError, decode
    from pyscaffold_op.envtest.server.protoencode import encode

    try:
        obj = decode(raw)
    except ProtobufError as err:
        return f"<undecodable protobuf: {err}: {raw[:80]!r}>"
    return {"protobuf": obj, "gogo": encode(obj) == raw}


def _protobuf_events(resp: http.client.HTTPResponse, n: int) -> list[Any]:
    """A protobuf watch's events: length-prefixed metav1.WatchEvent frames whose object holds the
    object's full protobuf body; each frame also checked against pyop's encoder."""
    from pyscaffold_op.envtest.server.protobuf import decode
    from pyscaffold_op.envtest.server.protoencode import watch_frame
    from pyscaffold_op.envtest.server.protowire import fields

    events: list[Any] = []
    deadline = time.monotonic() + 5.0
    while len(events) < n and time.monotonic() < deadline:
        try:
            head = resp.read(4)
            if len(head) < 4:
                break
            frame = resp.read(int.from_bytes(head, "big"))
        except TimeoutError:
            break
        kind, raw = "", b""
        for num, _wire, value in fields(frame, "WatchEvent"):
            if num == 1:
                kind = bytes(value).decode()  # type: ignore[arg-type]
            elif num == 2:
                raw = next((bytes(v) for k, _w, v in fields(bytes(value), "RawExtension") if k == 1), b"")  # type: ignore[arg-type]
        if kind == "BOOKMARK":
            continue
        obj = decode(raw)
        events.append(
            {"type": kind, "object": {"protobuf": obj, "gogo": watch_frame(kind, obj) == head + frame}}
        )
    return events


def run(
    target: Target, scenario: Scenario, ns: str, *, service_account: bool = False, settle: float = 0.0
) -> list[Response]:
    """The scenario's steps on `target`; with `service_account`, the scenario's namespace is first
    waited for until a controller-manager made its `default` ServiceAccount (a cluster's Pods need it);
    with `settle`, each GET is sent again until two answers `settle` seconds apart agree (what a
    controller-manager does after a write, a garbage collector finishing a deletion, has happened)."""
    ctx = Ctx(ns)
    if scenario.namespace:
        target.send(
            "POST",
            "/api/v1/namespaces",
            json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).encode(),
            {"Content-Type": "application/json"},
        )
        deadline = time.monotonic() + 30
        while service_account and time.monotonic() < deadline:
            if target.send("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default", None, {}).status == 200:
                break
            time.sleep(0.05)
    for step in scenario.steps:
        try:
            path = _resolve(step.path, ctx)
            body = _resolve(step.body, ctx)
            headers = {k: _resolve(v, ctx) for k, v in step.headers.items()}
        except (KeyError, IndexError, TypeError) as err:
            # an earlier answer lacked what this step needs: that is a difference, not a crash
            ctx.responses.append(Response(0, {}, f"<step not sent: {type(err).__name__}: {err}>"))
            continue
        ctype = step.content_type or (PATCH_TYPES[step.patch] if step.patch else "application/json")
        if body is not None:
            if isinstance(body, str):
                body = body.encode()
            elif not isinstance(body, bytes):
                body = json.dumps(body).encode()
            headers.setdefault("Content-Type", ctype)
        resp = target.send(step.method, path, body, headers, watch=step.watch)
        if settle and step.method == "GET" and not step.watch:
            resp = _settled(target, path, headers, resp, settle)
        deadline = time.monotonic() + 10.0
        while step.until is not None and not step.until(resp) and time.monotonic() < deadline:
            time.sleep(0.05)
            resp = target.send(step.method, path, body, headers, watch=step.watch)
        ctx.responses.append(resp)
    return ctx.responses


def _settled(target: Target, path: str, headers: dict[str, str], resp: Response, pause: float) -> Response:
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        time.sleep(pause)
        again = target.send("GET", path, None, headers)
        if (again.status, again.body) == (resp.status, resp.body):
            return again
        resp = again
    return resp


# -- normalising ---------------------------------------------------------------------------------

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# names the servers generated from the corpus's `generateName: gen-...-` (Go's rand.String alphabet),
# also where a name is copied: labels (Job, Namespace), a 422's details.name
GENERATED = re.compile(r"^gen-(cf-[0-9a-f]{12}-)?[bcdfghjklmnpqrstvwxz2456789]{5}$")
AGE = re.compile(r"^(\d+(s|m|h|d|y))+$|^<invalid>$|^<unknown>$")
VOLATILE_META = ("uid", "creationTimestamp", "resourceVersion", "selfLink", "deletionTimestamp")


def normalise(value: Any, addresses: tuple[str, ...], *, messages: bool = False) -> Any:
    """The response body with what may legitimately differ between two servers replaced by markers."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in ("resourceVersion", "continue") and isinstance(v, str) and v:
                out[k] = f"<{k}>"
            elif k == "time" and isinstance(v, str):
                out[k] = "<time>"
            elif k == "managedFields" and isinstance(v, list):
                out[k] = [_managed_entry(e, addresses) for e in v]
            elif k == "selfLink":
                continue
            elif k in ("clusterIP", "podIP", "hostIP") and isinstance(v, str) and v not in ("", "None"):
                out[k] = "<ip>"
            elif k == "clusterIPs" and isinstance(v, list):
                out[k] = [x if x == "None" else "<ip>" for x in v]
            else:
                out[k] = normalise(v, addresses, messages=messages)
        meta = out.get("metadata")
        if isinstance(meta, dict) and meta.get("generateName") and isinstance(meta.get("name"), str):
            meta["name"] = "<generated>"
        if out.get("kind") == "Status" and "code" in out:
            _status(out, messages)
        if out.get("kind") == "Table" and isinstance(out.get("rows"), list):
            _table(out)
        return out
    if isinstance(value, list):
        return [normalise(v, addresses, messages=messages) for v in value]
    if isinstance(value, str):
        if TIME.match(value):
            return "<time>"
        if UID.match(value):
            return "<uid>"
        if GENERATED.match(value):
            return "<generated>"
        for a in addresses:
            if a in value:
                value = value.replace(a, "<server>")
    return value


def _managed_entry(entry: Any, addresses: tuple[str, ...]) -> Any:
    """An Update entry's field set is the Go types' (fields defaulted at decode time, `.` for pointer
    structs and maps that appeared): compared by who and how only. Apply entries are compared whole."""
    if isinstance(entry, dict) and entry.get("operation") == "Update":
        return {k: v for k, v in entry.items() if k not in ("fieldsV1", "time")}
    return normalise(entry, addresses)


def _status(out: dict[str, Any], messages: bool) -> None:
    if not messages:
        out.pop("message", None)
    details = out.get("details")
    if isinstance(details, dict):
        causes = details.get("causes")
        if isinstance(causes, list):
            norm = [{k: c[k] for k in ("reason", "field") if k in c} for c in causes if isinstance(c, dict)]
            if not messages:
                details["causes"] = sorted(norm, key=lambda c: json.dumps(c, sort_keys=True))
        details.pop("uid", None)
    meta = out.get("metadata")
    if isinstance(meta, dict) and not meta:
        out.pop("metadata")


def _table(out: dict[str, Any]) -> None:
    ages = [i for i, c in enumerate(out.get("columnDefinitions") or []) if c.get("name") == "Age"]
    for row in out["rows"]:
        cells = row.get("cells")
        if isinstance(cells, list):
            for i in ages:
                if i < len(cells):
                    cells[i] = "<age>"


def view_of(step: Step, resp: Response, addresses: tuple[str, ...]) -> Any:
    if step.status_only:
        return {"status": resp.status}
    if resp.events is not None:
        body: Any = [
            {"type": e.get("type"), "object": normalise(e.get("object"), addresses, messages=step.messages)}
            for e in resp.events
        ]
    else:
        body = normalise(resp.body, addresses, messages=step.messages)
    if step.view is not None and 200 <= resp.status < 300:
        try:
            body = step.view(body)
        except (KeyError, TypeError, IndexError, AttributeError) as err:
            body = f"<view failed: {type(err).__name__}: {err}>"
    out = {"status": resp.status, "body": body}
    for h in step.compare_headers:
        out[h] = resp.headers.get(h.lower())
    return out


def compare(
    scenario: Scenario, a: list[Response], b: list[Response], addresses: tuple[str, ...]
) -> list[str]:
    """The differences between two runs of `scenario` (empty: they agree)."""
    diffs: list[str] = []
    for i, (step, ra, rb) in enumerate(zip(scenario.steps, a, b, strict=True)):
        if not step.compare:
            continue
        va, vb = view_of(step, ra, addresses), view_of(step, rb, addresses)
        if va != vb:
            label = f"step {i} {step.method} {_short(step.path)}"
            for d in _diff(va, vb, "")[:8]:
                diffs.append(f"{label}: {d}")
    return diffs


def _short(path: Value) -> str:
    return "<computed>" if callable(path) else str(path)


def _diff(a: Any, b: Any, at: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in b:
                out.append(f"{at}.{k}: real lacks it, emulator has {_brief(a[k])}")
            elif k not in a:
                out.append(f"{at}.{k}: emulator lacks it, real has {_brief(b[k])}")
            else:
                out.extend(_diff(a[k], b[k], f"{at}.{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(_diff(x, y, f"{at}[{i}]"))
        return out
    if a != b:
        return [f"{at or '.'}: emulator {_brief(a)} != real {_brief(b)}"]
    return []


def _brief(v: Any) -> str:
    s = json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= 160 else s[:157] + "..."
