"""What kube-apiserver itself writes into a fresh cluster beyond the default namespaces: the
`default/kubernetes` Service, with the Endpoints and EndpointSlice of the API server's address."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store

KUBERNETES_CLUSTER_IP = "10.96.0.1"  # the first address of the default service CIDR


def apiserver_objects(store: Store, host: str, port: int) -> None:
    """Create the `kubernetes` Service and its endpoints unless they exist (idempotent)."""
    labels = {"component": "apiserver", "provider": "kubernetes"}
    if store.find(("", "services"), "default", "kubernetes") is None:
        store.create(
            store.info("", "v1", "services"),
            "default",
            {
                "metadata": {"name": "kubernetes", "labels": labels},
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": KUBERNETES_CLUSTER_IP,
                    "clusterIPs": [KUBERNETES_CLUSTER_IP],
                    "ipFamilies": ["IPv4"],
                    "ipFamilyPolicy": "SingleStack",
                    "internalTrafficPolicy": "Cluster",
                    "sessionAffinity": "None",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
                },
            },
            manager="kube-apiserver",
        )
    if store.find(("", "endpoints"), "default", "kubernetes") is None:
        store.create(
            store.info("", "v1", "endpoints"),
            "default",
            {
                "metadata": {
                    "name": "kubernetes",
                    "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
                },
                "subsets": [
                    {
                        "addresses": [{"ip": host}],
                        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
                    }
                ],
            },
            manager="kube-apiserver",
        )
    if store.find(("discovery.k8s.io", "endpointslices"), "default", "kubernetes") is None:
        store.create(
            store.info("discovery.k8s.io", "v1", "endpointslices"),
            "default",
            {
                "metadata": {"name": "kubernetes", "labels": {"kubernetes.io/service-name": "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [host], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
            manager="kube-apiserver",
        )
