"""Protobuf answers: `Accept: application/vnd.kubernetes.protobuf` (what client-go, controller-runtime
and kubectl send for built-in kinds) answered in protobuf, as kube-apiserver does.

What the real server does, per Accept (tests/conformance/scenarios/protobuf_answers.py holds the
cases, judged by kube-apiserver's bytes):
- the media ranges are tried in goautoneg's order (q, but a concrete type before a wildcard
  whatever its q; q=0 is no refusal), the first the server can write wins:
  `protobuf,application/json` gives protobuf for a built-in kind;
- a custom resource has no protobuf form: a protobuf range is skipped (`protobuf,application/json`
  gives JSON), and with nothing else acceptable the answer is a 406 Status, itself in protobuf;
- `as=PartialObjectMetadata(List)` is served in protobuf for built-ins and custom resources alike;
  `as=Table` has no protobuf form (skipped; alone, a 406 in JSON);
- objects, lists and Status errors are `k8s\\0` + runtime.Unknown; a watch is length-prefixed
  metav1.WatchEvent frames (`application/vnd.kubernetes.protobuf;stream=watch`).

The verbs keep producing JSON; an answer negotiated to protobuf is transcoded here, once, at the
edge. A request whose Accept does not name protobuf never reaches this module (the JSON path's cost
is unchanged).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.jsonutil import loads
from pyscaffold_op.envtest.server.protocol import JSON, PROTOBUF, HttpRequest, Response

MARKER = "vnd.kubernetes.protobuf"
WATCH_STREAM = PROTOBUF + ";stream=watch"
_PARTIAL = ("PartialObjectMetadata", "PartialObjectMetadataList")
_PLAIN = frozenset({JSON, "application/yaml", "*/*"})
_ONLY = (
    "only the following media types are accepted: application/json, application/yaml, "
    "application/vnd.kubernetes.protobuf"
)


def negotiate(req: HttpRequest, custom: bool) -> None:
    """Settle a protobuf-naming Accept header (call only when `MARKER` is in it): mark the request
    for a protobuf answer, or leave it JSON with the Accept cut to the ranges from the chosen one on
    (so the Table and PartialObjectMetadata readers see what the server would), or raise the 406."""
    clauses = _clauses(req.headers.get("accept", ""))
    skipped_plain = False
    for i, (media, params, _text) in enumerate(clauses):
        if media == PROTOBUF:
            as_ = params.get("as")
            if as_ is None and custom:
                skipped_plain = True
                continue
            if as_ is None or (as_ in _PARTIAL and params.get("g") == "meta.k8s.io"):
                req.protobuf_answer = True
                req.headers["accept"] = ",".join(c[2] for c in clauses[i:])
                return
            continue  # as=Table: no protobuf form
        if media in _PLAIN:
            req.headers["accept"] = ",".join(c[2] for c in clauses[i:])
            return
    error = E.StatusError(406, "NotAcceptable", _ONLY)
    if skipped_plain:
        req.protobuf_answer = True  # the Status of a refused protobuf request is protobuf
    raise error


def _clauses(accept: str) -> list[tuple[str, dict[str, str], str]]:
    """(media type, parameters, the clause's text) in the order the server tries them: goautoneg's
    sort, reproduced with its comparator as it is (a concrete type comes before a wildcard whatever
    their q, so `*/*,protobuf;q=0.9` is protobuf) and Go's insertion sort for short slices."""
    parsed: list[tuple[float, str, str, tuple[str, dict[str, str], str]]] = []
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        media = parts[0].lower()
        if not media:
            continue
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        kind, _, sub = media.partition("/")
        parsed.append((q, kind, sub, (media, params, clause.strip())))

    def less(a: tuple[float, str, str, object], b: tuple[float, str, str, object]) -> bool:
        return a[0] > b[0] or (a[1] != "*" and b[1] == "*") or (a[2] != "*" and b[2] == "*")

    for i in range(1, len(parsed)):
        j = i
        while j > 0 and less(parsed[j], parsed[j - 1]):
            parsed[j], parsed[j - 1] = parsed[j - 1], parsed[j]
            j -= 1
    return [c[3] for c in parsed]


def transcode(resp: Response) -> Response:
    """A JSON answer (object, list, Status, watch stream) as the protobuf one; others (pod logs'
    text, a 404 page) are left as they are."""
    from pyscaffold_op.envtest.server.protoencode import encode

    if not resp.content_type.startswith(JSON):
        return resp
    if resp.stream is not None:
        resp.stream = _frames(resp.stream)
        resp.watcher = None  # its events are JSON lines: they go through the transcoding stream
        resp.content_type = WATCH_STREAM
        return resp
    try:
        resp.body = encode(loads(resp.body))
    except (ValueError, KeyError, TypeError):
        return resp  # no protobuf form (a document without apiVersion/kind): as JSON
    resp.content_type = PROTOBUF
    return resp


async def _frames(lines: AsyncGenerator[bytes, None]) -> AsyncGenerator[bytes, None]:
    from pyscaffold_op.envtest.server.protoencode import watch_frame

    try:
        async for chunk in lines:
            events = [loads(line) for line in chunk.splitlines() if line.strip()]
            frames = [watch_frame(e["type"], e["object"]) for e in events]
            yield b"".join(frames)
    finally:
        await lines.aclose()
