"""`pyop envtest serve` (owned by the API server emulator).

aiohttp and the emulator are imported inside the command so `pyop --help` stays fast. Every failure
to start is one line on stderr and exit status 2 (`PyopError`), naming the flag to blame.

One command, several servers behind it (`SERVERS`): the emulator (the default); with `--bare` the
emulator as envtest's bare kube-apiserver (`Environment(bare=True)`: no kube-controller-manager
controllers); with `--real` the real kube-apiserver + etcd (`Environment(mode="real")`); with
`--cluster` a cluster of real processes (kube-apiserver, kube-controller-manager, kube-scheduler,
kwok: `Environment(mode="cluster")`). What differs between them is data in a `Server` row (what runs
Pods and controllers, how it authorizes, what it is called), so a server is one row and one flag, not
a second command.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

import typer

app = typer.Typer(help="Run the in-process Kubernetes API server emulator.", no_args_is_help=True)


@dataclass(frozen=True)
class Server:
    """One kind of server `serve` can run."""

    name: str  # how messages call it
    flag: str | None  # the flag choosing it (None: the default)
    mode: str  # `Environment(mode=...)`: emulator, real or cluster
    # the kubelet and workload controllers: the emulator's simulations, on unless turned off
    # ("optional"); none at all ("none"); or the server's own, always on ("own", with what runs them)
    simulations: Literal["optional", "none", "own"]
    authorization: str  # its --authorization-mode default
    authorizations: tuple[str, ...]  # the --authorization-mode values it takes
    tls_only: bool  # always HTTPS
    bare: bool = False  # the emulator without kube-controller-manager's controllers
    own: tuple[str, str] = ("", "")  # what runs Pods and what runs the controllers ("own" only)

    @property
    def processes(self) -> bool:
        """Runs binaries (from --assets) rather than the in-process emulator."""
        return self.mode != "emulator"


_BOTH = ("AlwaysAllow", "RBAC")
EMULATOR = Server("the emulator", None, "emulator", "optional", "AlwaysAllow", _BOTH, False)
BARE = Server("the bare emulator", "--bare", "emulator", "none", "AlwaysAllow", _BOTH, False, bare=True)
REAL = Server("the real kube-apiserver", "--real", "real", "none", "RBAC", ("RBAC",), True)
CLUSTER = Server(
    "--cluster",
    "--cluster",
    "cluster",
    "own",
    "RBAC",
    ("RBAC",),
    True,
    own=("kwok's fake node, which runs Pods", "kube-controller-manager, whose controllers act"),
)
SERVERS = (EMULATOR, BARE, REAL, CLUSTER)


@app.command()
def serve(
    crds: list[Path] = typer.Option(
        [], "--crds", metavar="<path>", help="CRD file or folder to install (repeatable)."
    ),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port)."),
    kubeconfig_out: Path | None = typer.Option(
        None, "--kubeconfig-out", help="Write the kubeconfig here (default: a temp file)."
    ),
    kubelet: bool | None = typer.Option(
        None,
        "--kubelet/--no-kubelet",
        help="Simulate a kubelet that runs Pods (default: on for the emulator and --cluster, whose kwok "
        "runs them; --real and --bare have none).",
    ),
    workloads: bool | None = typer.Option(
        None,
        "--workloads/--no-workloads",
        help="Simulate the workload controllers (Deployments, Jobs, ServiceAccounts, EndpointSlices...; "
        "default: on for the emulator and --cluster, whose controller-manager runs them; --real and --bare "
        "have none).",
    ),
    webhooks: list[Path] = typer.Option(
        [],
        "--webhooks",
        metavar="<path>",
        help="Webhook configurations to install, e.g. config/webhook/manifests.yaml (repeatable).",
    ),
    webhook_service: list[str] = typer.Option(
        [],
        "--webhook-service",
        metavar="<namespace/name=url>",
        help="NAMESPACE/NAME=URL: send calls for that Service to URL "
        "(e.g. system/webhook-service=https://127.0.0.1:9443; repeatable).",
    ),
    webhook_ca: Path | None = typer.Option(
        None,
        "--webhook-ca",
        metavar="<path>",
        help="CA file to trust for those Services (`make run` writes its ca.crt; the emulator reads it at "
        "each call, --real re-installs the webhooks when it changes).",
    ),
    tls: bool = typer.Option(
        True,
        "--tls/--no-tls",
        help="Serve HTTPS with a CA made at start; the kubeconfig carries it and an admin client "
        "certificate (CN=kubernetes-admin, O=system:masters), as a kind or kubeadm cluster's does. "
        "--no-tls: plain HTTP and a bearer token (the emulator only).",
    ),
    bare: bool = typer.Option(
        False,
        "--bare",
        help="Serve as envtest's bare kube-apiserver: no kubelet, no workloads and none of "
        "kube-controller-manager's controllers (no garbage collection; a deleted namespace stays "
        "Terminating until its /finalize is PUT). For controller-runtime's envtest with "
        "USE_EXISTING_CLUSTER=true (docs/envtest.md).",
    ),
    authorization_mode: str | None = typer.Option(
        None,
        "--authorization-mode",
        metavar="<mode>",
        help="AlwaysAllow (the emulator's default), or RBAC: authorize every request against the stored "
        "Roles and bindings (as kube-apiserver's --authorization-mode=RBAC; implies --tls; "
        "--real's only mode).",
    ),
    real: bool = typer.Option(
        False,
        "--real",
        help="Run the real kube-apiserver + etcd instead of the emulator (binaries from --assets), "
        "with the same kubeconfig output, --crds and webhooks.",
    ),
    cluster: bool = typer.Option(
        False,
        "--cluster",
        help="Serve a cluster of real processes instead of the emulator: etcd, kube-apiserver, "
        "kube-controller-manager, kube-scheduler and kwok's fake node (kind's kubeconfig: TLS, "
        "kubernetes-admin's client certificate; RBAC).",
    ),
    assets: Path | None = typer.Option(
        None,
        "--assets",
        metavar="<dir>",
        help="With --real or --cluster: the folder holding the binaries (default $PYOP_ENVTEST_ASSETS, "
        "else $KUBEBUILDER_ASSETS; `make oracles` builds them into bin/ of a pyop checkout).",
    ),
) -> None:
    """Serve an API server until Ctrl-C; prints the kubeconfig path (use it with kubectl or `make run`)."""
    from pyscaffold_op.errors import PyopError, ValidationError

    chosen = [row for row, asked in ((BARE, bare), (REAL, real), (CLUSTER, cluster)) if asked]
    if len(chosen) > 1:
        raise ValidationError(f"{' and '.join(str(row.flag) for row in chosen)}: choose one server")
    server = chosen[0] if chosen else EMULATOR
    if not 0 <= port <= 65535:
        raise ValidationError(f"--port {port}: must be a port number from 0 to 65535 (0: any free port)")
    for p in crds:
        if not p.exists():
            raise ValidationError(f"--crds {p}: no such file or folder")
    for p in webhooks:
        if not p.exists():
            raise ValidationError(f"--webhooks {p}: no such file or folder")
    services = []
    for spec in webhook_service:
        ref, sep, url = spec.partition("=")
        ns, slash, name = ref.partition("/")
        if not (sep and slash and ns and name and url.startswith("https://")):
            raise ValidationError(f"--webhook-service {spec}: expected NAMESPACE/NAME=https://HOST:PORT")
        services.append((ns, name, url))
    simulated = _simulated(server, kubelet=kubelet, workloads=workloads)
    access = _access(server, tls, authorization_mode)
    if server.processes:
        _check_binaries(server, assets)
        if port:  # kube-apiserver would only log it: say it here, before starting anything
            _check_port(port)
    elif assets is not None:
        raise ValidationError(f"--assets {assets}: only --real and --cluster run binaries")
    try:
        _serve(
            server,
            crds,
            port,
            kubeconfig_out,
            simulated,
            Webhooks(webhooks, services, webhook_ca),
            access,
            assets,
        )
    except KeyboardInterrupt:  # Ctrl-C while importing or starting: nothing is serving yet
        raise PyopError("interrupted while starting; nothing is served") from None


def _check_binaries(server: Server, assets: Path | None) -> None:
    """The server's binaries found before anything starts."""
    from pyscaffold_op.envtest.cluster import CLUSTER_BINARIES
    from pyscaffold_op.envtest.controlplane import BINARIES, ControlPlaneError, assets_dir
    from pyscaffold_op.errors import ValidationError

    if assets is not None and not assets.is_dir():
        raise ValidationError(f"--assets {assets}: no such folder")
    try:
        assets_dir(assets, CLUSTER_BINARIES if server is CLUSTER else BINARIES)
    except ControlPlaneError as err:
        raise ValidationError(f"{server.flag}: {err}") from None


class Access(NamedTuple):
    tls: bool
    authorization: str  # AlwaysAllow or RBAC


class Simulated(NamedTuple):
    kubelet: bool
    workloads: bool


class Webhooks(NamedTuple):
    manifests: list[Path]
    services: list[tuple[str, str, str]]  # namespace, name, URL
    ca: Path | None


def _simulated(server: Server, *, kubelet: bool | None, workloads: bool | None) -> Simulated:
    """The emulator's simulations asked for (on by default where the server can run them)."""
    from pyscaffold_op.errors import ValidationError

    for flag, asked, runner in (("kubelet", kubelet, server.own[0]), ("workloads", workloads, server.own[1])):
        if asked and server.simulations == "none":
            raise ValidationError(
                f"--{flag}: {server.name} runs no such simulation (the emulator does); drop --{flag}"
            )
        if asked is False and server.simulations == "own":
            raise ValidationError(f"--no-{flag}: {server.name} runs {runner}")
    default = server.simulations != "none"
    return Simulated(default if kubelet is None else kubelet, default if workloads is None else workloads)


def _access(server: Server, tls: bool, mode: str | None) -> Access:
    from pyscaffold_op.errors import ValidationError

    authorization = mode or server.authorization
    if authorization not in server.authorizations:
        raise ValidationError(
            f"--authorization-mode {authorization}: {server.name} takes {' or '.join(server.authorizations)}"
        )
    if server.tls_only and tls is False:
        raise ValidationError(f"--no-tls: {server.name} serves HTTPS only")
    if authorization == "RBAC" and tls is False:
        raise ValidationError(
            "--no-tls: --authorization-mode=RBAC needs TLS (clients send credentials only over TLS)"
        )
    return Access(server.tls_only or tls, authorization)


def _check_port(port: int) -> None:
    import socket

    from pyscaffold_op.errors import ValidationError

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as err:
            raise ValidationError(
                f"--port {port}: cannot serve on 127.0.0.1:{port}: {err.strerror or err}"
            ) from None


def _serve(
    server: Server,
    crds: list[Path],
    port: int,
    kubeconfig_out: Path | None,
    simulated: Simulated,
    hooks: Webhooks,
    access: Access,
    assets: Path | None,
) -> None:
    """Run until SIGINT/SIGTERM (KeyboardInterrupt escapes only before the server is up)."""
    import asyncio
    import signal

    from pyscaffold_op.envtest import Environment, KubeletSimulator
    from pyscaffold_op.envtest.controlplane import ControlPlaneError, apiserver_version, assets_dir
    from pyscaffold_op.envtest.gctuning import own_process
    from pyscaffold_op.envtest.loops import new_event_loop
    from pyscaffold_op.envtest.registry.crds import CrdFileError, load_crd_files
    from pyscaffold_op.envtest.status import StatusError as ApiError
    from pyscaffold_op.errors import ValidationError

    try:
        load_crd_files(list(crds))  # read before serving: a bad file is named, nothing starts
    except CrdFileError as err:
        raise ValidationError(f"--crds {err}") from None
    what = (
        "pyop's emulator, bare: no kube-controller-manager controllers" if server.bare else "pyop's emulator"
    )
    if server.processes:
        parts = "etcd" if server is REAL else "etcd, kube-controller-manager, kube-scheduler, kwok"
        try:
            what = f"kube-apiserver {apiserver_version(assets)} + {parts} from {assets_dir(assets)}"
        except ControlPlaneError as err:
            raise ValidationError(f"{server.flag}: {err}") from None
    started = False

    async def main() -> None:
        nonlocal started
        env = Environment(
            crd_paths=crds,  # installed before the kubeconfig is written: an invalid CRD fails the start
            kubelet=KubeletSimulator() if simulated.kubelet else None,
            workloads=simulated.workloads,
            port=port,
            kubeconfig_path=kubeconfig_out,
            tls=access.tls,
            authorization=access.authorization,
            mode=server.mode,
            assets=assets,
            bare=server.bare,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # clean shutdown: the temp kubeconfig is removed
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        async with env:
            started = True
            if not server.processes:
                own_process()  # this process only serves the emulator
            for ns, name, url in hooks.services:
                env.webhook_service_url(ns, name, url, ca=hooks.ca)
            if hooks.manifests:
                await env.install_webhooks(hooks.manifests)
            typer.echo(str(env.kubeconfig_path))
            typer.echo(
                f"# serving {env.url} ({what}); try: kubectl --kubeconfig {env.kubeconfig_path} get ns",
                err=True,
            )
            await stop.wait()

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(main())
    except KeyboardInterrupt:
        if not started:
            raise
    except ApiError as err:  # the API server's own answer to an invalid CRD
        raise ValidationError(f"--crds: {err.message}") from None
    except ControlPlaneError as err:
        if str(err).startswith("CRD "):  # the real API server's answer to an invalid CRD
            raise ValidationError(f"--crds: {err}") from None
        raise ValidationError(f"{server.flag}: {err}") from None  # a process that would not start: its log
    except OSError as err:
        reason = err.strerror or str(err)
        if kubeconfig_out is not None and err.filename and kubeconfig_out.is_relative_to(err.filename):
            raise ValidationError(f"--kubeconfig-out {kubeconfig_out}: cannot write it: {reason}") from None
        raise ValidationError(f"--port {port}: cannot serve on 127.0.0.1:{port}: {reason}") from None
