"""`load_config`: find cluster credentials the way controller-runtime's `config.GetConfig` does."""

from __future__ import annotations

import os
from pathlib import Path

from pyscaffold_op.runtime.client.errors import ConfigError
from pyscaffold_op.runtime.client.kubeconfig import read_files, rest_config
from pyscaffold_op.runtime.client.restconfig import RestConfig

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def load_config(kubeconfig: str | os.PathLike[str] | None = None, context: str | None = None) -> RestConfig:
    """The cluster configuration, tried in controller-runtime's order:

    1. `kubeconfig` (the `--kubeconfig` flag): that file, which must exist;
    2. `$KUBECONFIG` when set: its files merged (first wins; missing ones skipped);
    3. else the in-cluster service account (`KUBERNETES_SERVICE_HOST`/`_PORT` and the token file),
       then `~/.kube/config`.

    `context` picks a context other than the kubeconfig's current one. Raises `ConfigError` with one
    line naming what was tried when nothing works.
    """
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        return rest_config(read_files([path], explicit=True), context)
    env = os.environ.get("KUBECONFIG", "")
    tried: list[str] = []
    if env:
        paths = list(dict.fromkeys(Path(p).expanduser() for p in env.split(os.pathsep) if p))
        merged = read_files(paths)
        if merged.files:
            return rest_config(merged, context)
        tried += [f"$KUBECONFIG={p}" for p in paths]
    else:
        try:
            return in_cluster_config()
        except ConfigError as err:  # controller-runtime goes on to ~/.kube/config
            tried.append(f"in-cluster service account ({err})")
        home = Path("~/.kube/config").expanduser()
        merged = read_files([home])
        if merged.files:
            return rest_config(merged, context)
        tried.append(str(home))
    raise ConfigError(
        "no Kubernetes configuration found (tried "
        + ", ".join(tried)
        + "); pass --kubeconfig or set KUBECONFIG"
    )


def in_cluster_config(directory: str | os.PathLike[str] | None = None) -> RestConfig:
    """client-go's InClusterConfig: the service host and port from the environment, the service
    account's token file (re-read as the kubelet rotates it) and CA, the pod's namespace."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
            "must be defined"
        )
    folder = Path(directory or SERVICE_ACCOUNT_DIR)
    token = folder / "token"
    try:
        token.read_text()
    except OSError as err:
        raise ConfigError(f"in-cluster configuration: cannot read {token}: {err}") from err
    ca = folder / "ca.crt"
    try:
        namespace = (folder / "namespace").read_text().strip()
    except OSError:
        namespace = ""
    hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return RestConfig(
        server=f"https://{hostport}",
        namespace=namespace or "default",
        ca_file=str(ca) if ca.is_file() else None,
        token_file=str(token),
        source_file="in-cluster",
    )
