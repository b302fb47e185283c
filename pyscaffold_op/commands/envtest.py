"""`pyop envtest serve` (owned by the API server emulator): the emulator, or with `--cluster` a cluster of
real processes (kube-apiserver, kube-controller-manager, kube-scheduler, kwok) behind the same output.

aiohttp and the emulator are imported inside the command so `pyop --help` stays fast. Every failure
to start is one line on stderr and exit status 2 (`PyopError`), naming the flag to blame.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import NamedTuple

import typer

app = typer.Typer(help="Run the in-process Kubernetes API server emulator.", no_args_is_help=True)


@app.command()
def serve(
    crds: list[Path] = typer.Option(
        [], "--crds", metavar="<path>", help="CRD file or folder to install (repeatable)."
    ),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port)."),
    kubeconfig_out: Path | None = typer.Option(
        None, "--kubeconfig-out", help="Write the kubeconfig here (default: a temp file)."
    ),
    kubelet: bool = typer.Option(True, "--kubelet/--no-kubelet", help="Simulate a kubelet that runs Pods."),
    workloads: bool = typer.Option(
        True,
        "--workloads/--no-workloads",
        help="Simulate the workload controllers (Deployments, Jobs, ServiceAccounts, EndpointSlices...).",
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
        help="CA file to trust for those Services (read at each call; `make run` writes its ca.crt).",
    ),
    tls: bool = typer.Option(
        True,
        "--tls/--no-tls",
        help="Serve HTTPS with a CA made at start; the kubeconfig carries it and an admin client "
        "certificate (CN=kubernetes-admin, O=system:masters), as a kind or kubeadm cluster's does. "
        "--no-tls: plain HTTP and a bearer token.",
    ),
    bare: bool = typer.Option(
        False,
        "--bare",
        help="Serve as envtest's bare kube-apiserver: no kubelet, no workloads and none of "
        "kube-controller-manager's controllers (no garbage collection; a deleted namespace stays "
        "Terminating until its /finalize is PUT). For controller-runtime's envtest with "
        "USE_EXISTING_CLUSTER=true (docs/envtest.md).",
    ),
    authorization_mode: str = typer.Option(
        "AlwaysAllow",
        "--authorization-mode",
        metavar="<mode>",
        help="AlwaysAllow, or RBAC: authorize every request against the stored Roles and bindings "
        "(as kube-apiserver's --authorization-mode=RBAC; implies --tls).",
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
        help="With --cluster: the folder holding the binaries (default $PYOP_ENVTEST_ASSETS, else "
        "$KUBEBUILDER_ASSETS; `make oracles` builds them into bin/ of a pyop checkout).",
    ),
) -> None:
    """Serve the emulator until Ctrl-C; prints the kubeconfig path (use it with kubectl or `make run`)."""
    from pyscaffold_op.errors import PyopError, ValidationError

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
    if authorization_mode not in ("AlwaysAllow", "RBAC"):
        raise ValidationError(f"--authorization-mode {authorization_mode}: expected AlwaysAllow or RBAC")
    if authorization_mode == "RBAC" and tls is False:
        raise ValidationError(
            "--no-tls: --authorization-mode=RBAC needs TLS (clients send credentials only over TLS)"
        )
    if cluster:
        if bare:
            raise ValidationError("--bare: --cluster runs a controller-manager (a bare server has none)")
        _check_cluster(kubelet, workloads, tls, assets)
    elif assets is not None:
        raise ValidationError(f"--assets {assets}: only --cluster runs binaries")
    access = Access(tls, authorization_mode, bare)
    try:
        _serve(
            crds,
            port,
            kubeconfig_out,
            kubelet and not bare,
            workloads and not bare,
            Webhooks(webhooks, services, webhook_ca),
            access,
            Processes("cluster", assets) if cluster else None,
        )
    except KeyboardInterrupt:  # Ctrl-C while importing or starting: nothing is serving yet
        raise PyopError("interrupted while starting; nothing is served") from None


def _check_cluster(kubelet: bool, workloads: bool, tls: bool | None, assets: Path | None) -> None:
    """What --cluster cannot combine with, named; its binaries found before anything starts."""
    from pyscaffold_op.envtest.cluster import CLUSTER_BINARIES
    from pyscaffold_op.envtest.controlplane import ControlPlaneError, assets_dir
    from pyscaffold_op.errors import ValidationError

    if not kubelet:
        raise ValidationError("--no-kubelet: --cluster runs kwok's fake node, which runs Pods")
    if not workloads:
        raise ValidationError("--no-workloads: --cluster runs kube-controller-manager, whose controllers act")
    if tls is False:
        raise ValidationError("--no-tls: --cluster serves HTTPS, as kube-apiserver does")
    if assets is not None and not assets.is_dir():
        raise ValidationError(f"--assets {assets}: no such folder")
    try:
        assets_dir(assets, CLUSTER_BINARIES)
    except ControlPlaneError as err:
        raise ValidationError(f"--cluster: {err}") from None


class Processes(NamedTuple):
    """Real processes in the emulator's place (`Environment(mode=...)`)."""

    mode: str
    assets: Path | None


class Access(NamedTuple):
    tls: bool
    authorization: str  # AlwaysAllow or RBAC
    bare: bool = False  # envtest's bare kube-apiserver: no kube-controller-manager controllers


class Webhooks(NamedTuple):
    manifests: list[Path]
    services: list[tuple[str, str, str]]  # namespace, name, URL
    ca: Path | None


def _serve(
    crds: list[Path],
    port: int,
    kubeconfig_out: Path | None,
    kubelet: bool,
    workloads: bool,
    hooks: Webhooks,
    access: Access,
    processes: Processes | None = None,
) -> None:
    """Run until SIGINT/SIGTERM (KeyboardInterrupt escapes only before the server is up)."""
    import asyncio
    import signal

    from pyscaffold_op.envtest import Environment, KubeletSimulator
    from pyscaffold_op.envtest.controlplane import ControlPlaneError
    from pyscaffold_op.envtest.gctuning import own_process
    from pyscaffold_op.envtest.loops import new_event_loop
    from pyscaffold_op.envtest.registry.crds import CrdFileError, load_crd_files
    from pyscaffold_op.envtest.status import StatusError as ApiError
    from pyscaffold_op.errors import ValidationError

    try:
        load_crd_files(list(crds))  # read before serving: a bad file is named, nothing starts
    except CrdFileError as err:
        raise ValidationError(f"--crds {err}") from None
    started = False

    async def main() -> None:
        nonlocal started
        env = Environment(
            crd_paths=crds,  # installed before the socket opens: an invalid CRD fails the start
            kubelet=KubeletSimulator() if kubelet else None,
            workloads=workloads,
            port=port,
            kubeconfig_path=kubeconfig_out,
            tls=access.tls,
            authorization=access.authorization,
            bare=access.bare,
            mode=processes.mode if processes else None,
            assets=processes.assets if processes else None,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # clean shutdown: the temp kubeconfig is removed
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        async with env:
            started = True
            own_process()  # this process only serves the emulator
            for ns, name, url in hooks.services:
                env.webhook_service_url(ns, name, url, ca=hooks.ca)
            if hooks.manifests:
                await env.install_webhooks(hooks.manifests)
            typer.echo(str(env.kubeconfig_path))
            typer.echo(
                f"# serving {env.url}; try: kubectl --kubeconfig {env.kubeconfig_path} get ns", err=True
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
        raise ValidationError(f"--cluster: {err}") from None  # a process that would not start: its log
    except OSError as err:
        reason = err.strerror or str(err)
        if kubeconfig_out is not None and err.filename and kubeconfig_out.is_relative_to(err.filename):
            raise ValidationError(f"--kubeconfig-out {kubeconfig_out}: cannot write it: {reason}") from None
        raise ValidationError(f"--port {port}: cannot serve on 127.0.0.1:{port}: {reason}") from None
