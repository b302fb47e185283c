"""The emulator's second door to the runtime, beside the pytest plugin: `Environment.config`, the
runtime's `RestConfig` for a running emulator (what `Manager(env.config, ...)` and
`new_client(env.config)` take in generated projects' tests).

The rest of the emulator never imports the runtime (docs/design.md, "Parts"; `tests/test_walls.py`);
an `Environment` describes itself as plain data (`url`, `token`, `namespace`, `context_name`,
`kubeconfig_path`) and this module, imported only when `env.config` is read, turns that into the
runtime's type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscaffold_op.runtime import RestConfig

if TYPE_CHECKING:
    from pyscaffold_op.envtest.environment import Environment


def rest_config(env: Environment, token: str | None = None) -> RestConfig:
    """The runtime's `RestConfig` for `env`: its URL, namespace `default`, the admin token and (over
    HTTPS) the admin's client certificate; or only `token` when given (another identity)."""
    path = env.kubeconfig_path
    admin = token is None
    return RestConfig(
        server=env.url,
        namespace=env.namespace,
        token=env.token if admin else token,
        ca_data=env.ca_pem,
        cert_data=env.client_cert_pem if admin else None,
        key_data=env.client_key_pem if admin else None,
        source_file=str(path) if path.name else None,
        context_name=env.context_name,
    )


__all__ = ["RestConfig", "rest_config"]
