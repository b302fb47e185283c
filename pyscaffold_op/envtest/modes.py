"""What `envtest` can run, by name: the one list `Environment(mode=...)`, `PYOP_ENVTEST`, pytest's
`--envtest` and `pyop envtest serve` share (imported by the pytest plugin, so it imports nothing)."""

from __future__ import annotations

EMULATOR, REAL, CLUSTER = "emulator", "real", "cluster"
MODES = (EMULATOR, REAL, CLUSTER)
# each mode but the emulator as skip reasons and EmulatorOnly name it
LABELS = {
    REAL: "real mode (kube-apiserver + etcd)",
    CLUSTER: "cluster mode (kube-apiserver, kube-controller-manager, kube-scheduler, kwok)",
}

__all__ = ["CLUSTER", "EMULATOR", "LABELS", "MODES", "REAL"]
