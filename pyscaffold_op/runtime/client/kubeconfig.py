"""Kubeconfig files read as client-go's clientcmd reads them.

* Several files (`$KUBECONFIG=a:b`) merge: the first file to name a cluster, user or context wins it
  whole (a later file's entry of the same name is ignored, even its fields the first lacks), and the
  first non-empty `current-context` wins. Missing files in the list are skipped.
* Relative paths (`certificate-authority`, `client-certificate`, `client-key`, `tokenFile`, and an exec
  `command` holding a `/`) resolve against the folder of the file that defined the entry.
* The context is `context` (`--context`) or `current-context`; the namespace is the context's, else
  `default`. A context naming a user that no file defines is anonymous, as in client-go.
* The checks of clientcmd's ConfirmUsable: a server; not both `certificate-authority` and its `-data`
  (nor client certificate/key file and data); a key with a certificate; one of token and basic auth;
  an exec plugin with command, a supported apiVersion and interactiveMode (v1beta1 defaults it).

YAML is read with YAML 1.1 rules (`yes` is true), as Go's yaml.v2 reads it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.runtime.client.errors import ConfigError
from pyscaffold_op.runtime.client.restconfig import ExecConfig, RestConfig

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


@dataclass
class _Entry:
    value: dict[str, Any]
    origin: Path


@dataclass
class MergedKubeconfig:
    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    current_context: str = ""
    files: list[Path] = field(default_factory=list)


def parse_yaml(text: str, source: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 1)
    try:
        return yaml.load(text)
    except YAMLError as err:
        raise ConfigError(f"cannot read kubeconfig {source}: {str(err).splitlines()[0]}") from err


def read_files(paths: Sequence[Path], *, explicit: bool = False) -> MergedKubeconfig:
    """Merge the files that exist (an `explicit` one must exist), first wins."""
    merged = MergedKubeconfig()
    for path in paths:
        try:
            text = path.read_text()
        except FileNotFoundError:
            if explicit:
                raise ConfigError(f"kubeconfig {path} does not exist") from None
            continue
        except OSError as err:
            raise ConfigError(f"cannot read kubeconfig {path}: {err}") from err
        except UnicodeDecodeError as err:  # a binary file: one line, not a traceback
            byte = err.object[err.start]
            raise ConfigError(
                f"kubeconfig {path}: not a YAML file (not {err.encoding} text: byte {byte:#04x} "
                f"at offset {err.start})"
            ) from None
        doc = parse_yaml(text, str(path)) if text.strip() else {}
        if not isinstance(doc, dict):
            raise ConfigError(f"cannot read kubeconfig {path}: not a mapping")
        merged.files.append(path)
        for key, target, inner in (
            ("clusters", merged.clusters, "cluster"),
            ("users", merged.users, "user"),
            ("contexts", merged.contexts, "context"),
        ):
            for item in doc.get(key) or []:
                if not isinstance(item, dict) or not item.get("name"):
                    raise ConfigError(f"cannot read kubeconfig {path}: an entry of {key} has no name")
                value = item.get(inner) or {}
                if not isinstance(value, dict):
                    raise ConfigError(
                        f"cannot read kubeconfig {path}: {key} {item['name']!r} is not a mapping"
                    )
                target.setdefault(str(item["name"]), _Entry(value, path))
        if not merged.current_context and doc.get("current-context"):
            merged.current_context = str(doc["current-context"])
    return merged


def rest_config(merged: MergedKubeconfig, context: str | None = None) -> RestConfig:
    """The RestConfig of `context` (else the current context) in merged kubeconfig files."""
    source = ", ".join(str(p) for p in merged.files) or "kubeconfig"
    name = context or merged.current_context
    if not name:
        raise ConfigError(f"{source}: no current-context set; pass --context")
    ctx_entry = merged.contexts.get(name)
    if ctx_entry is None:
        raise ConfigError(f'{source}: context "{name}" does not exist')
    ctx = ctx_entry.value
    cluster_name = str(ctx.get("cluster") or "")
    cluster_entry = merged.clusters.get(cluster_name)
    if cluster_entry is None:
        raise ConfigError(f'{source}: cluster "{cluster_name}" was not found for context "{name}"')
    cluster, cluster_dir = cluster_entry.value, cluster_entry.origin.resolve().parent
    user_name = str(ctx.get("user") or "")
    user_entry = merged.users.get(user_name)
    user, user_dir = (user_entry.value, user_entry.origin.resolve().parent) if user_entry else ({}, Path())
    where = f'user "{user_name}"'
    server = str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f'{source}: no server found for cluster "{cluster_name}"')
    ca_file, ca_data = (
        _path(cluster, "certificate-authority", cluster_dir),
        _data(cluster, "certificate-authority-data"),
    )
    if ca_file and ca_data:
        raise ConfigError(
            f"{source}: certificate-authority-data and certificate-authority are both specified "
            f'for "{cluster_name}"'
        )
    cert_file, cert_data = _path(user, "client-certificate", user_dir), _data(user, "client-certificate-data")
    key_file, key_data = _path(user, "client-key", user_dir), _data(user, "client-key-data")
    if cert_file and cert_data:
        raise ConfigError(f"{source}: client-cert-data and client-cert are both specified for {where}")
    if key_file and key_data:
        raise ConfigError(f"{source}: client-key-data and client-key are both specified for {where}")
    if (cert_file or cert_data) and not (key_file or key_data):
        raise ConfigError(f"{source}: client-key-data or client-key must be specified for {where}")
    for path in (ca_file, cert_file, key_file):
        if path and not Path(path).is_file():
            raise ConfigError(f"{source}: unable to read {path} (named by {where} or its cluster)")
    token, username, password = user.get("token"), user.get("username"), user.get("password")
    if token and (username or password):
        raise ConfigError(
            f"{source}: more than one authentication method found for {where}; found [token basicAuth]"
        )
    if user.get("auth-provider"):
        raise ConfigError(
            f"{source}: {where} uses an auth-provider, which pyop's runtime does not support; use an exec "
            "credential plugin (client-go removed the gcp and azure providers in 1.26 for the same reason)"
        )
    return RestConfig(
        server=server,
        namespace=str(ctx.get("namespace") or "default"),
        ca_data=ca_data,
        ca_file=ca_file,
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=cluster.get("tls-server-name") or None,
        cert_data=cert_data,
        cert_file=cert_file,
        key_data=key_data,
        key_file=key_file,
        token=str(token) if token else None,
        token_file=_path(user, "tokenFile", user_dir),
        username=str(username) if username else None,
        password=str(password) if password else None,
        exec=_exec(user.get("exec"), user_dir, source, where),
        proxy_url=cluster.get("proxy-url") or None,
        source_file=source,
        context_name=name,
    )


def _path(section: dict[str, Any], key: str, base: Path) -> str | None:
    value = section.get(key)
    if not value:
        return None
    path = Path(str(value))
    return str(path if path.is_absolute() else base / path)


def _data(section: dict[str, Any], key: str) -> bytes | None:
    value = section.get(key)
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as err:
        raise ConfigError(f"kubeconfig {key} is not valid base64: {err}") from err


def _exec(spec: Any, base: Path, source: str, where: str) -> ExecConfig | None:
    if not spec:
        return None
    if not isinstance(spec, dict):
        raise ConfigError(f"{source}: exec of {where} is not a mapping")
    command = str(spec.get("command") or "")
    if not command:
        raise ConfigError(
            f"{source}: command must be specified for {where} to use exec authentication plugin"
        )
    api_version = str(spec.get("apiVersion") or "")
    if not api_version:
        raise ConfigError(
            f"{source}: apiVersion must be specified for {where} to use exec authentication plugin"
        )
    if api_version not in EXEC_API_VERSIONS:
        raise ConfigError(f"{source}: exec plugin of {where}: unsupported apiVersion {api_version!r}")
    mode = str(spec.get("interactiveMode") or "")
    if not mode and api_version.endswith("/v1beta1"):
        mode = "IfAvailable"  # clientcmd's defaulting for v1beta1; v1 requires it
    if not mode:
        raise ConfigError(
            f"{source}: interactiveMode must be specified for {where} to use exec authentication plugin"
        )
    if mode not in ("Never", "IfAvailable", "Always"):
        raise ConfigError(f"{source}: invalid interactiveMode for {where}: {mode!r}")
    env = []
    for item in spec.get("env") or []:
        if not isinstance(item, dict) or not item.get("name"):
            raise ConfigError(
                f"{source}: env variable name must be specified for {where} to use exec authentication plugin"
            )
        env.append((str(item["name"]), str(item.get("value") or "")))
    if "/" in command and not Path(command).is_absolute():
        command = str(base / command)
    return ExecConfig(
        command=command,
        api_version=api_version,
        args=tuple(str(a) for a in spec.get("args") or ()),
        env=tuple(env),
        install_hint=str(spec.get("installHint") or ""),
        provide_cluster_info=bool(spec.get("provideClusterInfo")),
        interactive_mode=mode,
    )
