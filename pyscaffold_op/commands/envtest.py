"""`pyop envtest serve` (owned by the API server emulator).

aiohttp and the emulator are imported inside the command so `pyop --help` stays fast.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

app = typer.Typer(help="Run the in-process Kubernetes API server emulator.", no_args_is_help=True)


@app.command()
def serve(
    crds: list[Path] = typer.Option([], "--crds", help="CRD file or folder to install (repeatable)."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port)."),
    kubeconfig_out: Path | None = typer.Option(
        None, "--kubeconfig-out", help="Write the kubeconfig here (default: a temp file)."
    ),
    kubelet: bool = typer.Option(True, "--kubelet/--no-kubelet", help="Simulate a kubelet that runs Pods."),
    webhooks: list[Path] = typer.Option(
        [], "--webhooks", help="Webhook configurations to install, e.g. config/webhook/manifests.yaml."
    ),
    webhook_service: list[str] = typer.Option(
        [],
        "--webhook-service",
        help="NAMESPACE/NAME=URL: send calls for that Service to URL "
        "(e.g. system/webhook-service=https://127.0.0.1:9443; repeatable).",
    ),
    webhook_ca: Path | None = typer.Option(
        None,
        "--webhook-ca",
        help="CA file to trust for those Services (read at each call; `make run` writes its ca.crt).",
    ),
) -> None:
    """Serve the emulator until Ctrl-C; prints the kubeconfig path (use it with kubectl or `make run`)."""
    import asyncio
    import signal

    from pyscaffold_op.envtest import Environment, KubeletSimulator
    from pyscaffold_op.errors import ValidationError

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

    async def main() -> None:
        env = Environment(
            crd_paths=crds,
            kubelet=KubeletSimulator() if kubelet else None,
            port=port,
            kubeconfig_path=kubeconfig_out,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # clean shutdown: the temp kubeconfig is removed
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        async with env:
            for ns, name, url in services:
                env.webhook_service_url(ns, name, url, ca=webhook_ca)
            if webhooks:
                await env.install_webhooks(webhooks)
            typer.echo(str(env.kubeconfig_path))
            typer.echo(
                f"# serving {env.url}; try: kubectl --kubeconfig {env.kubeconfig_path} get ns", err=True
            )
            await stop.wait()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(main())
    except OSError as err:  # e.g. the port is taken: one line, exit status 2
        raise ValidationError(
            f"--port {port}: cannot serve on 127.0.0.1:{port}: {err.strerror or err}"
        ) from None
