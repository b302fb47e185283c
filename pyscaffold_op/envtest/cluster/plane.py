"""`Cluster`: the real control plane plus what makes it a cluster, as kind and kubeadm run it.

Beside etcd and kube-apiserver (`controlplane.ControlPlane`) it runs kube-controller-manager (every
default controller, each with its own ServiceAccount's credentials, the ServiceAccount signing key,
the root CA and the CSR signer), kube-scheduler and kwok, which plays the kubelet of fake nodes
(`cluster.kwok`). The API server runs with its default admission plugins (ServiceAccount among them),
Node and RBAC authorization, and a CA of its own: the admin is `kubernetes-admin` in
`system:masters` with a client certificate, as kind's kubeconfig names it, and each component
authenticates with a certificate of the name kubeadm gives it.

Ready means: the API server answers, the node is Ready, the scheduler holds its lease (its caches are
synced), and the controller-manager has made the `default` namespace's ServiceAccount and root CA
ConfigMap, so a Pod can be created, scheduled and run as soon as `start()` returns.
"""

from __future__ import annotations

import base64
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyscaffold_op import yamlio
from pyscaffold_op.envtest.cluster import kwok
from pyscaffold_op.envtest.controlplane import BINARIES, ControlPlane, ControlPlaneError, free_port

if TYPE_CHECKING:
    from pyscaffold_op.envtest.server.pki import Authority

CLUSTER_BINARIES = (*BINARIES, "kube-controller-manager", "kube-scheduler", "kwok")
ADMIN = "kubernetes-admin"  # kind's and kubeadm's admin, in system:masters
MASTERS = "system:masters"
SERVICE_CIDR = "10.96.0.0/16"  # kind's
POD_CIDR = "10.244.0.0/16"  # kind's; the controller-manager gives each node a /24 of it
ISSUER = "https://kubernetes.default.svc.cluster.local"


@dataclass(eq=False)
class Cluster(ControlPlane):
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with `nodes` fake nodes
    (the first named `envtest-node`, as the emulator's kubelet simulator's)."""

    binaries: tuple[str, ...] = field(default=CLUSTER_BINARIES, init=False)
    nodes: int = 1
    # what runs beside the API server: a judge of the controller-manager alone may leave out the
    # scheduler and kwok (Pods then stay unscheduled, as on a bare API server)
    components: tuple[str, ...] = ("kube-controller-manager", "kube-scheduler", "kwok")
    start_timeout: float = 120.0
    _pki: Authority | None = None  # the cluster's CA, made at start

    def node_names(self) -> list[str]:
        return [kwok.NODE_NAME if i == 0 else f"{kwok.NODE_NAME}-{i + 1}" for i in range(self.nodes)]

    # -- the API server of a cluster -------------------------------------------------------------------

    def _apiserver_args(self, certs: Path) -> list[str]:
        from cryptography.hazmat.primitives import serialization

        from pyscaffold_op.envtest.server.pki import Authority

        assert self._dir is not None
        ca = self._pki = Authority.new("kubernetes")
        ca_key = ca.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        (certs / "ca.crt").write_bytes(ca.cert_pem)
        (certs / "ca.key").write_bytes(ca_key)
        serving = ca.serving(
            hosts=(
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ),
            ips=(self.host, "10.96.0.1"),
        )
        (certs / "apiserver.crt").write_bytes(serving.cert_pem)
        (certs / "apiserver.key").write_bytes(serving.key_pem)
        admin = ca.client(ADMIN, (MASTERS,))
        self.client_cert_pem, self.client_key_pem = admin.cert_pem, admin.key_pem
        self.ca_pem = ca.cert_pem
        self._ssl = ssl.create_default_context(cadata=ca.cert_pem.decode())
        tokens = self._dir / "tokens.csv"
        tokens.write_text(f'{self.token},{ADMIN},{ADMIN},"{MASTERS}"\n')
        return [
            f"--client-ca-file={certs / 'ca.crt'}",
            f"--tls-cert-file={certs / 'apiserver.crt'}",
            f"--tls-private-key-file={certs / 'apiserver.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",  # kubeadm's, beside the default plugins
            f"--token-auth-file={tokens}",
            f"--service-account-issuer={ISSUER}",
        ]

    # -- the components ------------------------------------------------------------------------------

    def _kubeconfig(self, name: str, user: str, groups: tuple[str, ...] = ()) -> Path:
        """A kubeconfig file for a component, with a client certificate for `user` in `groups`."""
        assert self._dir is not None and self._pki is not None
        cert = self._pki.client(user, groups)
        path = self._dir / f"{name}.kubeconfig"
        path.write_text(
            yamlio.dump(
                _kubeconfig(self.url, self.ca_pem, cert.cert_pem, cert.key_pem, name), sort_keys=False
            )
        )
        return path

    def _start_components(self, assets: Path, deadline: float) -> None:
        assert self._dir is not None
        certs = self._dir / "certs"
        if "kwok" in self.components:
            for name in self.node_names():
                self._create("/api/v1/nodes", kwok.node(name))
        qps = ["--kube-api-qps=200", "--kube-api-burst=400"]  # many tests at once on one cluster
        if "kube-controller-manager" in self.components:
            self._start_controller_manager(assets, certs, qps)
        if "kube-scheduler" in self.components:
            self._start_scheduler(assets, qps)
        if "kwok" in self.components:
            self._start_kwok(assets)
        self._wait_cluster(deadline)

    def _start_controller_manager(self, assets: Path, certs: Path, qps: list[str]) -> None:
        self._spawn(
            "kube-controller-manager",
            [
                str(assets / "kube-controller-manager"),
                f"--kubeconfig={self._kubeconfig('controller-manager', 'system:kube-controller-manager')}",
                f"--bind-address={self.host}",
                "--secure-port=0",
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={certs / 'sa.key'}",
                f"--root-ca-file={certs / 'ca.crt'}",
                f"--cluster-signing-cert-file={certs / 'ca.crt'}",
                f"--cluster-signing-key-file={certs / 'ca.key'}",
                "--controllers=*,bootstrapsigner,tokencleaner",
                "--allocate-node-cidrs=true",
                f"--cluster-cidr={POD_CIDR}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                *qps,
            ],
        )

    def _start_scheduler(self, assets: Path, qps: list[str]) -> None:
        self._spawn(
            "kube-scheduler",
            [
                str(assets / "kube-scheduler"),
                f"--kubeconfig={self._kubeconfig('scheduler', 'system:kube-scheduler')}",
                f"--bind-address={self.host}",
                "--secure-port=0",
                # the lease it takes once its caches are synced is how `start` knows it schedules
                "--leader-elect=true",
                "--leader-elect-lease-duration=60s",
                "--leader-elect-renew-deadline=40s",
                *qps,
            ],
        )

    def _start_kwok(self, assets: Path) -> None:
        assert self._dir is not None
        config = self._dir / "kwok.yaml"
        config.write_text(kwok.configuration(POD_CIDR))
        self._spawn(
            "kwok",
            [
                str(assets / "kwok"),
                f"--kubeconfig={self._kubeconfig('kwok', 'kwok-controller', (MASTERS,))}",
                f"--config={config}",
                "--manage-all-nodes=true",
                "--node-lease-duration-seconds=40",
            ],
        )

    def _create(self, path: str, obj: dict[str, Any]) -> None:
        status, body = self.request("POST", path, obj)
        if status not in (200, 201, 409):
            raise ControlPlaneError(f"POST {path}: the API server answered {status}: {body}")

    def _wait_cluster(self, deadline: float) -> None:
        checks: dict[str, tuple[str, Any]] = {
            "the node is Ready": ("kwok", lambda: all(self._node_ready(n) for n in self.node_names())),
            "the scheduler holds its lease": ("kube-scheduler", lambda: self._lease_held("kube-scheduler")),
            "the controller-manager made the default ServiceAccount": (
                "kube-controller-manager",
                lambda: self._exists("/api/v1/namespaces/default/serviceaccounts/default"),
            ),
            "the controller-manager published the root CA": (
                "kube-controller-manager",
                lambda: self._exists("/api/v1/namespaces/default/configmaps/kube-root-ca.crt"),
            ),
        }
        pending = {what: check for what, (part, check) in checks.items() if part in self.components}
        while pending:
            self.check_running()
            for what, check in list(pending.items()):
                if check():
                    del pending[what]
            if not pending:
                return
            if time.monotonic() > deadline:
                names = ", ".join(pending)
                raise ControlPlaneError(
                    f"the cluster was not ready after {self.start_timeout:.0f}s (waiting until {names}):\n"
                    + "\n".join(f"-- {n}:\n{self.log_tail(n, 8)}" for n in self._names[2:])
                )
            time.sleep(0.1)

    def _exists(self, path: str) -> bool:
        return self.request("GET", path)[0] == 200

    def _node_ready(self, name: str) -> bool:
        status, node = self.request("GET", f"/api/v1/nodes/{name}")
        if status != 200:
            return False
        conditions = (node.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def _lease_held(self, name: str) -> bool:
        status, lease = self.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}"
        )
        return status == 200 and bool((lease.get("spec") or {}).get("holderIdentity"))

    def kubeconfig_dict(self, namespace: str = "default") -> dict[str, Any]:
        """kind's kubeconfig: the cluster's CA and the client certificate of `kubernetes-admin`."""
        config = _kubeconfig(self.url, self.ca_pem, self.client_cert_pem, self.client_key_pem, "envtest")
        config["contexts"][0]["context"]["namespace"] = namespace
        return config


def _kubeconfig(url: str, ca: bytes, cert: bytes, key: bytes, name: str) -> dict[str, Any]:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url, "certificate-authority-data": b64(ca)}}],
        "users": [
            {"name": name, "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}
        ],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
    }


__all__ = ["ADMIN", "CLUSTER_BINARIES", "Cluster", "free_port"]
