"""Built-in Kubernetes API types as pydantic models, one module per group/version (`core_v1`, `apps_v1`,
`batch_v1`, ...), generated from the Kubernetes OpenAPI schemas by `python -m pyscaffold_op.dev.models`.

Import the module you need (`from pyscaffold_op.models.core_v1 import Pod`); this package imports none
of them, so the CLI and a manager pay only for the groups they use. Top-level kinds are `KubeObject`s
like the user's own `CustomResource`s: same `ObjectMeta`, same `to_dict()`, same runtime support.
"""

MODULES = (
    "admissionregistration_v1",
    "apiextensions_v1",
    "apps_v1",
    "autoscaling_v1",
    "autoscaling_v2",
    "batch_v1",
    "coordination_v1",
    "core_v1",
    "meta_v1",
    "networking_v1",
    "policy_v1",
    "rbac_v1",
    "storage_v1",
)
