"""Authentication and authorization of metrics scrapes (controller-runtime's
`filters.WithAuthenticationAndAuthorization`, as kubebuilder v4 projects use it).

Each request's bearer token is checked with a `TokenReview` (authentication.k8s.io/v1) and the user it
names with a `SubjectAccessReview` (authorization.k8s.io/v1) for the request's path as a non-resource
URL and its lower-cased method as the verb (`get` on `/metrics`). No or an unknown token is 401, a user
not allowed is 403, a failing API call is 500 (logged), never a crash. Plain-text bodies, as Go's
`http.Error` writes them.

Decisions are cached like the delegating authenticator/authorizer controller-runtime configures:
token -> user for `authn_ttl` (1 min), user + verb + path -> allowed for `allow_ttl` (5 min) or denied
for `deny_ttl` (30 s), so scrapes do not hammer the API server. Errors are not cached. Concurrent
requests with the same uncached token or decision share one review. Tokens are kept only as SHA-256
digests; each cache holds at most `max_entries` keys.

The scraper needs RBAC `nonResourceURLs: ["/metrics"], verbs: ["get"]`; the manager needs `create` on
`tokenreviews` and `subjectaccessreviews` (kubebuilder's `metrics_auth_role.yaml`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from pyscaffold_op.runtime.client.rest import RestTransport

log = logging.getLogger("pyscaffold_op.runtime.metrics.auth")

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class User:
    """The user a TokenReview authenticated."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())


class _TTLCache(Generic[K, V]):
    """A small expiring map (oldest entries go first when full)."""

    def __init__(self, max_entries: int, clock: Callable[[], float]) -> None:
        self._data: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._max = max_entries
        self._clock = clock

    def get(self, key: K) -> tuple[bool, V | None]:
        hit = self._data.get(key)
        if hit is None:
            return False, None
        expires, value = hit
        if self._clock() >= expires:
            del self._data[key]
            return False, None
        return True, value

    def put(self, key: K, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        self._data[key] = (self._clock() + ttl, value)
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class AuthFilter:
    """Checks requests with TokenReviews and SubjectAccessReviews through `transport` (uncached client).

    `await check(headers_authorization, verb, path)` returns (HTTP status, message): 200 when allowed.
    `middleware()` is the aiohttp middleware the manager's secure metrics server runs every request
    through.
    """

    def __init__(
        self,
        transport: RestTransport,
        *,
        authn_ttl: float = 60.0,
        allow_ttl: float = 300.0,
        deny_ttl: float = 30.0,
        timeout: float = 10.0,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transport = transport
        self.authn_ttl, self.allow_ttl, self.deny_ttl = authn_ttl, allow_ttl, deny_ttl
        self.timeout = timeout
        # token digest -> User, or None for a token the API server did not authenticate
        self._users: _TTLCache[str, User | None] = _TTLCache(max_entries, clock)
        self._decisions: _TTLCache[tuple[User, str, str], bool] = _TTLCache(max_entries, clock)
        self._inflight: dict[Any, asyncio.Future[Any]] = {}

    # -- the checks ----------------------------------------------------------------------------------
    async def _shared(self, key: Any, make: Callable[[], Awaitable[V]]) -> V:
        """One `make()` at a time per key; concurrent callers await the same result."""
        fut = self._inflight.get(key)
        if fut is None:
            fut = asyncio.ensure_future(make())
            self._inflight[key] = fut

            def done(f: asyncio.Future[Any]) -> None:
                self._inflight.pop(key, None)
                if not f.cancelled():
                    f.exception()  # retrieved, even when every caller went away

            fut.add_done_callback(done)
        return await asyncio.shield(fut)

    async def authenticate(self, token: str) -> User | None:
        """The user `token` belongs to, None when not authenticated; raises on API failures."""
        key = hashlib.sha256(token.encode()).hexdigest()
        hit, user = self._users.get(key)
        if hit:
            return user
        return await self._shared(("authn", key), lambda: self._review_token(key, token))

    async def _review_token(self, key: str, token: str) -> User | None:
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        review = await self._post(TOKEN_REVIEWS, body)
        status = review.get("status") or {}
        user = None
        if status.get("authenticated"):
            info = status.get("user") or {}
            extra = info.get("extra") or {}
            user = User(
                name=str(info.get("username") or ""),
                uid=str(info.get("uid") or ""),
                groups=tuple(info.get("groups") or ()),
                extra=tuple(sorted((k, tuple(v or ())) for k, v in extra.items())),
            )
        elif status.get("error"):
            log.debug("token not authenticated: %s", status["error"])
        self._users.put(key, user, self.authn_ttl)
        return user

    async def authorize(self, user: User, verb: str, path: str) -> bool:
        """Whether `user` may `verb` the non-resource URL `path`; raises on API failures."""
        key = (user, verb, path)
        hit, allowed = self._decisions.get(key)
        if hit:
            return bool(allowed)
        return await self._shared(("authz", key), lambda: self._review_access(user, verb, path))

    async def _review_access(self, user: User, verb: str, path: str) -> bool:
        key = (user, verb, path)
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        status = (await self._post(SUBJECT_ACCESS_REVIEWS, body)).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        if not allowed:
            log.debug(
                "access denied",
                extra={"user": user.name, "verb": verb, "path": path, "reason": status.get("reason", "")},
            )
        self._decisions.put(key, allowed, self.allow_ttl if allowed else self.deny_ttl)
        return allowed

    async def check(self, authorization: str | None, verb: str, path: str) -> tuple[int, str]:
        """(status, message) for a request with this Authorization header, verb and path."""
        token = _bearer(authorization)
        if not token:
            return 401, "Unauthorized"
        try:
            user = await self.authenticate(token)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.error("Authentication failed: %s", err)
            return 500, "Authentication failed"
        if user is None:
            return 401, "Unauthorized"
        try:
            allowed = await self.authorize(user, verb, path)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            msg = f"Authorization for user {user.name} failed"
            log.error("%s: %s", msg, err)
            return 500, msg
        if not allowed:
            return 403, f"Authorization denied for user {user.name}"
        return 200, ""

    def middleware(self) -> Any:
        from aiohttp import web

        @web.middleware
        async def authenticate_and_authorize(request: web.Request, handler: Any) -> web.StreamResponse:
            code, msg = await self.check(
                request.headers.get("Authorization"), request.method.lower(), request.path
            )
            if code != 200:
                return web.Response(status=code, text=msg + "\n", content_type="text/plain")
            return await handler(request)

        return authenticate_and_authorize

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with asyncio.timeout(self.timeout):
            data = await self.transport.request("POST", path, body=json.dumps(body).encode())
        review = json.loads(data)
        if not isinstance(review, dict):
            raise ValueError(f"POST {path}: the answer is not an object")
        return review


def _bearer(header: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header ('' when there is none)."""
    if not header:
        return ""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return ""
    return token.strip()
