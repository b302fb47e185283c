"""`Environment`: a running emulator (store + HTTP server + kubeconfig), in an async context or a thread;
or, in real mode (`Environment(mode="real")`), the real kube-apiserver + etcd behind the same API, or in
cluster mode (`mode="cluster"`) those plus kube-controller-manager, kube-scheduler and kwok's fake
nodes (`envtest.realmode`)."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import copy
import secrets
import shutil
import ssl
import tempfile
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from pyscaffold_op import yamlio
from pyscaffold_op.clock import REAL_CLOCK
from pyscaffold_op.envtest import bootstrap, gctuning, loops
from pyscaffold_op.envtest.controllers import Workloads
from pyscaffold_op.envtest.controllers.core import CoreControllers
from pyscaffold_op.envtest.controllers.csrsigning import ClientSigner
from pyscaffold_op.envtest.controllers.kubelet import KubeletSimulator
from pyscaffold_op.envtest.modes import EMULATOR, MODES, REAL
from pyscaffold_op.envtest.realmode import EmulatorOnly, RealMode
from pyscaffold_op.envtest.registry import crds
from pyscaffold_op.envtest.server.auth import ADMIN_USER, MASTERS, Policy
from pyscaffold_op.envtest.server.handlers import Api
from pyscaffold_op.envtest.storage.objectstore import Store
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.clientconfig import RestConfig

T = TypeVar("T")
AUTHORIZATION_MODES = ("AlwaysAllow", "RBAC")
# Any bearer token is accepted on requests; kubeconfigs need a user for clients to start. In
# TokenReviews this token is ADMIN_USER in group system:masters.
TOKEN = "envtest-token"


class Environment:
    """An API server emulator on 127.0.0.1.

    `async with Environment(crd_paths=[...]) as env:` runs it on the current loop;
    `env.start_in_thread()` / `env.stop()` runs it on its own loop in a daemon thread.
    """

    def __init__(
        self,
        crd_paths: Sequence[str | Path] | None = None,
        kubelet: KubeletSimulator | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        history: int = 10_000,
        bookmark_interval: float = 1.0,
        kubeconfig_path: str | Path | None = None,
        namespace_deletion_delay: float = 0.2,
        namespace_deletion_max_delay: float = 5.0,
        workloads: Workloads | bool = False,
        real: bool = False,
        mode: str | None = None,
        assets: str | Path | None = None,
        tls: bool | None = None,
        authorization: str = "AlwaysAllow",
        bare: bool = False,
    ) -> None:
        """`tls=True` serves HTTPS with a CA made at start (`ca_pem`) and an admin client certificate
        in the kubeconfig; every request is then authenticated (unknown credentials get 401).
        `authorization="RBAC"` (kube-apiserver's `--authorization-mode` spelling) also authorizes every
        request against the stored Roles and bindings; it implies `tls` (clients send credentials
        only over TLS). `add_user` makes identities to test with.

        `mode="real"` (or `real=True`) runs kube-apiserver + etcd from `assets` (else
        $PYOP_ENVTEST_ASSETS or $KUBEBUILDER_ASSETS) instead of the emulator: the same methods, clients
        and fixtures work, and what only the emulator simulates (kubelet, workload controllers, garbage
        collector, fault injection, the review policy) raises `EmulatorOnly`. `mode="cluster"` runs a
        whole cluster (kube-controller-manager, kube-scheduler and kwok's fake nodes beside them): Pods
        run and the real controllers act; only fault injection, the review policy, a kubelet rule of
        your own and a fake clock for the controllers raise `EmulatorOnly`.

        `bare=True` is an emulator that plays envtest's bare kube-apiserver: none of
        kube-controller-manager's controllers (garbage collector, namespace controller, storage
        protection, CSR signing), no kubelet and no workloads, so owners' dependents stay, a deleted
        namespace stays `Terminating` until a client PUTs its `/finalize`, and a protected claim keeps
        its finalizer (docs/envtest.md, "For Go: the emulator as envtest's API server")."""
        self.crd_paths = [Path(p) for p in crd_paths or []]
        self.kubelet = kubelet
        # the simulated controller-manager (Deployments, Jobs, ServiceAccounts ...): opt-in here
        self.workloads: Workloads | None = Workloads() if workloads is True else workloads or None
        self.host = host
        self.port = port
        if bare and (kubelet is not None or self.workloads is not None):
            raise ValueError("bare=True runs no kubelet and no workloads: pass neither")
        self.bare = bare
        self.store = Store(history=history)
        # the ServiceAccount admission plugin needs the `default` ServiceAccounts a controller-manager
        # makes: on with the simulated one, off on a bare API server (as controller-runtime's envtest)
        self.store.admission.service_account = self.workloads is not None
        # the control plane's own controllers beside the API server (kube-controller-manager's)
        self.controllers: CoreControllers | None = (
            None
            if bare
            else CoreControllers(
                self.store,
                namespace_deletion_delay=namespace_deletion_delay,
                namespace_deletion_max_delay=namespace_deletion_max_delay,
                # a simulated cluster collects dependents whose owners never existed, as a real one
                collect_dangling=self.workloads is not None,
            )
        )
        self.api = Api(self.store, bookmark_interval=bookmark_interval)
        if self.controllers is not None:
            self.api.namespace_activity = self.controllers.namespaces
        self.api.policy.add_token(TOKEN, ADMIN_USER, groups=(MASTERS,))
        self.api.policy.tokenless = self.api.policy.authenticate(TOKEN)
        self._kubeconfig_out = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmpdir: Path | None = None
        self._runner: Any = None
        self._serving = False  # counted in gctuning while it serves
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self.kubeconfig_path: Path = Path()
        # how a client reaches it, as plain data (`config` is the runtime's RestConfig of these)
        self.url = ""
        self.token = TOKEN
        self.namespace = "default"
        self.context_name = "envtest"
        self.ca_pem: bytes | None = None  # the server's CA (PEM) when it serves HTTPS (real mode)
        mode = mode or (REAL if real else EMULATOR)
        if bare and mode not in (None, EMULATOR):
            raise ValueError(f"bare=True with mode={mode!r}: bare is an emulator's (real mode is bare)")
        if mode not in MODES or (real and mode != REAL):
            raise ValueError(
                f"mode={mode!r}"
                + (" with real=True" if real else "")
                + f": expected one of {', '.join(MODES)}"
            )
        self.mode = mode
        self.real: RealMode | None = RealMode(self, assets, mode) if mode != EMULATOR else None
        if authorization not in AUTHORIZATION_MODES:
            raise ValueError(
                f"authorization={authorization!r}: expected one of {', '.join(AUTHORIZATION_MODES)}"
            )
        if authorization == "RBAC" and tls is False:
            raise ValueError("authorization='RBAC' needs tls: clients send credentials only over TLS")
        self.authorization = authorization
        self.tls = authorization == "RBAC" if tls is None else tls
        # the admin's client certificate (CN=kubernetes-admin, O=system:masters) when serving HTTPS
        self.client_cert_pem: bytes | None = None
        self.client_key_pem: bytes | None = None
        self._signer: ClientSigner | None = None  # with TLS: signs approved client-certificate CSRs

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> Environment:
        from pyscaffold_op.envtest.server.httpfront import serve

        self.loop = asyncio.get_running_loop()
        if self.real is not None:
            await self.real.start()
            self._write_kubeconfig()
            return self
        if self.crd_paths:
            self._install(crds.load_crd_files(list(self.crd_paths)))
        context = self._secure() if self.tls else None
        self._runner, self.port = await serve(self.api, self.host, self.port, tls=context)
        gctuning.serving()
        self._serving = True
        self.url = f"{'https' if context else 'http'}://{self.host}:{self.port}"
        self.api.server_address = f"{self.host}:{self.port}"
        try:
            self._write_kubeconfig()
            bootstrap.apiserver_objects(self.store, self.host, self.port)
            if self.workloads is not None:
                self.workloads.attach(self.store, root_ca_pem=self.ca_pem or _cluster_ca())
            if self._signer is not None:
                self._signer.attach(self.store, REAL_CLOCK)
            if self.kubelet is not None:
                self.kubelet.attach(self.store)
        except BaseException:
            await self.astop()  # a start that fails (an unwritable kubeconfig path) leaves nothing serving
            raise
        return self

    def _secure(self) -> ssl.SSLContext:
        """The CA, serving and admin certificates; every request authenticated from now on."""
        from pyscaffold_op.envtest.server.pki import ADMIN_CN, Authority
        from pyscaffold_op.envtest.server.tlscontext import server_context

        authority = Authority.new()
        # the kube-apiserver-client signer (kube-controller-manager's): approved CSRs get client
        # certificates from this CA
        self._signer = None if self.bare else ClientSigner(authority)
        admin = authority.client(ADMIN_CN, (MASTERS,))
        self.ca_pem = authority.cert_pem
        self.client_cert_pem, self.client_key_pem = admin.cert_pem, admin.key_pem
        access = self.api.access
        access.authority, access.authenticating = authority, True
        access.enforce = self.authorization == "RBAC"
        return server_context(authority, authority.serving())

    async def astop(self) -> None:
        if self.real is not None:
            await self.real.stop()
            self._remove_kubeconfig()
            return
        if self.kubelet is not None:
            await self.kubelet.detach()
        if self.workloads is not None:
            self.workloads.detach()
        if self._signer is not None:
            self._signer.detach()
        if self.controllers is not None:
            self.controllers.stop()
        self.store.drop_watches()
        await self.api.admission.services.close()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            # never let a client that keeps a connection open hang the test's teardown
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(runner.cleanup(), 5)
        self._remove_kubeconfig()
        if self._serving:
            self._serving = False
            gctuning.stopped()

    async def __aenter__(self) -> Environment:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()

    def start_in_thread(self, timeout: float = 10.0) -> Environment:
        """Serve from a daemon thread with its own event loop (for kubectl, sync clients, benchmarks)."""
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            loop = loops.new_event_loop()
            asyncio.set_event_loop(loop)

            async def main() -> None:
                self._stopped = asyncio.Event()
                try:
                    await self.start()
                except BaseException as err:
                    ready.set_exception(err)
                    return
                ready.set_result(None)
                await self._stopped.wait()
                await self.astop()

            try:
                loop.run_until_complete(main())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="pyop-envtest", daemon=True)
        self._thread.start()
        ready.result(timeout)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop a server started with `start_in_thread` (use `await env.astop()` otherwise)."""
        if self._thread is None:
            raise RuntimeError("Environment.stop() is for start_in_thread(); use `await env.astop()`")
        if self.loop is not None and self._stopped is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(timeout)
        self._thread = None

    # -- kubeconfig --------------------------------------------------------------------------------

    def kubeconfig_dict(self, token: str | None = None) -> dict[str, Any]:
        """The kubeconfig: the admin's credentials, or only `token` (e.g. from `add_user`) when given."""
        if self.real is not None:
            if token is not None:
                self._emulator_only("kubeconfig_dict(token=...): the real server knows only its own tokens")
            return self.real.kubeconfig_dict()
        cluster: dict[str, Any] = {"server": self.url}
        user: dict[str, Any] = {"token": token or TOKEN}
        if self.ca_pem is not None:
            cluster["certificate-authority-data"] = _b64(self.ca_pem)
        if token is None and self.client_cert_pem is not None and self.client_key_pem is not None:
            # as a cluster's admin kubeconfig (kubeadm's, kind's): the client certificate alone
            user = {
                "client-certificate-data": _b64(self.client_cert_pem),
                "client-key-data": _b64(self.client_key_pem),
            }
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "envtest", "cluster": cluster}],
            "users": [{"name": "envtest", "user": user}],
            "contexts": [
                {
                    "name": "envtest",
                    "context": {"cluster": "envtest", "user": "envtest", "namespace": "default"},
                }
            ],
            "current-context": "envtest",
            "preferences": {},
        }

    def _write_kubeconfig(self) -> None:
        if self._kubeconfig_out is not None:
            path = self._kubeconfig_out
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            self._tmpdir = Path(tempfile.mkdtemp(prefix="pyop-envtest-"))
            path = self._tmpdir / "kubeconfig"
        path.write_text(yamlio.dump(self.kubeconfig_dict(), sort_keys=False))
        path.chmod(0o600)
        self.kubeconfig_path = path

    @property
    def config(self) -> RestConfig:
        """The runtime's `RestConfig` for this server (its URL, namespace `default`, the admin token):
        `Manager(env.config, ...)`, `new_client(env.config)`. The plain data is `url`, `token`,
        `namespace`, `context_name` and `kubeconfig_path`."""
        from pyscaffold_op.envtest.clientconfig import rest_config

        return rest_config(self)

    def config_for(self, token: str) -> RestConfig:
        """A `RestConfig` that authenticates with `token` only (e.g. from `add_user`): a manager or
        client running as that identity."""
        from pyscaffold_op.envtest.clientconfig import rest_config

        return rest_config(self, token)

    def _remove_kubeconfig(self) -> None:
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    # -- authentication and authorization (answers TokenReviews and SubjectAccessReviews) ----------

    @property
    def policy(self) -> Policy:
        """The review policy, the one place tokens and access rules are added: `env.policy.add_token(...)`,
        `env.policy.allow(...)`, `env.policy.add_authorizer(...)`; `env.policy.counts["TokenReview"]`
        counts the reviews answered."""
        self._emulator_only(
            "the review policy (env.policy): the real server authenticates with its own token file"
        )
        return self.api.policy

    def add_user(self, name: str, groups: Sequence[str] | None = None) -> str:
        """A new bearer token that authenticates user `name` in `groups` (plus system:authenticated);
        a `system:serviceaccount:<ns>:<name>` user gets that service account's groups when `groups`
        is None. With `authorization="RBAC"` it may do what the stored RBAC objects grant it."""
        from pyscaffold_op.envtest.server.auth import service_account, service_account_groups

        self._emulator_only("add_user: the real server authenticates with its own token file")
        if groups is None:
            sa = service_account(name)
            groups = service_account_groups(sa[0]) if sa is not None else ()
        token = secrets.token_urlsafe(24)
        self.api.policy.add_token(token, name, groups=groups)
        return token

    # -- CRDs and fault injection ------------------------------------------------------------------

    async def install_crds(self, paths: Sequence[str | Path]) -> list[dict[str, Any]]:
        """Install (create or replace) every CRD found in the files/folders; returns the stored CRDs."""
        docs = crds.load_crd_files(list(paths))
        if self.real is not None:
            return await self.real.install_crds(docs)
        return await self._on_loop(self._install_async(docs))

    async def _install_async(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._install(docs)

    def _install(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create or replace `docs`, which are the caller's to give away (`load_crd_files` makes them)."""
        info = self.store.info(crds.CRD_GROUP, "v1", "customresourcedefinitions")
        out = []
        for doc in docs:
            name = (doc.get("metadata") or {}).get("name", "")
            current = self.store.find(info.group_resource, "", name)
            if current is None:
                out.append(self.store.create(info, "", doc, manager="envtest", fresh=True))
            else:
                new = {
                    **doc,
                    "metadata": {
                        **doc.get("metadata", {}),
                        "resourceVersion": current["metadata"]["resourceVersion"],
                    },
                }
                out.append(self.store.update(info, "", name, new, manager="envtest"))
        return out

    # -- webhooks ----------------------------------------------------------------------------------

    def webhook_service_url(
        self, namespace: str, name: str, url: str, *, port: int = 443, ca: bytes | str | Path | None = None
    ) -> None:
        """Send calls for webhooks whose clientConfig names Service `namespace/name` (and `port`) to
        `url` (https, e.g. a runtime `WebhookServer.url`): there is no cluster DNS. `ca` (PEM bytes, or
        a file read at each call) is trusted when a clientConfig has no caBundle, as if cert-manager's
        CA injector had filled it in."""
        pem: bytes | Path | None = ca.encode() if isinstance(ca, str) and "BEGIN" in ca else None
        if pem is None and ca is not None:
            pem = ca if isinstance(ca, bytes) else Path(ca)
        if self.real is not None:
            self.real.webhook_service_url(namespace, name, url, port, pem)
            return
        self.api.admission.services.register(namespace, name, url, port, pem)

    async def install_webhooks(
        self, paths: Sequence[str | Path], ca_bundle: bytes | None = None
    ) -> list[Obj]:
        """Create or replace every Mutating/ValidatingWebhookConfiguration in the files/folders (e.g.
        `config/webhook/manifests.yaml`), setting each clientConfig's caBundle to `ca_bundle` if given."""
        docs = [
            d
            for d in _yaml_docs(paths)
            if d.get("kind") in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        ]
        if ca_bundle is not None:
            encoded = base64.b64encode(ca_bundle).decode()
            for d in docs:
                for hook in d.get("webhooks") or []:
                    hook.setdefault("clientConfig", {})["caBundle"] = encoded
        if self.real is not None:
            return await self.real.install_webhooks(docs)
        return await self._on_loop(self._put_async(docs))

    async def _put_async(self, docs: list[Obj]) -> list[Obj]:
        out = []
        for doc in docs:
            plural = doc["kind"].lower() + "s"
            info = self.store.info("admissionregistration.k8s.io", "v1", plural)
            name = (doc.get("metadata") or {}).get("name", "")
            current = self.store.find(info.group_resource, "", name)
            if current is None:
                out.append(self.store.create(info, "", copy.deepcopy(doc), manager="envtest"))
            else:
                meta = {**doc.get("metadata", {}), "resourceVersion": current["metadata"]["resourceVersion"]}
                out.append(self.store.update(info, "", name, {**copy.deepcopy(doc), "metadata": meta}))
        return out

    def drop_watches(self) -> None:
        """Fault injection: end every open watch stream now (clients must re-watch)."""
        self._emulator_only("fault injection (drop_watches)")
        self._call_soon(self.store.drop_watches)

    def compact(self) -> None:
        """Fault injection: forget the event history; watches from older resourceVersions get 410 Gone."""
        self._emulator_only("fault injection (compact)")
        self._call_soon(self.store.compact)

    def _emulator_only(self, what: str) -> None:
        if self.real is not None:
            raise EmulatorOnly(what, self.mode)

    def _call_soon(self, fn: Any) -> None:
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or loop.is_closed():
            fn()
        else:
            concurrent.futures.wait([_threadsafe(loop, fn)])

    async def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        if loop is None or asyncio.get_running_loop() is loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _cluster_ca() -> bytes:
    """A CA for a plain-HTTP emulator's `kube-root-ca.crt` (a cluster always has one; nothing here
    verifies with it)."""
    from pyscaffold_op.envtest.server.pki import Authority

    return Authority.new("kubernetes").cert_pem


def _yaml_docs(paths: Sequence[str | Path]) -> list[Obj]:
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(f for ext in ("*.yaml", "*.yml") for f in p.rglob(ext)) if p.is_dir() else [p]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)]


def _threadsafe(loop: asyncio.AbstractEventLoop, fn: Any) -> concurrent.futures.Future[Any]:
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            fut.set_result(fn())
        except Exception as err:
            fut.set_exception(err)

    loop.call_soon_threadsafe(run)
    return fut


__all__ = ["Environment"]
