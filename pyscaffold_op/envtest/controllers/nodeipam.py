"""The node IPAM controller's range allocator (kube-controller-manager with `--allocate-node-cidrs`, as
kind and kubeadm clusters run it): each Node without one gets the lowest free /24 of the cluster CIDR
10.244.0.0/16 as `spec.podCIDR` and `spec.podCIDRs`; a deleted Node's range is free again. The kubelet
simulator gives its Pods addresses in their node's range."""

from __future__ import annotations

import copy

from pyscaffold_op.envtest.controllers.base import SimulatedController

CLUSTER_CIDR_PREFIX = "10.244"  # 10.244.0.0/16, node mask /24: 256 node ranges


def node_range(index: int) -> str:
    return f"{CLUSTER_CIDR_PREFIX}.{index}.0/24"


class NodeIpamController(SimulatedController):
    primary = ("", "v1", "nodes")

    def reconcile(self, namespace: str, name: str) -> None:
        del namespace
        node = self.get(self.primary, "", name)
        if node is None or node["metadata"].get("deletionTimestamp"):
            return
        spec = node.get("spec") or {}
        if spec.get("podCIDR") or spec.get("podCIDRs"):
            return
        taken = {
            (n.get("spec") or {}).get("podCIDR")
            for n in self.list(self.primary)
            if n["metadata"]["name"] != name
        }
        free = next((node_range(i) for i in range(256) if node_range(i) not in taken), None)
        if free is None:
            return  # the cluster CIDR is full: the real allocator records CIDRNotAvailable
        spec = copy.deepcopy(spec)
        spec["podCIDR"] = free
        spec["podCIDRs"] = [free]
        self.update(self.primary, {**node, "spec": spec})
