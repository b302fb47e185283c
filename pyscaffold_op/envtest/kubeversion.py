"""The Kubernetes release the emulator is: its API, its built-in kinds' data (OpenAPI, protobuf, Table
columns, field lists) and the conformance corpus are kube-apiserver's at this release.

`hack/oracles/versions.env`'s KUBERNETES_VERSION pins the real tools the emulator is judged by; this
constant must name the same release (tests/envtest/test_version.py reads both), and everything in the
package that reports a version reads it here: `/version`, the simulated kubelet's Node, `pyop version`.
"""

from __future__ import annotations

KUBERNETES_VERSION = "v1.37.2"


def major_minor() -> tuple[str, str]:
    """("1", "37") of "v1.37.2"."""
    major, minor, *_ = KUBERNETES_VERSION.lstrip("v").split(".")
    return major, minor
