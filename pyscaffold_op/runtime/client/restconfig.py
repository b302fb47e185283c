"""`RestConfig`: how to reach one API server (client-go's `rest.Config`): server URL, TLS, credentials.

Built by `load_config` (kubeconfig files or the in-cluster service account) or by hand:
`RestConfig(server="https://10.0.0.1:6443", ca_data=pem, token="...")`. Credentials are sent only over
TLS (`https://`), as client-go does: a kubeconfig's token is ignored for an `http://` server.
"""

from __future__ import annotations

import dataclasses
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pyscaffold_op.runtime.client.errors import ConfigError


@dataclass(frozen=True)
class ExecConfig:
    """A `users[].user.exec` credential plugin (client.authentication.k8s.io/v1 or v1beta1)."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"


@dataclass(frozen=True)
class RestConfig:
    server: str
    namespace: str = "default"
    # TLS: the CA to trust (PEM bytes or a file), else the system's roots
    ca_data: bytes | None = None
    ca_file: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    # client certificate (PEM bytes or files)
    cert_data: bytes | None = None
    cert_file: str | None = None
    key_data: bytes | None = field(default=None, repr=False)  # secrets stay out of logs (client-go redacts)
    key_file: str | None = None
    # credentials: one of token (token_file re-read as it rotates), basic auth, exec plugin
    token: str | None = field(default=None, repr=False)
    token_file: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    exec: ExecConfig | None = None
    proxy_url: str | None = None
    # where it came from, for messages: `kubeconfig /home/me/.kube/config, context kind-dev`
    source_file: str | None = None
    context_name: str | None = None

    def __post_init__(self) -> None:
        server = self.server.strip()
        if not server:
            raise ConfigError("the cluster has no server URL")
        if "://" not in server:  # client-go's DefaultServerURL: a bare host:port is https
            server = "https://" + server
        object.__setattr__(self, "server", server.rstrip("/"))
        if self.insecure and (self.ca_data or self.ca_file):
            raise ConfigError(
                "specifying a root certificates file with the insecure flag is not allowed "
                "(certificate-authority and insecure-skip-tls-verify)"
            )
        if self.proxy_url and urlsplit(self.proxy_url).scheme not in ("http", "https"):
            raise ConfigError(
                f"proxy-url {self.proxy_url!r}: only http:// and https:// proxies are supported "
                "(aiohttp has no SOCKS proxy)"
            )

    @property
    def secure(self) -> bool:
        """TLS to the server: only then are credentials sent (client-go's IsConfigTransportTLS)."""
        return self.server.startswith("https://")

    def replace(self, **changes: Any) -> RestConfig:
        return dataclasses.replace(self, **changes)

    def ssl_context(self) -> ssl.SSLContext | None:
        """The client TLS context for an https server (None for http)."""
        if not self.secure:
            return None
        try:
            if self.ca_data or self.ca_file:
                ctx = ssl.create_default_context(
                    cafile=self.ca_file, cadata=self.ca_data.decode() if self.ca_data else None
                )
            else:
                ctx = ssl.create_default_context()
            if self.insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            cert = self.cert_data or (Path(self.cert_file).read_bytes() if self.cert_file else None)
            key = self.key_data or (Path(self.key_file).read_bytes() if self.key_file else None)
        except (OSError, ssl.SSLError, ValueError) as err:
            raise ConfigError(f"TLS configuration for {self.server}: {err}") from err
        if cert is not None or key is not None:
            if cert is None or key is None:
                raise ConfigError("a client certificate needs both the certificate and its key")
            from pyscaffold_op.runtime.certs.certs import load_pem_chain

            try:
                load_pem_chain(ctx, cert, key)
            except (OSError, ssl.SSLError) as err:
                raise ConfigError(f"client certificate for {self.server}: {err}") from err
        return ctx


def as_rest_config(config: Any) -> RestConfig:
    """`config` as a RestConfig: one already, or another library's, converted by its adapter."""
    if isinstance(config, RestConfig):
        return config
    from pyscaffold_op.runtime.adapters import adapter_for

    try:
        adapter = adapter_for(config)
    except TypeError:
        raise TypeError(
            f"expected a RestConfig (from pyscaffold_op.runtime.load_config()), got {type(config).__name__}"
        ) from None
    return adapter.rest_config(config)
