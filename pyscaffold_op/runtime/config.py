"""`load_config`: find cluster credentials the way kubectl and controller-runtime do."""

from __future__ import annotations

import os
from pathlib import Path

from lightkube import KubeConfig
from lightkube.core.exceptions import ConfigError as LightkubeConfigError

from pyscaffold_op.runtime.errors import ConfigError

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def load_config(kubeconfig: str | os.PathLike[str] | None = None, context: str | None = None) -> KubeConfig:
    """The cluster configuration, tried in order:

    1. `kubeconfig` (the `--kubeconfig` flag), 2. `$KUBECONFIG` (first existing file of the list),
    3. `~/.kube/config`, 4. the in-cluster service account (`KUBERNETES_SERVICE_HOST` + token file).

    `context` picks a context other than the current one. Raises `ConfigError` with one line naming what
    was tried when nothing works.
    """
    tried: list[str] = []
    path: Path | None = None
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        if not path.is_file():
            raise ConfigError(f"kubeconfig {path} does not exist")
    else:
        env = os.environ.get("KUBECONFIG", "")
        for entry in filter(None, env.split(os.pathsep)):
            tried.append(f"$KUBECONFIG={entry}")
            if Path(entry).expanduser().is_file():
                path = Path(entry).expanduser()
                break
        if path is None:
            home = Path("~/.kube/config").expanduser()
            tried.append(str(home))
            if home.is_file():
                path = home
    if path is not None:
        try:
            config = KubeConfig.from_file(path)
        except (LightkubeConfigError, OSError, ValueError, KeyError, TypeError) as err:
            raise ConfigError(f"cannot read kubeconfig {path}: {err}") from err
        return _with_context(config, context, str(path))
    tried.append("in-cluster service account")
    if os.environ.get("KUBERNETES_SERVICE_HOST") and Path(SERVICE_ACCOUNT_DIR, "token").is_file():
        try:
            return _with_context(KubeConfig.from_service_account(SERVICE_ACCOUNT_DIR), context, "in-cluster")
        except (LightkubeConfigError, OSError, KeyError) as err:
            raise ConfigError(f"in-cluster configuration failed: {err}") from err
    raise ConfigError(
        "no Kubernetes configuration found (tried "
        + ", ".join(tried)
        + "); pass --kubeconfig or set KUBECONFIG"
    )


def _with_context(config: KubeConfig, context: str | None, source: str) -> KubeConfig:
    if context is not None:
        config.current_context = context
    try:
        config.get()  # validate now, so a bad context fails at startup with a clear line
    except LightkubeConfigError as err:
        raise ConfigError(f"{source}: {err}") from err
    except KeyError as err:
        raise ConfigError(f"{source}: context refers to missing cluster or user {err}") from err
    return config
