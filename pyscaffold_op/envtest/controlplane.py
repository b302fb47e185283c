"""The real control plane: kube-apiserver + etcd on loopback, as controller-runtime's envtest runs them.

`Environment(real=True)` (or the pytest plugin with `PYOP_ENVTEST=real`) uses this instead of the
emulator, so the same tests judge pyop against the real API server. The binaries come from
`PYOP_ENVTEST_ASSETS` or `KUBEBUILDER_ASSETS` (a folder holding `kube-apiserver` and `etcd`, e.g. the
repository's `bin/` after `make oracles`, or what `setup-envtest use` prints).

What it sets up, and why:
- etcd on two free loopback ports with `--unsafe-no-fsync` (test data, nothing to keep);
- kube-apiserver serving HTTPS on a free port with the self-signed certificate it writes into its
  `--cert-dir` (its CA is in that file, so a kubeconfig can trust it), a static bearer token for an
  admin in `system:masters` (`--token-auth-file`), RBAC authorization, a service-account signing key
  made here, and the `ServiceAccount` admission plugin off: there is no controller-manager to create
  namespaces' `default` ServiceAccount, so Pods could never be created (controller-runtime's envtest
  runs the same bare API server; see docs/envtest.md for what only the emulator simulates).
- Start is ready when `/readyz` answers 200 and the `default` namespace exists.

Only the standard library talks to the server here (urllib with the server's CA), so the emulator
package keeps its wall against the runtime.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ASSETS_ENV = ("PYOP_ENVTEST_ASSETS", "KUBEBUILDER_ASSETS")
TOKEN = "envtest-token"
ADMIN = "envtest-admin"
BINARIES = ("kube-apiserver", "etcd")


class ControlPlaneError(RuntimeError):
    """The real control plane could not start (missing binaries, a process that exited, a timeout)."""


def assets_dir(explicit: str | Path | None = None, binaries: tuple[str, ...] = BINARIES) -> Path:
    """The folder with `binaries` (`kube-apiserver` and `etcd`): `explicit`, else $PYOP_ENVTEST_ASSETS,
    else $KUBEBUILDER_ASSETS. Raises `ControlPlaneError` naming what is missing and how to get it."""
    candidates = [str(explicit)] if explicit else [os.environ[v] for v in ASSETS_ENV if os.environ.get(v)]
    if not candidates:
        raise ControlPlaneError(
            "no kube-apiserver/etcd binaries: set PYOP_ENVTEST_ASSETS (or KUBEBUILDER_ASSETS) to a folder "
            "holding them (`make oracles` builds them into bin/ of a pyop checkout)"
        )
    folder = Path(candidates[0]).expanduser()
    missing = [b for b in binaries if not os.access(folder / b, os.X_OK)]
    if missing:
        raise ControlPlaneError(f"{folder}: no executable {' or '.join(missing)} (run `make oracles`)")
    return folder


def apiserver_version(assets: str | Path | None = None) -> str:
    """`kube-apiserver --version`'s version (`v1.37.2`) of the binary in `assets_dir(assets)`."""
    binary = assets_dir(assets) / "kube-apiserver"
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ControlPlaneError(f"{binary} --version: {err}") from None
    return out.split()[-1] if out.split() else "(unknown version)"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(eq=False)  # identity: live planes are kept in a WeakSet
class ControlPlane:
    """kube-apiserver + etcd, started by `start()` and removed (processes and files) by `stop()`.

    A subclass adds components (`cluster.Cluster`: controller-manager, scheduler, kwok) by overriding
    `binaries`, `_apiserver_args` and `_start_components`."""

    binaries: tuple[str, ...] = field(default=BINARIES, init=False)
    assets: Path | None = None
    host: str = "127.0.0.1"
    port: int = 0  # the API server's; 0: a free one
    start_timeout: float = 60.0
    extra_apiserver_args: list[str] = field(default_factory=list)
    # CRDs installed (and waited for) once the API server is ready, before any other component starts
    crds: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    ca_pem: bytes = b""
    token: str = TOKEN
    # the admin's client certificate, when the plane has a CA of its own (a cluster's); else the token
    client_cert_pem: bytes = b""
    client_key_pem: bytes = b""
    start_seconds: float = 0.0
    _dir: Path | None = None
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _names: list[str] = field(default_factory=list)  # the component each of `_procs` runs
    _argv: dict[str, list[str]] = field(default_factory=dict)  # by process name, for restart()
    _ssl: ssl.SSLContext | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> ControlPlane:
        began = time.monotonic()
        _LIVE.add(self)
        assets = assets_dir(self.assets, self.binaries)
        self._dir = Path(tempfile.mkdtemp(prefix="pyop-controlplane-"))
        try:
            etcd_url = self._start_etcd(assets)
            self._start_apiserver(assets, etcd_url)
            self._wait_ready(began + self.start_timeout)
            if self.crds:
                self.install_crds(self.crds, timeout=max(1.0, began + self.start_timeout - time.monotonic()))
            self._start_components(assets, began + self.start_timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - began
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._terminate(timeout)
        _LIVE.discard(self)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _terminate(self, timeout: float) -> None:
        # the newest first: the components, then the API server (it holds etcd connections), then etcd
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        self._procs.clear()
        self._names.clear()

    def restart(self, *, forget: bool = False) -> None:
        """Stop kube-apiserver and etcd and start them again with the same ports, certificates and
        token, so clients keep their configuration. `forget=True` starts etcd on an empty data dir:
        the server comes back without the objects it had and counts resourceVersions from low again,
        as after etcd was wiped or restored from an old backup (what an informer must recover from,
        tests/faults/test_server_restart.py). CRDs are gone too: install them again. A cluster's other
        components are not started again (real mode's plane has none)."""
        assert self._dir is not None, "restart() of a control plane that is not running"
        self._terminate(timeout=10.0)
        if forget:
            shutil.rmtree(self._dir / "etcd", ignore_errors=True)
        for name in ("etcd", "kube-apiserver"):  # the order `_wait_ready` names them in
            self._spawn(name, self._argv[name])
        self._wait_ready(time.monotonic() + self.start_timeout)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        assert self._dir is not None
        log = open(self._dir / f"{name}.log", "ab")  # noqa: SIM115 - the process owns it until stop()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._argv[name] = argv
        log.close()
        self._procs.append(proc)
        self._names.append(name)
        return proc

    def log_tail(self, name: str, lines: int = 20) -> str:
        if self._dir is None or not (self._dir / f"{name}.log").is_file():
            return ""
        return "\n".join((self._dir / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])

    def _start_etcd(self, assets: Path) -> str:
        assert self._dir is not None
        client, peer = free_port(self.host), free_port(self.host)
        client_url, peer_url = f"http://{self.host}:{client}", f"http://{self.host}:{peer}"
        self._spawn(
            "etcd",
            [
                str(assets / "etcd"),
                f"--data-dir={self._dir / 'etcd'}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
        )
        return client_url

    def _start_apiserver(self, assets: Path, etcd_url: str) -> None:
        assert self._dir is not None
        certs = self._dir / "certs"
        certs.mkdir()
        key, pub = certs / "sa.key", certs / "sa.pub"
        key_pem, pub_pem = _signing_key_pair()
        key.write_bytes(key_pem)
        pub.write_bytes(pub_pem)
        port = self.port or free_port(self.host)
        self.url = f"https://{self.host}:{port}"
        self._spawn(
            "kube-apiserver",
            [
                str(assets / "kube-apiserver"),
                f"--etcd-servers={etcd_url}",
                f"--secure-port={port}",
                f"--bind-address={self.host}",
                f"--advertise-address={self.host}",
                # no Endpoints for the kubernetes Service: a loopback address may not be advertised
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                f"--service-account-key-file={pub}",
                f"--service-account-signing-key-file={key}",
                *self._apiserver_args(certs),
                *self.extra_apiserver_args,
            ],
        )

    def _apiserver_args(self, certs: Path) -> list[str]:
        """What differs between a bare API server (here) and a cluster's: certificates, identities,
        admission. The CA a client trusts is `certs/apiserver.crt` once `_wait_ready` sees it."""
        assert self._dir is not None
        tokens = self._dir / "tokens.csv"
        tokens.write_text(f'{self.token},{ADMIN},{ADMIN},"system:masters"\n')
        return [
            f"--cert-dir={certs}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--authorization-mode=RBAC",
            f"--token-auth-file={tokens}",
            f"--service-account-issuer={self.url}",
            # no controller-manager makes namespaces' `default` ServiceAccount: Pods could not be created
            "--disable-admission-plugins=ServiceAccount",
        ]

    def _start_components(self, assets: Path, deadline: float) -> None:
        """Start what runs beside a ready API server (nothing for a bare one) and wait for it."""

    def check_running(self) -> None:
        """Raise `ControlPlaneError` with its log's tail when one of the processes has exited."""
        for proc, name in zip(self._procs, self._names, strict=True):
            if proc.poll() is not None:
                raise ControlPlaneError(
                    f"{name} exited with status {proc.returncode}:\n{self.log_tail(name)}"
                )

    def _wait_ready(self, deadline: float) -> None:
        assert self._dir is not None
        cert = self._dir / "certs" / "apiserver.crt"
        last = "not started"
        while time.monotonic() < deadline:
            self.check_running()
            if cert.is_file() and self._ssl is None:
                self.ca_pem = cert.read_bytes()
                self._ssl = ssl.create_default_context(cadata=self.ca_pem.decode())
            if self._ssl is not None:
                try:
                    status, _ = self.request("GET", "/readyz")
                    if status == 200 and self.request("GET", "/api/v1/namespaces/default")[0] == 200:
                        return
                    last = f"/readyz answered {status}"
                except (OSError, urllib.error.URLError) as err:
                    last = str(err)
            time.sleep(0.1)
        raise ControlPlaneError(
            f"kube-apiserver not ready after {self.start_timeout:.0f}s ({last}):\n"
            + self.log_tail("kube-apiserver")
        )

    # -- requests (stdlib only) --------------------------------------------------------------------

    def request(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        """One request as the admin; returns (status, decoded JSON body or text)."""
        data = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=30) as resp:
                return resp.status, _decode(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, _decode(err.read())

    # -- CRDs --------------------------------------------------------------------------------------

    def install_crds(self, docs: Iterable[dict[str, Any]], timeout: float = 30.0) -> list[dict[str, Any]]:
        """Create or replace each CRD, then wait until every one is Established, served (in
        discovery, as envtest's WaitForCRDs does) and its watch cache ready: since v1.34 (resilient
        watch-cache initialization) a list or watch the cache would serve gets a 429 "storage is
        (re)initializing" until then, which a test with an injected sleep would see as a failure."""
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        out = []
        for doc in docs:
            name = doc["metadata"]["name"]
            status, current = self.request("GET", f"{base}/{name}")
            if status == 200:
                doc = {
                    **doc,
                    "metadata": {
                        **doc["metadata"],
                        "resourceVersion": current["metadata"]["resourceVersion"],
                    },
                }
                status, stored = self.request("PUT", f"{base}/{name}", doc)
            else:
                status, stored = self.request("POST", base, doc)
            if status not in (200, 201):
                raise ControlPlaneError(f"CRD {name}: the API server answered {status}: {_message(stored)}")
            out.append(stored)
        deadline = time.monotonic() + timeout
        for crd in out:
            self._wait_served(crd, deadline)
        return out

    def _wait_served(self, crd: dict[str, Any], deadline: float) -> None:
        name, spec = crd["metadata"]["name"], crd["spec"]
        plural = spec["names"]["plural"]
        versions = [v["name"] for v in spec.get("versions", []) if v.get("served", True)]
        group_versions = [f"/apis/{spec['group']}/{v}" for v in versions]
        pending = set(group_versions)
        while True:
            _, got = self.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            status_block = got.get("status") if isinstance(got, dict) else None
            conditions = {c["type"]: c["status"] for c in (status_block or {}).get("conditions") or []}
            if conditions.get("Established") == "True":
                for path in sorted(pending):
                    status, listing = self.request("GET", path)
                    if status == 200 and any(r.get("name") == plural for r in listing.get("resources", [])):
                        pending.discard(path)
                if not pending and all(self._cache_ready(f"{gv}/{plural}") for gv in group_versions):
                    return
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"CRD {name} not established and served in time: {conditions}")
            time.sleep(0.05)

    def _cache_ready(self, resource_path: str) -> bool:
        """A list at resourceVersion 0 is the watch cache's to serve: 200 once it is initialized. No
        limit: while the cache initializes a list with a limit and no selector goes to etcd instead;
        a label selector nothing carries keeps the answer empty and the list on the cache."""
        query = "resourceVersion=0&labelSelector=envtest.pyop.io%2Fcache-probe"
        status, _ = self.request("GET", f"{resource_path}?{query}")
        return status == 200

    def kubeconfig_dict(self, namespace: str = "default") -> dict[str, Any]:
        import base64

        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "envtest",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": "envtest", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": "envtest",
                    "context": {"cluster": "envtest", "user": "envtest", "namespace": namespace},
                }
            ],
            "current-context": "envtest",
            "preferences": {},
        }


# Control planes not stopped yet: a test process that exits without stopping one (an exception between
# start and its `with`, a KeyboardInterrupt) must not leave kube-apiserver and etcd running behind it.
_LIVE: weakref.WeakSet[ControlPlane] = weakref.WeakSet()


@atexit.register
def _stop_leftovers() -> None:
    for plane in list(_LIVE):
        plane.stop(timeout=5)


def _decode(raw: bytes) -> Any:
    with contextlib.suppress(ValueError):
        return json.loads(raw)
    return raw.decode(errors="replace")


def _message(body: Any) -> str:
    return body.get("message", str(body)) if isinstance(body, dict) else str(body)


def _signing_key_pair() -> tuple[bytes, bytes]:
    """A P-256 key pair for the service-account token signer: (PKCS#8 private PEM, public PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


__all__ = ["ControlPlane", "ControlPlaneError", "apiserver_version", "assets_dir", "free_port"]
